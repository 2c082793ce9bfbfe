// The Ctx a command runs with; config (conf) and the HTTP core (undici, zod) load only when asked for.
import type { Ctx, GlobalOptions } from '../commands/context.js';
import type { RunState } from '../commands/shared/define.js';
import type { ResolvedProfile } from '../config/types.js';
import { configDirFor } from '../config/paths.js';
import { systemClock } from '../http/clock.js';
import { UsageError } from '../http/errors.js';
import type { HttpClient } from '../http/types.js';
import { sanitizeForTerminal } from '../output/sanitize.js';
import { forStderr } from '../output/width.js';

type ClientOptions = Parameters<Ctx['client']>[0] & {};

/** CRM_RATE_LIMIT_BUDGET: seconds one request may wait out 429s in all (README); unset: the core's default. */
function rateLimitBudget(value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds < 0 || seconds > 86_400) {
    throw new UsageError(
      `CRM_RATE_LIMIT_BUDGET must be a number of seconds from 0 to 86400, got ${JSON.stringify(value.slice(0, 40))}`,
    );
  }
  return Math.round(seconds * 1000);
}

export function createContext(state: RunState, globals: GlobalOptions): Ctx {
  const { io, env } = state;
  let profile: Promise<ResolvedProfile> | undefined;
  const clients = new Map<string, Promise<HttpClient>>();
  const ctx: Ctx = {
    io,
    env,
    globals,
    clock: systemClock,
    signal: state.signal,
    configDir: () => configDirFor(env),
    profile() {
      return (profile ??= import('../config/index.js').then((config) => {
        const flags = { profile: globals.profile, baseUrl: globals.baseUrl, v1BaseUrl: globals.v1BaseUrl };
        const loadStore = async () => config.openConfigStore(configDirFor(env));
        return config.resolveProfile(flags, env, loadStore, (message) => ctx.warn(message));
      }));
    },
    client(opts = {}) {
      const key = `${opts.v1 ? 'v1' : 'v2'}${opts.key === undefined ? '' : `:${opts.key}`}`;
      if (!clients.has(key)) clients.set(key, createClient(ctx, state, opts));
      return clients.get(key)!;
    },
    format: () => globals.output ?? (io.stdout.isTTY ? 'table' : 'json'),
    interactive: () => Boolean(io.stdin.isTTY && io.stdout.isTTY),
    warn(message) {
      // every notice, hint and warning: they quote server text (cursors, ids, messages)
      // on a terminal, wrapped at spaces to its width (a 179-column notice was cut mid-word)
      if (!globals.quiet)
        io.stderr.write(`${forStderr(io.stderr, sanitizeForTerminal(message, { keepNewlines: true }))}\n`);
    },
  };
  return ctx;
}

async function createClient(ctx: Ctx, state: RunState, opts: ClientOptions): Promise<HttpClient> {
  const { globals, io } = ctx;
  const kind = opts.v1 ? 'v1' : 'v2';
  const [p, http, config] = await Promise.all([
    ctx.profile(),
    import('../http/client.js'),
    import('../config/index.js'),
  ]);
  const withKey =
    opts.key === undefined ? p : kind === 'v1' ? { ...p, v1ApiKey: opts.key } : { ...p, apiKey: opts.key };
  const { baseUrl, apiKey } = config.credentialsFor(withKey, kind);
  return http.createClient({
    baseUrl,
    apiKey,
    redactKeys: [p.apiKey, p.v1ApiKey],
    timeoutMs: globals.timeoutMs,
    maxRetries: globals.maxRetries,
    // spec: version 1 takes the key only as X-Service-Api-Key
    authHeader: kind === 'v1' ? 'x-api-key' : p.authHeader,
    clock: systemClock,
    signal: state.signal,
    // a wait notice wrapped to a terminal like every notice; a request line whole (its URL one piece)
    log: globals.verbose
      ? (line, notice) =>
          io.stderr.write(`${notice ? forStderr(io.stderr, sanitizeForTerminal(line)) : sanitizeForTerminal(line)}\n`)
      : undefined,
    // server text (a Retry-After) may be in it: sanitised like the log
    notice: (line) => ctx.warn(sanitizeForTerminal(line)),
    rateLimitBudgetMs: rateLimitBudget(state.env.CRM_RATE_LIMIT_BUDGET),
    concurrencyFlag: opts.concurrencyFlag,
  });
}
