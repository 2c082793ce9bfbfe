// The ETA a progress line shows: never sooner than the rate limit allows, never sooner than the
// observed rate says, from the first answer on.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runs } from '../../helpers/property.js';
import type { PaceInfo } from '../../../src/http/types.js';
import { etaMs, limitFloorMs } from '../../../src/output/eta.js';

const NOW = 1_000_000;
const MIN = 60_000;

/** the oracle: step window by window, sending what each allows at once; the time the last request goes */
function simulated(requests: number, pace: PaceInfo, now: number): number {
  if (requests === 0) return 0;
  const limit = pace.limit!;
  let t = Math.max(now, pace.waitingUntil ?? now);
  let resetAt = pace.resetAt !== undefined && pace.resetAt > t ? pace.resetAt : t + pace.windowMs;
  let allowed = pace.resetAt !== undefined && pace.resetAt > t ? (pace.remaining ?? 0) : limit;
  let left = requests;
  for (;;) {
    left -= Math.min(left, Math.max(0, allowed));
    if (left === 0) return t - now;
    t = resetAt;
    resetAt = t + pace.windowMs;
    allowed = limit;
  }
}

const paceArb: fc.Arbitrary<PaceInfo> = fc
  .record({
    limit: fc.integer({ min: 1, max: 300 }),
    windowMs: fc.integer({ min: 100, max: 120_000 }),
    used: fc.nat(300),
    resetIn: fc.integer({ min: -1000, max: 120_000 }),
    blockedFor: fc.option(fc.integer({ min: 0, max: 90_000 }), { nil: undefined }),
  })
  .map(({ limit, windowMs, used, resetIn, blockedFor }) => {
    const remaining = Math.max(0, limit - used);
    const resetAt = NOW + Math.min(resetIn, windowMs);
    const info: PaceInfo = { limit, remaining, resetAt, windowMs };
    const exhausted = remaining === 0 && resetAt > NOW;
    if (blockedFor !== undefined) info.waitingUntil = NOW + blockedFor;
    else if (exhausted) info.waitingUntil = resetAt;
    return info;
  });

describe('etaMs', () => {
  it("a 3,000-request job at 200 a minute says 14 minutes from the first answer (plus the last window's sending time)", () => {
    const pace: PaceInfo = { limit: 200, remaining: 199, resetAt: NOW + 59_990, windowMs: 60_000 };
    // the first answer: 2,999 requests left, 199 of them in this window, then 14 windows of 200, the last 200 at 20 a second
    expect(etaMs({ requestsLeft: 2999, now: NOW, pace, observedRatePerMs: 1 / 50 })).toBe(59_990 + 13 * MIN + 10_000);
    expect(etaMs({ requestsLeft: 2999, now: NOW, pace })! / MIN).toBeCloseTo(14, 0);
  });
  it('equals hand-computed values', () => {
    const pace: PaceInfo = { limit: 200, remaining: 50, resetAt: NOW + 20_000, windowMs: MIN };
    expect(etaMs({ requestsLeft: 50, now: NOW, pace })).toBe(0); // all in this window
    expect(etaMs({ requestsLeft: 51, now: NOW, pace })).toBe(20_000);
    expect(etaMs({ requestsLeft: 250, now: NOW, pace })).toBe(20_000);
    expect(etaMs({ requestsLeft: 251, now: NOW, pace })).toBe(80_000);
    // slower than the limit: the observed rate (1 request a second) says more
    expect(etaMs({ requestsLeft: 251, now: NOW, pace, observedRatePerMs: 1 / 1000 })).toBe(251_000);
    // a window used up: nothing before its reset, then the full limit
    expect(
      etaMs({
        requestsLeft: 400,
        now: NOW,
        pace: { limit: 200, remaining: 0, resetAt: NOW + 9000, waitingUntil: NOW + 9000, windowMs: MIN },
      }),
    ).toBe(9000 + MIN);
    // a 429 holding everything back 30 s, past the reset: a fresh window then
    expect(
      etaMs({
        requestsLeft: 201,
        now: NOW,
        pace: { limit: 200, remaining: 0, resetAt: NOW + 5000, waitingUntil: NOW + 30_000, windowMs: MIN },
      }),
    ).toBe(30_000 + MIN);
    // the window over (or not yet told): it begins with the next request
    expect(etaMs({ requestsLeft: 201, now: NOW, pace: { limit: 200, remaining: 200, windowMs: MIN } })).toBe(MIN);
  });
  it('without a limit: the observed rate alone, or nothing', () => {
    expect(etaMs({ requestsLeft: 10, now: NOW, observedRatePerMs: 0.01 })).toBe(1000);
    expect(etaMs({ requestsLeft: 10, now: NOW, pace: { windowMs: MIN } })).toBeUndefined();
    expect(etaMs({ requestsLeft: 10, now: NOW })).toBeUndefined();
    expect(etaMs({ requestsLeft: 0, now: NOW })).toBe(0);
  });
  it('the limit floor is the time a window-by-window simulation takes', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 5000 }), paceArb, (n, pace) => {
        expect(limitFloorMs(n, NOW, pace)).toBe(simulated(n, pace, NOW));
      }),
      runs(100),
    );
  });
  it('is never below the limit floor nor below what the observed rate says', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5000 }),
        paceArb,
        fc.double({ min: 1e-6, max: 1, noNaN: true }),
        (n, pace, rate) => {
          const eta = etaMs({ requestsLeft: n, now: NOW, pace, observedRatePerMs: rate })!;
          // (floating point: the window-by-window sum may land a hair under the quotient)
          expect(eta).toBeGreaterThanOrEqual(simulated(n, pace, NOW) * (1 - 1e-9));
          expect(eta).toBeGreaterThanOrEqual((n / rate) * (1 - 1e-9));
        },
      ),
      runs(100),
    );
  });
  it('is monotone in the requests left', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 5000 }),
        fc.integer({ min: 0, max: 5000 }),
        paceArb,
        fc.option(fc.double({ min: 1e-6, max: 1, noNaN: true }), { nil: undefined }),
        (a, b, pace, rate) => {
          const [lo, hi] = a <= b ? [a, b] : [b, a];
          const at = (n: number) => etaMs({ requestsLeft: n, now: NOW, pace, observedRatePerMs: rate })!;
          expect(at(lo)).toBeLessThanOrEqual(at(hi));
        },
      ),
      runs(100),
    );
  });
});
