// Tasks a few at a time, their results handed on in input order as soon as each one's turn comes:
// output that streams in the order asked although answers arrive in any order. At most `window`
// items run or wait ahead of the next to hand on, so memory stays bounded however long the input
// (an async iterable is read only as fast as the window moves).
// (SortedLines does not fit here: it spills to disk and gives everything back only at the end.)
import { Pool } from './pool.js';

export interface InOrderOptions {
  concurrency: number;
  /** items started ahead of the next one handed on (default 16 × concurrency, at least concurrency) */
  window?: number;
  /** start no more once it says so (Ctrl-C) */
  stop?: () => boolean;
}

/**
 * `run` over `items`, `concurrency` at a time; `emit` gets each result in input order, one call at a
 * time (awaited: backpressure). A throw from `run` or `emit` starts no more and is thrown once the
 * tasks in flight have settled. Returns how many items were started.
 */
export async function mapInOrder<T, R>(
  items: Iterable<T> | AsyncIterable<T>,
  run: (item: T, index: number) => Promise<R>,
  emit: (result: R, index: number) => void | Promise<void>,
  o: InOrderOptions,
): Promise<number> {
  const window = Math.max(o.window ?? o.concurrency * 16, o.concurrency);
  const ready = new Map<number, R>();
  let next = 0;
  let failed = false;
  let emitting: Promise<void> = Promise.resolve();
  // woken whenever a task settles: the window may have moved, or a failure ends the run
  let wake: () => void = () => undefined;
  const flush = async (): Promise<void> => {
    while (ready.has(next)) {
      const result = ready.get(next) as R;
      ready.delete(next);
      await emit(result, next++);
    }
  };
  const pool = new Pool(o.concurrency, () => wake());
  let started = 0;
  try {
    let count = 0;
    for await (const item of items) {
      const i = count++;
      while (i - next >= window && !failed) await new Promise<void>((resolve) => (wake = resolve));
      const task = async (): Promise<void> => {
        try {
          ready.set(i, await run(item, i));
          emitting = emitting.then(flush);
          await emitting;
        } catch (err) {
          failed = true;
          throw err;
        }
      };
      if (!(await pool.run(task, o.stop))) break;
      started++;
    }
  } finally {
    await pool.drain();
  }
  return started;
}
