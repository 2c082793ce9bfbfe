// The version 1 operations of src/api/v1.ts (docs/sandbox.md, "Version 1"): the queries over the
// version 2 records in camelCase, and the company update.
import type { ApiRecord } from '../api/envelopes.js';
import { V1_COMPANY_UPDATE, findV1Query, type V1FieldType, type V1Query } from '../api/v1.js';
import { canSee } from './auth.js';
import { paginate } from './cursor.js';
import { parseCursor, parseLimit, resource, visibleRecord, type HandlerCtx, type PathRoutes } from './handler.js';
import { ApiError, v1Success } from './responses.js';
import { failed, isInteger, isPlainObject, objectWith, requireObject } from './validation.js';

/** A version 2 record in version 1 shape: only the mapped fields, renamed. */
function toV1(record: ApiRecord, fields: Readonly<Record<string, string>>): ApiRecord {
  const out: ApiRecord = {};
  for (const [snake, camel] of Object.entries(fields)) if (record[snake] !== undefined) out[camel] = record[snake];
  return out;
}

/** `filter.{name}` → a test of the version 1 record: exact on a scalar field, membership in an array field. */
function filterTest(q: V1Query, name: string, want: unknown): (v1: ApiRecord) => boolean {
  const array = Object.hasOwn(q.arrayFilters, name) ? q.arrayFilters[name] : undefined;
  const scalar = !array && !Object.values(q.arrayFilters).includes(name) && Object.values(q.fields).includes(name);
  if (!array && !scalar) throw failed([{ field: `filter.${name}`, issue: 'unknown_field' }]);
  if (typeof want !== 'string') throw failed([{ field: `filter.${name}`, issue: 'must_be_string' }]);
  return array ? (v1) => Array.isArray(v1[array]) && v1[array].includes(want) : (v1) => v1[name] === want;
}

function query(q: V1Query, ctx: HandlerCtx) {
  const scope = `v1/${q.kind}`;
  const body = objectWith(ctx.body(), ['cursor', 'limit', 'filter']);
  const limit = parseLimit(body.limit);
  if (body.cursor !== undefined && body.cursor !== null && typeof body.cursor !== 'string') {
    throw new ApiError(422, 'INVALID_CURSOR', 'cursor must be a string', [
      { field: 'cursor', issue: 'must_be_string' },
    ]);
  }
  const afterSeq = parseCursor(body.cursor, scope, ctx.state.cursors);
  const filter = body.filter ?? {};
  if (!isPlainObject(filter)) throw failed([{ field: 'filter', issue: 'must_be_object' }]);
  const tests = Object.entries(filter).map(([name, want]) => filterTest(q, name, want));
  const rows = ctx.state.store.rows(q.resource, afterSeq);
  const keep = (r: { data: ApiRecord }) => canSee(ctx.key, r.data) && tests.every((t) => t(toV1(r.data, q.fields)));
  const page = paginate(rows, scope, limit, afterSeq, ctx.state.cursors, keep);
  const cursor = q.nextCursor === 'always' || ctx.state.v1InteractionsCursor;
  const extra = cursor ? { nextCursor: page.hasNextPage ? page.endCursor : null } : {};
  return v1Success(ctx.rm, { [q.kind]: page.items.map((r) => toV1(r.data, q.fields)) }, extra);
}

function fieldIssue(type: V1FieldType | undefined, value: unknown): string | undefined {
  if (type === undefined) return 'unknown_field';
  if (type === 'string') return typeof value === 'string' ? undefined : 'must_be_string';
  if (type === 'integer') return isInteger(value) ? undefined : 'must_be_integer';
  return Array.isArray(value) && value.every((v) => typeof v === 'string') ? undefined : 'must_be_array_of_strings';
}

function updateCompany(id: string, ctx: HandlerCtx) {
  visibleRecord(ctx, resource(V1_COMPANY_UPDATE.resource), id);
  const body = requireObject(ctx.body());
  const details = Object.entries(body).flatMap(([field, value]) => {
    const issue = fieldIssue(
      Object.hasOwn(V1_COMPANY_UPDATE.fields, field) ? V1_COMPANY_UPDATE.fields[field] : undefined,
      value,
    );
    return issue ? [{ field, issue }] : [];
  });
  if (details.length > 0) throw failed(details);
  const fields = Object.fromEntries(
    Object.entries(body).map(([k, v]) => [k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), v]),
  );
  ctx.state.store.update(V1_COMPANY_UPDATE.resource, id, fields);
  return v1Success(ctx.rm, { id });
}

/** The version 1 routes of a path below `/api/v1`, or undefined (404). */
export function resolveV1(segments: string[]): PathRoutes | undefined {
  const [first, second, ...rest] = segments;
  if (rest.length > 0 || first === undefined || !second) return undefined;
  const q = second === 'query' ? findV1Query(first) : undefined;
  if (q) return { POST: { run: (ctx) => query(q, ctx) } };
  if (first === V1_COMPANY_UPDATE.kind) return { PATCH: { run: (ctx) => updateCompany(second, ctx) } };
  return undefined;
}
