// The eleven resource command groups, built from the resource table (CONTRACT §5): one loop, not
// eleven copies. A verb a resource does not have is a usage error naming the verbs it has.
import type { Command, CommandUnknownOpts } from '@commander-js/extra-typings';
import { RESOURCES, type ResourceDef, type Verb } from '../../api/resources.js';
import { UsageError } from '../../http/errors.js';
import {
  collect,
  DRY_RUN,
  examples,
  maxOption,
  paging,
  runs,
  type FlagsOf,
  type Load,
  type Registry,
} from '../shared/define.js';
import { numericOption } from '../shared/numeric.js';

const declareList = (group: CommandUnknownOpts, name: string) =>
  paging(group.command('list').description(`list ${name} (one page, or every page with --all)`), {
    limit: 'page size, 1-100 (server default 25)',
  })
    .addOption(maxOption())
    .option('--param <key=value>', 'another query parameter (repeatable)', collect);
const declareWrite = <A extends unknown[]>(cmd: Command<A>, description: string) =>
  cmd
    .description(description)
    .option('--data <json>', "the body: JSON, @file.json, or '-' for stdin")
    .option(
      '--set <field=value>',
      'set a string field; field:=json for numbers, booleans, arrays (repeatable)',
      collect,
    )
    .option('--idempotency-key <key>', 'send this Idempotency-Key (default: a random one, reused by retries)')
    .option(...DRY_RUN);
/** `<id...>` and `--concurrency` of get and delete: several ids, or `-` for standard input's lines */
const declareIds = <A extends unknown[]>(cmd: Command<A>, res: ResourceDef) =>
  cmd
    .argument('<id...>', `${res.singular} id; several, or '-' to read them from standard input (one per line)`)
    .addOption(
      numericOption('--concurrency <n>', 'requests in flight when there are several ids', 'idConcurrency').default(4),
    );
const declareGet = (group: CommandUnknownOpts, res: ResourceDef) =>
  declareIds(group.command('get').description(`show one ${res.singular}, or several as a list`), res);
const declareDelete = (group: CommandUnknownOpts, res: ResourceDef) =>
  declareIds(
    group.command('delete').description(`delete a ${res.singular}, or several (asks first on a terminal)`),
    res,
  )
    .option('-y, --yes', 'do not ask (required without a terminal)')
    .option(
      '--backup <file>',
      `where each ${res.singular} goes, as it was, before its DELETE (default ${res.name}.deleted.<time>.ndjson, one per run)`,
    )
    .option('--no-backup', `keep no copy of the ${res.name} deleted`)
    .option(...DRY_RUN);

/** `hasTranscript`: recordings only, keep those whose transcript is ready */
export type ListOptions = FlagsOf<typeof declareList> & { resource: string; hasTranscript?: true };
export type GetOptions = FlagsOf<typeof declareGet> & { resource: string; ids: string[] };
export type WriteOptions = FlagsOf<typeof declareWrite> & { resource: string; verb: 'create' | 'update'; id?: string };
export type DeleteOptions = FlagsOf<typeof declareDelete> & { resource: string; ids: string[] };

type Loads = { list: Load<ListOptions>; get: Load<GetOptions>; write: Load<WriteOptions>; delete: Load<DeleteOptions> };

export function registerResources(
  program: CommandUnknownOpts,
  reg: Registry,
  want: (name: string) => boolean,
  load: Loads,
): void {
  for (const res of RESOURCES) {
    if (!want(res.name)) continue;
    const group = program
      .command(res.name)
      .description(res.description)
      .argument('[verb]')
      .allowExcessArguments(true)
      .action((verb, _opts, cmd) => {
        // the verbs it has, the recordings extras (src/commands/recordings/command.ts) included
        const verbs = cmd.commands.map((c) => c.name()).join(', ');
        if (verb === undefined) {
          cmd.outputHelp({ error: true });
          throw new UsageError(`${res.name} needs a verb: ${verbs}`);
        }
        throw new UsageError(`'${verb}' is not a verb of ${res.name}; ${res.name} has: ${verbs}`, {
          hint: `see crm ${res.name} --help`,
        });
      });
    examples(group, [`crm ${res.name} list`, `crm ${res.name} get ${res.idPrefix}123 -o json`]);
    for (const verb of res.verbs) VERBS[verb](group, res, reg, load);
  }
}

type AddVerb = (group: CommandUnknownOpts, res: ResourceDef, reg: Registry, load: Loads) => void;

const VERBS: Record<Verb, AddVerb> = {
  list(group, res, reg, load) {
    const name = res.name;
    const cmd = declareList(group, name);
    if (name === 'recordings') cmd.option('--has-transcript', 'only recordings whose transcript is ready');
    examples(cmd, [`crm ${name} list --limit 50`, `crm ${name} list --all -o ndjson`]);
    runs(cmd, reg, load.list, (o) => ({ ...o, resource: name }));
  },
  get(group, res, reg, load) {
    const cmd = declareGet(group, res);
    const id = `${res.idPrefix}123`;
    examples(cmd, [
      `crm ${res.name} get ${id}`,
      `crm ${res.name} get ${id} -o json | jq .`,
      `crm ${res.name} get - -o ndjson < ids.txt`,
    ]);
    runs(cmd, reg, load.get, (o, ids) => ({ ...o, resource: res.name, ids }));
  },
  create(group, res, reg, load) {
    const cmd = declareWrite(group.command('create'), `create a ${res.singular}`);
    const req = res.required[0] ?? 'name';
    examples(cmd, [
      `crm ${res.name} create --set ${req}=${sample(req, 'Example')}`,
      `crm ${res.name} create --data @${res.singular}.json`,
    ]);
    runs(cmd, reg, load.write, (o) => ({ ...o, resource: res.name, verb: 'create' as const }));
  },
  update(group, res, reg, load) {
    const cmd = declareWrite(
      group.command('update').argument('<id>', `${res.singular} id`),
      `change fields of a ${res.singular}`,
    );
    const [req, id] = [res.required[0] ?? 'name', `${res.idPrefix}123`];
    examples(cmd, [
      `crm ${res.name} update ${id} --set ${req}=${sample(req, 'New')}`,
      `echo '{"${req}":"${sample(req, 'x')}"}' | crm ${res.name} update ${id} --data -`,
    ]);
    runs(cmd, reg, load.write, (o, id) => ({ ...o, resource: res.name, verb: 'update' as const, id }));
  },
  delete(group, res, reg, load) {
    const cmd = declareDelete(group, res);
    const id = `${res.idPrefix}123`;
    examples(cmd, [
      `crm ${res.name} delete ${id}`,
      `crm ${res.name} delete ${id} ${res.idPrefix}456 --yes`,
      `crm ${res.name} delete - --yes < ids.txt`,
      `crm ${res.name} delete ${id} --yes --backup kept.ndjson`,
    ]);
    runs(cmd, reg, load.delete, (o, ids) => ({ ...o, resource: res.name, ids }));
  },
};

/** An example's value for a field: the word, or for an email an address the server accepts. */
function sample(field: string, word: string): string {
  return field === 'email' ? (word === 'Example' ? 'ada@example.com' : `ada.${word.toLowerCase()}@example.com`) : word;
}
