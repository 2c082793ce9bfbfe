// One attempt: a pacer slot, one exchange, the rate-limit headers back to the pacer, the --verbose
// line; and the one wording of a failed connection and of a redirect (never followed).
import type { Redactor } from './mask.js';
import { describeNetwork } from './network-error.js';
import { routeText } from './proxy-env.js';
import type { Pacer, PacerTicket } from './pacer.js';
import { interrupted, type WaitNote } from './retry-loop.js';
import type { OriginTransport, RawResponse, SendOptions } from './transport.js';
import { type CrmError, ServerError } from './errors.js';
import type { Clock, HttpClient } from './types.js';

export type Attempt = { kind: 'response'; raw: RawResponse } | { kind: 'network'; error: unknown; code?: string };

/** What every attempt of a client shares. */
export interface Core {
  transport: OriginTransport;
  clock: Clock;
  timeoutMs: number;
  redact: Redactor;
  stats: HttpClient['stats'];
  noteWait: WaitNote;
  log?: (line: string) => void;
}

/** What is sent (`signal` cancels it in flight), and how it is paced. */
export interface Exchange extends Omit<SendOptions, 'path' | 'origin' | 'timeoutMs'> {
  url: URL;
  /** the URL in the --verbose line, when not all of it may be shown */
  shown?: string;
  /** the pacer to go through, and what stops its wait */
  pacer?: Pacer;
  stop?: AbortSignal;
  /** a slot of `pacer` the caller took (its paced unit holds more than this request) */
  ticket?: PacerTicket;
  /** RequestOptions.beforeSend: once admitted, before sending */
  beforeSend?: () => Promise<void>;
}

/** Paces, sends once, and writes the --verbose line (`GET URL 200 12 ms (retry 1)`). */
export async function pacedAttempt(core: Core, ex: Exchange, attempt: number): Promise<Attempt> {
  const { pacer } = ex;
  let ticket = ex.ticket;
  if (!ticket && pacer) {
    ticket = await pacer.acquire(ex.stop, { onWait: core.noteWait }).catch((err: unknown) => {
      throw interrupted(err);
    });
  }
  // what must be on disk before it goes: written once admitted and not stopped, then it goes even if
  // Ctrl-C comes meanwhile (a line for a request never sent would be a lie)
  if (ex.beforeSend) {
    const unused = (err: unknown) => {
      if (ticket && !ex.ticket) pacer?.done(ticket); // the slot unused: nothing was sent
      throw err;
    };
    if (ex.stop?.aborted) unused(interrupted(ex.stop.reason));
    await ex.beforeSend().catch(unused);
  }
  if (ticket) pacer?.sent(ticket);
  const started = core.clock.now();
  core.stats.requests++;
  const outcome = await sendOnce(core, ex.beforeSend ? { ...ex, stop: undefined } : ex);
  // an idempotent replay's rate-limit headers are the original's: stale, and it was not counted
  const fresh = outcome.kind === 'response' && outcome.raw.headers['idempotent-replayed'] !== 'true';
  if (ticket)
    pacer?.done(
      ticket,
      fresh ? outcome.raw.headers : undefined,
      outcome.kind === 'response' ? outcome.raw.status : undefined,
    );
  const ms = Math.max(0, Math.round(core.clock.now() - started));
  const what = outcome.kind === 'response' ? String(outcome.raw.status) : (outcome.code ?? 'ERROR');
  if (core.log) {
    const route = routeText(core.transport.route(ex.url.origin));
    core.log(
      `${ex.method} ${ex.shown ?? ex.url.href} ${what} ${ms} ms${attempt > 0 ? ` (retry ${attempt})` : ''}${route}`,
    );
  }
  if (outcome.kind === 'network' && ex.signal?.aborted) throw interrupted(ex.signal.reason);
  // stopped (Ctrl-C, SIGTERM) before it was sent: nothing reached the server
  if (outcome.kind === 'network' && ex.stop?.aborted && outcome.error === ex.stop.reason)
    throw interrupted(ex.stop.reason);
  return outcome;
}

async function sendOnce(core: Core, ex: Exchange): Promise<Attempt> {
  const { url, method, headers, body, signal, stop, maxBodyBytes } = ex;
  const origin = url.origin === core.transport.origin ? undefined : url.origin;
  try {
    const path = `${url.pathname}${url.search}`;
    const raw = await core.transport.send({
      method,
      path,
      origin,
      headers,
      body,
      timeoutMs: core.timeoutMs,
      signal,
      stop,
      maxBodyBytes,
    });
    // headers are server text like any other (X-Request-Id, Location): masked before anyone reads them
    return { kind: 'response', raw: { ...raw, headers: core.redact.headers(raw.headers) } };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return { kind: 'network', error, code: typeof code === 'string' ? code : undefined };
  }
}

/** `<what> failed: <the failure in words>`, the one wording of a failed connection. */
export function networkError(
  outcome: { error: unknown; code?: string },
  url: URL,
  timeoutMs: number,
  what: string,
  /** the URL came in an API answer (a transcript link), not from the base URL */
  link?: boolean,
): CrmError {
  const target = `${url.hostname}:${url.port || (url.protocol === 'https:' ? '443' : '80')}`;
  const { message, hint } = describeNetwork(outcome.error, { target, timeoutMs, env: process.env, link });
  return new ServerError(`${what} failed: ${message}`, {
    code: outcome.code ?? 'NETWORK_ERROR',
    hint,
    cause: outcome.error,
  });
}

/** A 3xx: never followed, so a key never reaches the place it points to. */
export function redirectError(raw: RawResponse, what: string, hint?: string): CrmError {
  const location = raw.headers.location ? ` to ${raw.headers.location.slice(0, 200)}` : '';
  const message = `${what} answered a redirect (HTTP ${raw.status})${location}; crm does not follow redirects`;
  return new ServerError(message, { status: raw.status, code: 'REDIRECT', ...(hint ? { hint } : {}) });
}
