// The retry decisions of CONTRACT §4, pure: whether to retry, how long to wait, how waits are written.
import { RateLimitError } from './errors.js';
import { clampWait } from './rate-headers.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * A tunnel the proxy did not open (network-error.ts, `tunnelError`), or a connection to the proxy refused
 * (`routeError`: a proxy restarting, issue 20): nothing reached the API.
 */
const TUNNEL_FAILURES = [
  'PROXY_TUNNEL_DROPPED',
  'PROXY_TUNNEL_TIMEOUT',
  'PROXY_TUNNEL_GARBAGE',
  'PROXY_TUNNEL_ABANDONED',
  'PROXY_REFUSED',
];

const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([500, 502, 503, 504]);

/** Resets and timeouts; not refused connections (but the proxy's) nor DNS failures (nothing reached: a wrong base URL fails at once). */
export const RETRYABLE_ERROR_CODES: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'EPIPE',
  'ECONNABORTED',
  'ETIMEDOUT',
  'UND_ERR_SOCKET', // undici: "other side closed"
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  // ours: a 2xx whose body was cut off
  'TRUNCATED_BODY',
  ...TUNNEL_FAILURES,
]);
/** Failures before anything reached the API: any method may go again. */
const UNSENT_ERROR_CODES: ReadonlySet<string> = new Set(TUNNEL_FAILURES);

export const BACKOFF_BASE_MS = 500;
export const BACKOFF_CAP_MS = 30_000;
/** A wait longer than this (Retry-After, X-RateLimit-Reset) is not waited out: fail, saying when to come back. */
export const MAX_RETRY_AFTER_MS = 5 * 60_000;
/** How long one request may wait out 429s with Retry-After in all: they do not count against --max-retries. */
export const DEFAULT_RATE_LIMIT_BUDGET_MS = 10 * 60_000;
/** the least a 429 wait uses of that budget, so that "Retry-After: 0.001" for ever still ends */
const MIN_RATE_LIMIT_CHARGE_MS = 100;

/** What a 429's wait costs of the budget; undefined for no positive Retry-After (it counts as a retry). */
export function rateLimitCharge(retryAfter: number | undefined): number | undefined {
  return retryAfter !== undefined && retryAfter > 0 ? Math.max(retryAfter, MIN_RATE_LIMIT_CHARGE_MS) : undefined;
}

/** Why a request stopped waiting out 429s (`waits` waited before, costing `chargedMs`); names CRM_RATE_LIMIT_BUDGET. */
export function budgetSpentText(u: { askedMs: number; waits: number; chargedMs: number; budgetMs: number }): string {
  const left = Math.max(0, u.budgetMs - u.chargedMs);
  const before =
    u.waits > 0
      ? `after ${u.waits} ${u.waits === 1 ? 'wait' : 'waits'} for Retry-After (${formatWait(u.chargedMs)}), `
      : '';
  const rest = left <= 0 ? 'nothing is' : left < 100 ? 'less than 0.1 s is' : `only ${formatWait(left)} is`;
  return (
    `${before}the server asks to wait ${formatWait(u.askedMs)} (Retry-After) and ${rest} left of the rate-limit budget ` +
    `for one request (${formatWait(u.budgetMs)} in all; CRM_RATE_LIMIT_BUDGET sets it, in seconds)`
  );
}
export interface RetryInput {
  method: HttpMethod;
  status?: number;
  /** a transport error code, when no response arrived */
  errorCode?: string;
  hasIdempotencyKey: boolean;
  /** retries already made (0 before the first) */
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
  return (
    transient && (UNSENT_ERROR_CODES.has(input.errorCode ?? '') || isRepeatable(input.method, input.hasIdempotencyKey))
  );
}

/** Full jitter: uniform in [0, min(cap, base·2^attempt)); `attempt` 0 is the first retry. */
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
  const hours = Math.round(s / 360) / 10; // a wait a few ms short of 2 days reads "2 days", not "48 h"
  if (hours < 48) return `${hours} h`;
  return `${Math.round(s / 8_640) / 10} days`;
}

/** "in 3.2 days (at 2026-11-25T14:20:03Z)": when a wait that crm will not do ends. */
export function comeBackText(ms: number, nowMs: number): string {
  const at = new Date(Math.ceil((nowMs + clampWait(ms)) / 1000) * 1000).toISOString().replace('.000Z', 'Z');
  return `in ${formatWait(ms)} (at ${at})`;
}

/** A wait for the rate limit that crm does not do (CONTRACT §4): fail now, saying when to come back. */
export function tooLongError(wait: number, now: number, blocked: boolean): RateLimitError {
  const when = comeBackText(wait, now);
  const why = blocked
    ? `the server asked to wait ${when} (429 Retry-After)`
    : `the rate limit is used up until the window resets ${when} (X-RateLimit-Reset)`;
  // HTTP 429 only when one came: a window's reset is read from a 2xx
  return new RateLimitError(`${why}; crm waits at most ${MAX_RETRY_AFTER_MS / 60_000} min`, {
    ...(blocked ? { status: 429 } : {}),
    code: 'RATE_LIMITED',
    hint: `try again ${when}`,
  });
}
