// mapInOrder: results handed on in input order whatever order they finish in, at most `concurrency`
// running, at most `window` started ahead of the next handed on; a throw stops the run.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mapInOrder } from '../../../src/util/in-order.js';
import { runs } from '../../helpers/property.js';

/** Tasks that finish when the test says: `finishOne(k)` ends the k-th (mod count) still running. */
function controlled() {
  const running: Array<() => void> = [];
  return {
    running,
    run: (i: number) => new Promise<number>((resolve) => running.push(() => resolve(i * 10))),
    finishOne(k: number) {
      const [done] = running.splice(k % running.length, 1);
      done!();
    },
  };
}
const tick = () => new Promise<void>((r) => setImmediate(r));

describe('mapInOrder', () => {
  it('hands every result on once, in input order, within the concurrency and the window', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 60 }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 12 }),
        fc.array(fc.nat(), { minLength: 200, maxLength: 200 }),
        async (n, concurrency, window, picks) => {
          const c = controlled();
          const emitted: Array<[number, number]> = [];
          let [maxRunning, maxAhead, started] = [0, 0, 0];
          const done = mapInOrder(
            Array.from({ length: n }, (_, i) => i),
            (item) => {
              started++;
              maxAhead = Math.max(maxAhead, item - emitted.length);
              return c.run(item);
            },
            (r, i) => void emitted.push([r, i]),
            { concurrency, window },
          );
          for (let step = 0; emitted.length < n; step++) {
            await tick();
            maxRunning = Math.max(maxRunning, c.running.length);
            if (c.running.length > 0) c.finishOne(picks[step % picks.length]!);
          }
          expect(await done).toBe(n);
          expect(emitted).toEqual(Array.from({ length: n }, (_, i) => [i * 10, i]));
          expect(started).toBe(n);
          expect(maxRunning).toBeLessThanOrEqual(concurrency);
          expect(maxAhead).toBeLessThan(Math.max(window, concurrency));
        },
      ),
      runs(100),
    );
  });

  it('a throw from emit starts no more and is thrown once the tasks in flight settle', async () => {
    let started = 0;
    const p = mapInOrder(
      Array.from({ length: 100 }, (_, i) => i),
      async (i) => (started++, i),
      (r) => {
        if (r === 3) throw new Error('EPIPE');
      },
      { concurrency: 2 },
    );
    await expect(p).rejects.toThrow('EPIPE');
    expect(started).toBeLessThan(10);
  });

  it('a throw from a task ends the run even while later items wait for it (no hang)', async () => {
    const p = mapInOrder(
      Array.from({ length: 100 }, (_, i) => i),
      async (i) => {
        if (i === 0) {
          await tick();
          throw new Error('boom');
        }
        return i;
      },
      () => undefined,
      { concurrency: 2, window: 4 },
    );
    await expect(p).rejects.toThrow('boom');
  });

  it('stop() starts no more; the count says how many were started', async () => {
    let n = 0;
    const started = await mapInOrder(
      Array.from({ length: 10 }, (_, i) => i),
      async (i) => i,
      () => void n++,
      { concurrency: 1, stop: () => n >= 3 },
    );
    expect(started).toBe(3);
  });

  it('an async iterable (ids streamed from stdin) is read only as fast as the window moves', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 10 }), async (concurrency, window) => {
        let [pulled, emitted, maxAhead] = [0, 0, 0];
        async function* items(): AsyncGenerator<number> {
          for (let i = 0; i < 300; i++) {
            pulled++;
            maxAhead = Math.max(maxAhead, pulled - emitted);
            yield i;
          }
        }
        const out: number[] = [];
        await mapInOrder(
          items(),
          async (i) => {
            await tick();
            return i;
          },
          (r) => {
            emitted++;
            out.push(r);
          },
          { concurrency, window },
        );
        expect(out).toEqual(Array.from({ length: 300 }, (_, i) => i));
        expect(maxAhead).toBeLessThanOrEqual(Math.max(window, concurrency) + 1);
      }),
      runs(20),
    );
  });
});
