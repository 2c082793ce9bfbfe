// The version 2 collection routes: list, create, get, update, delete and batch-create of every
// resource of the table (docs/sandbox.md, "Paths", "Lists and pagination", "Batches").
import { BATCH_MAX, type ResourceDef, scopeFor, actionForVerb } from '../api/resources.js';
import type { ApiRecord } from '../api/envelopes.js';
import { canSee, requireOwner } from './auth.js';
import { paginate } from './cursor.js';
import { ApiError, invalidBody, notFound } from './errors.js';
import { filterIter } from './iter.js';
import { matches, parseListQuery, type HandlerCtx, type PathRoutes } from './handler.js';
import { list, meta, success } from './responses.js';
import { DOWNLOAD_PATH } from './transcripts.js';
import { isPlainObject, recordIssues, validateRecord } from './validation.js';

/** The record as the key may see it: another user's record is 403, a missing one 404. */
export function visibleRecord(ctx: HandlerCtx, def: ResourceDef, id: string): ApiRecord {
  const record = ctx.state.store.get(def.name, id);
  if (!record) throw notFound(`${capitalize(def.singular)} ${id}`);
  requireOwner(ctx.key, record);
  return record;
}

function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

function locationOf(ctx: HandlerCtx, def: ResourceDef, id: string): Record<string, string> {
  return { Location: `${ctx.state.origin}/api/v2/${def.name}/${encodeURIComponent(id)}` };
}

/** A recording fetched by id carries a fresh transcript link (spec: Recording, transcript_url). */
function presentOne(ctx: HandlerCtx, def: ResourceDef, record: ApiRecord): ApiRecord {
  if (def.name !== 'recordings') return record;
  const url = record.has_transcript === true ? ctx.state.downloadOrigin + DOWNLOAD_PATH + ctx.state.tokens.issue(String(record.id)) : null;
  return { ...record, transcript_url: url };
}

/** Lists never carry transcript links. */
function presentInList(def: ResourceDef, record: ApiRecord): ApiRecord {
  return def.name === 'recordings' ? { ...record, transcript_url: null } : record;
}

/** `/{resource}`: list and create. */
export function collectionRoutes(def: ResourceDef): PathRoutes {
  const routes: PathRoutes = {};
  if (def.verbs.includes('list')) {
    routes.GET = {
      scope: scopeFor(def.name, 'read'),
      run: (ctx) => {
        const q = parseListQuery(ctx.query, def.name, ctx.state.cursors);
        const rows = filterIter(ctx.state.store.rows(def.name, q.afterSeq), (r) => canSee(ctx.key, r.data) && matches(r.data, q.filters));
        const page = paginate(rows, def.name, q.limit, q.afterSeq, ctx.state.cursors);
        return list(
          ctx.rm,
          page.items.map((r) => presentInList(def, r.data)),
          { end_cursor: page.endCursor, has_next_page: page.hasNextPage },
        );
      },
    };
  }
  if (def.verbs.includes('create')) {
    routes.POST = {
      scope: scopeFor(def.name, 'write'),
      run: (ctx) => {
        const fields = validateRecord(def, ctx.body(), false);
        const record = ctx.state.store.create(def.name, fields, ctx.key.user);
        return success(ctx.rm, record, 201, locationOf(ctx, def, String(record.id)));
      },
    };
  }
  return routes;
}

/** `/{resource}/{id}`: get, update (a merge) and delete. */
export function itemRoutes(def: ResourceDef, id: string): PathRoutes {
  const routes: PathRoutes = {};
  if (def.verbs.includes('get')) {
    routes.GET = { scope: scopeFor(def.name, 'read'), run: (ctx) => success(ctx.rm, presentOne(ctx, def, visibleRecord(ctx, def, id))) };
  }
  if (def.verbs.includes('update')) {
    routes.PATCH = {
      scope: scopeFor(def.name, actionForVerb('update')),
      run: (ctx) => {
        visibleRecord(ctx, def, id);
        const fields = validateRecord(def, ctx.body(), true);
        return success(ctx.rm, ctx.state.store.update(def.name, id, fields));
      },
    };
  }
  if (def.verbs.includes('delete')) {
    routes.DELETE = {
      scope: scopeFor(def.name, 'delete'),
      run: (ctx) => {
        visibleRecord(ctx, def, id);
        ctx.state.store.delete(def.name, id);
        return success(ctx.rm, { id, deleted: true });
      },
    };
  }
  return routes;
}

/** `/{resource}/batch`: up to 100 creates, one by one; failures are items, the status stays 200. */
export function batchRoutes(def: ResourceDef): PathRoutes {
  return {
    POST: {
      scope: scopeFor(def.name, 'write'),
      run: (ctx) => {
        const body = ctx.body();
        if (!Array.isArray(body)) throw invalidBody('A batch body must be a JSON array of objects');
        if (body.length === 0) throw invalidBody('A batch needs at least one item');
        if (body.length > BATCH_MAX) {
          throw new ApiError(422, 'BATCH_TOO_LARGE', `A batch holds at most ${BATCH_MAX} items, got ${body.length}`, [
            { max_items: BATCH_MAX, items: body.length },
          ]);
        }
        const items = body.map((item: unknown, index) => {
          const details = isPlainObject(item) ? recordIssues(def, item, false) : [{ field: '(item)', issue: 'must_be_object' }];
          if (details.length > 0) {
            const message = details.map((d) => `${String(d.field)}: ${String(d.issue).replace(/_/g, ' ')}`).join('; ');
            return { index, status: 'error' as const, error: { code: 'VALIDATION_FAILED', message, details } };
          }
          return { index, status: 'created' as const, data: ctx.state.store.create(def.name, item as ApiRecord, ctx.key.user) };
        });
        const succeeded = items.filter((i) => i.status === 'created').length;
        return {
          status: 200,
          headers: {},
          body: {
            object: 'batch',
            data: { items, summary: { total: items.length, succeeded, failed: items.length - succeeded } },
            meta: meta(ctx.rm),
          },
        };
      },
    },
  };
}
