// The window's length guessed from a coarse Reset (window-length.ts) and the units it frees
// (window-units.ts): pure, property-tested.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runs } from '../../helpers/property.js';
import {
  guessUsable,
  guessedLength,
  judgeTrial,
  learnLength,
  type LengthGuess,
} from '../../../src/http/window-length.js';
import { nextGuessed, releaseGuessed, type Unit } from '../../../src/http/window-units.js';

const T0 = 1_800_000_000_000;

describe('learnLength / guessedLength', () => {
  it('never guesses a whole-second window shorter than it is, from an answer counted after it was sent (opened there, or earlier by the clock)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 3600 }), // the window, whole seconds
        fc.integer({ min: 0, max: 10_000_000 }), // when the request was sent
        fc.integer({ min: 1, max: 999 }), // until the server counted it
        fc.integer({ min: 2, max: 1000 }),
        (seconds, sent, delay, limit) => {
          const windowMs = seconds * 1000;
          const end = T0 + sent + delay + windowMs; // the window opened when it was counted
          const g = learnLength(
            {},
            { coarse: true, limit, remaining: limit - 1, resetAt: Math.ceil(end / 1000) * 1000, sentAt: T0 + sent },
          );
          const guess = guessedLength(g)!;
          expect(guess).toBeGreaterThanOrEqual(windowMs);
          expect(guess).toBeLessThanOrEqual(windowMs + 1000);
          // a request sent and counted within one second: the guess is exact
          if (Math.ceil((T0 + sent + delay + 1) / 1000) === Math.ceil((T0 + sent + 1) / 1000))
            expect(guess).toBe(windowMs);
        },
      ),
      runs(100),
    );
  });

  it('learns only from an answer to a request that opened its window; the bound only shrinks', () => {
    const answer = fc.record({
      coarse: fc.boolean(),
      limit: fc.option(fc.integer({ min: 1, max: 100 }), { nil: undefined }),
      remaining: fc.integer({ min: 0, max: 100 }),
      resetAt: fc.integer({ min: 0, max: 100_000 }),
      sentAt: fc.option(fc.integer({ min: 0, max: 100_000 }), { nil: undefined }),
    });
    fc.assert(
      fc.property(fc.array(answer, { maxLength: 30 }), (answers) => {
        let g: LengthGuess = {};
        for (const a of answers) {
          const next = learnLength(g, a);
          const opened = a.limit !== undefined && a.sentAt !== undefined && a.remaining === a.limit - 1;
          if (!opened) expect(next).toBe(g);
          if (next.boundMs !== undefined) expect(next.boundMs).toBeGreaterThan(0);
          if (g.boundMs !== undefined) expect(next.boundMs).toBeLessThanOrEqual(g.boundMs);
          g = next;
        }
      }),
      runs(100),
    );
  });

  it('from Resets in seconds from now (rounded up, or with decimals), never guesses a window anchored at its first request shorter than it is', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 100, max: 3_600_000 }), // the window (ms)
        fc.integer({ min: 0, max: 10_000_000 }), // when the request was sent
        fc.integer({ min: 0, max: 999 }), // until the server counted it
        fc.integer({ min: 0, max: 999 }), // until its answer came
        fc.boolean(), // whole seconds rounded up, or milliseconds
        fc.integer({ min: 2, max: 1000 }),
        (windowMs, sent, there, back, whole, limit) => {
          const counted = T0 + sent + there;
          const answered = counted + back;
          const left = (counted + windowMs - counted) / 1000; // the server's Reset, seconds from its now
          const resetAt = answered + (whole ? Math.ceil(left) : left) * 1000; // read from the answer's arrival
          const guess = guessedLength(
            learnLength({}, { coarse: false, limit, remaining: limit - 1, resetAt, sentAt: T0 + sent }),
          )!;
          expect(guess).toBeGreaterThanOrEqual(windowMs);
          expect(guess).toBeLessThanOrEqual(windowMs + there + back + (whole ? 1000 : 0));
        },
      ),
      runs(100),
    );
  });

  it('a 429 to a trial drops the guess for good; any other answer keeps it', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1001, max: 100_000 }),
        fc.array(fc.constantFrom(200, 201, 207, 429, 500, undefined)),
        (bound, statuses) => {
          let g: LengthGuess = { boundMs: bound };
          for (const status of statuses) {
            g = judgeTrial(g, status);
            g = learnLength(g, { coarse: true, limit: 2, remaining: 1, resetAt: 5_000, sentAt: 1_000 });
          }
          const refused = statuses.includes(429);
          expect(guessedLength(g) === undefined).toBe(refused);
          expect(guessUsable(g, 0)).toBe(!refused);
          expect(guessUsable(g, 1)).toBe(false);
        },
      ),
      runs(100),
    );
  });
});

describe('releaseGuessed / nextGuessed', () => {
  const units = fc
    .array(
      fc.record({
        gap: fc.integer({ min: 1, max: 3 }),
        answeredAt: fc.option(fc.integer({ min: 0, max: 10_000 }), { nil: undefined }),
      }),
      {
        maxLength: 20,
      },
    )
    .map((xs) => {
      let seq = 0;
      return xs.map((x): Unit => ({ seq: (seq += x.gap), answeredAt: x.answeredAt }));
    });
  it('frees at most `max` of the oldest counted units whose answer is a length ago, in order', () => {
    fc.assert(
      fc.property(
        units,
        fc.integer({ min: 0, max: 60 }),
        fc.integer({ min: 0, max: 20_000 }),
        fc.option(fc.integer({ min: 1, max: 10_000 }), { nil: undefined }),
        fc.integer({ min: 0, max: 5 }),
        (us, applied, now, length, max) => {
          const before = us.map((u) => ({ ...u }));
          const first = nextGuessed(us, applied, length);
          const n = releaseGuessed(us, applied, now, length, max);
          expect(n).toBeLessThanOrEqual(max);
          expect(us).toEqual(before.slice(n));
          for (const u of before.slice(0, n)) {
            expect(u.seq).toBeLessThanOrEqual(applied);
            expect(u.answeredAt! + length!).toBeLessThanOrEqual(now);
          }
          if (max > 0) expect(n > 0).toBe(first !== undefined && first <= now);
        },
      ),
      runs(100),
    );
  });
});
