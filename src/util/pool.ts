// At most `size` tasks at a time: the one worker pool of batch imports, downloads and key checks.

export class Pool {
  private readonly running = new Set<Promise<void>>();
  /** the first task that threw: no more start, and drain() throws it */
  private failure: { error: unknown } | undefined;

  /** `onSettled`: after each task, once it has left the pool */
  constructor(
    private readonly size: number,
    private readonly onSettled: () => void = () => undefined,
  ) {}

  get active(): number {
    return this.running.size;
  }

  /** Wait for a free slot, then start `task`; false, and not started, once `stop()` or a task threw. */
  async run(task: () => Promise<void>, stop: () => boolean = () => false): Promise<boolean> {
    const stopped = (): boolean => stop() || this.failure !== undefined;
    while (this.running.size >= this.size && !stopped()) await Promise.race(this.running);
    if (stopped()) return false;
    // started at once (up to its first await), like a plain call
    const p = (async () => task())()
      .catch((error: unknown) => void (this.failure ??= { error }))
      .finally(() => {
        this.running.delete(p);
        this.onSettled();
      });
    this.running.add(p);
    return true;
  }

  /** Wait until every task started has finished. */
  async drain(): Promise<void> {
    while (this.running.size > 0) await Promise.race(this.running);
    if (this.failure) throw this.failure.error;
  }
}

/** `fn` over `items`, `size` at a time, starting no more once `stop()`; returns how many were started. */
export async function forEachLimit<T>(
  items: readonly T[],
  size: number,
  fn: (item: T) => Promise<void>,
  stop?: () => boolean,
): Promise<number> {
  const pool = new Pool(size);
  let started = 0;
  for (const item of items) {
    if (!(await pool.run(() => fn(item), stop))) break;
    started++;
  }
  await pool.drain();
  return started;
}
