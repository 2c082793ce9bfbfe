// The HTTP core's public API: what commands and the rest of crm import from src/http/.
export { createClient, DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_MS, MAX_RETRY_AFTER_MS, type CrmHttpClient } from './client.js';
export { systemClock } from './clock.js';
export { checkResponse, quoteBody } from './envelope-check.js';
export * from './errors.js';
export { maskKey, redactKey } from './mask.js';
export { Pacer, paceDelay, sharedPacer, type PacerTicket } from './pacer.js';
export { parseRateLimit, resetToMs, retryAfterMs, type RateLimitInfo } from './rate-headers.js';
export { paginatePages, paginateRecords } from './paginate.js';
export { EMPTY_PAGE_LIMIT, judgePage, PageGuard, type PageFacts, type PageVerdict } from './page-guard.js';
export { backoffMs, isRepeatable, shouldRetry, type RetryInput } from './retry.js';
export { isLoopbackHost, parseBaseUrl, resolveUrl } from './url.js';
export type * from './types.js';
