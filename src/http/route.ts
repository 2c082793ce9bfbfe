// How a request leaves the process: straight to the origin, or through the proxy the environment
// names (proxy-env.ts). The proxy code (undici's ProxyAgent) is imported only when a proxy is used,
// so the common case loads nothing more at start-up (README, "Company networks").
import type { Dispatcher } from 'undici';
import { type ProxyChoice, proxyConfigured, proxyFor, type Env } from './proxy-env.js';

/** The proxy for `target` under `env`, or undefined (direct). A malformed proxy URL is a UsageError. */
export function chooseProxy(target: URL, env: Env = process.env): ProxyChoice | undefined {
  return proxyConfigured(env) ? proxyFor(target, env) : undefined;
}

/**
 * A dispatcher that tunnels every request through `proxy` with CONNECT (https targets only: see
 * proxy-env.ts), so the proxy sees the target's host and port and nothing of the exchange. The
 * proxy's user name and password (from its URL) go in `Proxy-Authorization`, to the proxy only.
 */
export async function openProxyAgent(proxy: ProxyChoice, connectTimeoutMs: number): Promise<Dispatcher> {
  const [{ default: ProxyAgent }, { default: Pool }, { default: connect }] = await Promise.all([
    import('undici/lib/dispatcher/proxy-agent.js'),
    import('undici/lib/dispatcher/pool.js'),
    import('undici/lib/api/api-connect.js'),
  ]);
  return new ProxyAgent({
    uri: proxy.url,
    // ProxyAgent sends CONNECT with `client.connect()`, a method the package root puts on every
    // dispatcher; we load undici's parts, not its root (start-up time), so the pool gets it here.
    clientFactory: (origin, options) => Object.assign(new Pool(origin, options), { connect }),
    proxyTls: { timeout: connectTimeoutMs },
    keepAliveTimeout: 4_000,
  });
}
