// `crm links …`: the relationship sub-resources and meeting associations (CONTRACT §6).
import { Option, type Command } from 'commander';
import { DEAL_CONTACT_TYPES, NOTE_RECORD_TYPES } from '../api/resources.js';
import type { LinkOptions } from '../commands/links/types.js';
import { numeric, RANGES } from './numeric.js';
import { action, examples, type Registry } from './program.js';

export function registerLinks(program: Command, reg: Registry): void {
  const links = program
    .command('links')
    .description('link records: deals→contacts|companies, notes→records, segments→members; meetings→deal|company');
  examples(links, [
    'crm links add deals deal_123 contacts con_456 --type CHAMPION',
    'crm links list deals deal_123 contacts',
    'crm links set meetings mtg_1 deal deal_123',
  ]);
  const load = async () => (await import('../commands/links/run.js')).runLinks;
  const opts =
    (verb: LinkOptions['verb']) =>
    (args: string[], o: Record<string, unknown>): LinkOptions => ({
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

  // Every verb takes <parent> <id> <relation>; add/remove/set also name the other record.
  const verb = (
    name: LinkOptions['verb'],
    description: string,
    args: {
      parent: string;
      relation: string;
      child?: [string, string];
    },
  ): Command => {
    const cmd = links
      .command(name)
      .description(description)
      .argument('<parent>', args.parent)
      .argument('<id>', 'the parent id')
      .argument('<relation>', args.relation);
    if (args.child) cmd.argument(args.child[0], args.child[1]);
    cmd.action(action(reg, load, opts(name)));
    return cmd;
  };
  const linkArgs = { parent: 'deals, notes or segments', relation: 'contacts, companies, records or members' };
  const meetingArgs = { parent: 'meetings', relation: 'deal or company' };
  const dryRun = (cmd: Command) => cmd.option('--dry-run', 'print the request instead of sending it');

  const list = verb('list', 'list the records linked to a parent', linkArgs)
    .addOption(new Option('--limit <n>', 'page size, 1-100').argParser(numeric(RANGES.pageLimit)))
    .option('--cursor <cursor>', 'start from this page cursor')
    .option('--all', 'follow every page')
    .addOption(new Option('--max <n>', 'stop after this many records').argParser(numeric(RANGES.maxRecords)));
  examples(list, ['crm links list deals deal_123 contacts', 'crm links list segments seg_1 members --all -o ndjson']);

  const add = verb('add', 'link a record (linking twice is a no-op)', { ...linkArgs, child: ['<child-id>', 'the record to link'] })
    .addOption(new Option('--type <type>', `deals contacts only: ${DEAL_CONTACT_TYPES.join(', ')}`))
    .option('--supervisor <supervisor>', 'deals contacts only: passed through as given')
    .addOption(new Option('--record-type <type>', 'notes records only (default contact)').choices([...NOTE_RECORD_TYPES]))
    .option('--data <json>', "replace the assumed body: JSON, @file.json or '-'");
  dryRun(add);
  examples(add, [
    'crm links add deals deal_123 contacts con_456 --type DECISION_MAKER',
    'crm links add notes note_1 records cmp_9 --record-type company',
  ]);

  const remove = dryRun(verb('remove', 'unlink a record', { ...linkArgs, child: ['<child-id>', 'the linked record'] }));
  examples(remove, ['crm links remove deals deal_123 contacts con_456']);

  const get = verb('get', "show a meeting's deal or company (null when unset)", meetingArgs);
  examples(get, ['crm links get meetings mtg_1 deal']);

  const set = verb('set', "set a meeting's deal or company", { ...meetingArgs, child: ['<target-id>', 'the deal or company id'] }).option(
    '--data <json>',
    "replace the assumed body: JSON, @file.json or '-'",
  );
  dryRun(set);
  examples(set, ['crm links set meetings mtg_1 deal deal_123']);

  const clear = dryRun(verb('clear', "clear a meeting's deal or company", meetingArgs));
  examples(clear, ['crm links clear meetings mtg_1 company']);
}
