// One HTTP exchange over undici: no retries, no redirects, no interpretation. Not fetch: it follows
// redirects and forwards custom auth headers to the new origin. Pool, Agent and request come from
// their own files, not the package root (start-up: undici-parts.d.ts); the proxy code only when used.
import { setFlagsFromString } from 'node:v8';
import type { Dispatcher, Pool } from 'undici';
import AgentClass from 'undici/lib/dispatcher/agent.js';
import PoolClass from 'undici/lib/dispatcher/pool.js';
import request from 'undici/lib/api/api-request.js';
import { MAX_TIMER_MS, linkSignals, setLongTimeout } from './clock.js';
import { routeError, tunnelTimeout } from './network-error.js';
import { Tunnels, openProxyAgent } from './proxy-agent.js';
import { type Env, type ProxyChoice, type Route, routeFor } from './proxy-env.js';

/** The largest API body crm reads (CONTRACT §4): a body without end must not take the memory. */
export const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

export interface RawResponse {
  status: number;
  /** lower-case names; repeated headers joined with ", " */
  headers: Record<string, string>;
  text: string;
}

export interface SendOptions {
  method: string;
  /** path and query */
  path: string;
  /** another origin than the transport's (a link) */
  origin?: string;
  headers: Record<string, string>;
  body?: string;
  timeoutMs: number;
  signal?: AbortSignal;
  /** cancels the request only while it is not yet sent (waiting for a connection or a tunnel); Ctrl-C */
  stop?: AbortSignal;
  /** default MAX_RESPONSE_BYTES */
  maxBodyBytes?: number;
}

let wasmFlagSet = false;
/** llhttp is WebAssembly; V8's background tier-up of it held every exit 200–500 ms. Set before the first connection. */
function keepExitFast(): void {
  if (wasmFlagSet) return;
  wasmFlagSet = true;
  try {
    setFlagsFromString('--liftoff-only');
  } catch {
    // no V8 flags: a slower exit, nothing worse
  }
}

/** Links on other origins share one Agent, or one ProxyAgent per proxy. */
let linkAgent: Dispatcher | undefined;
const linkProxies = new Map<string, { agent: Promise<Dispatcher>; tunnels: Tunnels }>();

/** A pool for the API's origin (or a ProxyAgent tunnelling to it), and the link dispatchers. */
export class OriginTransport {
  private pool?: Pool;
  private proxied?: Promise<Dispatcher>;
  private readonly tunnels = new Tunnels();
  /** how requests to the origin go, chosen once (a malformed proxy variable throws here: nothing sent) */
  private readonly apiRoute: Route;

  constructor(
    readonly origin: string,
    private readonly connectTimeoutMs: number,
    private readonly env: Env = process.env,
  ) {
    this.apiRoute = routeFor(new URL(origin), env);
  }

  /** Through which proxy, or direct and why, requests to `origin` go (a UsageError when a proxy variable is malformed). */
  route(origin: string): Route {
    return origin === this.origin ? this.apiRoute : routeFor(new URL(origin), this.env);
  }

  private dispatcher(
    origin: string,
    proxy: ProxyChoice | undefined,
  ): { dispatcher: Dispatcher | Promise<Dispatcher>; tunnels?: Tunnels } {
    if (origin !== this.origin) {
      if (!proxy) return { dispatcher: (linkAgent ??= new AgentClass({ keepAliveTimeout: 4_000 })) };
      let link = linkProxies.get(proxy.url);
      if (!link) {
        const tunnels = new Tunnels();
        linkProxies.set(proxy.url, (link = { agent: openProxyAgent(proxy, this.connectTimeoutMs, tunnels), tunnels }));
      }
      return { dispatcher: link.agent, tunnels: link.tunnels };
    }
    if (proxy)
      return {
        dispatcher: (this.proxied ??= openProxyAgent(proxy, this.connectTimeoutMs, this.tunnels)),
        tunnels: this.tunnels,
      };
    return {
      dispatcher: (this.pool ??= new PoolClass(this.origin, {
        connect: { timeout: this.connectTimeoutMs },
        keepAliveTimeout: 4_000,
      })),
    };
  }

  async send(opts: SendOptions): Promise<RawResponse> {
    keepExitFast();
    const origin = opts.origin ?? this.origin;
    const { proxy } = this.route(origin);
    const route = this.dispatcher(origin, proxy);
    const dispatcher = await route.dispatcher;
    const tunnels = route.tunnels;
    const ends = exchangeEnds(opts, tunnels);
    const requestOptions: Dispatcher.RequestOptions = {
      path: opts.path,
      method: opts.method,
      headers: opts.headers,
      body: opts.body,
      headersTimeout: Math.min(opts.timeoutMs + 1_000, MAX_TIMER_MS),
      bodyTimeout: Math.min(opts.timeoutMs + 1_000, MAX_TIMER_MS),
      signal: ends.signal,
      ...(proxy || origin !== this.origin ? { origin } : {}),
    };
    let pending: Promise<Dispatcher.ResponseData> | undefined;
    try {
      // undici notices an abort only once the request is on a connection: one never made (a silent or
      // dropping proxy) would hold it for ever, so the abort is raced here
      const watched: Pick<Dispatcher, 'dispatch'> = {
        dispatch: (o, handler) => dispatcher.dispatch(o, onConnect(handler, ends.sent)),
      };
      pending = request.call(watched as Dispatcher, requestOptions);
      const res = await Promise.race([pending, rejectOnAbort(ends.signal)]);
      const headers = Object.fromEntries(
        Object.entries(res.headers).flatMap(([name, v]) =>
          v === undefined ? [] : [[name.toLowerCase(), Array.isArray(v) ? v.join(', ') : v]],
        ),
      );
      if (res.statusCode >= 300 && res.statusCode < 400) {
        await res.body.dump().catch(() => undefined);
        return { status: res.statusCode, headers, text: '' };
      }
      const text = (await readBody(res.body, headers, opts.maxBodyBytes ?? MAX_RESPONSE_BYTES)).toString('utf8');
      return { status: res.statusCode, headers, text };
    } catch (err) {
      // a request that lost the race may still be answered: its body is let go
      pending?.then(
        (res) => res.body.destroy(),
        () => undefined,
      );
      if (ends.stopped()) throw opts.stop?.reason;
      const failure = ends.timedOut() ?? err;
      throw proxy ? routeError(failure, proxy) : failure;
    } finally {
      ends.dispose();
    }
  }

  async close(): Promise<void> {
    const pool = this.pool;
    const proxied = this.proxied;
    this.pool = undefined;
    this.proxied = undefined;
    await pool?.close();
    await (await proxied?.catch(() => undefined))?.close();
  }
}

/** A body, refused (BODY_TOO_LARGE) past `maxBytes` or at once when Content-Length says so; the rest is never read. */
async function readBody(
  body: AsyncIterable<Buffer> & { destroy(err?: Error): unknown },
  headers: Record<string, string>,
  maxBytes: number,
): Promise<Buffer> {
  // not retried: the same request would get the same body
  const tooLarge = (declared?: number): Error =>
    codedError(
      'BODY_TOO_LARGE',
      declared === undefined
        ? `the response body passed ${formatBytes(maxBytes)}, the most crm reads; stopped reading it`
        : `the response body is ${formatBytes(declared)} (Content-Length), over the ${formatBytes(maxBytes)} crm reads; not read`,
    );
  const declared = Number(headers['content-length']);
  if (declared > maxBytes) {
    body.destroy();
    throw tooLarge(declared);
  }
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of body) {
    bytes += chunk.length;
    if (bytes > maxBytes) throw tooLarge(); // leaving the loop destroys the stream
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, bytes);
}

function formatBytes(n: number): string {
  return n >= 1024 * 1024 ? `${Math.round((n / 1024 / 1024) * 10) / 10} MiB` : `${n} bytes`;
}

/**
 * What ends one exchange: the caller's signal (cancels it in flight), one deadline for the whole
 * exchange (retried like a reset: undici's own timeouts, a backstop, do not bound a dripping body),
 * and `stop` only while the request is not sent (nothing of it reached the server).
 */
function exchangeEnds(opts: SendOptions, tunnels: Tunnels | undefined) {
  let sent = false;
  const leave = tunnels?.enter();
  // one controller of ours for both ends (the deadline, `stop` before it is sent), and which of them came
  const mine = new AbortController();
  let deadline: { reason: unknown } | undefined;
  let stopped = false;
  const cancelTimer = setLongTimeout(() => {
    // before the request is sent, while the proxy has not answered a CONNECT: the proxy is silent
    const silentProxy = !sent && tunnels !== undefined && tunnels.opening > 0;
    deadline = {
      reason: silentProxy
        ? tunnelTimeout(opts.timeoutMs)
        : codedError('ETIMEDOUT', `no answer within ${opts.timeoutMs} ms`),
    };
    mine.abort(deadline.reason);
  }, opts.timeoutMs);
  const onStop = () => {
    if (sent) return;
    leave?.();
    stopped = true;
    mine.abort(opts.stop?.reason);
  };
  opts.stop?.addEventListener('abort', onStop, { once: true });
  if (opts.stop?.aborted) onStop();
  const linked = linkSignals(opts.signal, mine.signal);
  return {
    signal: linked.signal,
    /** the request is on a connection (its tunnel open), about to be written */
    sent: () => {
      sent = true;
      leave?.();
    },
    stopped: () => stopped,
    /** the deadline's error, when it ended the exchange */
    timedOut: (): unknown => (deadline && !opts.signal?.aborted ? deadline.reason : undefined),
    dispose: () => {
      cancelTimer();
      linked.dispose();
      opts.stop?.removeEventListener('abort', onStop);
      leave?.();
    },
  };
}

/** Rejects with the signal's reason when it aborts (the caller disposes the signal). */
function rejectOnAbort(signal: AbortSignal): Promise<never> {
  const aborted = new Promise<never>((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
  aborted.catch(() => undefined); // an abort after the race (while the body is read) is nobody's to handle
  return aborted;
}

/** `handler` (undici's), telling `seen` when its request is put on a connection, before any of it is written. */
function onConnect(handler: Dispatcher.DispatchHandler, seen: () => void): Dispatcher.DispatchHandler {
  return new Proxy(handler, {
    get(target, name) {
      const value: unknown = Reflect.get(target, name);
      if (typeof value !== 'function') return value;
      const method = value as (...a: unknown[]) => unknown;
      if (name !== 'onConnect') return method.bind(target);
      return (...args: unknown[]) => {
        seen();
        return method.apply(target, args);
      };
    },
  });
}

/** An error with the code the retry rules and network-error.ts read. */
function codedError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}
