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
  /** requests answered per ms so far */
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

/** The ETA in ms: the rate limit's floor, or the observed rate's estimate when that is slower; undefined when neither is known. */
export function etaMs(i: EtaInput): number | undefined {
  if (i.requestsLeft <= 0) return 0;
  const floor = limitFloorMs(i.requestsLeft, i.now, i.pace);
  const rate = i.observedRatePerMs;
  const observed = rate !== undefined && rate > 0 ? i.requestsLeft / rate : undefined;
  if (floor === undefined) return observed;
  return observed === undefined ? floor : Math.max(floor, observed);
}
