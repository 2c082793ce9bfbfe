// The three version 1 operations (docs/sandbox.md, "Version 1"): people and interactions
// queries over the version 2 contacts and interactions in camelCase, and the company update.
import { V1_COMPANY_FIELDS, V1_INTERACTION_FIELDS, V1_PERSON_FIELDS, type ResourceName } from '../api/resources.js';
import type { ApiRecord } from '../api/envelopes.js';
import { canSee, requireOwner } from './auth.js';
import { paginate } from './cursor.js';
import { ApiError, invalidParameter, notFound } from './errors.js';
import { parseCursor, type HandlerCtx, type PathRoutes } from './handler.js';
import { filterIter, mapIter } from './iter.js';
import { PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX } from '../api/resources.js';
import { v1Success } from './responses.js';
import { failed, requireObject } from './validation.js';

/** A version 2 record in version 1 shape: only the mapped fields, renamed. */
export function toV1(record: ApiRecord, fields: Readonly<Record<string, string>>): ApiRecord {
  const out: ApiRecord = {};
  for (const [snake, camel] of Object.entries(fields)) if (record[snake] !== undefined) out[camel] = record[snake];
  return out;
}

export function camelToSnake(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

interface QuerySpec {
  resource: ResourceName;
  fields: Readonly<Record<string, string>>;
  /** filter name → predicate on the version 1 record */
  filters: Record<string, (v1: ApiRecord, want: string) => boolean>;
  dataKey: string;
  nextCursor: (ctx: HandlerCtx) => boolean;
}

const exact = (name: string) => (v1: ApiRecord, want: string) => typeof v1[name] === 'string' && v1[name] === want;
const contains = (name: string) => (v1: ApiRecord, want: string) => Array.isArray(v1[name]) && (v1[name] as unknown[]).includes(want);

function scalarFilters(fields: Readonly<Record<string, string>>, except: string[] = []) {
  return Object.fromEntries(
    Object.values(fields)
      .filter((f) => !except.includes(f))
      .map((f) => [f, exact(f)]),
  );
}

const PEOPLE: QuerySpec = {
  resource: 'contacts',
  fields: V1_PERSON_FIELDS,
  filters: scalarFilters(V1_PERSON_FIELDS),
  dataKey: 'people',
  nextCursor: () => true,
};

const INTERACTIONS: QuerySpec = {
  resource: 'interactions',
  fields: V1_INTERACTION_FIELDS,
  filters: {
    ...scalarFilters(V1_INTERACTION_FIELDS, ['companies', 'contacts']),
    companyId: contains('companies'),
    contactId: contains('contacts'),
  },
  dataKey: 'interactions',
  nextCursor: (ctx) => ctx.state.v1InteractionsCursor,
};

function parseV1Limit(value: unknown): number {
  if (value === undefined) return PAGE_SIZE_DEFAULT;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > PAGE_SIZE_MAX) {
    throw invalidParameter('limit', `limit must be an integer from 1 to ${PAGE_SIZE_MAX}`);
  }
  return value;
}

function queryRoute(spec: QuerySpec): PathRoutes {
  const scope = `v1/${spec.dataKey}`;
  return {
    POST: {
      run: (ctx) => {
        const body = requireObject(ctx.body());
        const unknown = Object.keys(body).filter((k) => !['cursor', 'limit', 'filter'].includes(k));
        if (unknown.length > 0) throw failed(unknown.map((field) => ({ field, issue: 'unknown_field' })));
        const limit = parseV1Limit(body.limit);
        if (body.cursor !== undefined && body.cursor !== null && typeof body.cursor !== 'string') {
          throw new ApiError(422, 'INVALID_CURSOR', 'cursor must be a string', [{ field: 'cursor', issue: 'must_be_string' }]);
        }
        const afterSeq = parseCursor(body.cursor, scope, ctx.state.cursors);
        const filter = body.filter === undefined || body.filter === null ? {} : body.filter;
        if (typeof filter !== 'object' || Array.isArray(filter)) throw failed([{ field: 'filter', issue: 'must_be_object' }]);
        const filters = Object.entries(filter as ApiRecord).map(([name, want]) => {
          const test = spec.filters[name];
          if (!test) throw failed([{ field: `filter.${name}`, issue: 'unknown_field' }]);
          if (typeof want !== 'string') throw failed([{ field: `filter.${name}`, issue: 'must_be_string' }]);
          return (v1: ApiRecord) => test(v1, want);
        });
        const rows = filterIter(
          mapIter(ctx.state.store.rows(spec.resource, afterSeq), (r) => ({
            seq: r.seq,
            v1: toV1(r.data, spec.fields),
            owner_id: r.data.owner_id,
          })),
          (r) => canSee(ctx.key, r) && filters.every((f) => f(r.v1)),
        );
        const page = paginate(rows, scope, limit, afterSeq, ctx.state.cursors);
        const extra = spec.nextCursor(ctx) ? { nextCursor: page.hasNextPage ? page.endCursor : null } : {};
        return v1Success(ctx.rm, { [spec.dataKey]: page.items.map((r) => r.v1) }, extra);
      },
    },
  };
}

function fieldIssue(type: 'string' | 'string[]' | 'integer', value: unknown): string | undefined {
  if (type === 'string') return typeof value === 'string' ? undefined : 'must_be_string';
  if (type === 'integer') return typeof value === 'number' && Number.isInteger(value) ? undefined : 'must_be_integer';
  return Array.isArray(value) && value.every((v) => typeof v === 'string') ? undefined : 'must_be_array_of_strings';
}

function companyRoute(id: string): PathRoutes {
  return {
    PATCH: {
      run: (ctx) => {
        const company = ctx.state.store.get('companies', id);
        if (!company) throw notFound(`Company ${id}`);
        requireOwner(ctx.key, company);
        const body = requireObject(ctx.body());
        const details = Object.entries(body).flatMap(([field, value]) => {
          const type = V1_COMPANY_FIELDS[field];
          const issue = type ? fieldIssue(type, value) : 'unknown_field';
          return issue ? [{ field, issue }] : [];
        });
        if (details.length > 0) throw failed(details);
        const fields = Object.fromEntries(Object.entries(body).map(([k, v]) => [camelToSnake(k), v]));
        ctx.state.store.update('companies', id, fields);
        return v1Success(ctx.rm, { id });
      },
    },
  };
}

/** The version 1 routes of a path below `/api/v1`, or undefined (404). */
export function resolveV1(segments: string[]): PathRoutes | undefined {
  const [first, second, ...rest] = segments;
  if (rest.length > 0) return undefined;
  if (first === 'people' && second === 'query') return queryRoute(PEOPLE);
  if (first === 'interactions' && second === 'query') return queryRoute(INTERACTIONS);
  if (first === 'companies' && second !== undefined && second !== '') return companyRoute(second);
  return undefined;
}
