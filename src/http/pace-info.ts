// What the pacer knows of the rate limit, read-only (`client.pace()`), for progress lines and ETAs:
// it never changes a pacing decision.
import type { Pacer } from './pacer.js';

/** the spec's rate limits are per minute; the window when no answer has told its length */
export const DEFAULT_WINDOW_MS = 60_000;
/** a Reset in whole seconds may read up to a second late */
const SECOND_MS = 1_000;

/** The rate-limit window as the pacer sees it; times are ms on the client's clock (epoch ms by default). */
export interface PaceInfo {
  /** X-RateLimit-Limit: requests per window */
  limit?: number;
  /** what the last answer said remains in this window (the full limit once the window is over) */
  remaining?: number;
  /** when this window resets; undefined when unknown or over */
  resetAt?: number;
  /** the window's length: as an answer that opened a window told it (windowOf), else the spec's minute */
  windowMs: number;
  /** present when no answer has told the window's length (windowMs is then the spec's): the least it can be, the longest time-to-reset seen (0: none seen) */
  windowAtLeastMs?: number;
  /** no request goes before this: a 429's Retry-After, or a window used up until its reset */
  waitingUntil?: number;
}

type PacerView = ReturnType<Pacer['snapshot']>;

/** The window's length to reckon with, from what the answers told (PaceInfo's windowMs, windowAtLeastMs). */
export type WindowLength = Pick<PaceInfo, 'windowMs' | 'windowAtLeastMs'>;

/**
 * The window's length: what an answer that opened a window told (`told`: its Reset less its request's
 * send time, window-length.ts), unless a longer time-to-reset was seen since (then windows are not
 * anchored at their first request: a second allowed for a Reset in whole seconds). `told` counts the
 * way to the server too (0.5 s on a busy machine: a plan said "at least 6.0 s" for a run of 5.5), and
 * no time-to-reset is longer than the window: the least of the two. Else it is not known: the longest
 * time-to-reset seen is only the least it can be (a window's remains, started late in it: 484 requests
 * priced at 4 s took 63), so the spec's minute, or that longest when longer.
 */
export function windowOf(told: number | undefined, longest: number): WindowLength {
  if (told !== undefined && told + SECOND_MS >= longest)
    return { windowMs: longest > 0 ? Math.min(told, longest) : told };
  return { windowMs: Math.max(DEFAULT_WINDOW_MS, longest), windowAtLeastMs: Math.max(0, longest) };
}

/** The pure reading of a pacer's snapshot at `now` (a window past its reset reads as a fresh one, as the pacer rolls it over). */
export function paceInfoOf(s: PacerView, now: number, window: WindowLength = windowOf(undefined, 0)): PaceInfo {
  const over = s.resetAt !== undefined && now >= s.resetAt;
  const remaining = over ? s.limit : s.remaining;
  const resetAt = over ? undefined : s.resetAt;
  const info: PaceInfo = { ...window };
  if (s.limit !== undefined) info.limit = s.limit;
  if (remaining !== undefined) info.remaining = remaining;
  if (resetAt !== undefined) info.resetAt = resetAt;
  if (now < s.blockedUntil) info.waitingUntil = s.blockedUntil;
  else if (resetAt !== undefined && remaining !== undefined && remaining - s.inFlight <= 0) info.waitingUntil = resetAt;
  return info;
}

/** Reads a pacer: the window's length as its answers told it, the longest time-to-reset seen beside (observe after each answer). */
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
      return paceInfoOf(pacer.snapshot(), now(), windowOf(pacer.windowLength(), longest));
    },
  };
}
