// `crm links …`: the relationship sub-resources and meeting associations (CONTRACT §6).
import { Option, type Command } from 'commander';
import { DEAL_CONTACT_TYPES, NOTE_RECORD_TYPES } from '../api/resources.js';
import type { LinkOptions } from '../commands/links/types.js';
import { action, examples, nonNegativeInt, positiveInt, type Registry } from './program.js';

export function registerLinks(program: Command, reg: Registry): void {
  const links = program
    .command('links')
    .description('link records: deals→contacts|companies, notes→records, segments→members; meetings→deal|company');
  const load = async () => (await import('../commands/links/run.js')).runLinks;
  const opts = (verb: LinkOptions['verb']) => (args: string[], o: Record<string, unknown>): LinkOptions => ({
    verb,
    parent: args[0]!,
    id: args[1]!,
    relation: args[2]!,
    childId: args[3],
    type: o.type as string | undefined,
    supervisor: o.supervisor as string | undefined,
    recordType: o.recordType as string | undefined,
    data: o.data as string | undefined,
    dryRun: Boolean(o.dryRun),
    limit: o.limit as number | undefined,
    cursor: o.cursor as string | undefined,
    all: Boolean(o.all),
    max: o.max as number | undefined,
  });

  const list = links
    .command('list')
    .description('list the records linked to a parent')
    .argument('<parent>', 'deals, notes or segments')
    .argument('<id>', 'the parent id')
    .argument('<relation>', 'contacts, companies, records or members')
    .addOption(new Option('--limit <n>', 'page size, 1-100').argParser(positiveInt))
    .option('--cursor <cursor>', 'start from this page cursor')
    .option('--all', 'follow every page')
    .addOption(new Option('--max <n>', 'stop after this many records').argParser(nonNegativeInt));
  examples(list, ['crm links list deals deal_123 contacts', 'crm links list segments seg_1 members --all -o ndjson']);
  list.action(action(reg, load, opts('list')));

  const add = links
    .command('add')
    .description('link a record (linking twice is a no-op)')
    .argument('<parent>')
    .argument('<id>')
    .argument('<relation>')
    .argument('<child-id>', 'the record to link')
    .addOption(new Option('--type <type>', `deals contacts only: ${DEAL_CONTACT_TYPES.join(', ')}`))
    .option('--supervisor <supervisor>', 'deals contacts only: passed through as given')
    .addOption(new Option('--record-type <type>', 'notes records only (default contact)').choices([...NOTE_RECORD_TYPES]))
    .option('--data <json>', "replace the assumed body: JSON, @file.json or '-'")
    .option('--dry-run', 'print the request instead of sending it');
  examples(add, [
    'crm links add deals deal_123 contacts con_456 --type DECISION_MAKER',
    'crm links add notes note_1 records cmp_9 --record-type company',
  ]);
  add.action(action(reg, load, opts('add')));

  const remove = links
    .command('remove')
    .description('unlink a record')
    .argument('<parent>')
    .argument('<id>')
    .argument('<relation>')
    .argument('<child-id>')
    .option('--dry-run', 'print the request instead of sending it');
  examples(remove, ['crm links remove deals deal_123 contacts con_456']);
  remove.action(action(reg, load, opts('remove')));

  const get = links
    .command('get')
    .description("show a meeting's deal or company (null when unset)")
    .argument('<parent>', 'meetings')
    .argument('<id>', 'the meeting id')
    .argument('<relation>', 'deal or company');
  examples(get, ['crm links get meetings mtg_1 deal']);
  get.action(action(reg, load, opts('get')));

  const set = links
    .command('set')
    .description("set a meeting's deal or company")
    .argument('<parent>', 'meetings')
    .argument('<id>', 'the meeting id')
    .argument('<relation>', 'deal or company')
    .argument('<target-id>', 'the deal or company id')
    .option('--data <json>', "replace the assumed body: JSON, @file.json or '-'")
    .option('--dry-run', 'print the request instead of sending it');
  examples(set, ['crm links set meetings mtg_1 deal deal_123']);
  set.action(action(reg, load, opts('set')));

  const clear = links
    .command('clear')
    .description("clear a meeting's deal or company")
    .argument('<parent>', 'meetings')
    .argument('<id>', 'the meeting id')
    .argument('<relation>', 'deal or company')
    .option('--dry-run', 'print the request instead of sending it');
  examples(clear, ['crm links clear meetings mtg_1 company']);
  clear.action(action(reg, load, opts('clear')));
}
