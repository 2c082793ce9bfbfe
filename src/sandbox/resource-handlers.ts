// The version 2 collection routes: list, create, get, update, delete and batch-create of every
// resource of the table (docs/sandbox.md, "Paths", "Lists and pagination", "Batches").
import { BATCH_MAX, type ResourceDef, scopeFor } from '../api/resources.js';
import type { ApiRecord } from '../api/envelopes.js';
import { listPage, location, visibleRecord, type HandlerCtx, type PathRoutes } from './handler.js';
import { ApiError, invalidBody, list, meta, success } from './responses.js';
import { isPlainObject, recordIssues, validateRecord } from './validation.js';

/** Fetched by id, a record with a download (a recording) carries a fresh tokenized link; lists never do. */
function present(ctx: HandlerCtx | undefined, def: ResourceDef, record: ApiRecord): ApiRecord {
  const d = def.download;
  if (!d) return record;
  const url = ctx && record[d.flag] === true ? ctx.state.downloadOrigin + d.path + ctx.state.tokens.issue(String(record.id)) : null;
  return { ...record, [d.url]: url };
}

/** `/{resource}`: list and create. */
export function collectionRoutes(def: ResourceDef): PathRoutes {
  const routes: PathRoutes = {};
  if (def.verbs.includes('list')) {
    routes.GET = {
      scope: scopeFor(def.name, 'read'),
      run: (ctx) => {
        const page = listPage(
          ctx,
          def.name,
          (after) => ctx.state.store.rows(def.name, after),
          (r) => r.data,
        );
        return list(
          ctx.rm,
          page.items.map((r) => present(undefined, def, r.data)),
          page,
        );
      },
    };
  }
  if (def.verbs.includes('create')) {
    routes.POST = {
      scope: scopeFor(def.name, 'write'),
      run: (ctx) => {
        const record = ctx.state.store.create(def.name, validateRecord(def, ctx.body(), false), ctx.key.user);
        return success(ctx.rm, record, 201, location(ctx, def.name, String(record.id)));
      },
    };
  }
  return routes;
}

/** `/{resource}/{id}`: get, update (a merge) and delete. */
export function itemRoutes(def: ResourceDef, id: string): PathRoutes {
  const routes: PathRoutes = {};
  if (def.verbs.includes('get')) {
    routes.GET = { scope: scopeFor(def.name, 'read'), run: (ctx) => success(ctx.rm, present(ctx, def, visibleRecord(ctx, def, id))) };
  }
  if (def.verbs.includes('update')) {
    routes.PATCH = {
      scope: scopeFor(def.name, 'write'),
      run: (ctx) => {
        visibleRecord(ctx, def, id);
        return success(ctx.rm, ctx.state.store.update(def.name, id, validateRecord(def, ctx.body(), true)));
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
  const run = (ctx: HandlerCtx) => {
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
    const summary = { total: items.length, succeeded, failed: items.length - succeeded };
    return { status: 200, headers: {}, body: { object: 'batch', data: { items, summary }, meta: meta(ctx.rm) } };
  };
  return { POST: { scope: scopeFor(def.name, 'write'), run } };
}
