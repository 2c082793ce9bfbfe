// Makes the Ctx a command runs with: real streams and clock, and lazy providers that load the
// config (conf) and the HTTP core (undici, zod) only when the command asks for them.
import type { Ctx, GlobalOptions, OutputFormat } from '../commands/context.js';
import type { ResolvedProfile } from '../config/types.js';
import { systemClock } from '../http/clock.js';
import type { HttpClient } from '../http/types.js';
import { configDirFor } from '../config/paths.js';
import { sanitizeForTerminal } from '../output/sanitize.js';
import type { RunState } from './program.js';

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
      profile ??= (async () => {
        const config = await import('../config/index.js');
        return config.resolveProfile(
          { profile: globals.profile, baseUrl: globals.baseUrl, v1BaseUrl: globals.v1BaseUrl },
          env,
          async () => config.openConfigStore(configDirFor(env)),
        );
      })();
      return profile;
    },
    client(opts = {}) {
      const kind = opts.v1 ? 'v1' : 'v2';
      const cacheKey = opts.key === undefined ? kind : `${kind}:${opts.key}`;
      let client = clients.get(cacheKey);
      if (!client) {
        client = (async () => {
          const [p, http, config] = await Promise.all([
            ctx.profile(),
            import('../http/client.js'),
            import('../config/index.js'),
          ]);
          const { baseUrl, apiKey } = config.credentialsFor(
            opts.key === undefined ? p : kind === 'v1' ? { ...p, v1ApiKey: opts.key } : { ...p, apiKey: opts.key },
            kind,
          );
          return http.createClient({
            baseUrl,
            apiKey,
            redactKeys: [p.apiKey, p.v1ApiKey],
            // spec: version 1 takes the key only as X-Service-Api-Key
            authHeader: kind === 'v1' ? 'x-api-key' : p.authHeader,
            timeoutMs: globals.timeoutMs,
            maxRetries: globals.maxRetries,
            clock: systemClock,
            signal: state.signal,
            log: globals.verbose ? (line) => io.stderr.write(`${sanitizeForTerminal(line)}\n`) : undefined,
          });
        })();
        clients.set(cacheKey, client);
      }
      return client;
    },
    format(): OutputFormat {
      return globals.output ?? (io.stdout.isTTY ? 'table' : 'json');
    },
    interactive: () => Boolean(io.stdin.isTTY && io.stdout.isTTY),
    warn(message) {
      // every notice, hint and warning: they quote server text (cursors, ids, messages)
      if (!globals.quiet) io.stderr.write(`${sanitizeForTerminal(message, { keepNewlines: true })}\n`);
    },
  };
  return ctx;
}
