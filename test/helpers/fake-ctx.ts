// A Ctx for running commands in-process: PassThrough streams that collect what a command writes,
// an empty environment, a fake clock whose sleeps return at once (and advance its time), and
// providers you can replace. Nothing touches the real terminal, ~, or the network.
//
//   const ctx = fakeCtx({ stdin: 'service_live_…\n', configDir: tmp, globals: { output: 'json' } });
//   await keysAdd({ profile: 'dev', baseUrl: 'http://127.0.0.1:4010/api/v2' }, ctx);
//   expect(ctx.stdoutText()).toBe(…);
import { PassThrough, Readable } from 'node:stream';
import type { Ctx, GlobalOptions, IO } from '../../src/commands/context.js';
import type { OutputFormat } from '../../src/output/format.js';
import type { ResolvedProfile } from '../../src/config/types.js';
import type { Clock, HttpClient } from '../../src/http/types.js';
import { FakeClock } from './clock.js';
import { fakeStdout, type FakeOut } from './fake-io.js';
import { tempDir } from './temp.js';

export type FakeStdout = FakeOut;
export type FakeStdin = NodeJS.ReadableStream & { isTTY?: boolean };

export interface FakeCtxOptions {
  /** text for standard input (then end of input), or a stream; default: empty, ended (like </dev/null) */
  stdin?: string | Buffer | NodeJS.ReadableStream;
  stdinTTY?: boolean;
  stdoutTTY?: boolean;
  stderrTTY?: boolean;
  /** terminal width reported by stdout/stderr when they are TTYs (default 100) */
  columns?: number;
  env?: Record<string, string | undefined>;
  globals?: Partial<GlobalOptions>;
  clock?: Clock;
  signal?: AbortSignal;
  /** the config folder; default: a fresh temp folder, made on first use */
  configDir?: string;
  /** what ctx.profile() returns; default: resolveProfile(globals, env, the store in configDir) */
  profile?: ResolvedProfile | (() => Promise<ResolvedProfile>);
  /** clients by version; or a function. Default: throws (no network in unit tests) after the real credential checks */
  client?:
    | HttpClient
    | { v2?: HttpClient; v1?: HttpClient }
    | ((opts?: { v1?: boolean; key?: string }) => Promise<HttpClient>);
  /** replace any provider outright */
  overrides?: Partial<Pick<Ctx, 'format' | 'interactive' | 'warn' | 'configDir' | 'profile' | 'client'>>;
}

export interface FakeCtx extends Ctx {
  io: IO & { stdout: FakeStdout; stderr: FakeStdout };
  clock: Clock;
  /** everything written to stdout so far */
  stdoutText(): string;
  /** everything written to stderr so far */
  stderrText(): string;
  /** aborts ctx.signal (Ctrl-C) unless a signal was given */
  abort(reason?: unknown): void;
}

export const DEFAULT_GLOBALS: GlobalOptions = {
  color: false,
  stderrColor: false,
  quiet: false,
  verbose: false,
  timeoutMs: 30_000,
  maxRetries: 5,
};

function makeStdin(input: FakeCtxOptions['stdin'], isTTY: boolean): FakeStdin {
  let stream: FakeStdin;
  if (input === undefined || typeof input === 'string' || Buffer.isBuffer(input)) {
    const pt = new PassThrough();
    // A TTY stays open (the test writes to it); a pipe ends after its text.
    if (input !== undefined) pt.write(input);
    if (!isTTY) pt.end();
    stream = pt;
  } else {
    stream = input;
  }
  if (isTTY) stream.isTTY = true;
  return stream;
}

function isHttpClient(c: unknown): c is HttpClient {
  return typeof c === 'object' && c !== null && typeof (c as HttpClient).request === 'function';
}

export function fakeCtx(options: FakeCtxOptions = {}): FakeCtx {
  const columns = options.columns ?? 100;
  // columns only on a terminal, as a real stream has them
  const out = fakeStdout(options.stdoutTTY ? { isTTY: true, columns } : { isTTY: false });
  const err = fakeStdout(options.stderrTTY ? { isTTY: true, columns } : { isTTY: false });
  const stdin = makeStdin(options.stdin, options.stdinTTY ?? false);
  const env: Record<string, string | undefined> = { ...(options.env ?? {}) };
  const globals: GlobalOptions = { ...DEFAULT_GLOBALS, ...options.globals };
  const controller = new AbortController();
  const signal = options.signal ?? controller.signal;
  let dir = options.configDir;
  let profile: Promise<ResolvedProfile> | undefined;

  const ctx: FakeCtx = {
    io: { stdin, stdout: out, stderr: err },
    env,
    globals,
    clock: options.clock ?? new FakeClock(),
    signal,
    configDir() {
      dir ??= tempDir('crm-fake-ctx-');
      return dir;
    },
    profile() {
      const p = options.profile;
      if (typeof p === 'function') return p();
      if (p !== undefined) return Promise.resolve(p);
      profile ??= (async () => {
        const config = await import('../../src/config/index.js');
        return config.resolveProfile(
          { profile: globals.profile, baseUrl: globals.baseUrl, v1BaseUrl: globals.v1BaseUrl },
          env,
          () => config.openConfigStore(ctx.configDir()),
        );
      })();
      return profile;
    },
    async client(opts = {}) {
      const c = options.client;
      if (typeof c === 'function') return c(opts);
      // The real checks first: no key → AuthError, wrong key version → AuthError, no base URL → UsageError.
      const { credentialsFor } = await import('../../src/config/credentials.js');
      const p = await ctx.profile();
      const kind = opts.v1 ? 'v1' : 'v2';
      credentialsFor(
        opts.key === undefined ? p : kind === 'v1' ? { ...p, v1ApiKey: opts.key } : { ...p, apiKey: opts.key },
        kind,
      );
      const chosen = isHttpClient(c) ? c : opts.v1 ? c?.v1 : c?.v2;
      if (!chosen) throw new Error(`fakeCtx: no ${opts.v1 ? 'v1' : 'v2'} client was given`);
      return chosen;
    },
    format(): OutputFormat {
      return globals.output ?? (out.isTTY ? 'table' : 'json');
    },
    interactive: () => Boolean(stdin.isTTY && out.isTTY),
    warn(message) {
      if (!globals.quiet) err.write(`${message}\n`);
    },
    stdoutText: () => out.text(),
    stderrText: () => err.text(),
    abort(reason) {
      controller.abort(reason);
    },
    ...options.overrides,
  };
  return ctx;
}

/** A readable that yields `chunks` (e.g. a key split across writes), for stdin. */
export function readableFrom(...chunks: string[]): NodeJS.ReadableStream {
  return Readable.from(chunks.map((c) => Buffer.from(c)));
}
