// `crm links …`: the relationship sub-resources and meeting associations (CONTRACT §6).
import { Option, type Command, type CommandUnknownOpts } from '@commander-js/extra-typings';
import { DEAL_CONTACT_TYPES, NOTE_RECORD_TYPES } from '../../api/resources.js';
import { DRY_RUN, examples, maxOption, paging, runs, type FlagsOf, type Load, type Registry } from '../shared/define.js';

const listFlags = <A extends unknown[]>(cmd: Command<A>) => paging(cmd).addOption(maxOption());
const DATA = ['--data <json>', "replace the assumed body: JSON, @file.json or '-'"] as const;
const addFlags = <A extends unknown[]>(cmd: Command<A>) =>
  cmd
    .addOption(new Option('--type <type>', `deals contacts only: ${DEAL_CONTACT_TYPES.join(', ')}`))
    .option('--supervisor <supervisor>', 'deals contacts only: passed through as given')
    .addOption(new Option('--record-type <type>', 'notes records only (default contact)').choices(NOTE_RECORD_TYPES))
    .option(...DATA)
    .option(...DRY_RUN);

type Verb = 'list' | 'add' | 'remove' | 'get' | 'set' | 'clear';
/** Every verb's options: the flags of list and add (set's and remove's are among them). */
export type LinkOptions = Partial<FlagsOf<typeof listFlags> & FlagsOf<typeof addFlags>> & {
  verb: Verb;
  parent: string;
  id: string;
  relation: string;
  /** add/remove: the child; set: the deal or company id */
  childId?: string;
};

const LINK = ['deals, notes or segments', 'contacts, companies, records or members'];
const MEETING = ['meetings', 'deal or company'];
type Flags = (cmd: Command<[string, string, string]>) => unknown;
const dryRun: Flags = (c) => c.option(...DRY_RUN);

/** verb, description, [parent, relation, child?] argument help, its flags, examples */
const VERBS: Array<[Verb, string, string[], Flags, string[]]> = [
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
    [...LINK, '<child-id>', 'the record to link'],
    addFlags,
    ['crm links add deals deal_123 contacts con_456 --type DECISION_MAKER', 'crm links add notes note_1 records cmp_9 --record-type company'],
  ],
  ['remove', 'unlink a record', [...LINK, '<child-id>', 'the linked record'], dryRun, ['crm links remove deals deal_123 contacts con_456']],
  ['get', "show a meeting's deal or company (null when unset)", MEETING, () => undefined, ['crm links get meetings mtg_1 deal']],
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
    .description('link records: deals→contacts|companies, notes→records, segments→members; meetings→deal|company');
  examples(links, [
    'crm links add deals deal_123 contacts con_456 --type CHAMPION',
    'crm links list deals deal_123 contacts',
    'crm links set meetings mtg_1 deal deal_123',
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
    runs(examples(cmd, lines), reg, load, (o, parent, id, relation) => ({ ...o, verb, parent, id, relation, childId: cmd.args[3] }));
  }
}
