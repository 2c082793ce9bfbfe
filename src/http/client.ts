// The one request path of crm (CONTRACT §4): auth header, idempotency key, pacing, retries, envelope
// checks, error mapping and --verbose lines, composed from the small modules beside this one.
//
// Why not undici's RetryAgent/RetryHandler: its retry decision sees method and status, not our rule
// that a POST/PATCH may repeat only with an Idempotency-Key; its waits are its own timers (no shared
// pacer, no 429 that holds back every concurrent request, no injectable clock for tests); its
// backoff has no full jitter; and it hides the attempts, while --verbose and the batch summary need
// each one. So undici does the HTTP (pooling, keep-alive, timeouts) and this loop does the policy.
import { USER_AGENT } from '../version.js';
import type { ApiRecord } from '../api/envelopes.js';
import { systemClock } from './clock.js';
import { stringifyJson } from '../json/exact-json.js';
import { checkResponse } from './envelope-check.js';
import { type CrmError, InterruptedError, ServerError, UsageError, isCrmError } from './errors.js';
import { keyRedactor } from './mask.js';
import { describeNetwork } from './network-error.js';
import { type Pacer, sharedPacer } from './pacer.js';
import { paginatePages, paginateRecords } from './paginate.js';
import {
  DEFAULT_RATE_LIMIT_BUDGET_MS,
  MAX_RETRY_AFTER_MS,
  backoffMs,
  budgetSpentText,
  comeBackText,
  isRepeatable,
  rateLimitCharge,
  retryAfterMs,
  shouldRetry,
} from './retry.js';
import { linkSignals } from './signals.js';
import { OriginTransport, type RawResponse } from './transport.js';
import { waitNotice } from './wait-notice.js';
import type { ApiResponse, ClientConfig, ClientStats, Expect, HttpClient, PaginateOptions, Page, RequestOptions } from './types.js';
import { parseBaseUrl, resolveUrl } from './url.js';

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_RETRIES = 5;
export { MAX_RETRY_AFTER_MS };

/** The HttpClient of src/http/types.ts, plus what its owner needs. */
export interface CrmHttpClient extends HttpClient {
  readonly pacer: Pacer;
  /** closes the connection pool (idle connections do not keep the process alive anyway) */
  close(): Promise<void>;
}

type Attempt = { kind: 'response'; raw: RawResponse } | { kind: 'network'; error: unknown; code?: string };

export function createClient(config: ClientConfig): CrmHttpClient {
  const base = parseBaseUrl(config.baseUrl);
  const clock = config.clock ?? systemClock;
  const timeoutMs = config.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxRetries = config.maxRetries ?? DEFAULT_MAX_RETRIES;
  const rateLimitBudgetMs = config.rateLimitBudgetMs ?? DEFAULT_RATE_LIMIT_BUDGET_MS;
  const pacer = config.pacer ?? sharedPacer(clock, base.origin, config.apiKey);
  const transport = new OriginTransport(base.origin, Math.min(timeoutMs, 10_000));
  const defaultExpect: Expect = /\/api\/v1$/.test(base.pathname) ? 'v1' : 'v2';
  const stats: ClientStats = { requests: 0, retries: 0 };
  const authHeaders: Record<string, string> =
    config.authHeader === 'bearer' ? { authorization: `Bearer ${config.apiKey}` } : { 'x-service-api-key': config.apiKey };
  // every key of the profile, not just the one sent: a server may know (and echo) the other one too
  const redact = keyRedactor([config.apiKey, ...(config.redactKeys ?? [])]);
  const log = config.log ? (line: string) => config.log!(redact.text(line)) : undefined;
  const notice = config.notice ? (line: string) => config.notice!(redact.text(line)) : undefined;
  const noteWait = waitNotice(clock, log, notice);
  const orConcurrency = config.concurrencyFlag ? ', or lower --concurrency' : '';

  async function request<T>(opts: RequestOptions): Promise<ApiResponse<T>> {
    const url = resolveUrl(base, opts.path, opts.query);
    const target = `${url.pathname}${url.search}`;
    const expect = opts.expect ?? defaultExpect;
    // globalThis.crypto, not node:crypto: loaded only when a key is made (startup time of every GET)
    const idempotencyKey = opts.idempotencyKey === true ? globalThis.crypto.randomUUID() : opts.idempotencyKey;
    const body = opts.body === undefined ? undefined : serialise(opts.body);
    const headers: Record<string, string> = {
      ...authHeaders,
      accept: 'application/json',
      'user-agent': USER_AGENT,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }),
    };
    // config.signal (Ctrl-C) stops waiting and starting; opts.signal also cancels the request in flight.
    const waits = linkSignals(config.signal, opts.signal);
    let sent = false;
    /** retries that count against maxRetries (not the 429s with Retry-After, which the budget bounds) */
    let counted = 0;
    /** 429s with Retry-After waited out, and what they cost of rateLimitBudgetMs */
    let rateWaits = 0;
    let rateCharged = 0;
    // with finishInDoubt, after the first send only the request's own signal stops its retries
    const waitSignal = (): AbortSignal | undefined => (opts.finishInDoubt && sent ? opts.signal : waits.signal);
    try {
      for (let attempt = 0; ; attempt++) {
        const stop = waitSignal();
        if (stop?.aborted) throw interrupted(stop.reason);
        const ticket = await pacer.acquire(stop, { onWait: noteWait }).catch((err: unknown) => {
          throw interrupted(err);
        });
        const started = clock.now();
        stats.requests++;
        sent = true;
        const outcome = await sendOnce(target, opts.method, headers, body, opts.signal);
        pacer.done(ticket, outcome.kind === 'response' ? rateHeaders(outcome.raw.headers) : undefined);
        const ms = Math.max(0, Math.round(clock.now() - started));
        const retryNote = attempt > 0 ? ` (retry ${attempt})` : '';
        const what = outcome.kind === 'response' ? String(outcome.raw.status) : (outcome.code ?? 'ERROR');
        log?.(`${opts.method} ${url.href} ${what} ${ms} ms${retryNote}`);

        if (outcome.kind === 'network' && opts.signal?.aborted) throw interrupted(opts.signal.reason);
        const judged = judge(outcome, expect, url, opts.method);
        if (judged.ok) {
          const raw = (outcome as { raw: RawResponse }).raw;
          return { status: raw.status, headers: raw.headers, body: judged.body as T, requestId: judged.requestId, retries: attempt };
        }
        const status = outcome.kind === 'response' ? outcome.raw.status : undefined;
        if (opts.method === 'DELETE' && attempt > 0 && status === 404) {
          // the attempt whose answer was lost (500, dropped connection) did the deletion
          const raw = (outcome as { raw: RawResponse }).raw;
          const meta = (judged.error as { requestId?: string }).requestId;
          return {
            status: 404,
            headers: raw.headers,
            body: { object: 'success', data: null } as T,
            requestId: meta,
            retries: attempt,
            goneOnRetry: true,
          };
        }
        const errorCode = outcome.kind === 'network' ? outcome.code : judged.truncated ? 'TRUNCATED_BODY' : undefined;
        const now = clock.now();
        const fromHeader = outcome.kind === 'response' ? retryAfterMs(outcome.raw.headers['retry-after'], now) : undefined;
        let wait: number;
        let why: string;
        const charge = status === 429 ? rateLimitCharge(fromHeader) : undefined;
        if (fromHeader !== undefined && charge !== undefined) {
          // "later", not "never" (CONTRACT §4): waited out within the budget, whatever --max-retries says
          if (fromHeader > MAX_RETRY_AFTER_MS) {
            const when = comeBackText(fromHeader, now);
            throw finalError(
              judged.error,
              attempt,
              true,
              `the server asks to wait ${when} (Retry-After); crm waits at most ${MAX_RETRY_AFTER_MS / 60_000} min: try again then`,
              'the wait asked for is too long',
            );
          }
          if (rateCharged + charge > rateLimitBudgetMs) {
            const spent = budgetSpentText({ askedMs: charge, waits: rateWaits, chargedMs: rateCharged, budgetMs: rateLimitBudgetMs });
            throw finalError(judged.error, attempt, true, `${spent}; try again later${orConcurrency}`, 'the rate-limit budget is spent');
          }
          rateWaits++;
          rateCharged += charge;
          wait = fromHeader;
          why = `the server answered 429 (Retry-After: ${outcome.kind === 'response' ? outcome.raw.headers['retry-after'] : ''})`;
        } else {
          const retry = shouldRetry({
            method: opts.method,
            status,
            errorCode,
            hasIdempotencyKey: idempotencyKey !== undefined,
            attempt: counted,
            maxRetries,
          });
          if (!retry) {
            const unsafe = !isRepeatable(opts.method, idempotencyKey !== undefined) && retryable(status, errorCode) && status !== 429;
            const hint = unsafe
              ? `not retried: a ${opts.method} without an Idempotency-Key might be applied twice; check before running it again`
              : status === 429
                ? `a 429 without a positive Retry-After (${retryAfterSaid(outcome)}) counts against --max-retries (${maxRetries}); ` +
                  `try again later, or raise --max-retries${orConcurrency}`
                : undefined;
            throw finalError(judged.error, attempt, retryable(status, errorCode), hint, `--max-retries ${maxRetries}`);
          }
          counted++;
          const backoff = backoffMs(counted - 1, () => clock.random());
          wait = status === 429 ? backoff : Math.max(backoff, fromHeader ?? 0);
          if (wait > MAX_RETRY_AFTER_MS) {
            throw finalError(
              judged.error,
              attempt,
              true,
              `the server asks to wait ${comeBackText(wait, now)}; try again then`,
              'the wait asked for is too long',
            );
          }
          why = `retry ${attempt + 1} after ${what}`;
        }
        if (status === 429) pacer.block(wait); // every concurrent request holds back, not just this one
        noteWait(wait, why);
        await clock.sleep(wait, waitSignal()).catch((err: unknown) => {
          throw interrupted(err);
        });
        stats.retries++;
      }
    } finally {
      waits.dispose();
    }
  }

  async function sendOnce(
    target: string,
    method: string,
    headers: Record<string, string>,
    body: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<Attempt> {
    try {
      const raw = await transport.send({ method, path: target, headers, body, timeoutMs, signal });
      // headers are server text like any other (X-Request-Id, Location): masked before anyone reads them
      return { kind: 'response', raw: { ...raw, headers: redact.headers(raw.headers) } };
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      return { kind: 'network', error, code: typeof code === 'string' ? code : undefined };
    }
  }

  /** The checked answer with every key masked in what the server sent: body, request id, error. */
  function judge(outcome: Attempt, expect: Expect, url: URL, method: string): ReturnType<typeof checkResponse> {
    const checked = judgeRaw(outcome, expect, url, method);
    if (!checked.ok) return { ...checked, error: redact.error(checked.error) };
    return { ok: true, body: redact.value(checked.body), requestId: checked.requestId };
  }

  function judgeRaw(outcome: Attempt, expect: Expect, url: URL, method: string): ReturnType<typeof checkResponse> {
    if (outcome.kind === 'network') {
      return { ok: false as const, error: networkError(outcome, url, method, timeoutMs), truncated: false };
    }
    const { status, headers, text } = outcome.raw;
    if (status >= 300 && status < 400) {
      const location = headers.location ? ` to ${headers.location.slice(0, 200)}` : '';
      const error = new ServerError(
        `the server answered a redirect (HTTP ${status})${location}; crm does not follow redirects, so the key stays with ${base.origin}`,
        { status, code: 'REDIRECT', hint: 'check the base URL (a redirect often means http vs https or a missing /api/v2)' },
      );
      return { ok: false as const, error, truncated: false };
    }
    // masked after parsing (judge); quoted bodies before they are cut to 200 characters
    return checkResponse(status, text, expect, headers['x-request-id'], (t) => redact.text(t));
  }

  function pages(path: string, opts: PaginateOptions = {}): AsyncGenerator<Page, void, undefined> {
    return paginatePages((query, signal) => request({ method: 'GET', path, query, expect: 'list', signal }), opts);
  }

  function paginate(path: string, opts: PaginateOptions = {}): AsyncGenerator<ApiRecord, void, undefined> {
    return paginateRecords(pages(path, opts), opts.max);
  }

  return {
    baseUrl: base.href,
    stats,
    redact,
    pacer,
    waits: { budgetMs: rateLimitBudgetMs, note: noteWait },
    request,
    pages,
    paginate,
    close: () => transport.close(),
  };
}

/**
 * An idempotent replay carries the original response's headers, rate-limit ones included: stale,
 * and the request was not counted, so the pacer does not see them.
 */
function rateHeaders(headers: Record<string, string>): Record<string, string> | undefined {
  return headers['idempotent-replayed'] === 'true' ? undefined : headers;
}

function serialise(body: unknown): string {
  try {
    return stringifyJson(body) as string; // a RawNumber (e.g. --set n:=12345678901234567891) sent exactly
  } catch (err) {
    throw new UsageError(`the request body cannot be sent as JSON: ${(err as Error).message}`, { cause: err });
  }
}

function retryable(status: number | undefined, errorCode: string | undefined): boolean {
  return status === 429 || (status !== undefined && status >= 500) || errorCode !== undefined;
}

/** What a 429 said about waiting, for a hint: `no Retry-After`, `Retry-After: 0`. */
function retryAfterSaid(outcome: Attempt): string {
  const value = outcome.kind === 'response' ? outcome.raw.headers['retry-after'] : undefined;
  return value === undefined ? 'no Retry-After' : `Retry-After: ${value.slice(0, 40)}`;
}

/**
 * The error to throw when no retry follows; when there were retries, says so and which rule
 * stopped them (`rule`: `--max-retries 5`, `the rate-limit budget is spent`).
 */
function finalError(error: CrmError, attempt: number, wasRetryable: boolean, hint?: string, rule?: string): CrmError {
  if (!wasRetryable || attempt === 0) {
    if (hint && !error.hint) Object.assign(error, { hint });
    return error;
  }
  const Cls = error.constructor as new (message: string, info: ConstructorParameters<typeof ServerError>[1]) => CrmError;
  const message = `${error.message} (gave up after ${attempt} ${attempt === 1 ? 'retry' : 'retries'}${rule ? `: ${rule}` : ''})`;
  return new Cls(message, {
    status: error.status,
    code: error.code,
    requestId: error.requestId,
    details: error.details,
    hint: hint ?? 'try again later, or raise --max-retries',
    cause: error.cause,
  });
}

function networkError(outcome: { error: unknown; code?: string }, url: URL, method: string, timeoutMs: number): CrmError {
  const target = `${url.hostname}:${url.port || (url.protocol === 'https:' ? '443' : '80')}`;
  const { message, hint } = describeNetwork(outcome.error, { target, timeoutMs, env: process.env });
  return new ServerError(`${method} ${url.origin}${url.pathname} failed: ${message}`, {
    code: outcome.code ?? 'NETWORK_ERROR',
    hint,
    cause: outcome.error,
  });
}

function interrupted(reason: unknown): CrmError {
  if (isCrmError(reason)) return reason;
  return new InterruptedError('interrupted', { cause: reason });
}
