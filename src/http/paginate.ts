// Cursor pagination (spec: Endpoints rule 1): follow page_info.end_cursor while has_next_page,
// holding one page at a time; a `break` in the caller's loop stops before the next request.
import type { ApiRecord, ListEnvelope } from '../api/envelopes.js';
import { ServerError } from './errors.js';
import type { ApiResponse, Page, PaginateOptions } from './types.js';
import type { Query } from './url.js';

export type FetchPage = (query: Query, signal?: AbortSignal) => Promise<ApiResponse<unknown>>;

export async function* paginatePages(fetchPage: FetchPage, opts: PaginateOptions = {}): AsyncGenerator<Page, void, undefined> {
  let cursor = opts.cursor;
  let left = opts.max ?? Infinity;
  if (left <= 0) return;
  for (;;) {
    // With both --limit and --max, ask for no more than is still wanted.
    const limit = opts.limit === undefined ? undefined : Math.min(opts.limit, left);
    const res = await fetchPage({ ...opts.query, limit, cursor }, opts.signal);
    const body = res.body as ListEnvelope;
    const data = body.data.length > left ? body.data.slice(0, left) : body.data;
    left -= data.length;
    const endCursor = body.page_info.end_cursor;
    const hasNextPage = body.page_info.has_next_page;
    yield { data, endCursor, hasNextPage };
    if (!hasNextPage || left <= 0) return;
    if (endCursor === null || endCursor === cursor) {
      throw new ServerError(`pagination did not advance: has_next_page is true but end_cursor is ${JSON.stringify(endCursor)}`, {
        code: 'INVALID_RESPONSE',
        requestId: res.requestId,
      });
    }
    cursor = endCursor;
  }
}

export async function* paginateRecords(pages: AsyncGenerator<Page, void, undefined>, max?: number): AsyncGenerator<ApiRecord, void, undefined> {
  let left = max ?? Infinity;
  if (left <= 0) return;
  for await (const page of pages) {
    for (const record of page.data) {
      yield record;
      if (--left <= 0) return;
    }
  }
}
