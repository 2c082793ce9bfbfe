// What a route handler receives and returns, and what every list and item route shares.
import {
  PAGE_SIZE_DEFAULT,
  PAGE_SIZE_MAX,
  findResource,
  type ResourceDef,
  type ResourceName,
} from '../api/resources.js';
import type { ApiRecord } from '../api/envelopes.js';
import { RawNumber } from '../json/exact-json.js';
import { canSee, requireOwner } from './auth.js';
import { paginate, type CursorCodec } from './cursor.js';
import { ApiError, invalidParameter, list, notFound, type RequestMeta } from './responses.js';
import type { Row } from './store.js';
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

export interface Route {
  /** the scope the key needs (none for version 1 routes) */
  scope?: string;
  run: (ctx: HandlerCtx) => SandboxResponse;
}

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
/** The routes of one path, by method: a method not in it is 405. */
export type PathRoutes = Partial<Record<Method, Route>>;

/** The record as the key may see it: another user's record is 403, a missing one 404. */
export function visibleRecord(ctx: HandlerCtx, def: ResourceDef, id: string): ApiRecord {
  const record = ctx.state.store.get(def.name, id);
  if (!record) throw notFound(`${def.singular.charAt(0).toUpperCase()}${def.singular.slice(1)} ${id}`);
  requireOwner(ctx.key, record);
  return record;
}

export const resource = (name: ResourceName): ResourceDef => findResource(name)!;

/** `Location` of a created record or link: the API's origin and the path, each segment encoded. */
export function location(ctx: HandlerCtx, ...segments: string[]): Record<string, string> {
  return { Location: `${ctx.state.origin}/api/v2/${segments.map(encodeURIComponent).join('/')}` };
}

/** The `limit` of a list (a number: a query's text is converted first): an integer 1–100, default 25. */
export function parseLimit(n: unknown): number {
  if (n === undefined) return PAGE_SIZE_DEFAULT;
  if (!(typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= PAGE_SIZE_MAX)) {
    throw invalidParameter('limit', `limit must be an integer from 1 to ${PAGE_SIZE_MAX}`);
  }
  return n;
}

/** The sequence number after which a page starts; a cursor of another list is refused. */
export function parseCursor(value: unknown, scope: string, codec: CursorCodec): number {
  if (value === undefined || value === null) return 0;
  const payload = typeof value === 'string' ? codec.decode(value) : undefined;
  if (!payload || payload.scope !== scope) {
    const message = 'The cursor is not valid for this list: pass page_info.end_cursor of the previous page unchanged';
    throw new ApiError(422, 'INVALID_CURSOR', message, [{ field: 'cursor', issue: 'invalid' }]);
  }
  return payload.seq;
}

/** A version 2 list page: `limit`, `cursor`, any other parameter an exact-match filter (on scalars' string forms). */
export function listPage<T extends Row>(
  ctx: HandlerCtx,
  scope: string,
  rowsAfter: (afterSeq: number) => Iterable<T>,
  show: (row: T) => ApiRecord,
): SandboxResponse {
  for (const name of ['limit', 'cursor']) {
    if (ctx.query.getAll(name).length > 1) throw invalidParameter(name, `${name} given more than once`);
  }
  const filters = [...ctx.query].filter(([name]) => name !== 'limit' && name !== 'cursor');
  const text = ctx.query.get('limit');
  const limit = parseLimit(text === null ? undefined : /^\d+$/.test(text) ? Number(text) : NaN);
  const afterSeq = parseCursor(ctx.query.get('cursor') ?? undefined, scope, ctx.state.cursors);
  const keep = (row: T) => canSee(ctx.key, row.data) && filters.every(([name, want]) => matches(row.data[name], want));
  const page = paginate(rowsAfter(afterSeq), scope, limit, afterSeq, ctx.state.cursors, keep);
  return list(ctx.rm, page.items.map(show), page);
}

function matches(value: unknown, want: string): boolean {
  const scalar =
    typeof value === 'string' ||
    typeof value === 'number' ||
    typeof value === 'boolean' ||
    value === null ||
    value instanceof RawNumber; // its digits as sent
  return scalar && String(value) === want;
}
