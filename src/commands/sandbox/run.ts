// `crm sandbox`: checks the flags, starts the emulator, prints one JSON line with the URLs and
// keys, and serves until Ctrl-C or SIGTERM, then closes (saving the data file).
import type { Ctx } from '../context.js';
import { UsageError } from '../../http/errors.js';
import type { SandboxOptions } from '../../sandbox/index.js';
import type { SandboxCommandOptions } from './command.js';
import { shellWord } from '../shared/command-line.js';

/** `fn()`, its error a UsageError (with `prefix`) naming the flag. */
function flag<T>(prefix: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw new UsageError(`${prefix}${(err as Error).message}`);
  }
}

/**
 * The options of startSandbox from the flags commander parsed (numbers and choices already checked
 * there); a UsageError names the first bad flag of those it cannot check.
 */
export async function sandboxOptions(opts: SandboxCommandOptions): Promise<SandboxOptions> {
  const { parseFaultSpec, parseSeedRecords, loadKeysFile } = await import('../../sandbox/index.js');
  const { host, faults: spec, seedRecords: counts, keys, control, v1InteractionsCursor, tls, ...rest } = opts;
  const faults = spec === undefined ? undefined : flag('--faults: ', () => parseFaultSpec(spec));
  const seedRecords = counts === undefined ? undefined : flag('--seed-records: ', () => parseSeedRecords(counts));
  if (rest.faultPaths !== undefined)
    flag('--fault-paths: invalid regular expression: ', () => new RegExp(rest.faultPaths!));
  if (rest.from !== undefined) {
    const others = [
      ['--seed', rest.seed],
      ['--seed-records', counts],
      ['--data-file', rest.dataFile],
    ].filter(([, v]) => v !== undefined);
    if (others.length > 0) {
      throw new UsageError(
        `--from serves the snapshot as it is: it cannot be combined with ${others.map(([f]) => f).join(', ')}`,
      );
    }
  }
  const extraKeys = keys === undefined ? undefined : flag('', () => loadKeysFile(keys));
  // The sandbox has printed keys and a throw-away CA (with --tls): it listens on loopback only.
  if (host !== undefined && !/^(localhost|127(\.\d{1,3}){3}|::1|\[::1\])$/.test(host)) {
    throw new UsageError(`--host must be a loopback address (127.0.0.1, ::1, localhost), got "${host}"`);
  }
  return {
    ...(rest as Omit<SandboxOptions, 'faults' | 'seedRecords'>),
    host: host === '[::1]' ? '::1' : host,
    extraKeys,
    faults,
    seedRecords,
    control: Boolean(control),
    v1InteractionsCursor: Boolean(v1InteractionsCursor),
    tls: Boolean(tls),
  };
}

function waitForStop(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      signal.removeEventListener('abort', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    if (signal.aborted) return resolve();
    signal.addEventListener('abort', stop);
    process.on('SIGTERM', stop);
  });
}

export async function runSandbox(opts: SandboxCommandOptions, ctx: Ctx): Promise<void> {
  const options = await sandboxOptions(opts);
  const { startSandbox } = await import('../../sandbox/index.js');
  let sandbox;
  try {
    sandbox = await startSandbox(options);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'EADDRINUSE')
      throw new UsageError(`port ${options.port} is already in use (try --port 0 for a free one)`);
    if (e.code === 'EACCES' || e.code === 'EADDRNOTAVAIL')
      throw new UsageError(`cannot listen on ${options.host ?? '127.0.0.1'}:${options.port}: ${e.code}`);
    if (e instanceof Error && /^((data|keys) file|snapshot) /.test(e.message)) throw new UsageError(e.message);
    throw err;
  }
  const { baseUrl, v1BaseUrl, keys, controlUrl, downloadUrl, caFile, warnings } = sandbox;
  for (const w of warnings) ctx.warn(w);
  // JSON.stringify leaves out the undefined ones (control_url without --control, ca_file without --tls)
  const line = {
    base_url: baseUrl,
    v1_base_url: v1BaseUrl,
    keys,
    control_url: controlUrl || undefined,
    download_url: downloadUrl,
    ca_file: caFile || undefined,
  };
  ctx.io.stdout.write(`${JSON.stringify(line)}\n`);
  // commands to paste as they are: the admin key itself (a local throw-away key, in the JSON line too), values shell-quoted
  const vars = [
    ...(caFile ? [['NODE_EXTRA_CA_CERTS', caFile]] : []),
    ['CRM_BASE_URL', baseUrl],
    ['CRM_API_KEY', keys.admin],
  ]
    .map(([name, value]) => `${name}=${shellWord(value!)}`)
    .join(' ');
  // without --seed, --data-file or --from it starts empty: a list alone would only say "No results."
  const empty =
    options.seed === undefined &&
    options.seedRecords === undefined &&
    options.dataFile === undefined &&
    options.from === undefined;
  const tries = empty
    ? ['crm contacts create --set email=ada@example.com', 'crm contacts list']
    : ['crm contacts list'];
  const counts = Object.entries(options.seedRecords ?? {}).map(([name, n]) => `${n} ${name}`);
  const from = options.from === undefined ? [] : [`snapshot ${options.from}`];
  const seeded = [...(options.seed === undefined ? [] : [`seed ${options.seed}`]), ...counts, ...from].join(', ');
  const what = empty ? ', empty (--seed 42 starts it with sample data)' : seeded === '' ? '' : ` (${seeded})`;
  ctx.warn(
    `crm sandbox listening on ${sandbox.url}${what}. Try:\n${tries.map((c) => `  ${vars} ${c}\n`).join('')}Press Ctrl-C to stop.`,
  );
  try {
    await waitForStop(ctx.signal);
  } finally {
    await sandbox.close();
  }
}
