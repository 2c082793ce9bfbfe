// The eleven resource command groups, built from the resource table (CONTRACT §5): one loop, not
// eleven copies. A verb a resource does not have is a usage error naming the verbs it has.
import { Option, type Command } from 'commander';
import { RESOURCES, type ResourceDef, type Verb } from '../api/resources.js';
import { UsageError } from '../http/errors.js';
import type { ListOptions, GetOptions, WriteOptions, DeleteOptions } from '../commands/resources/types.js';
import { numeric, RANGES } from './numeric.js';
import { action, collect, examples, type Registry } from './program.js';

export function registerResources(program: Command, reg: Registry, want: (name: string) => boolean = () => true): void {
  for (const res of RESOURCES) {
    if (!want(res.name)) continue;
    const group = program
      .command(res.name)
      .description(res.description)
      .argument('[verb]')
      .allowExcessArguments(true)
      .action((verb: string | undefined, _opts: unknown, cmd: Command) => {
        if (verb === undefined) {
          cmd.outputHelp({ error: true });
          throw new UsageError(`${res.name} needs a verb: ${verbList(res)}`);
        }
        throw new UsageError(`'${verb}' is not a verb of ${res.name}; ${res.name} has: ${verbList(res)}`, {
          hint: `see crm ${res.name} --help`,
        });
      });
    examples(group, [`crm ${res.name} list`, `crm ${res.name} get ${res.idPrefix}123 -o json`]);
    for (const verb of res.verbs) addVerb(group, res, verb, reg);
  }
}

function verbList(res: ResourceDef): string {
  const extra = res.name === 'recordings' ? ['transcript', 'download'] : [];
  return [...res.verbs, ...extra].join(', ');
}

function addVerb(group: Command, res: ResourceDef, verb: Verb, reg: Registry): Command {
  const name = res.name;
  switch (verb) {
    case 'list': {
      const cmd = group
        .command('list')
        .description(`list ${name} (one page, or every page with --all)`)
        .addOption(new Option('--limit <n>', 'page size, 1-100 (server default 25)').argParser(numeric(RANGES.pageLimit)))
        .option('--cursor <cursor>', 'start from this page cursor')
        .option('--all', 'follow every page')
        .addOption(new Option('--max <n>', 'stop after this many records').argParser(numeric(RANGES.maxRecords)))
        .option('--param <key=value>', 'another query parameter (repeatable)', collect);
      if (name === 'recordings') cmd.option('--has-transcript', 'only recordings whose transcript is ready');
      examples(cmd, [`crm ${name} list --limit 50`, `crm ${name} list --all -o ndjson`]);
      return cmd.action(
        action<ListOptions>(
          reg,
          async () => (await import('../commands/resources/list.js')).runList,
          (_a, o) => ({
            resource: name,
            limit: o.limit as number | undefined,
            cursor: o.cursor as string | undefined,
            all: Boolean(o.all),
            max: o.max as number | undefined,
            params: (o.param as string[] | undefined) ?? [],
            hasTranscript: Boolean(o.hasTranscript),
          }),
        ),
      );
    }
    case 'get': {
      const cmd = group.command('get').description(`show one ${res.singular}`).argument('<id>', `${res.singular} id`);
      examples(cmd, [`crm ${name} get ${res.idPrefix}123`, `crm ${name} get ${res.idPrefix}123 -o json | jq .`]);
      return cmd.action(
        action<GetOptions>(
          reg,
          async () => (await import('../commands/resources/get.js')).runGet,
          ([id]) => ({ resource: name, id: id! }),
        ),
      );
    }
    case 'create':
    case 'update': {
      const cmd = group.command(verb);
      if (verb === 'update') cmd.argument('<id>', `${res.singular} id`);
      cmd
        .description(verb === 'create' ? `create a ${res.singular}` : `change fields of a ${res.singular}`)
        .option('--data <json>', "the body: JSON, @file.json, or '-' for stdin")
        .option('--set <field=value>', 'set a string field; field:=json for numbers, booleans, arrays (repeatable)', collect)
        .option('--idempotency-key <key>', 'send this Idempotency-Key (default: a random one, reused by retries)')
        .option('--dry-run', 'print the request instead of sending it');
      const req = res.required[0] ?? 'name';
      examples(
        cmd,
        verb === 'create'
          ? [
              `crm ${name} create --set ${req}=${req === 'email' ? 'ada@example.com' : 'Example'}`,
              `crm ${name} create --data @${res.singular}.json`,
            ]
          : [`crm ${name} update ${res.idPrefix}123 --set ${req}=New`, `echo '{"${req}":"x"}' | crm ${name} update ${res.idPrefix}123 --data -`],
      );
      return cmd.action(
        action<WriteOptions>(
          reg,
          async () => (await import('../commands/resources/write.js')).runWrite,
          (args, o) => ({
            resource: name,
            verb,
            id: verb === 'update' ? args[0] : undefined,
            data: o.data as string | undefined,
            set: (o.set as string[] | undefined) ?? [],
            idempotencyKey: o.idempotencyKey as string | undefined,
            dryRun: Boolean(o.dryRun),
          }),
        ),
      );
    }
    case 'delete': {
      const cmd = group
        .command('delete')
        .description(`delete a ${res.singular} (asks first on a terminal)`)
        .argument('<id>', `${res.singular} id`)
        .option('-y, --yes', 'do not ask (required without a terminal)')
        .option('--dry-run', 'print the request instead of sending it');
      examples(cmd, [`crm ${name} delete ${res.idPrefix}123`, `crm ${name} delete ${res.idPrefix}123 --yes`]);
      return cmd.action(
        action<DeleteOptions>(
          reg,
          async () => (await import('../commands/resources/delete.js')).runDelete,
          ([id], o) => ({ resource: name, id: id!, yes: Boolean(o.yes), dryRun: Boolean(o.dryRun) }),
        ),
      );
    }
  }
}
