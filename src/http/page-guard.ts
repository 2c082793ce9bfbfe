// The one guard every paging loop goes through (v2 `page_info`, v1 `nextCursor`): a server whose
// cursors come back round (A → B → A) or whose pages stay empty while it says there is more would
// otherwise keep crm requesting for ever. The decision is pure (state in, verdict out) so it can be
// property-tested; the loops only ask it "what next?" after each page.
import { ServerError } from './errors.js';

/**
 * How many empty pages in a row are accepted while the server says there is more. A server may
 * filter after paging and so send an empty page now and then; 20 in a row is no longer that.
 */
export const EMPTY_PAGE_LIMIT = 20;

/** What the guard needs to know about one page just received. */
export interface PageFacts {
  /** records on the page */
  records: number;
  /** the server says there is another page (v2 `has_next_page`; v1: a `nextCursor` was sent) */
  more: boolean;
  /** the cursor for the next page */
  next: string | null | undefined;
}

export type PagingProblem = 'no-cursor' | 'cycle' | 'empty-run' | 'max-requests';

export type PageVerdict = { kind: 'follow'; cursor: string } | { kind: 'done' } | { kind: 'stuck'; problem: PagingProblem; message: string };

export interface GuardLimits {
  /** empty pages in a row before giving up (default EMPTY_PAGE_LIMIT) */
  emptyPageLimit?: number;
  /** requests allowed in all (e.g. from --max); unbounded when absent */
  maxRequests?: number;
  /** how the failure names the bound, e.g. `--max 5` */
  maxRequestsReason?: string;
}

/** What the guard counts besides the cursors it has seen. */
export interface GuardCounters {
  /** pages received */
  readonly pages: number;
  /** records received */
  readonly records: number;
  /** empty pages in a row, up to the last one */
  readonly emptyRun: number;
}

export const NO_PAGES: GuardCounters = { pages: 0, records: 0, emptyRun: 0 };

const show = (cursor: string): string => JSON.stringify(cursor.length > 60 ? `${cursor.slice(0, 60)}…` : cursor);

/**
 * The decision after one page: done (the server says so), follow `next`, or stuck (and why).
 * `seen` maps every cursor sent so far to the page that gave it (0: the starting cursor); it is
 * not changed: on "follow" the caller records the cursor under the new page count. Any cursor seen
 * before is a cycle, whatever its length; it is checked before the other bounds so the message
 * names it.
 */
export function judgePage(
  seen: ReadonlyMap<string, number>,
  before: GuardCounters,
  page: PageFacts,
  limits: GuardLimits = {},
): { counters: GuardCounters; verdict: PageVerdict } {
  const pages = before.pages + 1;
  const records = before.records + page.records;
  const emptyRun = page.records === 0 ? before.emptyRun + 1 : 0;
  const counters = { pages, records, emptyRun };
  const stuck = (problem: PagingProblem, message: string) => ({ counters, verdict: { kind: 'stuck' as const, problem, message } });
  if (!page.more) return { counters, verdict: { kind: 'done' } };
  const next = page.next;
  if (next === null || next === undefined || next === '') {
    return stuck(
      'no-cursor',
      `pagination cannot go on: the server says there is another page but sent no cursor for it (page ${pages}); stopping`,
    );
  }
  const at = seen.get(next);
  if (at !== undefined) {
    const length = pages - at;
    return stuck(
      'cycle',
      `pagination loops: page ${pages} points back to cursor ${show(next)} of ${at === 0 ? 'the start' : `page ${at}`} ` +
        `(a cycle of ${length} page${length === 1 ? '' : 's'}); the server's cursors do not advance, stopping`,
    );
  }
  const emptyLimit = limits.emptyPageLimit ?? EMPTY_PAGE_LIMIT;
  if (emptyRun >= emptyLimit) {
    return stuck(
      'empty-run',
      `pagination makes no progress: ${emptyRun} empty pages in a row while the server still says there is more; stopping`,
    );
  }
  if (limits.maxRequests !== undefined && pages >= limits.maxRequests) {
    const why = limits.maxRequestsReason ?? 'the request bound';
    return stuck(
      'max-requests',
      `pagination makes no progress: ${pages} pages gave ${records} record${records === 1 ? '' : 's'}, too few for ${why}, ` +
        'while the server still says there is more; stopping',
    );
  }
  return { counters, verdict: { kind: 'follow', cursor: next } };
}

/** The stateful wrapper the loops use: one per paging run. */
export class PageGuard {
  private readonly seen = new Map<string, number>();
  private counters = NO_PAGES;

  constructor(
    startCursor: string | undefined,
    private readonly limits: GuardLimits = {},
  ) {
    if (startCursor !== undefined) this.seen.set(startCursor, 0);
  }

  /** The verdict on one more page; on "follow" the cursor is remembered. */
  judge(page: PageFacts): PageVerdict {
    const { counters, verdict } = judgePage(this.seen, this.counters, page, this.limits);
    this.counters = counters;
    if (verdict.kind === 'follow') this.seen.set(verdict.cursor, counters.pages);
    return verdict;
  }

  /** The cursor to follow, or undefined when the server says it is done; throws ServerError (exit 8) when stuck. */
  next(page: PageFacts, requestId?: string): string | undefined {
    const verdict = this.judge(page);
    if (verdict.kind === 'stuck') throw new ServerError(verdict.message, { code: 'PAGINATION_STUCK', requestId });
    return verdict.kind === 'follow' ? verdict.cursor : undefined;
  }
}

/** A whole run of pages, judged page by page: the first verdict that is not "follow", and its page index. */
export function judgeRun(pages: readonly PageFacts[], startCursor?: string, limits: GuardLimits = {}): { verdict: PageVerdict; at: number } {
  const guard = new PageGuard(startCursor, limits);
  for (let i = 0; i < pages.length; i++) {
    const verdict = guard.judge(pages[i]!);
    if (verdict.kind !== 'follow') return { verdict, at: i };
  }
  return { verdict: { kind: 'follow', cursor: '' }, at: pages.length };
}
