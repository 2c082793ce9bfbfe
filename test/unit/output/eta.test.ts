// The ETA of a rate-limited job, on a fake clock (issue 17: "ETA 30s", took 78 s): a run simulated
// request by request against a fixed-window limit, the progress line drawn each second as `crm batch`
// draws it, and each ETA it shows held against the time the run really took from there.
import { describe, expect, it } from 'vitest';
import { progressText } from '../../../src/commands/batch/progress-text.js';
import type { PaceInfo } from '../../../src/http/types.js';
import type { ImportProgress } from '../../../src/import/index.js';
import { SendingRate, etaMs } from '../../../src/output/eta.js';
import { FakeClock } from '../../helpers/clock.js';

const seconds = (text: string): number | undefined => {
  const m = /ETA (?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?/.exec(text);
  return m ? Number(m[1] ?? 0) * 3600 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0) : undefined;
};

/** `n` requests, one per `stepMs` while the window allows, `limit` per fixed window of `windowMs`; the ETA shown each second and when the run ended. */
function simulate(o: {
  n: number;
  stepMs: number;
  limit: number;
  windowMs: number;
  headers: boolean;
  retryAfterMs?: number;
}) {
  const clock = new FakeClock({ start: 0 });
  const sending = new SendingRate();
  let [done, used, windowStart, blockedUntil] = [0, 0, 0, 0];
  const shown: Array<{ at: number; eta: number | undefined }> = [];
  let nextDraw = 1000;
  while (done < o.n) {
    const now = clock.now();
    if (now >= windowStart + o.windowMs)
      [windowStart, used] = [windowStart + o.windowMs * Math.floor((now - windowStart) / o.windowMs), 0];
    const resetAt = windowStart + o.windowMs;
    const pace: PaceInfo = o.headers
      ? { limit: o.limit, remaining: o.limit - used, resetAt, windowMs: o.windowMs }
      : { windowMs: 60_000 };
    if (o.headers && used >= o.limit) pace.waitingUntil = resetAt;
    if (now < blockedUntil) pace.waitingUntil = blockedUntil;
    if (now >= nextDraw) {
      const p: ImportProgress = {
        ...{ phase: 'send', rowsTotal: o.n, rows: o.n, created: done, failed: 0, invalid: 0, skipped: 0, chunks: done },
        ...{ inFlight: 0, bytes: 0, bytesTotal: 0, elapsedMs: now, rowsPerRequest: 1 },
      };
      shown.push({ at: now, eta: seconds(progressText(p, { pace, now, sending })) });
      nextDraw += 1000;
    }
    if (now < blockedUntil || (o.headers && used >= o.limit)) {
      clock.advance(100);
      continue;
    }
    // without headers the server answers a 429 when the window is used up: Retry-After, nothing counted
    if (!o.headers && used >= o.limit) {
      blockedUntil = Math.max(resetAt, now + (o.retryAfterMs ?? 0));
      continue;
    }
    used++;
    done++;
    clock.advance(o.stepMs);
  }
  return { shown, endedAt: clock.now() };
}

describe('the ETA of a rate-limited run', () => {
  it('400 requests at 10 a second, 100 per 30 s window (took 100 s): every ETA shown is within 2 s of the truth', () => {
    const { shown, endedAt } = simulate({ n: 400, stepMs: 100, limit: 100, windowMs: 30_000, headers: true });
    expect(endedAt).toBe(100_000);
    expect(shown.length).toBeGreaterThan(90);
    for (const s of shown) expect(Math.abs(s.eta! - (endedAt - s.at) / 1000), `at ${s.at} ms`).toBeLessThanOrEqual(2);
  });
  it('sending slower than the limit allows (each window half spent waiting, half sending): the waits and the sending both count', () => {
    // 300 requests at 2 a second, 100 per 60 s window: 50 s sending, 10 s waiting, ×3 → 170 s
    const { shown, endedAt } = simulate({ n: 300, stepMs: 500, limit: 100, windowMs: 60_000, headers: true });
    expect(endedAt).toBe(170_000);
    for (const s of shown.filter((x) => x.at >= 2000))
      expect(Math.abs(s.eta! - (endedAt - s.at) / 1000), `at ${s.at} ms`).toBeLessThanOrEqual(2);
  });
  it('no limit headers, only 429s: after the first wait the ETA goes by the rate waits included (never the burst rate alone)', () => {
    // 20 per 10 s window at 10 a second: 2 s sending, 8 s waiting; 100 requests → 42 s
    const { shown, endedAt } = simulate({ n: 100, stepMs: 100, limit: 20, windowMs: 10_000, headers: false });
    expect(endedAt).toBe(42_000);
    for (const s of shown.filter((x) => x.at >= 10_000))
      expect(s.eta! / ((endedAt - s.at) / 1000), `at ${s.at} ms`).toBeGreaterThan(0.7);
  });
});

describe('SendingRate', () => {
  it('leaves out the time the pacer held every request back; overall keeps it', () => {
    const r = new SendingRate();
    r.observe(0, 5, false);
    r.observe(2000, 25, true); // 20 answered in the 2 s before the wait
    r.observe(10_000, 25, false); // an 8 s wait
    expect(r.whileSending()).toBeCloseTo(20 / 2000);
    expect(r.overall()).toBeCloseTo(20 / 10_000);
    const first = new SendingRate();
    first.observe(0, 5, false);
    expect(first.whileSending()).toBeUndefined();
  });
  it('etaMs: the window left at that rate, full windows, the last one at that rate', () => {
    const pace: PaceInfo = { limit: 100, remaining: 80, resetAt: 60_000, windowMs: 60_000 };
    // 280 left at 2 a second from t = 10 s: 80 in 40 s, wait to 60 s, 100 in 50 s, wait to 120 s, 100 in 50 s → 170 s
    expect(etaMs({ requestsLeft: 280, now: 10_000, pace, observedRatePerMs: 2 / 1000 })).toBe(160_000);
  });
});
