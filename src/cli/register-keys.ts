// `crm keys add|list|use|remove` and `crm keys-check` (CONTRACT §2). No flag takes a key value:
// keys come from standard input or a hidden prompt, so they stay out of shell history and `ps`.
import { Option, type Command } from 'commander';
import { action, examples, type Registry } from './program.js';

export function registerKeys(program: Command, reg: Registry): void {
  const keys = program.command('keys').description('manage saved profiles and their API keys');
  examples(keys, ['crm keys add work --base-url https://crm.example.com/api/v2', 'crm keys list', 'crm keys use work']);

  const add = keys
    .command('add')
    .description('save a key (read from stdin or a hidden prompt) under a profile')
    .argument('<profile>', 'profile name')
    .option('--base-url <url>', 'version 2 API root, ending in /api/v2 (required for a new profile)')
    .option('--v1-base-url <url>', 'version 1 API root (default: base URL with /api/v1)')
    .addOption(new Option('--auth-header <kind>', 'how the key is sent').choices(['x-api-key', 'bearer']))
    .option('--v1', 'the key is a version 1 key (service_pk_…)')
    .option('--default', 'make this the default profile');
  examples(add, [
    'crm keys add work --base-url https://crm.example.com/api/v2',
    'pbpaste | crm keys add work --base-url https://crm.example.com/api/v2',
  ]);
  add.action(
    action(
      reg,
      async () => (await import('../commands/keys/add.js')).keysAdd,
      ([profile], o) => ({
        profile: profile!,
        baseUrl: o.baseUrl as string,
        v1BaseUrl: o.v1BaseUrl as string | undefined,
        authHeader: o.authHeader as 'x-api-key' | 'bearer' | undefined,
        v1: Boolean(o.v1),
        makeDefault: Boolean(o.default),
      }),
    ),
  );

  const list = keys.command('list').description('show profiles, base URLs and masked keys');
  examples(list, ['crm keys list', 'crm keys list -o json']);
  list.action(
    action(
      reg,
      async () => (await import('../commands/keys/list.js')).keysList,
      () => ({}),
    ),
  );

  const use = keys.command('use').description('make a profile the default').argument('<profile>');
  examples(use, ['crm keys use work']);
  use.action(
    action(
      reg,
      async () => (await import('../commands/keys/use.js')).keysUse,
      ([profile]) => ({ profile: profile! }),
    ),
  );

  const remove = keys.command('remove').description('delete a profile and its keys').argument('<profile>');
  examples(remove, ['crm keys remove old-sandbox']);
  remove.action(
    action(
      reg,
      async () => (await import('../commands/keys/remove.js')).keysRemove,
      ([profile]) => ({ profile: profile! }),
    ),
  );

  const check = program
    .command('keys-check')
    .description('check that the active key authenticates and which read scopes it has (sends only reads)')
    .option('--v1', "check the profile's version 1 key against version 1");
  examples(check, ['crm keys-check', 'crm keys-check --profile work -o json', 'crm keys-check --v1']);
  check.action(
    action(
      reg,
      async () => (await import('../commands/keys/check.js')).runKeysCheck,
      (_a, o) => ({ v1: Boolean(o.v1) }),
    ),
  );
}
