// A cost said before a run is never lower than the rate limit allows (issue 29): N requests at L per
// window of W, R left in the window ending at T, take at least the R now and then full windows back
// to back. The window's length is not in the headers: an answer that opened its window tells it;
// until one has, the Resets seen are only the least it can be (started late in a window, a few
// seconds), so the spec's minute is said beside, and which is which.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { planLines } from '../../../src/commands/batch/plan-text.js';
import { DEFAULT_WINDOW_MS, paceWatch, windowOf, type PaceInfo } from '../../../src/http/pace-info.js';
import { Pacer } from '../../../src/http/pacer.js';
import type { MatchPlan } from '../../../src/import/types.js';
import { costAtLimitText, leastAtLimit } from '../../../src/output/eta.js';
import { FakeClock } from '../../helpers/clock.js';
import { runs } from '../../helpers/property.js';

const NOW = 1_000_000;

/** The oracle: the time the last of `n` requests may go, sending what each window allows at once. */
function leastTime(n: number, o: { limit: number; windowMs: number; remaining: number; resetIn: number }): number {
  let [t, left, allowed, end] = [0, n, o.remaining, o.resetIn];
  for (;;) {
    left -= Math.min(left, allowed);
    if (left === 0) return t;
    [t, end, allowed] = [end, end + o.windowMs, o.limit];
  }
}

/** The closed form the plan should hold to: the R now, then ceil((N-R)/L) more windows, the last request at the start of the last. */
const formula = (n: number, o: { limit: number; windowMs: number; remaining: number; resetIn: number }) =>
  n <= o.remaining ? 0 : o.resetIn + (Math.ceil((n - o.remaining) / o.limit) - 1) * o.windowMs;

// (as MatchPlan: its counts beside the requests do not matter here)
const plan = (requests: number) =>
  ({
    ...{ resource: 'contacts', rows: requests, read: 'listed 5 records in 1 request, under a second' },
    ...{ create: 0, update: requests, unchanged: 0, ambiguous: 0, duplicate: 0, repeated: 0, invalid: 0 },
    ...{ requests, read_requests: 1, changes: { title: requests } },
  }) as MatchPlan;

/** The plan's last line for `requests` at `pace`, as shown before the run. */
function planTime(requests: number, pace: PaceInfo, now = NOW): string {
  const least = leastAtLimit(requests, now, pace);
  return planLines(plan(requests), least?.ms, least?.shortMs).at(-1)!;
}

/** A least time in the plan's words, and how much it may have been rounded down by. */
function said(words: string): { ms: number; step: number } {
  if (words === 'under a second') return { ms: 0, step: 1000 };
  const m = /^(?:at least )?([\d.]+) (s|min)$/.exec(words);
  if (!m) throw new Error(`not a time: ${words}`);
  const x = Number(m[1]);
  if (m[2] === 's') return { ms: x * 1000, step: x < 10 ? 100 : 1000 };
  return { ms: x * 60_000, step: x < 10 ? 6000 : 60_000 };
}

const windowArb = fc.record({
  limit: fc.integer({ min: 1, max: 300 }),
  windowMs: fc.integer({ min: 1000, max: 60_000 }),
  used: fc.nat(300),
  resetFrac: fc.double({ min: 0.001, max: 1, noNaN: true }),
});
const stateOf = (w: { limit: number; windowMs: number; used: number; resetFrac: number }) => ({
  limit: w.limit,
  windowMs: w.windowMs,
  remaining: Math.max(0, w.limit - w.used),
  resetIn: Math.max(1, Math.round(w.windowMs * w.resetFrac)),
});

describe('the least time a rate limit allows', () => {
  it('the window known (an answer opened one): the plan says the least time, rounded down, never below the limit nor above the time it takes', () => {
    fc.assert(
      // `way`: the opening request's way to the server, in its Reset less its send time (told); its own
      // time-to-reset, a little short of the window, is the longest seen
      fc.property(fc.integer({ min: 1, max: 3000 }), windowArb, fc.nat(2000), fc.nat(50), (n, w, way, short) => {
        const s = stateOf(w);
        const pace: PaceInfo = {
          ...{ limit: s.limit, remaining: s.remaining, resetAt: NOW + s.resetIn },
          ...windowOf(s.windowMs + way, Math.max(s.resetIn, s.windowMs - short)),
        };
        if (s.remaining === 0) pace.waitingUntil = pace.resetAt;
        const least = leastTime(n, s);
        expect(least).toBe(formula(n, s));
        // reckoned over the window as the longest time-to-reset shows it, a little short: never above the least time
        const reckoned = leastAtLimit(n, NOW, pace)!.ms;
        expect(reckoned).toBeLessThanOrEqual(least);
        expect(reckoned).toBe(leastTime(n, { ...s, windowMs: pace.windowMs }));
        const line = planTime(n, pace);
        const m =
          /^ {2}requests to send: [\d,]+, (under a second|at least [\d.]+ (?:s|min)) at the key's rate limit$/.exec(
            line,
          );
        expect(m, line).not.toBeNull();
        const { ms, step } = said(m![1]!);
        // said no more than the least time (a run takes at least that), and less only by its rounding
        // and the window's shortfall
        expect(ms).toBeLessThanOrEqual(least);
        expect(reckoned - ms).toBeLessThan(step);
        // a delete's and snapshot --links' minutes: rounded up to a tenth, never under the least time
        const about = /^(?:under 0\.1|about ([\d.]+)) min at [\d,]+ requests .* \(the server's rate limit\)$/.exec(
          costAtLimitText(n, NOW, pace),
        );
        expect(about).not.toBeNull();
        if (about![1] !== undefined) expect(Number(about![1]) * 60_000).toBeGreaterThanOrEqual(reckoned - 1e-6);
        else expect(reckoned).toBeLessThan(6000);
      }),
      runs(),
    );
  });

  it("the window not known (no answer opened one): the least time at the spec's minute and at the least length the Resets allow, each said, the true one between", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 3000 }),
        windowArb,
        fc.double({ min: 0, max: 1, noNaN: true }),
        (n, w, seen) => {
          const s = stateOf(w);
          // the longest time-to-reset seen: this window's remains at least, never more than its length
          const longest = s.resetIn + Math.floor((s.windowMs - s.resetIn) * seen);
          const pace: PaceInfo = {
            ...{ limit: s.limit, remaining: s.remaining, resetAt: NOW + s.resetIn },
            ...windowOf(undefined, longest),
          };
          const truth = leastTime(n, s);
          const atSpec = leastTime(n, { ...s, windowMs: DEFAULT_WINDOW_MS });
          const range = leastAtLimit(n, NOW, pace)!;
          expect(range.ms).toBe(atSpec);
          expect(range.ms).toBeGreaterThanOrEqual(truth);
          expect(range.shortMs ?? range.ms).toBeLessThanOrEqual(truth);
          const line = planTime(n, pace);
          const two =
            /, (under a second|at least [\d.]+ (?:s|min)) at the key's rate limit, ([\d.]+ (?:s|min)) if its window is the spec's minute \(no answer has shown its length yet\)$/.exec(
              line,
            );
          const one = /, (under a second|at least [\d.]+ (?:s|min)) at the key's rate limit$/.exec(line);
          expect(two ?? one, line).not.toBeNull();
          if (two) {
            expect(said(two[1]!).ms).toBeLessThanOrEqual(truth);
            const spec = said(two[2]!);
            expect(spec.ms + spec.step).toBeGreaterThan(truth);
          } else {
            // one figure: the window's length does not matter (all fit before the next window or two)
            const { ms, step } = said(one![1]!);
            expect(ms).toBeLessThanOrEqual(truth);
            expect(ms + step).toBeGreaterThan(atSpec);
          }
          expect(costAtLimitText(n, NOW, pace)).toMatch(
            /at [\d,]+ requests a minute \(the server's limit; its window's length not known yet: a minute assumed, as in the spec\)$/,
          );
        },
      ),
      runs(),
    );
  });
});

describe("issue 29's cases, through the pacer's answers", () => {
  /** A pacer on a fake clock and what the client would tell of it; `answer` sends a request and answers it with these headers. */
  function watched() {
    const clock = new FakeClock({ start: NOW });
    const pacer = new Pacer(clock);
    const watch = paceWatch(pacer, () => clock.now());
    const answer = async (limit: number, remaining: number, reset: string) => {
      const ticket = await pacer.acquire();
      pacer.sent(ticket);
      const headers = { 'x-ratelimit-limit': String(limit), 'x-ratelimit-remaining': String(remaining) };
      pacer.done(ticket, { ...headers, 'x-ratelimit-reset': reset });
      watch.observe(); // as the client does after each answer
    };
    return { clock, answer, info: () => watch.info() };
  }

  it('484 requests started late in a window (190 of 200 left, reset in 4 s): not "at least 4 s" but 64 s at the spec\'s minute, 8 s said as the least should the window be 4 s', async () => {
    const { clock, answer, info } = watched();
    await answer(200, 190, '4');
    expect(planTime(484, info(), clock.now())).toBe(
      "  requests to send: 484, at least 8 s at the key's rate limit, 64 s if its window is the spec's minute (no answer has shown its length yet)",
    );
    expect(costAtLimitText(484, clock.now(), info())).toBe(
      "about 1.1 min at 200 requests a minute (the server's limit; its window's length not known yet: a minute assumed, as in the spec)",
    );
    // the next window's first answer tells its length: a minute (sent at its reset, the Reset 60 s on)
    clock.advance(4000);
    await answer(200, 199, '60');
    expect(planTime(294, info(), clock.now())).toBe("  requests to send: 294, at least 60 s at the key's rate limit");
  });

  it('200 requests at 50 per 6 s: the window opened by the read 4 s before the plan, 20 s (it said 8.0 s); a window over, 18 s', async () => {
    const { clock, answer, info } = watched();
    await answer(50, 49, '6');
    clock.advance(4000);
    // 49 now, then 151 in four windows: the last at the start of the fourth, 2 s + 3 × 6 s
    expect(planTime(200, info(), clock.now())).toBe("  requests to send: 200, at least 20 s at the key's rate limit");
    clock.advance(3000);
    // the window over: 50 now, then three more windows
    expect(planTime(200, info(), clock.now())).toBe("  requests to send: 200, at least 18 s at the key's rate limit");
    expect(costAtLimitText(200, clock.now(), info())).toBe(
      "about 0.3 min at 50 requests per 6 s (the server's rate limit)",
    );
  });
});
