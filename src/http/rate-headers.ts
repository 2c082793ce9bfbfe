// The one reader of waiting headers (CONTRACT §4): Retry-After and X-RateLimit-*.

/** The ceiling of every wait read from a header (a year): a finite time a Date can show. */
export const HEADER_WAIT_CEILING_MS = 365 * 24 * 3_600_000;
/** a Reset above this is a Unix time in seconds; anything else is seconds until the window resets */
export const UNIX_TIME_THRESHOLD = 1e9;
/** a Reset above this is a Unix time in milliseconds (read as seconds: millennia) */
export const UNIX_MS_THRESHOLD = 1e11;

/** A header's decimal number (`12`, `1.5`, `.5`, `-3`), or undefined for anything else. */
function decimal(text: string): number | undefined {
  if (!/^-?(\d+(\.\d+)?|\.\d+)$/.test(text)) return undefined;
  const n = Number(text);
  return Number.isFinite(n) ? n : undefined;
}

/** A wait in [0, HEADER_WAIT_CEILING_MS]; NaN is 0. */
export function clampWait(ms: number): number {
  return ms > 0 ? Math.min(ms, HEADER_WAIT_CEILING_MS) : 0;
}

/** Clocks this close are taken to agree: a `Date` header is in whole seconds, and late by the latency. */
export const CLOCK_AGREEMENT_MS = 2_000;

/**
 * What to add to a time on the server's clock to read it on ours: its `Date` header against our now
 * (0 without a Date, or when the clocks agree within CLOCK_AGREEMENT_MS: ours is then the finer).
 * An absolute time the server sends (a Unix-time Reset, a Retry-After date) is the server's clock
 * too: a server 7 minutes ahead made a Reset 2 s away a wait of 7 minutes.
 */
export function serverClockOffset(dateHeader: string | undefined, nowMs: number): number {
  const at = httpDate(dateHeader?.trim() ?? '');
  if (at === undefined) return 0;
  const offset = nowMs - at;
  return Math.abs(offset) <= CLOCK_AGREEMENT_MS ? 0 : offset;
}

/** An HTTP-date in ms; it has a weekday or month name (Date.parse alone accepts "1 2"). */
function httpDate(value: string): number | undefined {
  if (!/[a-z]{3}/i.test(value)) return undefined;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : at;
}

/**
 * `Retry-After` in ms from now: delta seconds (decimals allowed) or an HTTP-date (on the server's
 * clock: `offsetMs` from serverClockOffset); garbage → undefined, past → 0.
 */
export function retryAfterMs(headerValue: string | null | undefined, nowMs: number, offsetMs = 0): number | undefined {
  const value = headerValue?.trim();
  if (!value) return undefined;
  const seconds = decimal(value);
  if (seconds !== undefined) return clampWait(Math.ceil(seconds * 1000));
  const at = httpDate(value);
  return at === undefined ? undefined : clampWait(at + offsetMs - nowMs);
}

/**
 * X-RateLimit-Reset → ms on our clock (Unix ms, Unix s, both on the server's clock: `offsetMs`; or
 * seconds from now), within [now, now + a year].
 */
export function resetToMs(value: number, nowMs: number, offsetMs = 0): number {
  if (Number.isNaN(value)) return nowMs;
  const at =
    value > UNIX_MS_THRESHOLD
      ? value + offsetMs
      : value > UNIX_TIME_THRESHOLD
        ? value * 1000 + offsetMs
        : nowMs + value * 1000;
  return Math.min(Math.max(at, nowMs), nowMs + HEADER_WAIT_CEILING_MS);
}

/** The first value of a rate-limit header, when a non-negative number. */
function countHeader(headers: Record<string, string | undefined>, name: string): number | undefined {
  const n = decimal(headers[name]?.split(',')[0]!.trim() ?? '');
  return n !== undefined && n >= 0 ? n : undefined;
}

/**
 * The window as a response reports it (header names lower-case; `resetAt` on our clock, a Unix-time
 * Reset read against the server's `Date`); undefined
 * without Remaining and Reset. `coarse`: the Reset is a Unix time in whole seconds (the window may end
 * up to a second before it: window-length.ts).
 */
export function parseRateLimit(headers: Record<string, string | undefined>, nowMs: number) {
  const remaining = countHeader(headers, 'x-ratelimit-remaining');
  const reset = countHeader(headers, 'x-ratelimit-reset');
  if (remaining === undefined || reset === undefined) return undefined;
  const limit = countHeader(headers, 'x-ratelimit-limit');
  const coarse = reset > UNIX_TIME_THRESHOLD && reset <= UNIX_MS_THRESHOLD && Number.isInteger(reset);
  const resetAt = resetToMs(reset, nowMs, serverClockOffset(headers.date, nowMs));
  return { limit, remaining: Math.floor(remaining), resetAt, coarse };
}
