// How long the requests left of a job will take at least: the rate limit the server reports sets a
// floor from the first answer on (3,000 requests at 200 a minute are 14 minutes away however fast
// the first window went); the rate observed so far, when slower, says more.
import type { PaceInfo } from '../http/types.js';
import { DEFAULT_WINDOW_MS } from '../http/pace-info.js';

export interface EtaInput {
  /** requests still to send (rows left for one request per row; chunks left for a batch create) */
  requestsLeft: number;
  now: number;
  /** client.pace(): undefined when the client knows nothing (a dry run, a test double) */
  pace?: PaceInfo;
  /** requests answered per ms while they could go (SendingRate.whileSending; with no limit known, .overall) */
  observedRatePerMs?: number;
}

/**
 * The least time the rate limit allows for `requestsLeft` requests: nothing before a wait the pacer
 * holds; what the current window has left goes at once; the rest, `limit` per window, the last
 * window's at its start. Undefined without a limit; 0 when everything left fits now.
 */
export function limitFloorMs(requestsLeft: number, now: number, pace: PaceInfo | undefined): number | undefined {
  if (requestsLeft <= 0) return 0;
  if (!pace) return undefined;
  const start = Math.max(now, pace.waitingUntil ?? now);
  const { limit, windowMs = DEFAULT_WINDOW_MS } = pace;
  if (limit === undefined || !(limit > 0)) return pace.waitingUntil === undefined ? undefined : start - now;
  // a window unknown, or over by the time requests may go, begins with the next request, with the full limit
  const current = pace.resetAt !== undefined && pace.resetAt > start;
  const inWindow = current ? Math.max(0, pace.remaining ?? 0) : limit;
  const beyond = requestsLeft - inWindow;
  const resetIn = current ? pace.resetAt! - start : windowMs;
  return start - now + (beyond > 0 ? resetIn + (Math.ceil(beyond / limit) - 1) * windowMs : 0);
}

/**
 * The ETA in ms (issue 17): the requests left at the rate they were sent while the pacer let them go,
 * window by window as the rate limit allows — what a window has left, no more than that rate can send
 * before its reset; then full windows; the last one's requests at that rate after its start. So a wait
 * the limit will impose is counted (an ETA from the rate alone said 30 s for a run of 78), and so is
 * the time to send (a floor alone put each window's requests at its start). Without a limit: a wait the
 * pacer holds, then the rate. Undefined when neither is known.
 */
export function etaMs(i: EtaInput): number | undefined {
  if (i.requestsLeft <= 0) return 0;
  const rate = i.observedRatePerMs !== undefined && i.observedRatePerMs > 0 ? i.observedRatePerMs : undefined;
  const floor = limitFloorMs(i.requestsLeft, i.now, i.pace);
  if (rate === undefined) return floor;
  const { pace } = i;
  const limit = pace?.limit;
  if (!pace || limit === undefined || !(limit > 0)) return (floor ?? 0) + i.requestsLeft / rate;
  let t = Math.max(i.now, pace.waitingUntil ?? i.now);
  const current = pace.resetAt !== undefined && pace.resetAt > t;
  const windowMs = pace.windowMs > 0 ? pace.windowMs : DEFAULT_WINDOW_MS;
  const end = current ? pace.resetAt! : t + windowMs;
  let left = i.requestsLeft;
  const fit = Math.min(current ? Math.max(0, pace.remaining ?? 0) : limit, (end - t) * rate);
  if (left <= fit) return t + left / rate - i.now;
  left -= fit;
  t = end;
  // every later window alike: what the limit or the rate lets through, whichever is less
  const perWindow = Math.min(limit, windowMs * rate);
  const full = Math.ceil(left / perWindow) - 1;
  return t + full * windowMs + (left - full * perWindow) / rate - i.now;
}

/**
 * The rate requests are answered at, fed by each redraw of a progress line: `whileSending`, per ms of the
 * time the pacer was not holding every request back (the waits ahead are the rate limit's to count), and
 * `overall`, per ms of all the time since the first sample (waits included: with no limit known, the
 * waits to come are guessed like those so far).
 */
export class SendingRate {
  private activeMs = 0;
  private first?: { at: number; done: number };
  private last?: { at: number; waiting: boolean; done: number };

  /** `done`: requests answered so far; `waiting`: the pacer holds every request back at `now` (PaceInfo.waitingUntil after now) */
  observe(now: number, done: number, waiting: boolean): void {
    this.first ??= { at: now, done };
    if (this.last && !this.last.waiting) this.activeMs += Math.max(0, now - this.last.at);
    this.last = { at: now, waiting, done };
  }

  /** requests per ms since the first sample, the waits left out; undefined until there is one */
  whileSending(): number | undefined {
    const n = this.answered();
    return n > 0 && this.activeMs > 0 ? n / this.activeMs : undefined;
  }

  /** requests per ms since the first sample, the waits included */
  overall(): number | undefined {
    const ms = this.last && this.first ? this.last.at - this.first.at : 0;
    const n = this.answered();
    return n > 0 && ms > 0 ? n / ms : undefined;
  }

  private answered(): number {
    return this.last && this.first ? this.last.done - this.first.done : 0;
  }
}

/**
 * Feeds `sending` with the requests answered so far and reads the rate an ETA goes by: while sending when a
 * limit is known (etaMs counts its waits), else overall. Only a wait the limit foretells (its window used up)
 * is left out: a 429 it did not foretell (another client on the key, an organization's limit) slows the rate.
 */
export function sendingRateNow(
  sending: SendingRate,
  now: number,
  requests: number,
  pace: PaceInfo | undefined,
): number | undefined {
  const foretold = pace?.limit !== undefined && (pace.remaining === 0 || pace.waitingUntil === pace.resetAt);
  sending.observe(now, requests, pace?.waitingUntil !== undefined && pace.waitingUntil > now && foretold);
  return pace?.limit !== undefined ? sending.whileSending() : sending.overall();
}

/** The spec's rate limit, 200 requests a minute: for a cost said before any answer has told the server's own. */
export const SPEC_LIMIT = { limit: 200, windowMs: DEFAULT_WINDOW_MS } as const;

/** `0.4`, `12`: a tenth of a minute under ten, rounded up; never 0 for a time above 0. */
export const minutesText = (m: number): string => (m < 10 ? String(Math.ceil(m * 10) / 10) : String(Math.ceil(m)));

/** `a minute`, `per 2 s`, `per 0.5 s`: a window's length as said after "N requests" (a learned one is a little short of the real: rounded). */
function perWindow(ms: number): string {
  const s = ms >= 1_000 ? Math.round(ms / 1_000) : Math.round(ms / 100) / 10;
  return s === 60 ? 'a minute' : `per ${s.toLocaleString('en-US')} s`;
}

/**
 * The least time the limit allows `requests` (limitFloorMs), and when no answer has told the window's
 * length (the spec's minute reckoned with), `shortMs`: that time should the window be only as long as
 * the longest time-to-reset seen, the least it can be. Undefined without a limit.
 */
export function leastAtLimit(
  requests: number,
  now: number,
  pace: PaceInfo | undefined,
): { ms: number; shortMs?: number } | undefined {
  const ms = limitFloorMs(requests, now, pace);
  if (ms === undefined) return undefined;
  if (pace?.windowAtLeastMs === undefined) return { ms };
  const shortMs = limitFloorMs(requests, now, { ...pace, windowMs: Math.max(1, pace.windowAtLeastMs) })!;
  return shortMs < ms ? { ms, shortMs } : { ms };
}

/**
 * What `requests` cost in time, said before they are sent (a delete's confirmation, `snapshot --links`'s
 * cost line; one rule for both): the least time the rate limit allows (limitFloorMs: the current window's
 * requests at once, then `limit` per window) at the limit the client has seen, over the window's length
 * an answer that opened a window told (pace-info.ts), else over the spec's minute, said so; before any
 * answer, the spec's 200 a minute as a steady rate (nothing says how much of the server's window is
 * left: none is counted as free). Rounded up to a tenth of a minute: never less than the limit allows.
 * `about 0.4 min at 10 requests per 2 s (the server's rate limit)`.
 */
export function costAtLimitText(requests: number, now: number, pace: PaceInfo | undefined): string {
  const reported = pace?.limit !== undefined && pace.limit > 0;
  const at: PaceInfo = reported && pace ? pace : { ...SPEC_LIMIT };
  // the spec's limit, no answer seen: how much of the server's window is left is unknown, so none is
  // counted as free: `limit` per window from the first (138 requests at 200 a minute are 0.7 min, not 0)
  const ms = reported ? (limitFloorMs(requests, now, at) ?? 0) : (Math.max(0, requests) / at.limit!) * at.windowMs;
  const minutes = ms / 60_000;
  const time = minutes < 0.1 ? 'under 0.1 min' : `about ${minutesText(minutes)} min`;
  const whose = !reported
    ? "the spec's limit: no answer has said the server's own yet"
    : at.windowAtLeastMs === undefined
      ? "the server's rate limit"
      : `the server's limit; its window's length not known yet: ${at.windowMs === DEFAULT_WINDOW_MS ? 'a minute assumed, as in the spec' : 'the longest its resets showed assumed'}`;
  return `${time} at ${at.limit!.toLocaleString('en-US')} requests ${perWindow(at.windowMs)} (${whose})`;
}
