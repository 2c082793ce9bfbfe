import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../helpers/clock.js';
import { WindowLimiter, secondsHeader, takeAll } from '../../../src/sandbox/rate-limiter.js';

const clock = (): FakeClock => new FakeClock({ start: 1_000_000 });

describe('WindowLimiter', () => {
  it('counts units within a window and opens a new one after it', () => {
    const c = clock();
    const l = new WindowLimiter(3, 1000, () => c.now());
    expect(l.take('k').remaining).toBe(2);
    c.advance(400);
    expect(l.take('k')).toEqual({ limit: 3, remaining: 1, resetMs: 600, retryMs: 600 });
    expect(l.take('k').remaining).toBe(0);
    expect(l.peek('k').remaining).toBe(0);
    c.advance(599);
    expect(l.peek('k')).toEqual({ limit: 3, remaining: 0, resetMs: 1, retryMs: 1 });
    c.advance(1);
    expect(l.peek('k')).toEqual({ limit: 3, remaining: 3, resetMs: 1000, retryMs: 1000 });
  });

  it('keeps one window per id', () => {
    const c = clock();
    const l = new WindowLimiter(1, 1000, () => c.now());
    l.take('a');
    expect(l.peek('a').remaining).toBe(0);
    expect(l.peek('b').remaining).toBe(1);
  });
});

describe('WindowLimiter, sliding', () => {
  it('counts each request for a window after it: a unit frees when the oldest leaves; Reset is when all are free', () => {
    const c = clock();
    const l = new WindowLimiter(3, 1000, () => c.now(), 'sliding');
    l.take('k');
    c.advance(300);
    l.take('k');
    c.advance(300);
    expect(l.take('k')).toEqual({ limit: 3, remaining: 0, resetMs: 1000, retryMs: 400 });
    c.advance(399);
    expect(l.peek('k').remaining).toBe(0);
    c.advance(1); // the first request (t = 0) leaves the window
    expect(l.peek('k')).toEqual({ limit: 3, remaining: 1, resetMs: 600, retryMs: 0 });
    expect(l.take('k')).toEqual({ limit: 3, remaining: 0, resetMs: 1000, retryMs: 300 });
  });

  it('sliding-oldest: counts the same, but Reset is when the oldest request leaves (the next unit frees)', () => {
    const c = clock();
    const l = new WindowLimiter(3, 1000, () => c.now(), 'sliding-oldest');
    expect(l.take('k')).toEqual({ limit: 3, remaining: 2, resetMs: 1000, retryMs: 0 });
    c.advance(300);
    expect(l.take('k')).toEqual({ limit: 3, remaining: 1, resetMs: 700, retryMs: 0 });
    c.advance(300);
    expect(l.take('k')).toEqual({ limit: 3, remaining: 0, resetMs: 400, retryMs: 400 });
    c.advance(400); // the first request leaves: one unit, and Reset now names the second one's leaving
    expect(l.peek('k')).toEqual({ limit: 3, remaining: 1, resetMs: 300, retryMs: 0 });
    expect(l.take('k')).toEqual({ limit: 3, remaining: 0, resetMs: 300, retryMs: 300 });
  });

  it('never lets more than `limit` requests into any window of `windowMs` (unlike a fixed window at its edge)', () => {
    const c = clock();
    const fixed = new WindowLimiter(2, 1000, () => c.now());
    const sliding = new WindowLimiter(2, 1000, () => c.now(), 'sliding');
    const admitted = { fixed: [] as number[], sliding: [] as number[] };
    for (let t = 0; t < 3000; t += 100) {
      if (fixed.peek('k').remaining > 0) admitted.fixed.push((fixed.take('k'), c.now()));
      if (sliding.peek('k').remaining > 0) admitted.sliding.push((sliding.take('k'), c.now()));
      c.advance(100);
    }
    const most = (at: number[]) => Math.max(...at.map((t) => at.filter((u) => u >= t && u < t + 1000).length));
    expect(most(admitted.sliding)).toBe(2);
    expect(admitted.sliding.length).toBe(6);
    expect(admitted.fixed.length).toBe(6);
  });
});

describe('takeAll', () => {
  const format = { reset: 'delta', retryAfter: 'seconds', now: () => 0 } as const;
  it('takes a unit of every limiter and reports the lesser remaining', () => {
    const c = clock();
    const key = new WindowLimiter(10, 60_000, () => c.now());
    const org = new WindowLimiter(3, 60_000, () => c.now());
    const d = takeAll(
      [
        { limiter: key, id: 'k' },
        { limiter: org, id: 'org' },
      ],
      format,
    );
    expect(d).toEqual({
      ok: true,
      headers: { 'X-RateLimit-Limit': '10', 'X-RateLimit-Remaining': '2', 'X-RateLimit-Reset': '60' },
    });
  });

  it('refuses without taking anything when one limiter is full', () => {
    const c = clock();
    const key = new WindowLimiter(5, 1000, () => c.now());
    const org = new WindowLimiter(1, 250, () => c.now());
    const checks = [
      { limiter: key, id: 'k' },
      { limiter: org, id: 'org' },
    ];
    expect(takeAll(checks, format).ok).toBe(true);
    c.advance(100);
    const d = takeAll(checks, format);
    expect(d.ok).toBe(false);
    expect(d.headers['Retry-After']).toBe('0.15');
    expect(d.headers['X-RateLimit-Remaining']).toBe('0');
    expect(key.peek('k').remaining).toBe(4);
  });
});

describe('header forms', () => {
  const one = (reset: 'delta' | 'seconds' | 'epoch' | 'none', windowMs: number) => {
    const c = new FakeClock({ start: 1_000_000_250 });
    const l = new WindowLimiter(1, windowMs, () => c.now());
    const format = { reset, retryAfter: 'seconds', now: () => c.now() } as const;
    const ok = takeAll([{ limiter: l, id: 'k' }], format);
    c.advance(100);
    return { ok: ok.headers, refused: takeAll([{ limiter: l, id: 'k' }], format).headers };
  };
  it('seconds: Reset in whole seconds rounded up', () => {
    expect(one('seconds', 10_000).ok['X-RateLimit-Reset']).toBe('10');
    expect(one('seconds', 9_001).refused).toEqual({
      'Retry-After': '9',
      'X-RateLimit-Limit': '1',
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': '9',
    });
  });
  it('epoch: the Unix time of the reset in whole seconds, rounded up', () => {
    expect(one('epoch', 10_000).ok['X-RateLimit-Reset']).toBe('1000011');
  });
  it('none: no X-RateLimit-* header, a 429 says only Retry-After', () => {
    const { ok, refused } = one('none', 10_000);
    expect(ok).toEqual({});
    expect(refused).toEqual({ 'Retry-After': '10' });
  });
});

describe('secondsHeader', () => {
  it.each([
    [0, '0'],
    [250, '0.25'],
    [59_998, '59.998'],
    [0.4, '0.001'],
    [60_000, '60'],
  ])('%d ms → %s', (ms, text) => {
    expect(secondsHeader(ms)).toBe(text);
  });
});
