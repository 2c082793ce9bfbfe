// The one guard of every paging loop (v2 `page_info`, v1 `nextCursor`): cursors that come back round
// (A → B → A) or empty pages while the server says there is more would keep crm requesting for ever.
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
export type PageVerdict =
  { kind: 'follow'; cursor: string } | { kind: 'done' } | { kind: 'stuck'; problem: PagingProblem; message: string };

export interface GuardLimits {
  /** default EMPTY_PAGE_LIMIT */
  emptyPageLimit?: number;
  /** requests allowed in all (from --max), and how the failure names that bound (`--max 5`) */
  maxRequests?: number;
  maxRequestsReason?: string;
}

const show = (cursor: string): string => JSON.stringify(cursor.length > 60 ? `${cursor.slice(0, 60)}…` : cursor);
const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The state of one paging run: every cursor sent so far and the page that gave it (0: the start). */
export class PageGuard {
  private readonly seen = new Map<string, number>();
  private pages = 0;
  private records = 0;
  /** empty pages in a row, up to the last one */
  private emptyRun = 0;

  constructor(
    startCursor: string | undefined,
    private readonly limits: GuardLimits = {},
  ) {
    if (startCursor !== undefined) this.seen.set(startCursor, 0);
  }

  /** The decision after one page; a cursor seen before is a cycle, checked first so that the message names it. */
  judge(page: PageFacts): PageVerdict {
    const pages = ++this.pages;
    const records = (this.records += page.records);
    const emptyRun = (this.emptyRun = page.records === 0 ? this.emptyRun + 1 : 0);
    const stuck = (problem: PagingProblem, message: string): PageVerdict => ({ kind: 'stuck', problem, message });
    const { next, more } = page;
    if (!more) return { kind: 'done' };
    if (!next) {
      return stuck(
        'no-cursor',
        `pagination cannot go on: the server says there is another page but sent no cursor for it (page ${pages}); stopping`,
      );
    }
    const at = this.seen.get(next);
    if (at !== undefined) {
      const where = at === 0 ? 'the start' : `page ${at}`;
      const cycle = `(a cycle of ${plural(pages - at, 'page')}); the server's cursors do not advance, stopping`;
      return stuck('cycle', `pagination loops: page ${pages} points back to cursor ${show(next)} of ${where} ${cycle}`);
    }
    const stillMore = 'while the server still says there is more; stopping';
    if (emptyRun >= (this.limits.emptyPageLimit ?? EMPTY_PAGE_LIMIT)) {
      return stuck('empty-run', `pagination makes no progress: ${emptyRun} empty pages in a row ${stillMore}`);
    }
    if (this.limits.maxRequests !== undefined && pages >= this.limits.maxRequests) {
      const why = this.limits.maxRequestsReason ?? 'the request bound';
      return stuck(
        'max-requests',
        `pagination makes no progress: ${pages} pages gave ${plural(records, 'record')}, too few for ${why}, ${stillMore}`,
      );
    }
    this.seen.set(next, pages);
    return { kind: 'follow', cursor: next };
  }
  /** The cursor to follow, or undefined when done; a ServerError (exit 8) when stuck. */
  next(page: PageFacts, requestId?: string): string | undefined {
    const verdict = this.judge(page);
    if (verdict.kind === 'stuck') throw new ServerError(verdict.message, { code: 'PAGINATION_STUCK', requestId });
    return verdict.kind === 'follow' ? verdict.cursor : undefined;
  }
}
