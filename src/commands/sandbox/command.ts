// `crm sandbox` (CONTRACT §10): the flags; commander checks the numbers and choices, run.ts the rest.
import { Option, type CommandUnknownOpts } from '@commander-js/extra-typings';
import { examples, runs, type FlagsOf, type Load, type Loose, type Registry } from '../shared/define.js';
import { numericOption as num } from '../shared/numeric.js';

const declare = (program: CommandUnknownOpts) =>
  program
    .command('sandbox')
    .description('run a local emulator of the whole API (version 2 and 1) until interrupted')
    .option('--host <host>', 'address to listen on (loopback only)', '127.0.0.1')
    .addOption(num('--port <n>', 'port (0 picks a free one)', 'port').default(4010))
    .addOption(num('--seed <n>', 'fill deterministic sample data (and keys)', 'seed'))
    .option(
      '--seed-records <counts>',
      'resource=N,… sample records of these resources (the others as --seed; seed 0 without it)',
    )
    .option('--data-file <file>', 'load the store from FILE and save it there on exit')
    .option(
      '--from <dir>',
      'serve the records of a crm snapshot folder, ids kept (not with --seed, --seed-records, --data-file)',
    )
    .option('--keys <file>', 'more keys: a JSON array of {key, version, scopes, access, user}')
    .addOption(num('--rate-limit <n>', 'requests per window per key', 'rate').default(200))
    .addOption(num('--org-rate-limit <n>', 'requests per window per organization', 'rate').default(1000))
    .addOption(num('--rate-window-ms <ms>', 'rate-limit window', 'windowMs').default(60000))
    .addOption(num('--transcript-ttl-ms <ms>', 'lifetime of a transcript link', 'windowMs').default(300000))
    .addOption(num('--download-rate-limit <n>', 'transcript downloads per download window', 'rate').default(20))
    .addOption(num('--download-window-ms <ms>', 'transcript download window', 'windowMs').default(1000))
    .addOption(num('--fail-rate <p>', 'probability of a 500 before a request runs (0-1)', 'probability'))
    .addOption(num('--latency-ms <ms>', 'delay every response', 'latencyMs'))
    .option(
      '--faults <spec>',
      'kind:probability,… (500, 500-after-write, drop, drop-after-write, html-502, 429, truncated)',
    )
    .option('--fault-paths <regex>', 'apply faults only to paths matching this')
    .option('--control', 'serve the /__sandbox control endpoint (request log, faults, limits)')
    .option('--v1-interactions-cursor', 'send nextCursor from v1 interactions/query too')
    .option('--tls', 'serve https with a certificate made at start; its CA file is "ca_file" in the start line')
    .addOption(
      new Option(
        '--rate-limit-kind <kind>',
        'fixed windows, or a sliding window (each request counts for a window after it; Reset: until the window is whole again, or with sliding-oldest until the oldest request leaves it)',
      )
        .choices(['fixed', 'sliding', 'sliding-oldest'] as const)
        .default('fixed' as const),
    )
    .addOption(
      new Option(
        '--rate-reset-format <format>',
        'X-RateLimit-Reset as seconds until the reset (decimals, or whole rounded up), a Unix time, or no X-RateLimit-* headers',
      )
        .choices(['delta', 'seconds', 'epoch', 'none'] as const)
        .default('delta' as const),
    )
    .addOption(
      new Option('--retry-after-format <format>', 'Retry-After as delta-seconds or an HTTP-date')
        .choices(['seconds', 'date'] as const)
        .default('seconds' as const),
    );

export type SandboxCommandOptions = Loose<FlagsOf<typeof declare>>;

export function registerSandbox(program: CommandUnknownOpts, reg: Registry, load: Load<SandboxCommandOptions>): void {
  const sandbox = examples(declare(program), [
    'crm sandbox --seed 42',
    'crm sandbox --port 0 --rate-limit 30 --rate-window-ms 3000 --control',
    'crm sandbox --port 0 --seed-records contacts=100000   # a CRM of 100,000 people',
    'crm sandbox --tls   # then NODE_EXTRA_CA_CERTS=<ca_file> crm …',
    'crm sandbox --port 0 --from backup   # rehearse on the copy crm snapshot backup wrote',
  ]);
  runs(sandbox, reg, load, (o) => o);
}
