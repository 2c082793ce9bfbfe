// What the pacer knows of the rate limit, read-only (`client.pace()`), for progress lines and ETAs:
// it never changes a pacing decision.
import type { Pacer } from './pacer.js';

/** the spec's rate limits are per minute; the window when no answer has told its length */
export const DEFAULT_WINDOW_MS = 60_000;

/** The rate-limit window as the pacer sees it; times are ms on the client's clock (epoch ms by default). */
export interface PaceInfo {
  /** X-RateLimit-Limit: requests per window */
  limit?: number;
  /** what the last answer said remains in this window (the full limit once the window is over) */
  remaining?: number;
  /** when this window resets; undefined when unknown or over */
  resetAt?: number;
  /** the window's length: the longest time-to-reset an answer has reported, else DEFAULT_WINDOW_MS */
  windowMs: number;
  /** no request goes before this: a 429's Retry-After, or a window used up until its reset */
  waitingUntil?: number;
}

type PacerView = ReturnType<Pacer['snapshot']>;

/** The pure reading of a pacer's snapshot at `now` (a window past its reset reads as a fresh one, as the pacer rolls it over). */
export function paceInfoOf(s: PacerView, now: number, windowMs: number = DEFAULT_WINDOW_MS): PaceInfo {
  const over = s.resetAt !== undefined && now >= s.resetAt;
  const remaining = over ? s.limit : s.remaining;
  const resetAt = over ? undefined : s.resetAt;
  const info: PaceInfo = { windowMs };
  if (s.limit !== undefined) info.limit = s.limit;
  if (remaining !== undefined) info.remaining = remaining;
  if (resetAt !== undefined) info.resetAt = resetAt;
  if (now < s.blockedUntil) info.waitingUntil = s.blockedUntil;
  else if (resetAt !== undefined && remaining !== undefined && remaining - s.inFlight <= 0) info.waitingUntil = resetAt;
  return info;
}

/** Reads a pacer, learning the window's length from the longest time-to-reset seen (observe after each answer). */
export function paceWatch(pacer: Pacer, now: () => number): { observe: () => void; info: () => PaceInfo } {
  let longest = 0;
  const observe = (): void => {
    const { resetAt } = pacer.snapshot();
    if (resetAt !== undefined) longest = Math.max(longest, resetAt - now());
  };
  return {
    observe,
    info: () => {
      observe();
      return paceInfoOf(pacer.snapshot(), now(), longest > 0 ? longest : DEFAULT_WINDOW_MS);
    },
  };
}
