// The one guard of every paging loop (v2 `page_info`, v1 `nextCursor`): cursors that come back round
// (A → B → A) or empty pages while the server says there is more would keep crm requesting for ever.
// The decision, judgePage, is pure (property-tested).
import { ServerError } from './errors.js';

/** Empty pages in a row accepted while the server says there is more (it may filter after paging). */
export const EMPTY_PAGE_LIMIT = 20;

export interface PageFacts {
  records: number;
  /** the server says there is another page (v2 `has_next_page`; v1: a `nextCursor` was sent) */
  more: boolean;
  next: string | null | undefined;
}

export type PagingProblem = 'no-cursor' | 'cycle' | 'empty-run' | 'max-requests';
export type PageVerdict = { kind: 'follow'; cursor: string } | { kind: 'done' } | { kind: 'stuck'; problem: PagingProblem; message: string };

export interface GuardLimits {
  /** default EMPTY_PAGE_LIMIT */
  emptyPageLimit?: number;
  /** requests allowed in all (from --max), and how the failure names that bound (`--max 5`) */
  maxRequests?: number;
  maxRequestsReason?: string;
}

export interface GuardCounters {
  readonly pages: number;
  readonly records: number;
  /** empty pages in a row, up to the last one */
  readonly emptyRun: number;
}

export const NO_PAGES: GuardCounters = { pages: 0, records: 0, emptyRun: 0 };

const show = (cursor: string): string => JSON.stringify(cursor.length > 60 ? `${cursor.slice(0, 60)}…` : cursor);
const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * The decision after one page. `seen` maps every cursor sent so far to the page that gave it (0:
 * the start); any of them again is a cycle, checked first so that the message names it.
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
  const next = page.next;
  const at = next ? seen.get(next) : undefined;
  if (!page.more) return { counters, verdict: { kind: 'done' } };
  if (!next)
    return stuck(
      'no-cursor',
      `pagination cannot go on: the server says there is another page but sent no cursor for it (page ${pages}); stopping`,
    );
  if (at !== undefined) {
    const where = at === 0 ? 'the start' : `page ${at}`;
    const cycle = `(a cycle of ${plural(pages - at, 'page')}); the server's cursors do not advance, stopping`;
    return stuck('cycle', `pagination loops: page ${pages} points back to cursor ${show(next)} of ${where} ${cycle}`);
  }
  const more = 'while the server still says there is more; stopping';
  if (emptyRun >= (limits.emptyPageLimit ?? EMPTY_PAGE_LIMIT)) {
    return stuck('empty-run', `pagination makes no progress: ${emptyRun} empty pages in a row ${more}`);
  }
  if (limits.maxRequests !== undefined && pages >= limits.maxRequests) {
    const why = limits.maxRequestsReason ?? 'the request bound';
    return stuck('max-requests', `pagination makes no progress: ${pages} pages gave ${plural(records, 'record')}, too few for ${why}, ${more}`);
  }
  return { counters, verdict: { kind: 'follow', cursor: next } };
}

/** judgePage's state for one paging run. */
export class PageGuard {
  private readonly seen = new Map<string, number>();
  private counters = NO_PAGES;

  constructor(
    startCursor: string | undefined,
    private readonly limits: GuardLimits = {},
  ) {
    if (startCursor !== undefined) this.seen.set(startCursor, 0);
  }

  judge(page: PageFacts): PageVerdict {
    const { counters, verdict } = judgePage(this.seen, this.counters, page, this.limits);
    this.counters = counters;
    if (verdict.kind === 'follow') this.seen.set(verdict.cursor, counters.pages);
    return verdict;
  }

  /** The cursor to follow, or undefined when done; a ServerError (exit 8) when stuck. */
  next(page: PageFacts, requestId?: string): string | undefined {
    const verdict = this.judge(page);
    if (verdict.kind === 'stuck') throw new ServerError(verdict.message, { code: 'PAGINATION_STUCK', requestId });
    return verdict.kind === 'follow' ? verdict.cursor : undefined;
  }
}
