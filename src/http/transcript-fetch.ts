// One GET of a tokenized transcript link (spec: Recording.transcript_url; Endpoints rule 5). The
// token is the credential, so no API key, Authorization or cookie is ever sent; the link is used
// exactly as the server gave it, never built, and redirects are not followed. Retrying is the
// caller's job (an expired link needs a fresh one from the API), so this returns typed outcomes.
import type { Dispatcher } from 'undici';
import AgentClass from 'undici/lib/dispatcher/agent.js';
import request from 'undici/lib/api/api-request.js';
import { parseJson } from '../json/exact-json.js';
import { USER_AGENT } from '../version.js';
import { MAX_TIMER_MS, setLongTimeout } from './clock.js';
import { CrmError, InterruptedError, ServerError, errorClassForStatus } from './errors.js';
import { parseRateLimit, type Pacer, type PacerTicket, type RateLimitInfo } from './pacer.js';
import { RETRYABLE_ERROR_CODES, retryAfterMs } from './retry.js';
import { describeNetwork, routeError } from './network-error.js';
import type { ProxyChoice } from './proxy-env.js';
import { chooseProxy, openProxyAgent } from './route.js';
import { linkSignals } from './signals.js';
import { BodyTooLargeError, TimeoutError, flattenHeaders, readBody } from './transport.js';
import { isLoopbackHost } from './url.js';
import type { Clock } from './types.js';

export type TranscriptOutcome =
  | { kind: 'ok'; body: object; rateLimit: RateLimitInfo | undefined; bytes: number }
  /** 404: the link expired (or never existed); get the recording again for a fresh one */
  | { kind: 'expired'; status: number }
  /** `retryAfterGiven`: the wait came from the server's Retry-After (else a default) */
  | { kind: 'rateLimited'; retryAfterMs: number; retryAfterGiven: boolean; rateLimit: RateLimitInfo | undefined }
  /** `retryable`: a network failure, a timeout, a 5xx or a cut body, worth another try */
  | { kind: 'failed'; error: CrmError; retryable: boolean };

export interface FetchTranscriptOptions {
  timeoutMs: number;
  /** aborts the request itself (and the wait for the pacer) */
  signal?: AbortSignal;
  /** aborts only the wait for the pacer: after Ctrl-C nothing new starts, what is in flight finishes */
  waitSignal?: AbortSignal;
  clock: Clock;
  /**
   * The download endpoint's own pacer (spec: Limits rule 5): a Pacer instance apart from the API
   * client's, shared by every concurrent download of the process.
   */
  pacer?: Pacer;
  /**
   * A slot the caller already took from `pacer` (it acquires before it gets the recording, so that
   * the link is fresh when sent): the request goes at once, and the ticket is handed back here.
   */
  ticket?: PacerTicket;
  /** refuse bodies larger than this; default MAX_TRANSCRIPT_BYTES */
  maxBytes?: number;
  /** masks the key in body text quoted by an error, before the quote is cut (a cut could leave part of a key) */
  redact?: (text: string) => string;
}

/**
 * The largest transcript crm reads (README, "Limits"): above the API's 64 MiB, since a long meeting
 * with per-word timings is one big JSON document, but bounded, since it is held in memory whole.
 */
export const MAX_TRANSCRIPT_BYTES = 128 * 1024 * 1024;
/** When a 429 carries no usable Retry-After. */
const DEFAULT_RETRY_AFTER_MS = 1_000;

export async function fetchTranscript(url: string, opts: FetchTranscriptOptions): Promise<TranscriptOutcome> {
  const refusal = checkTranscriptUrl(url);
  let proxy: ProxyChoice | undefined;
  try {
    proxy = refusal ? undefined : chooseProxy(new URL(url));
  } catch (err) {
    if (opts.ticket) opts.pacer?.done(opts.ticket); // nothing was sent
    return { kind: 'failed', error: err as CrmError, retryable: false }; // a malformed HTTPS_PROXY
  }
  if (refusal) {
    if (opts.ticket) opts.pacer?.done(opts.ticket); // nothing was sent
    return { kind: 'failed', error: new ServerError(refusal), retryable: false };
  }

  // a slot taken earlier (with `sendLater`) takes its place among the requests now
  let ticket = opts.ticket && opts.pacer ? opts.pacer.sending(opts.ticket) : opts.ticket;
  if (!ticket) {
    const waits = linkSignals(opts.signal, opts.waitSignal);
    try {
      ticket = await opts.pacer?.acquire(waits.signal);
    } catch (err) {
      return { kind: 'failed', error: interrupted(err), retryable: false };
    } finally {
      waits.dispose();
    }
  }
  // the whole response, body included (not AbortSignal.timeout: it cannot hold a long --timeout)
  const deadline = new AbortController();
  const cancelTimer = setLongTimeout(() => deadline.abort(new TimeoutError(opts.timeoutMs)), opts.timeoutMs);
  const linked = linkSignals(opts.signal, deadline.signal);
  try {
    return await fetchOnce(url, opts, linked.signal, ticket, proxy);
  } finally {
    cancelTimer();
    linked.dispose();
  }
}

async function fetchOnce(
  url: string,
  opts: FetchTranscriptOptions,
  signal: AbortSignal,
  ticket: PacerTicket | undefined,
  proxy: ProxyChoice | undefined,
): Promise<TranscriptOutcome> {
  let res: Dispatcher.ResponseData;
  const target = new URL(url);
  try {
    res = await request.call(await dispatcherFor(proxy, opts.timeoutMs), {
      origin: target.origin,
      path: `${target.pathname}${target.search}`,
      method: 'GET',
      // Exactly these two: the token in the URL is the only credential.
      headers: { accept: 'application/json', 'user-agent': USER_AGENT },
      signal,
      headersTimeout: Math.min(opts.timeoutMs + 1_000, MAX_TIMER_MS),
      bodyTimeout: Math.min(opts.timeoutMs + 1_000, MAX_TIMER_MS),
    });
  } catch (err) {
    if (ticket) opts.pacer?.done(ticket);
    return networkFailure(proxy ? routeError(err, proxy) : err, opts, url);
  }

  const headers = flattenHeaders(res.headers);
  const now = opts.clock.now();
  const rateLimit = parseRateLimit(headers, now);
  if (ticket) opts.pacer?.done(ticket, headers);
  const status = res.statusCode;
  if (status === 429) {
    await discard(res.body);
    const given = retryAfterMs(headers['retry-after'], now);
    const waitMs = given ?? DEFAULT_RETRY_AFTER_MS;
    opts.pacer?.block(waitMs);
    return { kind: 'rateLimited', retryAfterMs: waitMs, retryAfterGiven: given !== undefined, rateLimit };
  }
  if (status === 404 || status === 410) {
    await discard(res.body);
    return { kind: 'expired', status };
  }
  if (status >= 300 && status < 400) {
    await discard(res.body);
    return {
      kind: 'failed',
      error: new ServerError(`the transcript link answered a redirect (HTTP ${status}); redirects are not followed`, { status }),
      retryable: false,
    };
  }

  let text: string;
  let bytes: number;
  try {
    const buf = await readBody(res.body, headers, opts.maxBytes ?? MAX_TRANSCRIPT_BYTES);
    bytes = buf.length;
    text = buf.toString('utf8');
  } catch (err) {
    if (err instanceof BodyTooLargeError) {
      const error = new ServerError(`the transcript is too large: ${err.message}`, { status, code: err.code });
      return { kind: 'failed', error, retryable: false };
    }
    return networkFailure(err, opts, url);
  }

  if (status < 200 || status >= 300) {
    const Cls = errorClassForStatus(status);
    return {
      kind: 'failed',
      error: new Cls(`transcript download failed: ${errorMessage(text, opts.redact) ?? `HTTP ${status}`}`, { status }),
      retryable: status >= 500,
    };
  }

  const parsed = parseTranscript(text, opts.redact);
  if (typeof parsed === 'string') {
    return { kind: 'failed', error: new ServerError(parsed, { status, code: 'TRUNCATED_BODY' }), retryable: true };
  }
  return { kind: 'ok', body: parsed, rateLimit, bytes };
}

/** Why a transcript link is refused, or undefined when it may be fetched. */
export function checkTranscriptUrl(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `the server gave a transcript link that is not a URL: ${JSON.stringify(url.slice(0, 200))}`;
  }
  if (parsed.username !== '' || parsed.password !== '') {
    return 'the server gave a transcript link with credentials in it; refusing to use it';
  }
  if (parsed.protocol === 'https:') return undefined;
  if (parsed.protocol === 'http:' && isLoopbackHost(parsed.hostname)) return undefined;
  return `the server gave a transcript link that is not https (${parsed.protocol}//${parsed.host}); refusing to fetch it`;
}

/** A parsed transcript (a JSON object or array), or why the text is not one. */
export function parseTranscript(text: string, redact?: (text: string) => string): object | string {
  let value: unknown;
  try {
    value = parseJson(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text); // a BOM is not JSON's
  } catch {
    return `the transcript is not valid JSON (truncated?): ${quote(text, redact)}`;
  }
  if (value === null || typeof value !== 'object') {
    return `the transcript is not a JSON object or array: ${quote(text, redact)}`;
  }
  return value;
}

async function discard(body: { dump(): Promise<void> }): Promise<void> {
  await body.dump().catch(() => undefined);
}

/** The first 200 characters of a body, for a message; the key is masked before the cut. */
function quote(text: string, redact?: (text: string) => string): string {
  const head = text.slice(0, 4096); // masking all of a 128 MiB body for a 200-character quote is waste
  return JSON.stringify((redact ? redact(head) : head).slice(0, 200));
}

function errorMessage(text: string, redact?: (text: string) => string): string | undefined {
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    const e = body?.error;
    if (e && typeof e.message === 'string') return typeof e.code === 'string' ? `${e.message} (${e.code})` : e.message;
  } catch {
    // not JSON: quote it below
  }
  return text ? quote(text, redact) : undefined;
}

function interrupted(err: unknown): CrmError {
  return err instanceof CrmError ? err : new InterruptedError('interrupted', { cause: err });
}

function networkFailure(err: unknown, opts: FetchTranscriptOptions, url: string): TranscriptOutcome {
  if (opts.signal?.aborted) return { kind: 'failed', error: interrupted(err), retryable: false };
  // Our own overall timeout fires as a TimeoutError (the reason of the deadline's abort), code ETIMEDOUT.
  const code = (err as { code?: string }).code;
  const u = new URL(url);
  const target = `${u.hostname}:${u.port || (u.protocol === 'https:' ? '443' : '80')}`;
  const { message, hint } = describeNetwork(err, { target, timeoutMs: opts.timeoutMs, env: process.env });
  return {
    kind: 'failed',
    error: new ServerError(`transcript download from ${u.host} failed: ${message}`, { code, hint, cause: err }),
    retryable: code !== undefined && RETRYABLE_ERROR_CODES.has(code),
  };
}

/**
 * Downloads go direct through one Agent for the process (links may name any host), or through one
 * ProxyAgent per proxy URL.
 */
let directAgent: Dispatcher | undefined;
const proxyAgents = new Map<string, Promise<Dispatcher>>();

function dispatcherFor(proxy: ProxyChoice | undefined, timeoutMs: number): Dispatcher | Promise<Dispatcher> {
  if (!proxy) return (directAgent ??= new AgentClass({ keepAliveTimeout: 4_000 }));
  let agent = proxyAgents.get(proxy.url);
  if (!agent) proxyAgents.set(proxy.url, (agent = openProxyAgent(proxy, Math.min(timeoutMs, 10_000))));
  return agent;
}
