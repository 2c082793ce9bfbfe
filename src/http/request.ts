// An API request: the retry layer around paced attempts, each answer checked (envelope, error
// body, redirect) and masked. A DELETE answered 404 on a retry succeeded earlier.
import { stringifyJson } from '../json/exact-json.js';
import { type Core, networkError, pacedAttempt, redirectError, type Attempt } from './attempt.js';
import { checkResponse } from './envelope-check.js';
import { UsageError } from './errors.js';
import type { Pacer } from './pacer.js';
import { withRetries } from './retry-loop.js';
import { linkSignals } from './clock.js';
import type { ApiResponse, AuthHeaderKind, Expect, RequestOptions, Tried } from './types.js';
import { plannedRequest } from './url.js';

/** What an API client adds to the core: where, as whom, and its retry limits. */
export interface ApiCore extends Core {
  base: URL;
  apiKey: string;
  authHeader: AuthHeaderKind;
  defaultExpect: Expect;
  pacer: Pacer;
  maxRetries: number;
  budgetMs: number;
  orConcurrency: string;
  signal?: AbortSignal;
}

export async function apiRequest<T>(core: ApiCore, opts: RequestOptions): Promise<ApiResponse<T>> {
  // globalThis.crypto, not node:crypto: loaded only when a key is made (startup time of every GET)
  const idempotencyKey = opts.idempotencyKey === true ? globalThis.crypto.randomUUID() : opts.idempotencyKey;
  const body = opts.bodyJson ?? (opts.body === undefined ? undefined : serialise(opts.body));
  const { url, headers } = plannedRequest(core, {
    path: opts.path,
    query: opts.query,
    hasBody: body !== undefined,
    idempotencyKey,
  });
  // core.signal (Ctrl-C) stops waiting and starting; opts.signal also cancels the request in flight.
  const waits = linkSignals(core.signal, opts.signal);
  let sent = false;
  // with finishInDoubt, after the first send only the request's own signal stops its retries
  const waitSignal = (): AbortSignal | undefined => (opts.finishInDoubt && sent ? opts.signal : waits.signal);
  const policy = {
    ...core,
    method: opts.method,
    hasIdempotencyKey: idempotencyKey !== undefined,
    waitSignal,
    onRetry: () => core.stats.retries++,
  };
  const exchange = {
    method: opts.method,
    url,
    headers,
    body,
    signal: opts.signal,
    pacer: core.pacer,
    beforeSend: opts.beforeSend,
  };
  try {
    return await withRetries(policy, async (n): Promise<Tried<ApiResponse<T>>> => {
      const stop = waitSignal();
      sent = true;
      return judge<T>(core, await pacedAttempt(core, { ...exchange, stop }, n), opts, n, url);
    });
  } finally {
    waits.dispose();
  }
}

function judge<T>(core: ApiCore, outcome: Attempt, opts: RequestOptions, n: number, url: URL): Tried<ApiResponse<T>> {
  if (outcome.kind === 'network') {
    const error = core.redact.error(
      networkError(outcome, url, core.timeoutMs, `${opts.method} ${url.origin}${url.pathname}`),
    );
    return { ok: false, failure: { error, errorCode: outcome.code } };
  }
  const { raw } = outcome;
  const hint = `the key stays with ${core.base.origin}; check the base URL (a redirect often means http vs https or a missing /api/v2)`;
  // masked after parsing; quoted bodies before they are cut to 200 characters
  const checked =
    raw.status >= 300 && raw.status < 400
      ? { ok: false as const, error: redirectError(raw, 'the server', hint), truncated: false }
      : checkResponse(raw.status, raw.text, opts.expect ?? core.defaultExpect, raw.headers['x-request-id'], (t) =>
          core.redact.text(t),
        );
  const base = { status: raw.status, headers: raw.headers, retries: n };
  if (checked.ok) {
    // every string of the body is in raw.text: with no key there, walking the parsed body finds none
    const body = core.redact.holdsNone(raw.text) ? checked.body : core.redact.value(checked.body);
    return { ok: true, value: { ...base, body: body as T, requestId: checked.requestId } };
  }
  const error = core.redact.error(checked.error);
  if (opts.method === 'DELETE' && n > 0 && raw.status === 404) {
    // the attempt whose answer was lost (500, dropped connection) did the deletion
    const gone = { object: 'success', data: null } as T;
    return { ok: true, value: { ...base, body: gone, requestId: error.requestId, goneOnRetry: true } };
  }
  const errorCode = checked.truncated ? 'TRUNCATED_BODY' : undefined;
  return {
    ok: false,
    failure: {
      error,
      status: raw.status,
      errorCode,
      retryAfter: raw.headers['retry-after'],
      serverDate: raw.headers.date,
    },
  };
}

function serialise(body: unknown): string {
  try {
    return stringifyJson(body) as string; // a RawNumber (e.g. --set n:=12345678901234567891) sent exactly
  } catch (err) {
    throw new UsageError(`the request body cannot be sent as JSON: ${(err as Error).message}`, { cause: err });
  }
}
