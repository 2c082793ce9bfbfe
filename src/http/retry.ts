// The retry decisions of CONTRACT §4 as pure functions: whether to retry, and how long to wait.
// The client composes them with the pacer; nothing here does I/O.
import { clampWait } from './rate-headers.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Statuses retried with backoff (when the method may be repeated). */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([500, 502, 503, 504]);

/**
 * Transport failures that count as "connection reset" or "timeout". Refused connections and DNS
 * failures are not here: nothing was reached, and retrying a wrong base URL only delays the error.
 */
export const RETRYABLE_ERROR_CODES: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'EPIPE',
  'ECONNABORTED',
  'ETIMEDOUT',
  'UND_ERR_SOCKET', // undici: "other side closed"
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  /** ours: a 2xx whose body was cut off (not JSON); as transient as a reset */
  'TRUNCATED_BODY',
]);

export const BACKOFF_BASE_MS = 500;
export const BACKOFF_CAP_MS = 30_000;
/**
 * A single wait longer than this, from `Retry-After` or `X-RateLimit-Reset`, is not waited out: the
 * command fails and says when to come back (CONTRACT §4).
 */
export const MAX_RETRY_AFTER_MS = 5 * 60_000;
/**
 * How long one request may wait out 429s that carry `Retry-After`, in all (CONTRACT §4). Such a 429
 * is the server saying "later", so it does not count against --max-retries; this bounds it instead.
 */
export const DEFAULT_RATE_LIMIT_BUDGET_MS = 10 * 60_000;
/** the least a 429 wait uses of that budget, so that "Retry-After: 0.001" for ever still ends */
export const MIN_RATE_LIMIT_CHARGE_MS = 100;

/**
 * A 429 whose Retry-After says "later" (a positive wait) goes against the budget, not the retries;
 * `Retry-After: 0` says nothing of the kind and counts as a retry. Returns what the wait costs.
 */
export function rateLimitCharge(retryAfter: number | undefined): number | undefined {
  return retryAfter !== undefined && retryAfter > 0 ? Math.max(retryAfter, MIN_RATE_LIMIT_CHARGE_MS) : undefined;
}

export interface BudgetUse {
  /** what the refused wait would cost (rateLimitCharge of its Retry-After) */
  askedMs: number;
  /** the 429s waited out before it, and what they cost */
  waits: number;
  chargedMs: number;
  budgetMs: number;
}

/**
 * Why a request stopped waiting out 429s: the wait the server asks for is more than is left of the
 * budget. Names CRM_RATE_LIMIT_BUDGET, the one thing that changes it.
 */
export function budgetSpentText(u: BudgetUse): string {
  const left = Math.max(0, u.budgetMs - u.chargedMs);
  const before = u.waits > 0 ? `after ${u.waits} ${u.waits === 1 ? 'wait' : 'waits'} for Retry-After (${formatWait(u.chargedMs)}), ` : '';
  const rest = left <= 0 ? 'nothing is' : left < 100 ? 'less than 0.1 s is' : `only ${formatWait(left)} is`;
  return (
    `${before}the server asks to wait ${formatWait(u.askedMs)} (Retry-After) and ${rest} left of the rate-limit budget ` +
    `for one request (${formatWait(u.budgetMs)} in all; CRM_RATE_LIMIT_BUDGET sets it, in seconds)`
  );
}
export interface RetryInput {
  method: HttpMethod;
  /** the HTTP status, when a response arrived */
  status?: number;
  /** the transport error code, when none did (see RETRYABLE_ERROR_CODES) */
  errorCode?: string;
  hasIdempotencyKey: boolean;
  /** retries already made for this request (0 before the first retry) */
  attempt: number;
  maxRetries: number;
}

/** Methods that can be repeated without doing the work twice. */
export function isRepeatable(method: HttpMethod, hasIdempotencyKey: boolean): boolean {
  if (method === 'GET' || method === 'PUT' || method === 'DELETE') return true;
  return hasIdempotencyKey; // POST, PATCH: only when the server can recognise the repeat
}

export function shouldRetry(input: RetryInput): boolean {
  if (input.attempt >= input.maxRetries) return false;
  // 429: the server refused before doing anything, so any method may go again.
  if (input.status === 429) return true;
  const transient =
    (input.status !== undefined && RETRYABLE_STATUSES.has(input.status)) ||
    (input.errorCode !== undefined && RETRYABLE_ERROR_CODES.has(input.errorCode));
  return transient && isRepeatable(input.method, input.hasIdempotencyKey);
}

/**
 * Exponential backoff with full jitter: a uniform wait in [0, min(cap, base·2^attempt)).
 * `attempt` is 0 for the first retry; `random` returns [0, 1).
 */
export function backoffMs(attempt: number, random: () => number = Math.random): number {
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.max(0, attempt));
  const r = Math.min(Math.max(random(), 0), 1);
  return Math.floor(r * ceiling);
}

/** "0.5 s", "42 s", "7 min", "3.5 h", "2.1 days": a wait as a person reads it. */
export function formatWait(ms: number): string {
  const s = ms / 1000;
  if (s < 10) return `${Math.max(0.1, Math.round(s * 10) / 10)} s`;
  if (s < 120) return `${Math.round(s)} s`;
  if (s < 7_200) return `${Math.round(s / 60)} min`;
  if (s < 172_800) return `${Math.round(s / 360) / 10} h`;
  return `${Math.round(s / 8_640) / 10} days`;
}

/** "in 3.2 days (at 2026-11-25T14:20:03Z)": when a wait that crm will not do ends. */
export function comeBackText(ms: number, nowMs: number): string {
  const at = new Date(Math.ceil((nowMs + clampWait(ms)) / 1000) * 1000).toISOString().replace('.000Z', 'Z');
  return `in ${formatWait(ms)} (at ${at})`;
}
