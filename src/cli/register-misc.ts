// `crm api`, `crm completion` and `crm sandbox` (CONTRACT §10).
import { Option, type Command } from 'commander';
import type { ApiOptions } from '../commands/api/run.js';
import type { SandboxCommandOptions } from '../commands/sandbox/run.js';
import { numeric, RANGES } from './numeric.js';
import { action, collect, examples, type Registry } from './program.js';

export function registerMisc(program: Command, reg: Registry): void {
  const api = program
    .command('api')
    .description('send any request relative to the base URL and print the whole response envelope')
    .argument('<method>', 'GET, POST, PUT, PATCH or DELETE')
    .argument('<path>', 'e.g. /contacts?limit=5')
    .option('--data <json>', "the body: JSON, @file.json or '-'")
    .option('--set <field=value>', 'a body field; field:=json for other types (repeatable)', collect)
    .option('--paginate', 'GET only: follow every page and print the concatenated data')
    .option('--v1', 'relative to the version 1 base URL, with the v1 key')
    .option('--idempotency-key <key>', 'send this Idempotency-Key (POST/PATCH get a random one otherwise)')
    .option('--dry-run', 'print the request instead of sending it');
  examples(api, ['crm api GET /contacts?limit=2', 'crm api GET /deals --paginate', `crm api POST /people/query --v1 --data '{"limit":5}'`]);
  api.action(
    action<ApiOptions>(
      reg,
      async () => (await import('../commands/api/run.js')).runApi,
      ([method, path], o) => ({
        method: method!,
        path: path!,
        data: o.data as string | undefined,
        set: (o.set as string[] | undefined) ?? [],
        paginate: Boolean(o.paginate),
        v1: Boolean(o.v1),
        idempotencyKey: o.idempotencyKey as string | undefined,
        dryRun: Boolean(o.dryRun),
      }),
    ),
  );

  const completion = program.command('completion').description('print a shell completion script').argument('<shell>', 'bash, zsh or fish');
  examples(completion, [
    'source <(crm completion bash)       # in ~/.bashrc',
    'crm completion zsh > ~/.zfunc/_crm   # fpath=(~/.zfunc $fpath) in ~/.zshrc',
    'crm completion fish > ~/.config/fish/completions/crm.fish',
  ]);
  completion.action(async (shell: string) => {
    const { completionScript } = await import('./completion.js');
    reg.state.io.stdout.write(completionScript(program, shell));
  });

  // What the completion scripts ask crm itself: `crm __complete profiles` prints the saved
  // profile names (hidden from help; the scripts call it on TAB).
  const complete = program
    .command('__complete', { hidden: true })
    .description('print words for the shell completion scripts')
    .argument('<what>', 'profiles');
  examples(complete, ['crm __complete profiles']);
  complete.action(async (what: string) => {
    const { profileNamesQuick } = await import('../config/profile-names.js');
    const words = what === 'profiles' ? profileNamesQuick(reg.state.env) : [];
    reg.state.io.stdout.write(words.map((w) => `${w}\n`).join(''));
  });

  const sandbox = program
    .command('sandbox')
    .description('run a local emulator of the whole API (version 2 and 1) until interrupted')
    .option('--host <host>', 'address to listen on (loopback only)', '127.0.0.1')
    .addOption(new Option('--port <n>', 'port (0 picks a free one)').default(4010).argParser(numeric(RANGES.port)))
    .addOption(new Option('--seed <n>', 'fill deterministic sample data (and keys)').argParser(numeric(RANGES.seed)))
    .option('--data-file <file>', 'load the store from FILE and save it there on exit')
    .option('--keys <file>', 'more keys: a JSON array of {key, version, scopes, access, user}')
    .addOption(new Option('--rate-limit <n>', 'requests per window per key').default(200).argParser(numeric(RANGES.rate)))
    .addOption(new Option('--org-rate-limit <n>', 'requests per window per organization').default(1000).argParser(numeric(RANGES.rate)))
    .addOption(new Option('--rate-window-ms <ms>', 'rate-limit window').default(60000).argParser(numeric(RANGES.windowMs)))
    .addOption(new Option('--transcript-ttl-ms <ms>', 'lifetime of a transcript link').default(300000).argParser(numeric(RANGES.windowMs)))
    .addOption(new Option('--download-rate-limit <n>', 'transcript downloads per download window').default(20).argParser(numeric(RANGES.rate)))
    .addOption(new Option('--download-window-ms <ms>', 'transcript download window').default(1000).argParser(numeric(RANGES.windowMs)))
    .addOption(new Option('--fail-rate <p>', 'probability of a 500 before a request runs (0-1)').argParser(numeric(RANGES.probability)))
    .addOption(new Option('--latency-ms <ms>', 'delay every response').argParser(numeric(RANGES.latencyMs)))
    .option('--faults <spec>', 'kind:probability,… (500, 500-after-write, drop, drop-after-write, html-502, 429, truncated)')
    .option('--fault-paths <regex>', 'apply faults only to paths matching this')
    .option('--control', 'serve the /__sandbox control endpoint (request log, faults, limits)')
    .option('--v1-interactions-cursor', 'send nextCursor from v1 interactions/query too')
    .option('--tls', 'serve https with a certificate made at start; its CA file is "ca_file" in the start line')
    .addOption(
      new Option('--rate-reset-format <format>', 'X-RateLimit-Reset as seconds until the reset or a Unix time')
        .choices(['delta', 'epoch'])
        .default('delta'),
    )
    .addOption(
      new Option('--retry-after-format <format>', 'Retry-After as delta-seconds or an HTTP-date')
        .choices(['seconds', 'date'])
        .default('seconds'),
    );
  examples(sandbox, [
    'crm sandbox --seed 42',
    'crm sandbox --port 0 --rate-limit 30 --rate-window-ms 3000 --control',
    'crm sandbox --tls   # then NODE_EXTRA_CA_CERTS=<ca_file> crm …',
  ]);
  sandbox.action(
    action<SandboxCommandOptions>(
      reg,
      async () => (await import('../commands/sandbox/run.js')).runSandbox,
      (_a, o) => o,
    ),
  );
}
