// What a route handler receives and returns, plus the list-query helpers every list shares.
import { PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX } from '../api/resources.js';
import type { ApiRecord } from '../api/envelopes.js';
import type { CursorCodec } from './cursor.js';
import { ApiError, invalidParameter } from './errors.js';
import type { RequestMeta } from './responses.js';
import type { SandboxState } from './state.js';
import type { KeyDef, SandboxResponse } from './types.js';

export interface HandlerCtx {
  state: SandboxState;
  key: KeyDef;
  rm: RequestMeta;
  query: URLSearchParams;
  /** the parsed JSON body; throws 422 INVALID_BODY when missing or malformed */
  body(): unknown;
}

export type Handler = (ctx: HandlerCtx) => SandboxResponse;

export interface Route {
  /** the scope the key needs (none for version 1 routes) */
  scope?: string;
  run: Handler;
}

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
/** The routes of one path, by method: a method not in it is 405. */
export type PathRoutes = Partial<Record<Method, Route>>;

/** The `limit` query parameter: an integer 1–100, default 25. */
export function parseLimit(text: string | undefined): number {
  if (text === undefined) return PAGE_SIZE_DEFAULT;
  const n = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!(n >= 1 && n <= PAGE_SIZE_MAX)) throw invalidParameter('limit', `limit must be an integer from 1 to ${PAGE_SIZE_MAX}`);
  return n;
}

/** The sequence number after which a page starts; a cursor of another list is refused. */
export function parseCursor(value: unknown, scope: string, codec: CursorCodec): number {
  if (value === undefined || value === null) return 0;
  const payload = typeof value === 'string' ? codec.decode(value) : undefined;
  if (!payload || payload.scope !== scope) {
    throw new ApiError(
      422,
      'INVALID_CURSOR',
      'The cursor is not valid for this list: pass page_info.end_cursor of the previous page unchanged',
      [{ field: 'cursor', issue: 'invalid' }],
    );
  }
  return payload.seq;
}

export interface ListQuery {
  limit: number;
  afterSeq: number;
  filters: Array<[string, string]>;
}

/** `limit`, `cursor`, and every other parameter as an exact-match filter. */
export function parseListQuery(query: URLSearchParams, scope: string, codec: CursorCodec): ListQuery {
  for (const name of ['limit', 'cursor']) {
    if (query.getAll(name).length > 1) throw invalidParameter(name, `${name} given more than once`);
  }
  const filters: Array<[string, string]> = [];
  for (const [name, value] of query) if (name !== 'limit' && name !== 'cursor') filters.push([name, value]);
  return { limit: parseLimit(query.get('limit') ?? undefined), afterSeq: parseCursor(query.get('cursor') ?? undefined, scope, codec), filters };
}

/** Exact match on top-level fields; `true`, `false`, numbers compared as their string forms. */
export function matches(record: ApiRecord, filters: Array<[string, string]>): boolean {
  return filters.every(([name, want]) => {
    const value = record[name];
    if (value === undefined || (typeof value === 'object' && value !== null)) return false;
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- objects returned false above
    return String(value) === want;
  });
}
