// Properties of the rate-limit header parsing (issue 9): whatever a server sends as Retry-After or
// X-RateLimit-Reset, the wait crm derives is a number of milliseconds, never negative, never NaN,
// never above the ceiling; and each form (seconds, Unix seconds, Unix milliseconds, HTTP-date) is
// read as what it is.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runs } from '../../helpers/property.js';
import {
  HEADER_WAIT_CEILING_MS,
  parseRateLimit,
  resetToMs,
  retryAfterMs,
  UNIX_MS_THRESHOLD,
  UNIX_TIME_THRESHOLD,
} from '../../../src/http/rate-headers.js';
import { comeBackText } from '../../../src/http/retry.js';

/** our clock: somewhere between 2001 and 2100 */
const now = fc.integer({ min: 1_000_000_000_000, max: 4_102_444_800_000 });
const sane = (ms: number | undefined): void => {
  if (ms === undefined) return;
  expect(Number.isNaN(ms)).toBe(false);
  expect(ms).toBeGreaterThanOrEqual(0);
  expect(ms).toBeLessThanOrEqual(HEADER_WAIT_CEILING_MS);
};
const headerText = fc.oneof(
  fc.string(),
  fc.stringMatching(/^-?\d{1,30}(\.\d{1,6})?$/),
  fc.double().map(String),
  fc.date({ noInvalidDate: true }).map((d) => d.toUTCString()),
  fc.constantFrom('NaN', 'Infinity', '-Infinity', '1e400', '', ' ', '0x10', '1,2', 'Sat, 99 Foo 2026 99:99:99 GMT'),
);

describe('retryAfterMs', () => {
  it('is undefined or a wait in [0, ceiling], for any text', () => {
    fc.assert(
      fc.property(headerText, now, (text, t) => sane(retryAfterMs(text, t))),
      runs(100),
    );
  });

  it('reads delta seconds as seconds', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000_000 }), now, (s, t) => {
        expect(retryAfterMs(String(s), t)).toBe(Math.min(s * 1000, HEADER_WAIT_CEILING_MS));
      }),
      runs(100),
    );
  });

  it('reads an HTTP-date as the time until then (0 when past)', () => {
    fc.assert(
      fc.property(now, fc.integer({ min: -86_400, max: 400 * 86_400 }), (t, deltaS) => {
        const at = Math.floor(t / 1000) * 1000 + deltaS * 1000;
        expect(retryAfterMs(new Date(at).toUTCString(), t)).toBe(Math.min(Math.max(0, at - t), HEADER_WAIT_CEILING_MS));
      }),
      runs(100),
    );
  });

  it('gives a wait that comeBackText can always show', () => {
    fc.assert(
      fc.property(headerText, now, (text, t) => {
        const ms = retryAfterMs(text, t);
        if (ms !== undefined) expect(comeBackText(ms, t)).toMatch(/^in .+ \(at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\)$/);
      }),
      runs(100),
    );
  });
});

describe('resetToMs', () => {
  const wait = (value: number, t: number) => resetToMs(value, t) - t;

  it('is a time in [now, now + ceiling], for any number', () => {
    fc.assert(
      fc.property(fc.double(), now, (v, t) => sane(wait(v, t))),
      runs(100),
    );
  });

  it('reads up to 10^9 as seconds from now', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: UNIX_TIME_THRESHOLD, noNaN: true }), now, (v, t) => {
        expect(wait(v, t)).toBeCloseTo(Math.min(v * 1000, HEADER_WAIT_CEILING_MS), 0);
      }),
      runs(100),
    );
  });

  it('reads a Unix time in seconds and the same time in milliseconds alike', () => {
    fc.assert(
      fc.property(now, fc.integer({ min: 0, max: 30 * 86_400 }), (t, deltaS) => {
        const unixS = Math.floor(t / 1000) + deltaS;
        if (unixS <= UNIX_TIME_THRESHOLD) return;
        expect(unixS * 1000).toBeGreaterThan(UNIX_MS_THRESHOLD);
        expect(resetToMs(unixS, t)).toBe(Math.max(t, unixS * 1000));
        expect(resetToMs(unixS * 1000, t)).toBe(Math.max(t, unixS * 1000));
      }),
      runs(100),
    );
  });
});

describe('parseRateLimit', () => {
  it('is undefined or a window whose reset is in [now, now + ceiling] and whose remaining is a whole number', () => {
    fc.assert(
      fc.property(
        headerText,
        headerText,
        fc.option(headerText, { nil: undefined }),
        now,
        (remaining, reset, limit, t) => {
          const info = parseRateLimit(
            { 'x-ratelimit-remaining': remaining, 'x-ratelimit-reset': reset, 'x-ratelimit-limit': limit },
            t,
          );
          if (!info) return;
          expect(Number.isInteger(info.remaining) && info.remaining >= 0).toBe(true);
          sane(info.resetAt - t);
        },
      ),
      runs(100),
    );
  });
});
