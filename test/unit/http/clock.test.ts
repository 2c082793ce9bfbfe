// The one real sleep of crm: a delay above what a Node timer holds (2^31-1 ms) must wait, not fire
// at once with a TimeoutOverflowWarning (a busy loop when a server's header asked for years).
import { afterEach, expect, it, vi } from 'vitest';
import { FakeClock } from '../../helpers/clock.js';
import { MAX_TIMER_MS, setLongTimeout, systemClock } from '../../../src/http/clock.js';
import { waitNotice } from '../../../src/http/retry-loop.js';

afterEach(() => vi.useRealTimers());

it('sleeps longer than one timer holds (no overflow to 1 ms), and Ctrl-C still stops it', async () => {
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(w.name);
  process.on('warning', onWarning);
  const ac = new AbortController();
  let settled = false;
  const sleeping = systemClock.sleep(3 * MAX_TIMER_MS, ac.signal).then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise((r) => setTimeout(r, 30)); // an overflowing timer fires after 1 ms
  expect(settled).toBe(false);
  ac.abort();
  await sleeping;
  process.off('warning', onWarning);
  expect(warnings).not.toContain('TimeoutOverflowWarning');
});

it('setLongTimeout fires after the whole delay, not after the first timer', async () => {
  vi.useFakeTimers();
  let fired = false;
  setLongTimeout(() => (fired = true), MAX_TIMER_MS * 2);
  await vi.advanceTimersByTimeAsync(MAX_TIMER_MS + 1);
  expect(fired).toBe(false);
  await vi.advanceTimersByTimeAsync(MAX_TIMER_MS);
  expect(fired).toBe(true);
});

it('a sleep of NaN or below zero does not wait', async () => {
  await systemClock.sleep(Number.NaN);
  await systemClock.sleep(-5);
});

it('says a wait once, from 5 s without -v and from 1 s with it', () => {
  const clock = new FakeClock();
  const notes: string[] = [];
  const quiet = waitNotice(clock, undefined, (l) => notes.push(l));
  quiet(3_000, 'short');
  quiet(42_000, 'the window');
  quiet(42_000, 'the window'); // a second request waiting for the same moment
  const verbose = waitNotice(
    clock,
    (l) => notes.push(`v: ${l}`),
    () => notes.push('never'),
  );
  verbose(1_500, 'a 429');
  verbose(500, 'tiny');
  expect(notes).toEqual(['waiting 42 s: the window', 'v: waiting 1.5 s: a 429']);
});
