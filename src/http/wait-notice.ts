// "waiting 42 s: why" on standard error when crm waits long (CONTRACT §3: a silent minute looks like
// a hang). With --verbose every wait from a second on; without, from a few seconds on (not with -q,
// which the caller's `notice` honours). Concurrent requests waiting for the same moment (a window
// reset, one 429) say it once.
import { formatWait } from './retry.js';
import type { Clock } from './types.js';

/** waits from this long are said with --verbose */
export const VERBOSE_WAIT_MS = 1_000;
/** waits from this long are said always (unless --quiet) */
export const NOTICE_WAIT_MS = 5_000;
/** waits ending within this of one already said are the same wait */
const SAME_WAIT_MS = 1_000;

export type WaitNote = (ms: number, why: string) => void;

export function waitNotice(clock: Clock, verboseLog?: (line: string) => void, notice?: (line: string) => void): WaitNote {
  let saidUntil = -Infinity;
  return (ms, why) => {
    const threshold = verboseLog ? VERBOSE_WAIT_MS : NOTICE_WAIT_MS;
    const out = verboseLog ?? notice;
    if (!out || !(ms >= threshold)) return;
    const until = clock.now() + ms;
    if (Math.abs(until - saidUntil) <= SAME_WAIT_MS) return;
    saidUntil = until;
    out(`waiting ${formatWait(ms)}: ${why}`);
  };
}
