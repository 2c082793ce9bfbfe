// Issue 17, "clocks": an absolute time a server sends (a Unix-time X-RateLimit-Reset, a Retry-After
// HTTP-date) is on the server's clock, which its `Date` header tells. Whatever the two clocks' offset,
// a time w seconds ahead by the server's clock is a wait of w seconds on ours: exactly, when the
// clocks are more than CLOCK_AGREEMENT_MS apart (read against Date), and within that agreement (plus
// the Date's cut to whole seconds) when they are closer (read against our finer clock).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CLOCK_AGREEMENT_MS,
  parseRateLimit,
  resetToMs,
  retryAfterMs,
  serverClockOffset,
} from '../../../src/http/rate-headers.js';
import { runs } from '../../helpers/property.js';

/** our clock: somewhere between 2004 and 2100 (a Unix time in seconds above 10^9, in ms above 10^11: rate-headers.ts) */
const now = fc.integer({ min: 1_100_000_000_000, max: 4_102_444_800_000 });
/** the server's clock less ours: up to two days either way, often small */
const skew = fc.oneof(fc.integer({ min: -172_800_000, max: 172_800_000 }), fc.integer({ min: -3_000, max: 3_000 }));
/** a wait in whole seconds, up to an hour */
const waitS = fc.integer({ min: 0, max: 3_600 });

/** The server's Date header (whole seconds) and its now in whole seconds, at our `t` with `d` of skew. */
function server(t: number, d: number): { date: string; nowS: number } {
  const nowS = Math.floor((t + d) / 1000);
  return { date: new Date(nowS * 1000).toUTCString(), nowS };
}

/** The wait read, against what the server meant (w s): exact when read against Date, else within the agreement. */
function judge(got: number, w: number, t: number, date: string): void {
  if (Math.abs(t - Date.parse(date)) > CLOCK_AGREEMENT_MS) expect(got).toBe(w * 1000);
  else {
    expect(got).toBeGreaterThanOrEqual(Math.max(0, w * 1000 - CLOCK_AGREEMENT_MS));
    expect(got).toBeLessThanOrEqual(w * 1000 + CLOCK_AGREEMENT_MS);
  }
}

describe('times on the server clock', () => {
  it('a Unix-time Reset w s ahead by the server (seconds or milliseconds) is a wait of w s, whatever the skew', () => {
    fc.assert(
      fc.property(now, skew, waitS, fc.boolean(), (t, d, w, inMs) => {
        const { date, nowS } = server(t, d);
        const reset = inMs ? (nowS + w) * 1000 : nowS + w;
        judge(resetToMs(reset, t, serverClockOffset(date, t)) - t, w, t, date);
        const info = parseRateLimit({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset), date }, t)!;
        judge(info.resetAt - t, w, t, date);
      }),
      runs(),
    );
  });

  it('a Retry-After HTTP-date w s ahead by the server is a wait of w s, whatever the skew', () => {
    fc.assert(
      fc.property(now, skew, waitS, (t, d, w) => {
        const { date, nowS } = server(t, d);
        const retryAfter = new Date((nowS + w) * 1000).toUTCString();
        judge(retryAfterMs(retryAfter, t, serverClockOffset(date, t))!, w, t, date);
      }),
      runs(),
    );
  });

  it('times relative to now (Reset in seconds from now, Retry-After in seconds) ignore the clocks', () => {
    fc.assert(
      fc.property(now, skew, waitS, (t, d, w) => {
        const offset = serverClockOffset(server(t, d).date, t);
        expect(resetToMs(w, t, offset)).toBe(t + w * 1000);
        expect(retryAfterMs(String(w), t, offset)).toBe(w * 1000);
      }),
      runs(),
    );
  });

  it('without a Date, or with one that is not an HTTP-date, our clock is used (offset 0)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.constant(undefined), fc.string(), fc.stringMatching(/^\d{1,12}$/)), now, (text, t) => {
        fc.pre(text === undefined || !/[a-z]{3}/i.test(text) || Number.isNaN(Date.parse(text)));
        expect(serverClockOffset(text, t)).toBe(0);
      }),
      runs(),
    );
  });
});
