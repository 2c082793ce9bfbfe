// The fake clocks of the tests: time moves only when a test says so, nothing sleeps for real.
import type { Clock } from '../../src/http/types.js';

/** A clock whose sleeps return at once, advancing its time and remembering how long was asked. */
export class FakeClock implements Clock {
  t: number;
  /** every sleep asked for, in ms */
  readonly sleeps: number[] = [];
  private readonly rnd: () => number;
  /** start: ms since the epoch (default 2026-01-01T00:00:00Z); random: default 0.5, the middle of any jitter */
  constructor(opts: { start?: number; random?: () => number } = {}) {
    this.t = opts.start ?? Date.UTC(2026, 0, 1);
    this.rnd = opts.random ?? (() => 0.5);
  }
  now(): number {
    return this.t;
  }
  /** moves the clock forward */
  advance(ms: number): void {
    this.t += ms;
  }
  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    this.sleeps.push(ms);
    this.t += Math.max(0, ms);
  }
  random(): number {
    return this.rnd();
  }
}

/**
 * A discrete-event clock: sleeps are timers; run() advances time to the next timer only once every
 * task has gone quiet, so concurrent workers interleave as they would in real time.
 */
export class SimClock implements Clock {
  t = 0;
  private timers: Array<{ at: number; seq: number; resolve: () => void }> = [];
  private seq = 0;
  now(): number {
    return this.t;
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const timer = { at: this.t + Math.max(0, ms), seq: this.seq++, resolve };
      this.timers.push(timer);
      signal?.addEventListener(
        'abort',
        () => {
          this.timers = this.timers.filter((x) => x !== timer);
          reject(signal.reason);
        },
        { once: true },
      );
    });
  }
  random(): number {
    return 0.5;
  }
  /** Runs until `done` settles, firing timers in time order. */
  async run<T>(done: Promise<T>): Promise<T> {
    let finished = false;
    const result = done.finally(() => {
      finished = true;
    });
    while (!finished) {
      await new Promise((r) => setImmediate(r));
      if (finished) break;
      if (this.timers.length === 0) continue;
      this.timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.timers.shift()!;
      this.t = Math.max(this.t, next.at);
      next.resolve();
    }
    return result;
  }
}
