// `crm keys add|list|use|remove` and `crm keys-check` (CONTRACT §2). No flag takes a key value:
// keys come from standard input or a hidden prompt, so they stay out of shell history and `ps`.
import { Option, type CommandUnknownOpts } from '@commander-js/extra-typings';
import { examples, runs, type FlagsOf, type Load, type Registry } from '../shared/define.js';

const declareAdd = (keys: CommandUnknownOpts) =>
  examples(keys.command('add').argument('<profile>', 'profile name'), [
    'crm keys add work --base-url https://crm.example.com/api/v2',
    'pbpaste | crm keys add work --base-url https://crm.example.com/api/v2',
  ])
    .description('save a key (read from stdin or a hidden prompt) under a profile')
    .option('--base-url <url>', 'version 2 API root, ending in /api/v2 (required for a new profile)')
    .option('--v1-base-url <url>', 'version 1 API root (default: base URL with /api/v1)')
    .addOption(new Option('--auth-header <kind>', 'how the key is sent').choices(['x-api-key', 'bearer'] as const))
    .option('--v1', 'the key is a version 1 key (service_pk_…)')
    .option('--default', 'make this the default profile');
const declareCheck = (program: CommandUnknownOpts) =>
  examples(program.command('keys-check'), [
    'crm keys-check',
    'crm keys-check --profile work -o json',
    'crm keys-check --v1',
  ])
    .description('check that the active key authenticates and which read scopes it has (sends only reads)')
    .option('--v1', "check the profile's version 1 key against version 1");

/** `--base-url` falls back to the global one; `--default`: the first profile is the default anyway. */
export type KeysAddOptions = FlagsOf<typeof declareAdd> & { profile: string };
export type KeysProfileOptions = { profile: string };
export type KeysCheckOptions = FlagsOf<typeof declareCheck>;

type Loads = {
  add: Load<KeysAddOptions>;
  list: Load<object>;
  use: Load<KeysProfileOptions>;
  remove: Load<KeysProfileOptions>;
  check: Load<KeysCheckOptions>;
};

export function registerKeys(program: CommandUnknownOpts, reg: Registry, load: Loads): void {
  const keys = program.command('keys').description('manage saved profiles and their API keys');
  examples(keys, ['crm keys add work --base-url https://crm.example.com/api/v2', 'crm keys list', 'crm keys use work']);
  runs(declareAdd(keys), reg, load.add, (o, profile) => ({ ...o, profile }));
  const list = keys.command('list').description('show profiles, base URLs and masked keys');
  runs(examples(list, ['crm keys list', 'crm keys list -o json']), reg, load.list, () => ({}));
  for (const [name, description, example] of [
    ['use', 'make a profile the default', 'crm keys use work'],
    ['remove', 'delete a profile and its keys', 'crm keys remove old-sandbox'],
  ] as const) {
    const cmd = examples(keys.command(name).description(description).argument('<profile>'), [example]);
    runs(cmd, reg, load[name], (_o, profile) => ({ profile }));
  }
  runs(declareCheck(program), reg, load.check, (o) => o);
}
