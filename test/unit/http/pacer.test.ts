import { describe, expect, it } from 'vitest';
import { FakeClock, SimClock } from '../../helpers/clock.js';
import {
  Pacer,
  RESET_MARGIN_MS,
  paceDelay,
  sharedPacer,
  type PaceState,
  type PacerTicket,
} from '../../../src/http/pacer.js';
import { HEADER_WAIT_CEILING_MS, parseRateLimit, resetToMs } from '../../../src/http/rate-headers.js';
import { RateLimitError } from '../../../src/http/errors.js';

describe('resetToMs', () => {
  it('reads seconds until the reset, with decimals', () => {
    expect(resetToMs(0.25, 1000)).toBe(1250);
    expect(resetToMs(59.998, 0)).toBe(59_998);
    expect(resetToMs(3, 500)).toBe(3500);
  });
  const NOW = 1_799_999_990_000; // 10 s before the Unix second 1.8e9
  it('reads a value above 10^9 as a Unix time in seconds', () => {
    expect(resetToMs(1_800_000_000, NOW)).toBe(1_800_000_000_000);
    expect(resetToMs(1_800_000_000.5, NOW)).toBe(1_800_000_000_500);
  });
  it('reads a value above 10^11 as a Unix time in milliseconds (not as seconds: millennia)', () => {
    expect(resetToMs(1_800_000_000_000, NOW)).toBe(1_800_000_000_000);
  });
  it('never reads a reset before now, nor more than a year after it', () => {
    expect(resetToMs(1_700_000_000, NOW)).toBe(NOW); // a Unix time in the past
    expect(resetToMs(9e15, NOW)).toBe(NOW + HEADER_WAIT_CEILING_MS);
    expect(resetToMs(999_999_999, 0)).toBe(HEADER_WAIT_CEILING_MS); // 31 years of delta seconds
  });
  it('clamps a negative delta to now', () => {
    expect(resetToMs(-1, 1000)).toBe(1000);
  });
});

describe('parseRateLimit', () => {
  it('reads the three headers', () => {
    expect(
      parseRateLimit({ 'x-ratelimit-limit': '200', 'x-ratelimit-remaining': '17', 'x-ratelimit-reset': '1.5' }, 10_000),
    ).toEqual({
      limit: 200,
      remaining: 17,
      resetAt: 11_500,
      coarse: false,
    });
  });
  it('works without a limit', () => {
    expect(
      parseRateLimit({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1800000000' }, 1_799_999_000_000),
    ).toEqual({
      limit: undefined,
      remaining: 0,
      resetAt: 1_800_000_000_000,
      coarse: true,
    });
  });
  it('calls a Reset coarse only when it is a Unix time in whole seconds', () => {
    const coarse = (reset: string) =>
      parseRateLimit({ 'x-ratelimit-remaining': '1', 'x-ratelimit-reset': reset }, 1_799_999_000_000)?.coarse;
    expect(coarse('1800000000.25')).toBe(false);
    expect(coarse('1800000000250')).toBe(false);
    expect(coarse('10')).toBe(false);
  });
  it('needs both remaining and reset', () => {
    expect(parseRateLimit({ 'x-ratelimit-remaining': '3' }, 0)).toBeUndefined();
    expect(parseRateLimit({ 'x-ratelimit-reset': '3' }, 0)).toBeUndefined();
    expect(parseRateLimit({}, 0)).toBeUndefined();
  });
  it('ignores garbage values', () => {
    expect(parseRateLimit({ 'x-ratelimit-remaining': 'lots', 'x-ratelimit-reset': '3' }, 0)).toBeUndefined();
    expect(parseRateLimit({ 'x-ratelimit-remaining': '5', 'x-ratelimit-reset': '-3' }, 0)).toBeUndefined();
  });
  it('takes the first of repeated values', () => {
    expect(parseRateLimit({ 'x-ratelimit-remaining': '5, 9', 'x-ratelimit-reset': '2' }, 0)?.remaining).toBe(5);
  });
});

describe('paceDelay', () => {
  const s = (over: Partial<PaceState>): PaceState => ({ now: 1000, blockedUntil: 0, pending: 0, ...over });

  it('lets everything go when nothing is known', () => {
    expect(paceDelay(s({}))).toBe(0);
    expect(paceDelay(s({ pending: 50 }))).toBe(0);
  });
  it('waits out a 429 block first', () => {
    expect(paceDelay(s({ blockedUntil: 1500 }))).toBe(500);
    expect(paceDelay(s({ blockedUntil: 1500, remaining: 100, resetAt: 9000 }))).toBe(500);
  });
  // Changed in issue 13: what the window has left goes at once (no longer spread over the window
  // once half is used): the least time a limit allows is its windows used in full back to back, and
  // spreading put the run's last requests at the end of its last window (efficiency 0.6).
  it('sends what the window has left at once, however little and however long the window', () => {
    expect(paceDelay(s({ limit: 30, remaining: 30, resetAt: 4000 }))).toBe(0);
    expect(paceDelay(s({ limit: 30, remaining: 15, resetAt: 4000 }))).toBe(0);
    expect(paceDelay(s({ limit: 30, remaining: 2, pending: 1, resetAt: 60_000 }))).toBe(0);
  });
  it('counts requests in flight against what remains', () => {
    expect(paceDelay(s({ limit: 30, remaining: 10, pending: 9, resetAt: 2000 }))).toBe(0);
    expect(paceDelay(s({ limit: 30, remaining: 10, pending: 10, resetAt: 2000 }))).toBe(1000 + RESET_MARGIN_MS);
  });
  it('with nothing left, waits until our oldest unit is surely free, if before the reset', () => {
    expect(paceDelay(s({ limit: 30, remaining: 0, resetAt: 9000, freeAt: 1200 }))).toBe(200 + RESET_MARGIN_MS);
    expect(paceDelay(s({ limit: 30, remaining: 0, resetAt: 1500, freeAt: 3000 }))).toBe(500 + RESET_MARGIN_MS);
    expect(paceDelay(s({ limit: 30, remaining: 0, resetAt: 9000, freeAt: 1000 }))).toBe(0); // free now: the caller counts it
  });
  it('leaves room for what others sharing the key have in flight, but one request of ours may always go', () => {
    expect(paceDelay(s({ limit: 30, remaining: 6, pending: 2, shared: 3, resetAt: 9000 }))).toBe(0);
    expect(paceDelay(s({ limit: 30, remaining: 6, pending: 3, shared: 3, resetAt: 9000 }))).toBe(Infinity); // until an answer
    expect(paceDelay(s({ limit: 30, remaining: 2, pending: 0, shared: 12, resetAt: 9000 }))).toBe(0);
  });
  it('waits for the reset when nothing is left', () => {
    expect(paceDelay(s({ limit: 30, remaining: 0, resetAt: 2500 }))).toBe(1500 + RESET_MARGIN_MS);
    expect(paceDelay(s({ limit: 30, remaining: 3, pending: 3, resetAt: 2500 }))).toBe(1500 + RESET_MARGIN_MS);
    expect(paceDelay(s({ limit: 30, remaining: 3, pending: 8, resetAt: 2500 }))).toBe(1500 + RESET_MARGIN_MS);
  });
  it('lets a request go once the window is over', () => {
    expect(paceDelay(s({ limit: 30, remaining: 0, resetAt: 1000 }))).toBe(0);
  });
  it('after an inferred reset, one request goes and its answer tells (a sliding window may have freed only its oldest unit; others on the key may have opened the window first)', () => {
    expect(paceDelay(s({ limit: 30, remaining: 30, pending: 0 }))).toBe(0);
    expect(paceDelay(s({ limit: 30, remaining: 30, pending: 1 }))).toBe(Infinity);
    expect(paceDelay(s({ limit: 30, remaining: 30, pending: 1, shared: 5 }))).toBe(Infinity);
    // nothing in flight: no answer is coming to wake it (a Limit of 0 hung crm for ever): one goes and asks
    expect(paceDelay(s({ limit: 0, remaining: 0, pending: 0 }))).toBe(0);
  });
  it('uses remaining as the budget when the limit is unknown', () => {
    expect(paceDelay(s({ remaining: 10, resetAt: 2000 }))).toBe(0);
    expect(paceDelay(s({ remaining: 4, pending: 4, resetAt: 2000 }))).toBe(1000 + RESET_MARGIN_MS);
  });
});

/** a slot whose request goes out at once, as the client's requests do */
async function go(pacer: Pacer): Promise<PacerTicket> {
  const ticket = await pacer.acquire();
  pacer.sent(ticket);
  return ticket;
}

const rl = (limit: number, remaining: number, resetS: number) => ({
  'x-ratelimit-limit': String(limit),
  'x-ratelimit-remaining': String(remaining),
  'x-ratelimit-reset': resetS.toFixed(3),
});

describe('Pacer', () => {
  it('fails at once (RateLimitError, exit 7) rather than wait beyond 5 minutes for a reset, saying when', async () => {
    const clock = new FakeClock();
    const pacer = new Pacer(clock);
    pacer.done(await go(pacer), rl(10, 0, 3 * 86_400));
    const err = await go(pacer).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitError);
    expect((err as RateLimitError).exitCode).toBe(7);
    expect((err as Error).message).toMatch(/used up until the window resets in 3 days \(at .*Z\)/);
    expect(clock.sleeps).toEqual([]);
  });

  it('does not spread over a window longer than 5 minutes (a quota): requests go while it lasts', async () => {
    const clock = new FakeClock();
    const pacer = new Pacer(clock);
    pacer.done(await go(pacer), rl(1000, 10, 86_400));
    for (let i = 0; i < 10; i++) await go(pacer);
    expect(clock.sleeps).toEqual([]);
  });

  it('tells each wait and why to onWait', async () => {
    const clock = new FakeClock();
    const pacer = new Pacer(clock);
    pacer.done(await go(pacer), rl(10, 0, 2));
    const said: string[] = [];
    await pacer.acquire(undefined, { onWait: (ms, why) => said.push(`${ms} ${why}`) });
    expect(said).toEqual([
      `${2000 + RESET_MARGIN_MS} the rate limit's window is used up until it frees room (the server says 0 left, 0 of ours in flight)`,
    ]);
  });

  it('admits at once without information', async () => {
    const clock = new FakeClock();
    const pacer = new Pacer(clock);
    const t1 = await go(pacer);
    const t2 = await go(pacer);
    expect([t1.seq, t2.seq]).toEqual([1, 2]);
    expect(clock.sleeps).toEqual([]);
  });

  it('waits for the reset when the server says nothing remains; then one request goes, and its answer frees the rest', async () => {
    const clock = new FakeClock();
    const pacer = new Pacer(clock);
    const t = await go(pacer);
    pacer.done(t, rl(10, 0, 2));
    const start = clock.now();
    const first = await go(pacer);
    expect(clock.now() - start).toBe(2000 + RESET_MARGIN_MS);
    const second = pacer.acquire();
    let admitted = false;
    void second.then(() => (admitted = true));
    await new Promise((r) => setImmediate(r));
    expect(admitted).toBe(false); // until the first one's answer tells what the window has
    pacer.done(first, rl(10, 9, 2));
    await second;
    expect(clock.now() - start).toBe(2000 + RESET_MARGIN_MS);
  });

  // the ways there and back take their own times (a proxy's tunnels): the newest request's answer
  // may carry a Remaining counted before an older one's (a 429 before, found with the ways drawn apart
  // in pacer-shapes.property.test.ts)
  it('answers out of the order counted: a newer request counted first and answered late does not raise what the window has left', async () => {
    const clock = new FakeClock();
    const pacer = new Pacer(clock);
    // five go at once into a fixed window of 5; the server counts #4 first and #1 last
    const t = [await go(pacer), await go(pacer), await go(pacer), await go(pacer), await go(pacer)];
    clock.advance(22);
    pacer.done(t[1]!, rl(5, 1, 0.978)); // #2, counted fourth
    clock.advance(2);
    pacer.done(t[3]!, rl(5, 4, 0.976)); // #4, counted first: its Remaining is older than #2's
    clock.advance(3);
    pacer.done(t[2]!, rl(5, 3, 0.973));
    pacer.done(t[0]!, rl(5, 0, 0.973)); // #1, counted last
    pacer.done(t[4]!, rl(5, 2, 0.969));
    expect(pacer.snapshot().remaining).toBe(0);
    const before = clock.now();
    await go(pacer);
    expect(clock.now() - before).toBe(973 + RESET_MARGIN_MS); // the window's reset, not at once
  });

  it('blocks everyone after a 429 until Retry-After', async () => {
    const clock = new FakeClock();
    const pacer = new Pacer(clock);
    pacer.block(750);
    const start = clock.now();
    await go(pacer);
    expect(clock.now() - start).toBe(750);
    expect(pacer.stats.rateLimited).toBe(1);
  });

  it('ignores headers of a request older than the ones already applied', async () => {
    const clock = new FakeClock();
    const pacer = new Pacer(clock);
    const a = await go(pacer);
    const b = await go(pacer);
    pacer.done(b, rl(30, 10, 2));
    pacer.done(a, rl(30, 11, 2)); // answered late, counted earlier: staler
    expect(pacer.snapshot().remaining).toBe(10);
  });

  it('counts requests in flight until an answer reflects them', async () => {
    const clock = new FakeClock();
    const pacer = new Pacer(clock);
    const a = await go(pacer);
    await go(pacer);
    await go(pacer);
    expect(pacer.snapshot().inFlight).toBe(3);
    pacer.done(a, rl(30, 29, 3));
    expect(pacer.snapshot().inFlight).toBe(2);
  });

  it('stops waiting when the signal aborts', async () => {
    const clock = new SimClock();
    const pacer = new Pacer(clock);
    pacer.block(10_000);
    const ac = new AbortController();
    const p = pacer.acquire(ac.signal);
    ac.abort(new Error('stop'));
    await expect(p).rejects.toThrow('stop');
  });

  it('wakes a waiter when an answer arrives after an inferred reset', async () => {
    const clock = new SimClock();
    const pacer = new Pacer(clock);
    const t = await go(pacer);
    pacer.done(t, rl(2, 1, 0.001)); // limit 2, window ends at once: past it, what it had left (1) goes, and its answer tells
    const run = (async () => {
      clock.t = 10; // the window is over: one request goes and asks
      const a = await go(pacer);
      const next = pacer.acquire();
      let admitted = false;
      void next.then(() => (admitted = true));
      await new Promise((r) => setImmediate(r));
      expect(admitted).toBe(false);
      pacer.done(a, rl(2, 1, 5));
      await next;
    })();
    await clock.run(run);
  });

  it('shares one pacer per clock, origin and key', () => {
    const c1 = new FakeClock();
    const c2 = new FakeClock();
    expect(sharedPacer(c1, 'http://a', 'k')).toBe(sharedPacer(c1, 'http://a', 'k'));
    expect(sharedPacer(c1, 'http://a', 'k')).not.toBe(sharedPacer(c1, 'http://a', 'k2'));
    expect(sharedPacer(c1, 'http://a', 'k')).not.toBe(sharedPacer(c2, 'http://a', 'k'));
  });
});

/**
 * A fixed-window server (limit per window, windows from the first request), as the sandbox does,
 * driven by `workers` concurrent loops through one pacer on a simulated clock.
 */
async function simulate(o: { total: number; limit: number; windowMs: number; workers: number; latencyMs: number }) {
  const clock = new SimClock();
  const pacer = new Pacer(clock);
  let windowStart: number | undefined;
  let used = 0;
  let sent = 0;
  let ok = 0;
  let tooMany = 0;
  let lastOkAt = 0;
  const serve = (at: number): { status: number; headers: Record<string, string> } => {
    windowStart ??= at;
    while (at >= windowStart + o.windowMs) {
      windowStart += o.windowMs;
      used = 0;
    }
    const resetS = (windowStart + o.windowMs - at) / 1000;
    if (used >= o.limit) {
      return { status: 429, headers: { ...rl(o.limit, 0, resetS), 'retry-after': resetS.toFixed(3) } };
    }
    used++;
    return { status: 200, headers: rl(o.limit, o.limit - used, resetS) };
  };
  let next = 0;
  const worker = async () => {
    while (next < o.total) {
      next++;
      for (;;) {
        const ticket = await go(pacer);
        sent++;
        await clock.sleep(o.latencyMs / 2);
        const answer = serve(clock.now());
        await clock.sleep(o.latencyMs / 2);
        pacer.done(ticket, answer.headers);
        if (answer.status === 200) {
          ok++;
          lastOkAt = clock.now();
          break;
        }
        tooMany++;
        pacer.block(Math.ceil(Number(answer.headers['retry-after']) * 1000));
      }
    }
  };
  await clock.run(Promise.all(Array.from({ length: o.workers }, worker)));
  // The best possible: every full window used at once, the last partial one right at its start.
  const bestMs = Math.floor((o.total - 1) / o.limit) * o.windowMs + o.latencyMs;
  if (process.env.PACER_DEBUG)
    console.log(o, { ok, sent, tooMany, elapsedMs: lastOkAt, efficiency: bestMs / lastOkAt });
  return {
    ok,
    sent,
    tooMany,
    elapsedMs: lastOkAt,
    efficiency: bestMs / lastOkAt,
    rateEfficiency: ((o.total / o.limit) * o.windowMs) / lastOkAt,
  };
}

describe('Pacer under a simulated fixed-window limit', () => {
  it('runs 100 requests at 30 per 3 s with 4 workers at ≥ 90% efficiency and no 429', async () => {
    const r = await simulate({ total: 100, limit: 30, windowMs: 3000, workers: 4, latencyMs: 20 });
    expect(r.ok).toBe(100);
    expect(r.tooMany).toBe(0);
    expect(r.efficiency).toBeGreaterThanOrEqual(0.9);
    expect(r.rateEfficiency).toBeGreaterThanOrEqual(0.9);
  });

  it.each([
    { workers: 8, latencyMs: 20 },
    { workers: 4, latencyMs: 200 },
    { workers: 1, latencyMs: 5 },
    { workers: 16, latencyMs: 50 },
  ])('stays efficient and under the limit with %o', async ({ workers, latencyMs }) => {
    const r = await simulate({ total: 100, limit: 30, windowMs: 3000, workers, latencyMs });
    expect(r.ok).toBe(100);
    expect(r.tooMany).toBeLessThanOrEqual(1);
    expect(r.rateEfficiency).toBeGreaterThanOrEqual(0.9);
  });

  it('keeps a long run (1000 requests, 200 per minute) under the limit', async () => {
    const r = await simulate({ total: 1000, limit: 200, windowMs: 60_000, workers: 8, latencyMs: 30 });
    expect(r.tooMany).toBe(0);
    expect(r.rateEfficiency).toBeGreaterThanOrEqual(0.95);
  });
});

describe('Pacer: a slot whose request goes out later (a paced unit with other work first)', () => {
  const headers = (remaining: number) => rl(2, remaining, 1);

  it('orders answers by when requests are sent: an answer does not count a request sent after it', async () => {
    // A and B hold the two units; B is sent first, and its answer (remaining 1) must not count A.
    const pacer = new Pacer(new FakeClock());
    const a = await pacer.acquire();
    const b = await pacer.acquire();
    pacer.sent(b);
    pacer.sent(a);
    pacer.done(b, headers(1));
    expect(pacer.snapshot()).toMatchObject({ remaining: 1, inFlight: 1 }); // A still holds the last unit
    pacer.done(a, headers(0));
    expect(pacer.snapshot()).toMatchObject({ remaining: 0, inFlight: 0 });
  });

  it('an answer does not free slots not sent yet; a slot handed back unsent frees its unit', async () => {
    const pacer = new Pacer(new FakeClock());
    const first = await go(pacer);
    const later = await pacer.acquire(); // its other work is under way
    pacer.done(first, rl(5, 4, 1));
    expect(pacer.snapshot()).toMatchObject({ remaining: 4, inFlight: 1 });
    pacer.done(later);
    expect(pacer.snapshot().inFlight).toBe(0);
  });
});
