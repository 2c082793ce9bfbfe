// The real clock, and every timer of crm: Node fires a delay above 2^31-1 ms after 1 ms (a busy loop),
// so long ones are chained. Everything that waits takes a Clock, so tests inject a fake one.
import { setTimeout as delay } from 'node:timers/promises';

/** What waits take, so that tests inject a fake one. */
export interface Clock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  random(): number;
}

/** The longest delay one Node timer can hold. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: async (ms, signal) => {
    signal?.throwIfAborted();
    // NaN or negative: no wait; longer than a timer holds: several timers in a row
    for (let left = ms > 0 ? ms : 0; left > 0; left -= MAX_TIMER_MS) {
      await delay(Math.min(left, MAX_TIMER_MS), undefined, signal ? { signal } : undefined);
    }
  },
  random: () => Math.random(),
};

/** setTimeout for any delay (chained timers past MAX_TIMER_MS); returns the cancel function. */
export function setLongTimeout(fn: () => void, ms: number): () => void {
  let timer: NodeJS.Timeout;
  const arm = (left: number): void => {
    timer = setTimeout(() => (left > MAX_TIMER_MS ? arm(left - MAX_TIMER_MS) : fn()), Math.min(Math.max(left, 0), MAX_TIMER_MS));
    timer.unref?.();
  };
  arm(ms);
  return () => clearTimeout(timer);
}
