// `crm sandbox`: checks the flags, starts the emulator, prints one JSON line with the URLs and
// keys, and serves until Ctrl-C or SIGTERM, then closes (saving the data file).
import type { Ctx } from '../context.js';
import { UsageError } from '../../http/errors.js';
import type { SandboxOptions } from '../../sandbox/index.js';
import type { SandboxCommandOptions } from './command.js';

type Num = number | string | undefined;
const POSITIVE = ['rateLimit', 'orgRateLimit', 'rateWindowMs', 'transcriptTtlMs', 'downloadRateLimit', 'downloadWindowMs'] as const;

function choice<T extends string>(flag: string, value: string | undefined, allowed: readonly T[]): T | undefined {
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value)) throw new UsageError(`${flag} must be one of ${allowed.join(', ')}, got "${value}"`);
  return value as T;
}

function number(flag: string, value: Num, check: (n: number) => boolean, what: string): number | undefined {
  if (value === undefined) return undefined;
  const n = typeof value === 'number' ? value : String(value).trim() === '' ? NaN : Number(value);
  if (!Number.isFinite(n) || !check(n)) throw new UsageError(`${flag} must be ${what}, got "${String(value)}"`);
  return n;
}

const int =
  (min: number, max = Number.MAX_SAFE_INTEGER) =>
  (n: number) =>
    Number.isInteger(n) && n >= min && n <= max;

/** `fn()`, its error a UsageError (with `prefix`) naming the flag. */
function flag<T>(prefix: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw new UsageError(`${prefix}${(err as Error).message}`);
  }
}

/** The options of startSandbox from the flags; a UsageError names the first bad flag. */
export async function sandboxOptions(opts: SandboxCommandOptions): Promise<SandboxOptions> {
  const { parseFaultSpec, loadKeysFile, RESET_FORMATS, RETRY_AFTER_FORMATS } = await import('../../sandbox/index.js');
  const faults = opts.faults === undefined ? undefined : flag('--faults: ', () => parseFaultSpec(opts.faults!));
  if (opts.faultPaths !== undefined) flag('--fault-paths: invalid regular expression: ', () => new RegExp(opts.faultPaths!));
  const extraKeys = opts.keys === undefined ? undefined : flag('', () => loadKeysFile(opts.keys!));
  // The sandbox has printed keys and a throw-away CA (with --tls): it listens on loopback only.
  if (opts.host !== undefined && !/^(localhost|127(\.\d{1,3}){3}|::1|\[::1\])$/.test(opts.host)) {
    throw new UsageError(`--host must be a loopback address (127.0.0.1, ::1, localhost), got "${opts.host}"`);
  }
  const port = number('--port', opts.port, int(0, 65535), 'an integer from 0 to 65535');
  const seed = number('--seed', opts.seed, int(0, 0xffffffff), 'an integer from 0 to 4294967295');
  const kebab = (name: string) => `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
  const positive = Object.fromEntries(POSITIVE.map((k) => [k, number(kebab(k), opts[k], int(1), 'a positive integer')]));
  return {
    host: opts.host === '[::1]' ? '::1' : opts.host,
    port,
    seed,
    dataFile: opts.dataFile,
    extraKeys,
    ...positive,
    failRate: number('--fail-rate', opts.failRate, (n) => n >= 0 && n <= 1, 'a number from 0 to 1'),
    latencyMs: number('--latency-ms', opts.latencyMs, int(0), 'a non-negative integer'),
    faults,
    faultPaths: opts.faultPaths,
    control: Boolean(opts.control),
    v1InteractionsCursor: Boolean(opts.v1InteractionsCursor),
    tls: Boolean(opts.tls),
    rateResetFormat: choice('--rate-reset-format', opts.rateResetFormat, RESET_FORMATS),
    retryAfterFormat: choice('--retry-after-format', opts.retryAfterFormat, RETRY_AFTER_FORMATS),
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
    if (e.code === 'EADDRINUSE') throw new UsageError(`port ${options.port} is already in use (try --port 0 for a free one)`);
    if (e.code === 'EACCES' || e.code === 'EADDRNOTAVAIL')
      throw new UsageError(`cannot listen on ${options.host ?? '127.0.0.1'}:${options.port}: ${e.code}`);
    if (e instanceof Error && /^(data|keys) file /.test(e.message)) throw new UsageError(e.message);
    throw err;
  }
  const { baseUrl, v1BaseUrl, keys, controlUrl, downloadUrl, caFile } = sandbox;
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
  const trust = sandbox.caFile ? `NODE_EXTRA_CA_CERTS=${sandbox.caFile} ` : '';
  ctx.warn(
    `crm sandbox listening on ${sandbox.url}${options.seed === undefined ? '' : ` (seed ${options.seed})`}. Try:\n` +
      `  ${trust}CRM_BASE_URL=${sandbox.baseUrl} CRM_API_KEY=<admin key above> crm contacts list\n` +
      'Press Ctrl-C to stop.',
  );
  try {
    await waitForStop(ctx.signal);
  } finally {
    await sandbox.close();
  }
}
