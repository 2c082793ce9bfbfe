// `crm links …`: the relationship sub-resources and meeting associations (CONTRACT §6).
import { Option, type Command, type CommandUnknownOpts } from '@commander-js/extra-typings';
import { DEAL_CONTACT_TYPES, NOTE_RECORD_TYPES } from '../../api/resources.js';
import { BATCH_DRY_RUN, batchFileFlags } from '../batch/command.js';
import {
  DRY_RUN,
  examples,
  maxOption,
  paging,
  runs,
  type FlagsOf,
  type Load,
  type Registry,
} from '../shared/define.js';

const listFlags = <A extends unknown[]>(cmd: Command<A>) => paging(cmd).addOption(maxOption());
const DATA = ['--data <json>', "replace the assumed body: JSON, @file.json or '-'"] as const;
const addFlags = <A extends unknown[]>(cmd: Command<A>) =>
  cmd
    .addOption(new Option('--type <type>', `deals contacts only: ${DEAL_CONTACT_TYPES.join(', ')}`))
    .option('--supervisor <supervisor>', 'deals contacts only: passed through as given')
    .addOption(new Option('--record-type <type>', 'notes records only (default contact)').choices(NOTE_RECORD_TYPES))
    .option(...DATA)
    .option('--dry-run', 'print the request instead of sending it; with --file, check every row and print the plan');

/** `links add --file`: the batch flags, and the file of children */
const fileFlags = <A extends unknown[]>(cmd: Command<A>) =>
  batchFileFlags(cmd).option(
    '--file <file>',
    "link every child in this file instead (a CSV with the child's column, or one id per line; '-' for standard input)",
  );

/** the verbs on one parent (`import` reads its parents from the file) */
type OneParent = 'list' | 'add' | 'remove' | 'get' | 'set' | 'clear';
/** Every verb's options: the flags of list, add and add --file (set's, remove's and import's are among them). */
export type LinkOptions = Partial<
  FlagsOf<typeof listFlags> & FlagsOf<typeof addFlags> & FlagsOf<typeof fileFlags> & { plan: string; remove: boolean }
> & {
  parent: string;
  relation: string;
  /** add/remove: the child; set: the deal or company id */
  childId?: string;
  /** the words after `crm` as typed: a run over a file repeats them to resume */
  argv?: readonly string[];
} & ({ verb: OneParent; id: string } | { verb: 'import'; id?: undefined });

const LINK = ['deals, notes or segments', 'contacts, companies, records or members'];
const MEETING = ['meetings', 'deal or company'];
type Flags = (cmd: Command<[string, string, string]>) => unknown;
const dryRun: Flags = (c) => c.option(...DRY_RUN);

/** verb, description, [parent, relation, child?] argument help, its flags, examples */
const VERBS: Array<[OneParent, string, string[], Flags, string[]]> = [
  [
    'list',
    'list the records linked to a parent',
    LINK,
    listFlags,
    ['crm links list deals deal_123 contacts', 'crm links list segments seg_1 members --all -o ndjson'],
  ],
  [
    'add',
    'link a record (linking twice is a no-op)',
    [...LINK, '[child-id]', 'the record to link (or --file for many)'],
    (c) => fileFlags(addFlags(c)),
    [
      'crm links add deals deal_123 contacts con_456 --type DECISION_MAKER',
      'crm links add notes note_1 records cmp_9 --record-type company',
      'crm links add segments seg_1 members --file ids.csv         # one contact id per line',
      'crm links add deals deal_123 contacts --file people.csv  # columns: contact_id,type',
    ],
  ],
  [
    'remove',
    'unlink a record',
    [...LINK, '<child-id>', 'the linked record'],
    dryRun,
    ['crm links remove deals deal_123 contacts con_456'],
  ],
  [
    'get',
    "show a meeting's deal or company (null when unset)",
    MEETING,
    () => undefined,
    ['crm links get meetings mtg_1 deal'],
  ],
  [
    'set',
    "set a meeting's deal or company",
    [...MEETING, '<target-id>', 'the deal or company id'],
    (c) => dryRun(c.option(...DATA)),
    ['crm links set meetings mtg_1 deal deal_123'],
  ],
  ['clear', "clear a meeting's deal or company", MEETING, dryRun, ['crm links clear meetings mtg_1 company']],
];

export function registerLinks(program: CommandUnknownOpts, reg: Registry, load: Load<LinkOptions>): void {
  const links = program
    .command('links')
    .description(
      'link records, one or a file of them: deals→contacts|companies, notes→records, segments→members; meetings→deal|company',
    );
  examples(links, [
    'crm links add deals deal_123 contacts con_456 --type CHAMPION',
    'crm links list deals deal_123 contacts',
    'crm links set meetings mtg_1 deal deal_123',
    'crm links import deals contacts pairs.csv',
  ]);
  for (const [verb, description, [parent, relation, child, childHelp], flags, lines] of VERBS) {
    const cmd = links
      .command(verb)
      .description(description)
      .argument('<parent>', parent)
      .argument('<id>', 'the parent id')
      .argument('<relation>', relation);
    if (child) cmd.argument(child, childHelp);
    flags(cmd);
    // the flags are the verb's own (all optional in LinkOptions); the child is the fourth argument
    const argv = () => reg.state.argv;
    runs(examples(cmd, lines), reg, load, (o, parent, id, relation) => ({
      ...o,
      verb,
      parent,
      id,
      relation,
      childId: cmd.args[3],
      argv: argv(),
    }));
  }
  registerImport(links, reg, load);
}

/** `crm links import PARENT RELATION FILE`: a file of pairs, through the batch engine. */
function registerImport(links: CommandUnknownOpts, reg: Registry, load: Load<LinkOptions>): void {
  const cmd = batchFileFlags(
    links
      .command('import')
      .description('link records in bulk from a file of pairs: idempotent, resumable')
      .argument('<parent>', 'deals, notes, segments or meetings')
      .argument('<relation>', 'contacts, companies, records or members; meetings: deal or company')
      .argument('<file>', "a .csv, .ndjson or .jsonl file, or '-' for standard input"),
  )
    .option(...BATCH_DRY_RUN)
    .option('--plan <file>', "by natural key: write every row's action and the ids it found to this CSV")
    .option('--remove', "unlink the file's pairs instead (a linked file crm wrote, or pairs by id or natural key)");
  examples(cmd, [
    'crm links import deals contacts pairs.csv',
    'crm links import deals contacts deals.csv   # columns: deal.name,contact.email',
    'crm links import deals contacts deals.csv.linked.csv --remove',
    'crm links import deals companies pairs.csv',
    'crm links import notes records pairs.csv',
    'crm links import segments members pairs.csv',
    'crm links import meetings deal pairs.csv',
  ]);
  cmd.addHelpText(
    'after',
    `
Columns: each side by its id (deal_id, note_id, segment_id or meeting_id; the
child's contact_id, company_id, record_id or deal_id) or by fields of its
records (deal.name, contact.email, company.domain; several columns of one side
are one key; notes' records: record.FIELD with record_type). deals contacts
may add type and supervisor, notes records record_type (default contact). Any
other column is refused (--map "COLUMN=" leaves one out).

By fields, crm reads each side's records and each parent's links once, plans
every row, and sends only what is missing: a pair already linked needs no
request; a key two records share is ambiguous (<input>.ambiguous.csv); a key no
record has is not found (rejects file: fix the rows there and import it).
Keys are compared trimmed, emails and domains in any case. --dry-run prints
the plan, --plan FILE every row's action. The links made go to
<input>.linked.csv, written before each request: --remove with that file takes
away exactly those (a pair not linked is left as it is).

By ids, as with crm batch: every row is checked before the first request, a
journal makes a rerun send nothing already done, and invalid or refused rows
go to the rejects file (_line, _error_code, _error_message) to fix and feed
back with the same command. --results, --strict and --no-resume are for this
way only (not with --remove or --plan).

One parent and a file of children: crm links add PARENT ID RELATION --file FILE.`,
  );
  runs(cmd, reg, load, (o, parent, relation, file) => ({
    ...o,
    verb: 'import' as const,
    parent,
    relation,
    file,
    argv: reg.state.argv,
  }));
}
