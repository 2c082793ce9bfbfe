// The proxy's side of the transport: a ProxyAgent whose CONNECTs are bounded and re-coded, and the
// count of tunnels being opened and of requests waiting for one. Loaded with the transport, but
// undici's proxy code is imported only when a request goes through a proxy (start-up).
import type { Dispatcher } from 'undici';
import { linkSignals } from './clock.js';
import { tunnelAbandoned, tunnelError } from './network-error.js';
import type { ProxyChoice } from './proxy-env.js';

/** The CONNECTs of one proxy agent, and the requests waiting for a connection through it. */
export class Tunnels {
  /** CONNECTs the proxy has not answered yet: a request's deadline then is the proxy's silence */
  opening = 0;
  private waiting = 0;
  private giveUp = new AbortController();
  /** aborts the CONNECTs under way when no request waits for a connection any more (stopped, timed out) */
  get abandoned(): AbortSignal {
    return this.giveUp.signal;
  }

  /** A request waits for a connection; the function returned says it no longer does (sent or ended). */
  enter(): () => void {
    this.waiting++;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      // an open socket to the proxy would hold the process (and a retry would queue behind it)
      if (--this.waiting === 0 && this.opening > 0) {
        this.giveUp.abort(tunnelAbandoned());
        this.giveUp = new AbortController();
      }
    };
  }
}

/**
 * CONNECT tunnels through `proxy` (credentials to the proxy only). ProxyAgent calls `client.connect()`,
 * which only the package root (not loaded: start-up) puts on dispatchers: the pool gets it here,
 * bounded by the connect timeout and with its failures re-coded (`tunnelError`): undici retries a
 * connection closed while connecting at once and for ever (issue 17: 3,500 CONNECTs a second).
 */
export async function openProxyAgent(
  proxy: ProxyChoice,
  connectTimeoutMs: number,
  tunnels: Tunnels,
): Promise<Dispatcher> {
  const [{ default: ProxyAgent }, { default: Pool }, { default: connect }] = await Promise.all([
    import('undici/lib/dispatcher/proxy-agent.js'),
    import('undici/lib/dispatcher/pool.js'),
    import('undici/lib/api/api-connect.js'),
  ]);
  async function openTunnel(this: Dispatcher, options: Dispatcher.ConnectOptions): Promise<Dispatcher.ConnectData> {
    tunnels.opening++;
    const bound = linkSignals(
      options.signal as AbortSignal | undefined,
      AbortSignal.timeout(connectTimeoutMs),
      tunnels.abandoned,
    );
    try {
      return await connect.call(this, { ...options, signal: bound.signal });
    } catch (err) {
      throw tunnelError(err, connectTimeoutMs);
    } finally {
      tunnels.opening--;
      bound.dispose();
    }
  }
  return new ProxyAgent({
    uri: proxy.url,
    clientFactory: (origin, options) => Object.assign(new Pool(origin, options), { connect: openTunnel }),
    proxyTls: { timeout: connectTimeoutMs },
    keepAliveTimeout: 4_000,
  });
}
