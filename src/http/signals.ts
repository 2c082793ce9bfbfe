// Combining abort signals without leaving listeners behind on long-lived ones (the process's
// Ctrl-C signal outlives thousands of requests; AbortSignal.any has leaked on some Node 20 releases).
import { setMaxListeners } from 'node:events';

export interface LinkedSignal {
  signal: AbortSignal;
  dispose(): void;
}

/** A signal that aborts when any of `signals` does; call dispose() when done with it. */
export function linkSignals(...signals: Array<AbortSignal | undefined>): LinkedSignal {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  const present = signals.filter((s): s is AbortSignal => s !== undefined);
  const already = present.find((s) => s.aborted);
  if (already) {
    controller.abort(already.reason);
    return { signal: controller.signal, dispose: () => {} };
  }
  const listeners = present.map((s) => {
    // one listener per concurrent request or waiter is expected, not a leak: no warning at 11
    setMaxListeners(0, s);
    const onAbort = () => controller.abort(s.reason);
    s.addEventListener('abort', onAbort, { once: true });
    return () => s.removeEventListener('abort', onAbort);
  });
  return { signal: controller.signal, dispose: () => listeners.forEach((remove) => remove()) };
}
