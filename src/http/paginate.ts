// Cursor pagination (spec: Endpoints rule 1): follow page_info.end_cursor while has_next_page,
// holding one page at a time; a `break` in the caller's loop stops before the next request. The
// PageGuard stops a server whose cursors cycle or whose pages stay empty (exit 8).
import type { ListEnvelope } from '../api/envelopes.js';
import { PAGE_SIZE_MAX } from '../api/resources.js';
import { EMPTY_PAGE_LIMIT, PageGuard } from './page-guard.js';
import type { ApiResponse, Page, PaginateOptions } from './types.js';
import type { Query } from './url.js';

export type FetchPage = (query: Query, signal?: AbortSignal) => Promise<ApiResponse<unknown>>;

export async function* paginatePages(
  fetchPage: FetchPage,
  opts: PaginateOptions = {},
): AsyncGenerator<Page, void, undefined> {
  let cursor = opts.cursor;
  let left = opts.max ?? Infinity;
  if (left <= 0) return;
  // With --max N, N records need at most N pages (every page but the last carries one); one run of
  // empty pages more is allowed, and then the request count, not only the record count, stops it.
  const guard = new PageGuard(cursor, {
    maxRequests: opts.max === undefined ? undefined : opts.max + EMPTY_PAGE_LIMIT,
    maxRequestsReason: `--max ${opts.max}`,
  });
  for (;;) {
    // With --max, ask for no more than is still wanted: the page then ends at the last record
    // wanted, and its end cursor is where to go on from (a cursor past records not shown skips them).
    const limit = opts.max === undefined ? opts.limit : Math.min(opts.limit ?? PAGE_SIZE_MAX, left);
    const res = await fetchPage({ ...opts.query, limit, cursor }, opts.signal);
    const body = res.body as ListEnvelope;
    const cut = body.data.length > left;
    const data = cut ? body.data.slice(0, left) : body.data;
    left -= data.length;
    const endCursor = body.page_info.end_cursor;
    const hasNextPage = body.page_info.has_next_page;
    yield { data, endCursor, hasNextPage, cut };
    if (!hasNextPage || left <= 0) return;
    cursor = guard.next({ records: body.data.length, more: hasNextPage, next: endCursor }, res.requestId);
  }
}
