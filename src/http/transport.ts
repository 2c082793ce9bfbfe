// One HTTP exchange over undici: no retries, no redirects, no interpretation. Not fetch: it follows
// redirects and forwards custom auth headers to the new origin. Pool, Agent and request come from
// their own files, not the package root (start-up: undici-parts.d.ts); the proxy code only when used.
import { setFlagsFromString } from 'node:v8';
import type { Dispatcher, Pool } from 'undici';
import AgentClass from 'undici/lib/dispatcher/agent.js';
import PoolClass from 'undici/lib/dispatcher/pool.js';
import request from 'undici/lib/api/api-request.js';
import { MAX_TIMER_MS, linkSignals, setLongTimeout } from './clock.js';
import { routeError } from './network-error.js';
import { type Env, type ProxyChoice, proxyFor } from './proxy-env.js';

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

/**
 * CONNECT tunnels through `proxy` (credentials to the proxy only). ProxyAgent calls `client.connect()`,
 * which only the package root (not loaded: start-up) puts on dispatchers: the pool gets it here.
 */
async function openProxyAgent(proxy: ProxyChoice, connectTimeoutMs: number): Promise<Dispatcher> {
  const [{ default: ProxyAgent }, { default: Pool }, { default: connect }] = await Promise.all([
    import('undici/lib/dispatcher/proxy-agent.js'),
    import('undici/lib/dispatcher/pool.js'),
    import('undici/lib/api/api-connect.js'),
  ]);
  return new ProxyAgent({
    uri: proxy.url,
    clientFactory: (origin, options) => Object.assign(new Pool(origin, options), { connect }),
    proxyTls: { timeout: connectTimeoutMs },
    keepAliveTimeout: 4_000,
  });
}

/** Links on other origins share one Agent, or one ProxyAgent per proxy. */
let linkAgent: Dispatcher | undefined;
const linkProxies = new Map<string, Promise<Dispatcher>>();

/** A pool for the API's origin (or a ProxyAgent tunnelling to it), and the link dispatchers. */
export class OriginTransport {
  private pool?: Pool;
  private proxied?: Promise<Dispatcher>;
  /** the proxy requests go through, chosen once (a malformed proxy variable throws here: nothing sent) */
  readonly proxy: ProxyChoice | undefined;

  constructor(
    readonly origin: string,
    private readonly connectTimeoutMs: number,
    private readonly env: Env = process.env,
  ) {
    this.proxy = proxyFor(new URL(origin), env);
  }

  /** The proxy for `origin` (a UsageError when a proxy variable is malformed). */
  route(origin: string): ProxyChoice | undefined {
    return origin === this.origin ? this.proxy : proxyFor(new URL(origin), this.env);
  }

  private dispatcher(origin: string, proxy: ProxyChoice | undefined): Dispatcher | Promise<Dispatcher> {
    if (origin !== this.origin) {
      if (!proxy) return (linkAgent ??= new AgentClass({ keepAliveTimeout: 4_000 }));
      let agent = linkProxies.get(proxy.url);
      if (!agent) linkProxies.set(proxy.url, (agent = openProxyAgent(proxy, this.connectTimeoutMs)));
      return agent;
    }
    if (proxy) return (this.proxied ??= openProxyAgent(proxy, this.connectTimeoutMs));
    return (this.pool ??= new PoolClass(this.origin, {
      connect: { timeout: this.connectTimeoutMs },
      keepAliveTimeout: 4_000,
    }));
  }

  async send(opts: SendOptions): Promise<RawResponse> {
    keepExitFast();
    const origin = opts.origin ?? this.origin;
    const proxy = this.route(origin);
    const dispatcher = await this.dispatcher(origin, proxy);
    // One deadline for the whole exchange (retried like a reset): undici's own timeouts (a backstop) do not bound a dripping body.
    const deadline = new AbortController();
    const cancelTimer = setLongTimeout(() => deadline.abort(codedError('ETIMEDOUT', `no answer within ${opts.timeoutMs} ms`)), opts.timeoutMs);
    const linked = linkSignals(opts.signal, deadline.signal);
    const requestOptions: Dispatcher.RequestOptions = {
      path: opts.path,
      method: opts.method,
      headers: opts.headers,
      body: opts.body,
      headersTimeout: Math.min(opts.timeoutMs + 1_000, MAX_TIMER_MS),
      bodyTimeout: Math.min(opts.timeoutMs + 1_000, MAX_TIMER_MS),
      signal: linked.signal,
      ...(proxy || origin !== this.origin ? { origin } : {}),
    };
    try {
      const res = await request.call(dispatcher, requestOptions);
      const headers = Object.fromEntries(
        Object.entries(res.headers).flatMap(([name, v]) => (v === undefined ? [] : [[name.toLowerCase(), Array.isArray(v) ? v.join(', ') : v]])),
      );
      if (res.statusCode >= 300 && res.statusCode < 400) {
        await res.body.dump().catch(() => undefined);
        return { status: res.statusCode, headers, text: '' };
      }
      const text = (await readBody(res.body, headers, opts.maxBodyBytes ?? MAX_RESPONSE_BYTES)).toString('utf8');
      return { status: res.statusCode, headers, text };
    } catch (err) {
      if (deadline.signal.aborted && !opts.signal?.aborted) throw deadline.signal.reason;
      throw proxy ? routeError(err, proxy) : err;
    } finally {
      cancelTimer();
      linked.dispose();
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

/** An error with the code the retry rules and network-error.ts read. */
function codedError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}
