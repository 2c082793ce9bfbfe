// The real clock, and every timer of crm: Node fires a delay above 2^31-1 ms after 1 ms (a busy loop),
// so long ones are chained. Everything that waits takes a Clock, so tests inject a fake one.
import { setMaxListeners } from 'node:events';
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
    timer = setTimeout(
      () => (left > MAX_TIMER_MS ? arm(left - MAX_TIMER_MS) : fn()),
      Math.min(Math.max(left, 0), MAX_TIMER_MS),
    );
    timer.unref?.();
  };
  arm(ms);
  return () => clearTimeout(timer);
}

// Abort signals linked without leaving listeners on long-lived ones (the process's Ctrl-C signal
// outlives thousands of requests; AbortSignal.any has leaked on some Node 20 releases).
/** A signal that aborts when any of `signals` does; call dispose() when done with it. */
export function linkSignals(...signals: Array<AbortSignal | undefined>) {
  const present = [...new Set(signals.filter((s): s is AbortSignal => s !== undefined))];
  // one signal (or one given twice): itself, no new controller (a read of 10,000 pages made 20,000 of them)
  if (present.length === 1) return { signal: listenedTo(present[0]!), dispose: () => {} };
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  const already = present.find((s) => s.aborted);
  if (already) {
    controller.abort(already.reason);
    return { signal: controller.signal, dispose: () => {} };
  }
  const listeners = present.map((s) => {
    const onAbort = () => controller.abort(s.reason);
    listenedTo(s).addEventListener('abort', onAbort, { once: true });
    return () => s.removeEventListener('abort', onAbort);
  });
  return { signal: controller.signal, dispose: () => listeners.forEach((remove) => remove()) };
}

const unlimited = new WeakSet<AbortSignal>();
/** One listener per concurrent request or waiter is expected, not a leak: no warning at 11 (set once per signal). */
function listenedTo(s: AbortSignal): AbortSignal {
  if (!unlimited.has(s)) {
    setMaxListeners(0, s);
    unlimited.add(s);
  }
  return s;
}
