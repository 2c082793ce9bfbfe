// The pacer against every shape of rate limiter a real server uses (issue 13, "Pacing"): the
// sandbox's own limiter (fixed or sliding windows; Reset with decimals, in whole seconds rounded up,
// or as a Unix time) on a simulated clock, driven by workers through one Pacer per process, as
// `crm batch` does. Properties: one process never meets a 429 and loses at most what the headers
// hide (a second of rounding per window, the latency); several processes on one key all finish.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runs } from '../../helpers/property.js';
import { SimClock } from '../../helpers/clock.js';
import { mulberry32 } from '../../../src/sandbox/random.js';
import { Pacer, paceDelay, RESET_MARGIN_MS, type PaceState } from '../../../src/http/pacer.js';
import { retryAfterMs } from '../../../src/http/rate-headers.js';
import {
  WindowLimiter,
  takeAll,
  type LimitKind,
  type ResetFormat,
  type WindowState,
} from '../../../src/sandbox/rate-limiter.js';
import { addUnit, dropUnit, keepUsed, markAnswered, type Unit } from '../../../src/http/window-units.js';

/**
 * Fixed windows aligned to the clock (a counter per whole window since the epoch), as many servers
 * keep them; the sandbox anchors a window at its first request instead. Each id is one key here.
 */
class AlignedLimiter extends WindowLimiter {
  private slot = -1;
  private used = 0;
  constructor(
    limit: number,
    windowMs: number,
    private readonly clockNow: () => number,
  ) {
    super(limit, windowMs, clockNow, 'fixed');
  }
  override peek(): WindowState {
    const now = this.clockNow();
    const slot = Math.floor(now / this.windowMs);
    if (slot !== this.slot) [this.slot, this.used] = [slot, 0];
    const resetMs = (slot + 1) * this.windowMs - now;
    return { limit: this.limit, remaining: Math.max(0, this.limit - this.used), resetMs, retryMs: resetMs };
  }
  override take(): WindowState {
    this.peek();
    this.used++;
    return this.peek();
  }
}

interface Run {
  total: number;
  limit: number;
  windowMs: number;
  workers: number;
  latencyMs: number;
  kind: LimitKind | 'aligned';
  reset: ResetFormat;
  processes?: number;
  /** where in a second the run starts (whole-second rounding depends on it) */
  phaseMs?: number;
  /** each request's latency drawn in [latencyMs / 2, latencyMs × 1.5) from this seed (a real server's answers vary); none: all equal */
  jitterSeed?: number;
  /** with jitterSeed: the ways there and back drawn apart (answers out of the order counted) */
  apart?: boolean;
  /** each worker's other work after each request (ms): a steady load, not bursts */
  thinkMs?: number;
}

async function simulate(o: Run) {
  const clock = new SimClock();
  clock.t = 1_800_000_000_000 + (o.phaseMs ?? 0);
  const limiter =
    o.kind === 'aligned'
      ? new AlignedLimiter(o.limit, o.windowMs, () => clock.now())
      : new WindowLimiter(o.limit, o.windowMs, () => clock.now(), o.kind);
  const format = { reset: o.reset, retryAfter: 'seconds', now: () => clock.now() } as const;
  const starts: number[] = [];
  let tooMany = 0;
  let next = 0;
  const processes = o.processes ?? 1;
  const random = o.jitterSeed === undefined ? undefined : mulberry32(o.jitterSeed);
  const worker = async (pacer: Pacer) => {
    while (next < o.total) {
      next++;
      for (;;) {
        const ticket = await pacer.acquire();
        pacer.sent(ticket);
        const sentAt = clock.now();
        // `apart`: the way there and the way back each drawn on its own, so answers come back in
        // another order than the server counted their requests
        const whole = random ? Math.round(o.latencyMs * (0.5 + random())) : o.latencyMs;
        const half = () => (random && o.apart ? Math.round((o.latencyMs / 2) * (0.5 + random())) : whole / 2);
        await clock.sleep(half());
        const answer = takeAll([{ limiter, id: 'key' }], format);
        if (answer.ok) starts.push(sentAt);
        await clock.sleep(half());
        const headers = Object.fromEntries(Object.entries(answer.headers).map(([k, v]) => [k.toLowerCase(), v]));
        pacer.done(ticket, headers, answer.ok ? 200 : 429);
        if (answer.ok) {
          if (o.thinkMs) await clock.sleep(o.thinkMs);
          break;
        }
        tooMany++;
        pacer.block(retryAfterMs(headers['retry-after'], clock.now()) ?? 1000);
      }
    }
  };
  const pacers = Array.from({ length: processes }, () => new Pacer(clock));
  await clock.run(Promise.all(pacers.flatMap((p) => Array.from({ length: o.workers }, () => worker(p)))));
  const leastMs = (Math.ceil(o.total / o.limit) - 1) * o.windowMs;
  const takenMs = starts[starts.length - 1]! - starts[0]!;
  return { ok: starts.length, tooMany, leastMs, takenMs, efficiency: leastMs / takenMs };
}

const shape = fc
  .record({
    total: fc.integer({ min: 1, max: 150 }),
    limit: fc.integer({ min: 2, max: 50 }),
    windowMs: fc.integer({ min: 1_000, max: 20_000 }),
    workers: fc.integer({ min: 1, max: 8 }),
    latencyMs: fc.integer({ min: 2, max: 100 }),
    kind: fc.constantFrom<Run['kind']>('fixed', 'sliding', 'sliding-oldest', 'aligned'),
    reset: fc.constantFrom<ResetFormat>('delta', 'seconds', 'epoch'),
    phaseMs: fc.integer({ min: 0, max: 999 }),
    jitterSeed: fc.option(fc.integer(), { nil: undefined }),
    apart: fc.boolean(),
  })
  // the limit, not the workers, is the bound; and the first requests, sent before any answer tells
  // the limit, fit in it
  .filter((o) => Math.ceil(o.limit / o.workers) * o.latencyMs * 2 <= o.windowMs && o.workers <= o.limit);

describe('one process against each shape of limiter', () => {
  it('never meets a 429, and loses at most the rounding and the latency per window, and the last burst', async () => {
    await fc.assert(
      fc.asyncProperty(shape, async (o) => {
        const r = await simulate(o);
        expect(r.ok).toBe(o.total);
        // the window's length, bounded by the answer to the request that opened it (in whole seconds
        // from a Unix-time Reset), is tried by one request alone: windows aligned to the clock
        // (shorter than bounded from a request sent inside one), or, from a Unix time, a window of
        // fractions of a second, refute it, once
        const trial = o.kind === 'aligned' || (o.reset === 'epoch' && o.windowMs % 1000 !== 0) ? 1 : 0;
        expect(r.tooMany).toBeLessThanOrEqual(trial);
        const windows = Math.ceil(o.total / o.limit) - 1;
        const rounding = o.reset === 'delta' ? 1 : 1_000;
        const latency = o.jitterSeed === undefined ? o.latencyMs : 1.5 * o.latencyMs; // the longest
        const lastBurst = Math.ceil(Math.min(o.total, o.limit) / o.workers) * latency;
        const refuted = r.tooMany * (2_000 + latency); // its Retry-After, whole seconds rounded up
        // once the length's trial is refuted, a sliding window's units free only when its Reset
        // passes (it may name the window whole again or its oldest request leaving: pacer.ts), all
        // together as in a fixed window: up to a burst's spread later each window than one by one
        const spread = o.kind === 'sliding' && r.tooMany > 0 ? windows * lastBurst : 0;
        const perWindow = rounding + 2 * latency + 2 * RESET_MARGIN_MS;
        expect(r.takenMs).toBeLessThanOrEqual(r.leastMs + windows * perWindow + lastBurst + spread + refuted);
      }),
      runs(60),
    );
  });

  // answers out of the order counted (the ways there and back drawn apart): shapes where the pacer
  // before this change met 429s (a newer request's answer, counted first, raised Remaining; a unit
  // the window no longer counted was kept and freed again)
  it.each([
    {
      total: 143,
      limit: 16,
      windowMs: 1004,
      workers: 6,
      latencyMs: 28,
      kind: 'aligned',
      reset: 'epoch',
      phaseMs: 992,
      jitterSeed: 6,
    },
    {
      total: 95,
      limit: 46,
      windowMs: 19992,
      workers: 2,
      latencyMs: 67,
      kind: 'sliding-oldest',
      reset: 'delta',
      phaseMs: 999,
      jitterSeed: -26,
    },
    {
      total: 146,
      limit: 5,
      windowMs: 9899,
      workers: 5,
      latencyMs: 97,
      kind: 'sliding',
      reset: 'delta',
      phaseMs: 217,
      jitterSeed: -31,
    },
    {
      total: 27,
      limit: 7,
      windowMs: 12493,
      workers: 4,
      latencyMs: 52,
      kind: 'aligned',
      reset: 'seconds',
      phaseMs: 656,
      jitterSeed: 27,
    },
    {
      total: 143,
      limit: 5,
      windowMs: 2714,
      workers: 2,
      latencyMs: 23,
      kind: 'sliding',
      reset: 'delta',
      phaseMs: 850,
      jitterSeed: -2147483643,
    },
    {
      total: 6,
      limit: 5,
      windowMs: 1000,
      workers: 5,
      latencyMs: 23,
      kind: 'fixed',
      reset: 'delta',
      phaseMs: 0,
      jitterSeed: -4,
    },
  ] as const)(
    "answers out of order, $kind windows with Reset as $reset, limit $limit: no 429 but the length's trial",
    async (o) => {
      const r = await simulate({ ...o, apart: true });
      expect(r.ok).toBe(o.total);
      expect(r.tooMany).toBeLessThanOrEqual(o.kind === 'aligned' ? 1 : 0);
    },
  );

  it.each([
    ['fixed', 'seconds', 0.97],
    ['fixed', 'delta', 0.97],
    ['sliding', 'seconds', 0.97],
    // Reset: when the oldest request leaves (the next unit frees), not when the window is whole
    ['sliding-oldest', 'seconds', 0.97],
    ['sliding-oldest', 'delta', 0.97],
    // a Unix second hides where in it a window anchored at its first request ends: the window's
    // length, guessed in whole seconds from the first answer, bounds it (window-length.ts)
    ['sliding', 'epoch', 0.97],
    ['fixed', 'epoch', 0.97],
  ] as const)(
    '%s windows, Reset as %s: 120 requests at 40 per 10 s, 4 workers → efficiency ≥ %d',
    async (kind, reset, goal) => {
      const jitters: Array<[number | undefined, boolean]> = [
        [undefined, false],
        ...[1, 2, 3].flatMap((j): Array<[number, boolean]> => [
          [j, false],
          [j, true],
        ]),
      ];
      for (const [phaseMs, [jitterSeed, apart]] of [0, 250, 500, 750, 999].flatMap((p) =>
        jitters.map((j) => [p, j] as const),
      )) {
        const r = await simulate({
          total: 120,
          limit: 40,
          windowMs: 10_000,
          workers: 4,
          latencyMs: 20,
          kind,
          reset,
          phaseMs,
          jitterSeed,
          apart,
        });
        expect(r.tooMany, `phase ${phaseMs} ms, jitter seed ${jitterSeed}${apart ? ', apart' : ''}`).toBe(0);
        // a first request that reaches the server past the whole second it was sent in: the length
        // is known only to two whole seconds, the longer is taken, the first window's end is a
        // second late as before
        expect(
          r.efficiency,
          `phase ${phaseMs} ms, jitter seed ${jitterSeed}${apart ? ', apart' : ''}`,
        ).toBeGreaterThanOrEqual(reset === 'epoch' && phaseMs + 20 / 2 >= 1_000 ? 0.94 : goal);
      }
    },
  );
});

describe('review of 74177c5: a whole window lost for one request (be218bc: none)', () => {
  // Found by the random property above with seed 1 at 1,500 runs (it now runs the project's fixed
  // seed, helpers/property.ts). Known, not fixed: a late answer sets `shared` too (sharedUse counts our own requests counted
  // out of order as others'): one process holds back its own request in the first window, so a unit
  // leaves the sliding window a little later and the last request misses the second window by
  // milliseconds: 18.1 s instead of 9.3 s (be218bc). The same with 100 at 50 per 18,995 ms, Reset
  // in whole seconds, jitter without `apart`: 38.2 s instead of 19.8 s.
  it.fails(
    "14 requests at 7 per 9,064 ms sliding, Reset as a Unix time, 2 workers, the ways apart: ≤ the property's bound",
    async () => {
      const r = await simulate({
        total: 14,
        limit: 7,
        windowMs: 9064,
        workers: 2,
        latencyMs: 58,
        kind: 'sliding',
        reset: 'epoch',
        phaseMs: 691,
        jitterSeed: -1376584324,
        apart: true,
      });
      expect(r.tooMany).toBe(0);
      expect(r.takenMs).toBeLessThanOrEqual(10_596); // the bound of the property above for this shape
    },
  );
});

describe('windows aligned to the clock, Reset as a Unix time', () => {
  it('the guessed length (from a request sent inside a window opened earlier) costs at most one 429, its trial, then the Resets alone tell', async () => {
    for (const phaseMs of [0, 250, 500, 750, 999]) {
      const r = await simulate({
        total: 120,
        limit: 40,
        windowMs: 10_000,
        workers: 4,
        latencyMs: 20,
        kind: 'aligned',
        reset: 'epoch',
        phaseMs,
      });
      expect(r.ok).toBe(120);
      expect(r.tooMany).toBeLessThanOrEqual(1);
      expect(r.efficiency).toBeGreaterThanOrEqual(0.9);
    }
  });
});

describe('several processes sharing one key', () => {
  it('all finish, at ≥ 0.85 of the least time together, with few 429s', async () => {
    for (const [kind, reset] of [
      ['fixed', 'seconds'],
      ['sliding', 'seconds'],
      ['sliding-oldest', 'seconds'],
      ['sliding-oldest', 'delta'],
      ['fixed', 'epoch'],
      ['aligned', 'epoch'],
    ] as const) {
      for (const jitterSeed of [undefined, 1, 2, 3]) {
        const r = await simulate({
          total: 120,
          limit: 40,
          windowMs: 10_000,
          workers: 4,
          latencyMs: 40,
          kind,
          reset,
          processes: 4,
          jitterSeed,
        });
        expect(r.ok).toBe(120);
        expect(r.efficiency).toBeGreaterThanOrEqual(0.85);
        // about one per other process at each window's end (the one request a process with nothing in
        // flight sends: pacer.ts), and at most one trial of a guessed length per process; latencies
        // that vary end a window at a different moment for each process: a few more
        expect(r.tooMany, `${kind}, ${reset}, jitter seed ${jitterSeed}`).toBeLessThanOrEqual(
          jitterSeed === undefined ? 8 : 12,
        );
      }
    }
  });
});

describe('several processes on one sliding window (Reset: the window whole again), a steady load', () => {
  // Known regression of 91366fb, not fixed (review20): units are no longer freed by the Resets, only
  // by the window's length, which a process learns only from an answer that opened the window (the
  // others never do) and drops for good at the first 429 to a trial (often another process's use of
  // the unit). A sliding window in use never passes its Reset, so those processes wait for the
  // others' pauses: 3 processes 0.93 → 0.61, 2 processes 0.93 → 0.88 (0 429s either way).
  it.fails.each([
    [3, 3_000],
    [2, 2_000],
  ])('%i processes, each worker 1 request per %i ms: ≥ 0.9 of the least time', async (processes, thinkMs) => {
    const r = await simulate({
      total: 300,
      limit: 40,
      windowMs: 10_000,
      workers: 4,
      latencyMs: 40,
      kind: 'sliding',
      reset: 'delta',
      processes,
      thinkMs,
    });
    expect(r.ok).toBe(300);
    expect(r.efficiency).toBeGreaterThanOrEqual(0.9);
  });
});

describe('paceDelay, properties', () => {
  const state = fc
    .record({
      now: fc.integer({ min: 0, max: 1e6 }),
      blockedUntil: fc.integer({ min: 0, max: 1e6 }),
      limit: fc.option(fc.integer({ min: 1, max: 1000 }), { nil: undefined }),
      remaining: fc.option(fc.integer({ min: 0, max: 1000 }), { nil: undefined }),
      resetAt: fc.option(fc.integer({ min: 0, max: 2e6 }), { nil: undefined }),
      pending: fc.integer({ min: 0, max: 50 }),
      freeAt: fc.option(fc.integer({ min: 0, max: 2e6 }), { nil: undefined }),
      shared: fc.option(fc.integer({ min: 0, max: 50 }), { nil: undefined }),
      leftBefore: fc.option(fc.integer({ min: 0, max: 1000 }), { nil: undefined }),
      asking: fc.option(fc.integer({ min: 0, max: 50 }), { nil: undefined }),
    })
    // the requests whose answer will tell are some of those in flight
    .filter((s) => (s.asking ?? 0) <= s.pending);
  it('is never negative nor NaN; waits out a block; never sends into a used-up window before a unit is surely free', () => {
    fc.assert(
      fc.property(state, (s: PaceState) => {
        const d = paceDelay(s);
        expect(d).toBeGreaterThanOrEqual(0);
        expect(Number.isNaN(d)).toBe(false);
        if (s.now < s.blockedUntil) expect(d).toBe(s.blockedUntil - s.now);
        const usedUp = s.remaining !== undefined && s.remaining - s.pending <= 0;
        if (s.now >= s.blockedUntil && usedUp && s.resetAt !== undefined) {
          const free = Math.min(s.resetAt ?? Infinity, s.freeAt ?? Infinity);
          if (s.now < free) expect(s.now + d).toBeGreaterThan(free);
        }
        // waiting for an answer only when one is coming
        if (d === Infinity) expect(s.asking ?? s.pending).toBeGreaterThan(0);
        // past a reset we inferred: never more than what was left before it while none has told
        if (
          s.now >= s.blockedUntil &&
          s.resetAt === undefined &&
          s.remaining !== undefined &&
          (s.asking ?? s.pending) > 0 &&
          d === 0
        )
          expect(s.leftBefore ?? 0).toBeGreaterThan(s.pending);
        // with something left and nobody in flight, a request goes at once
        if (s.now >= s.blockedUntil && s.pending === 0 && (s.remaining === undefined || s.remaining > 0))
          expect(d).toBe(0);
      }),
      runs(100),
    );
  });
});

describe('window units, properties', () => {
  // a run of sends, forgotten requests, and answers (each to one request sent, with a count used)
  const events = fc.array(
    fc.oneof(
      fc.record({ send: fc.constant(true) }),
      fc.record({ drop: fc.nat() }),
      fc.record({ answer: fc.nat(), at: fc.integer({ min: 0, max: 10_000 }), used: fc.integer({ min: 0, max: 20 }) }),
    ),
    { maxLength: 60 },
  );
  it('the units stay in sending order; the newest answer keeps at most `used` of ours sent by then, the newest of them, and all sent after', () => {
    fc.assert(
      fc.property(events, (evs) => {
        const units: Unit[] = [];
        let seq = 0;
        let applied = 0;
        for (const e of evs) {
          if ('send' in e) addUnit(units, ++seq);
          else if ('drop' in e) dropUnit(units, (e.drop % Math.max(seq, 1)) + 1);
          else if (seq > 0) {
            const s = (e.answer % seq) + 1;
            markAnswered(units, s, e.at);
            if (s > applied) {
              applied = s;
              const before = units.map((u) => u.seq);
              keepUsed(units, s, e.used);
              const upTo = before.filter((q) => q <= s);
              expect(units.map((u) => u.seq)).toEqual([
                ...upTo.slice(Math.max(0, upTo.length - e.used)),
                ...before.filter((q) => q > s),
              ]);
            }
          }
          for (let i = 1; i < units.length; i++) expect(units[i]!.seq).toBeGreaterThan(units[i - 1]!.seq);
        }
      }),
      runs(100),
    );
  });
});
