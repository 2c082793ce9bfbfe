// The one request path (CONTRACT §4), in layers as Octokit composes its plugins: request.ts →
// retry-loop.ts → attempt.ts → transport.ts; links the API hands out (transcripts): link.ts.
// Not undici's RetryAgent: it cannot repeat a POST only with an Idempotency-Key, counts every 429
// against maxRetries (no budget of their own), waits on private timers (no shared pacer, no Ctrl-C,
// no test clock), hides the attempts from --verbose, and cannot get a transcript a fresh link.
import { systemClock } from './clock.js';
import { getLink } from './link.js';
import { keyRedactor } from './mask.js';
import { paceWatch } from './pace-info.js';
import { type Pacer, sharedPacer } from './pacer.js';
import { paginatePages } from './paginate.js';
import { type ApiCore, apiRequest } from './request.js';
import { DEFAULT_RATE_LIMIT_BUDGET_MS, MAX_RETRY_AFTER_MS } from './retry.js';
import { waitNotice, withRetries } from './retry-loop.js';
import { OriginTransport } from './transport.js';
import type { ClientConfig, HttpClient, PaceInfo, PaginateOptions, RequestOptions } from './types.js';
import { parseBaseUrl } from './url.js';

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_RETRIES = 5;
export { MAX_RETRY_AFTER_MS };

/** The HttpClient of src/http/types.ts, plus what its owner needs. */
export interface CrmHttpClient extends HttpClient {
  readonly pacer: Pacer;
  pace(): PaceInfo;
  /** closes the connection pool (idle connections do not keep the process alive anyway) */
  close(): Promise<void>;
}

export function createClient(config: ClientConfig): CrmHttpClient {
  const core = apiCore(config);
  // what the pacer knows, for progress lines; each answer may tell a longer window
  const watch = paceWatch(core.pacer, () => core.clock.now());
  const pages = (path: string, opts: PaginateOptions = {}) =>
    paginatePages((query, signal) => apiRequest(core, { method: 'GET', path, query, expect: 'list', signal }), opts);
  return {
    baseUrl: core.base.href,
    stats: core.stats,
    pacer: core.pacer,
    waits: { note: core.noteWait },
    request: <T>(opts: RequestOptions) => apiRequest<T>(core, opts).finally(watch.observe),
    pace: watch.info,
    getLink: (url, opts) => getLink(core, url, opts),
    // the API's retry policy around attempts of the caller's (a transcript: a fresh link each)
    retry: (attempt, opts = {}) =>
      withRetries(
        {
          ...core,
          method: 'GET',
          hasIdempotencyKey: false,
          waitSignal: () => opts.signal,
          ...(opts.pacer ? { pacer: opts.pacer } : {}),
        },
        attempt,
      ),
    pages,
    // paginatePages already stops at --max
    async *paginate(path: string, opts: PaginateOptions = {}) {
      for await (const page of pages(path, opts)) yield* page.data;
    },
    close: () => core.transport.close(),
  };
}

function apiCore(config: ClientConfig): ApiCore {
  const base = parseBaseUrl(config.baseUrl);
  const clock = config.clock ?? systemClock;
  const timeoutMs = config.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  // every key of the profile, not just the one sent: a server may know (and echo) the other one too
  const redact = keyRedactor([config.apiKey, ...(config.redactKeys ?? [])]);
  const log = config.log ? (line: string, notice?: boolean) => config.log!(redact.text(line), notice) : undefined;
  const notice = config.notice ? (line: string) => config.notice!(redact.text(line)) : undefined;
  return {
    base,
    apiKey: config.apiKey,
    authHeader: config.authHeader,
    defaultExpect: /\/api\/v1$/.test(base.pathname) ? 'v1' : 'v2',
    clock,
    timeoutMs,
    maxRetries: config.maxRetries ?? DEFAULT_MAX_RETRIES,
    budgetMs: config.rateLimitBudgetMs ?? DEFAULT_RATE_LIMIT_BUDGET_MS,
    pacer: config.pacer ?? sharedPacer(clock, base.origin, config.apiKey),
    transport: new OriginTransport(base.origin, Math.min(timeoutMs, 10_000)),
    stats: { requests: 0, retries: 0 },
    redact,
    log,
    noteWait: waitNotice(clock, log && ((line) => log(line, true)), notice),
    orConcurrency: config.concurrencyFlag ? ', or lower --concurrency' : '',
    ...(config.signal ? { signal: config.signal } : {}),
  };
}
