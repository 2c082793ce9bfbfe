import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../helpers/clock.js';
import { FixedWindowLimiter, secondsHeader, takeAll } from '../../../src/sandbox/rate-limiter.js';

const clock = (): FakeClock => new FakeClock({ start: 1_000_000 });

describe('FixedWindowLimiter', () => {
  it('counts units within a window and opens a new one after it', () => {
    const c = clock();
    const l = new FixedWindowLimiter(3, 1000, () => c.now());
    expect(l.take('k').remaining).toBe(2);
    c.advance(400);
    expect(l.take('k')).toEqual({ limit: 3, remaining: 1, resetMs: 600 });
    expect(l.take('k').remaining).toBe(0);
    expect(l.peek('k').remaining).toBe(0);
    c.advance(599);
    expect(l.peek('k')).toEqual({ limit: 3, remaining: 0, resetMs: 1 });
    c.advance(1);
    expect(l.peek('k')).toEqual({ limit: 3, remaining: 3, resetMs: 1000 });
  });

  it('keeps one window per id', () => {
    const c = clock();
    const l = new FixedWindowLimiter(1, 1000, () => c.now());
    l.take('a');
    expect(l.peek('a').remaining).toBe(0);
    expect(l.peek('b').remaining).toBe(1);
  });
});

describe('takeAll', () => {
  const format = { reset: 'delta', retryAfter: 'seconds', now: () => 0 } as const;
  it('takes a unit of every limiter and reports the lesser remaining', () => {
    const c = clock();
    const key = new FixedWindowLimiter(10, 60_000, () => c.now());
    const org = new FixedWindowLimiter(3, 60_000, () => c.now());
    const d = takeAll(
      [
        { limiter: key, id: 'k' },
        { limiter: org, id: 'org' },
      ],
      format,
    );
    expect(d).toEqual({ ok: true, headers: { 'X-RateLimit-Limit': '10', 'X-RateLimit-Remaining': '2', 'X-RateLimit-Reset': '60' } });
  });

  it('refuses without taking anything when one limiter is full', () => {
    const c = clock();
    const key = new FixedWindowLimiter(5, 1000, () => c.now());
    const org = new FixedWindowLimiter(1, 250, () => c.now());
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
