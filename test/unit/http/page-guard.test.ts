// The paging guard's decisions: any repeated cursor is a cycle, a run of empty pages is
// bounded, a request bound holds, and an honest run (fresh cursors, pages with records) never trips.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runs } from '../../helpers/property.js';
import {
  EMPTY_PAGE_LIMIT,
  PageGuard,
  type GuardLimits,
  type PageFacts,
  type PageVerdict,
} from '../../../src/http/page-guard.js';

/** A whole run of pages, judged page by page: the first verdict that is not "follow", and its index. */
function judgeRun(
  pages: readonly PageFacts[],
  startCursor?: string,
  limits: GuardLimits = {},
): { verdict: PageVerdict; at: number } {
  const guard = new PageGuard(startCursor, limits);
  for (let i = 0; i < pages.length; i++) {
    const verdict = guard.judge(pages[i]!);
    if (verdict.kind !== 'follow') return { verdict, at: i };
  }
  return { verdict: { kind: 'follow', cursor: '' }, at: pages.length };
}
import { ServerError } from '../../../src/http/errors.js';

const page = (next: string | null, records = 1, more = true): PageFacts => ({ records, more, next });

describe('judgeRun (properties)', () => {
  it('an honest run never trips: fresh cursors, empty runs shorter than the limit', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(EMPTY_PAGE_LIMIT - 1), fc.integer({ min: 1, max: 100 })), { maxLength: 50 }),
        (runs) => {
          // each run: some empty pages, then one with records; every cursor fresh
          const pages: PageFacts[] = [];
          for (const [empty, records] of runs) {
            for (let i = 0; i < empty; i++) pages.push(page(`c${pages.length}`, 0));
            pages.push(page(`c${pages.length}`, records));
          }
          expect(judgeRun(pages).verdict.kind).toBe('follow');
        },
      ),
      runs(100),
    );
  });

  it('a cycle of any length is found on the page that closes it', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 50 }),
        fc.nat(),
        fc.option(fc.string({ minLength: 1 }), { nil: undefined }),
        fc.nat(3),
        (cursors, pick, start, records) => {
          const usable = cursors.filter((c) => c !== start);
          if (usable.length === 0) return;
          const back = usable[pick % usable.length]!; // a cursor already given
          const pages = [...usable.map((c) => page(c, records + 1)), page(back, records)];
          const { verdict, at } = judgeRun(pages, start);
          expect(at).toBe(usable.length);
          expect(verdict.kind).toBe('stuck');
          if (verdict.kind !== 'stuck') return;
          expect(verdict.problem).toBe('cycle');
          const length = usable.length - usable.indexOf(back);
          expect(verdict.message).toContain(`a cycle of ${length} page${length === 1 ? '' : 's'}`);
        },
      ),
      runs(100),
    );
  });

  it('with cursors from an alphabet of N, no run follows more than N cursors (pigeonhole)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.tuple(fc.nat(5), fc.nat(2)), { minLength: 1, maxLength: 300 }),
        (n, raw) => {
          const pages = raw.map(([c, r]) => page(`c${c % n}`, r));
          const { verdict, at } = judgeRun(pages);
          expect(at).toBeLessThanOrEqual(n);
          if (at < pages.length) expect(verdict.kind).toBe('stuck');
        },
      ),
      runs(100),
    );
  });

  it('a run of empty pages stops after exactly the limit; one page with records resets it', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 30 }), fc.nat(40), (limit, before) => {
        const fresh = (i: number) => `k${i}`;
        const pages = [
          ...Array.from({ length: before }, (_, i) => page(fresh(i), i % limit === limit - 1 ? 1 : 0)),
          page(fresh(before), 1),
          ...Array.from({ length: limit + 5 }, (_, i) => page(fresh(before + 1 + i), 0)),
        ];
        const { verdict, at } = judgeRun(pages, undefined, { emptyPageLimit: limit });
        expect(verdict.kind === 'stuck' && verdict.problem).toBe('empty-run');
        expect(at).toBe(before + limit);
      }),
      runs(100),
    );
  });

  it('never more pages than maxRequests, whatever the server sends', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50 }), fc.array(fc.nat(3), { maxLength: 200 }), (maxRequests, counts) => {
        const pages = counts.map((r, i) => page(`p${i}`, r));
        const { at } = judgeRun(pages, undefined, { maxRequests });
        expect(at).toBeLessThan(maxRequests);
      }),
      runs(100),
    );
  });

  it('the server saying "no more" ends the run, whatever the cursor', () => {
    fc.assert(
      fc.property(fc.option(fc.string(), { nil: null }), fc.nat(5), (next, records) => {
        expect(judgeRun([page(next, records, false)]).verdict.kind).toBe('done');
      }),
      runs(100),
    );
  });
});

describe('judgeRun (examples)', () => {
  it.each([
    ['length 1', ['A', 'A'], 1],
    ['length 2', ['A', 'B', 'A'], 2],
    ['length 3', ['A', 'B', 'C', 'A'], 3],
  ])('finds a cycle of %s', (_name, cursors, length) => {
    const { verdict } = judgeRun(cursors.map((c) => page(c)));
    expect(verdict).toMatchObject({ kind: 'stuck', problem: 'cycle' });
    expect(verdict.kind === 'stuck' && verdict.message).toContain(`cycle of ${length} page`);
  });

  it('the starting cursor counts as seen', () => {
    expect(judgeRun([page('S')], 'S').verdict).toMatchObject({ kind: 'stuck', problem: 'cycle' });
  });

  it('more pages with no cursor is stuck', () => {
    expect(judgeRun([page(null)]).verdict).toMatchObject({ kind: 'stuck', problem: 'no-cursor' });
    expect(judgeRun([page('')]).verdict).toMatchObject({ kind: 'stuck', problem: 'no-cursor' });
  });

  it('names --max when the request bound trips', () => {
    const { verdict } = judgeRun([page('a', 0), page('b', 1), page('c', 0)], undefined, {
      maxRequests: 3,
      maxRequestsReason: '--max 5',
    });
    expect(verdict.kind === 'stuck' && verdict.message).toMatch(/3 pages gave 1 record, too few for --max 5/);
  });
});

describe('PageGuard', () => {
  it('throws a ServerError (exit 8) with code PAGINATION_STUCK and the request id', () => {
    const guard = new PageGuard(undefined);
    expect(guard.next(page('A'))).toBe('A');
    expect(guard.next(page('B'))).toBe('B');
    let error: unknown;
    try {
      guard.next(page('A'), 'req_1');
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ServerError);
    expect(error).toMatchObject({ exitCode: 8, code: 'PAGINATION_STUCK', requestId: 'req_1' });
  });

  it('returns undefined when the server is done', () => {
    expect(new PageGuard(undefined).next(page('A', 1, false))).toBeUndefined();
  });
});
