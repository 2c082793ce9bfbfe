// The version 2 routes from the resource table (docs/sandbox.md, "Paths", "Lists and pagination",
// "Batches"): only the table's verbs exist; links and associations are link-handlers.ts.
import { BATCH_MAX, findResource, scopeFor, type ResourceDef, type ScopeAction, type Verb } from '../api/resources.js';
import type { ApiRecord } from '../api/envelopes.js';
import { requireOwnerChange } from './auth.js';
import { listPage, location, visibleRecord, type HandlerCtx, type Method, type PathRoutes } from './handler.js';
import { associationRoutes, linkedChildRoutes, relationRoutes } from './link-handlers.js';
import { ApiError, invalidBody, meta, success } from './responses.js';
import type { Row } from './store.js';
import type { SandboxResponse } from './types.js';
import { UPDATABLE_READ_ONLY, isPlainObject, recordIssues, validateRecord } from './validation.js';

/** Fetched by id, a record with a download (a recording) carries a fresh tokenized link; in a list, null. */
function present(def: ResourceDef, record: ApiRecord, ctx?: HandlerCtx): ApiRecord {
  const d = def.download;
  if (!d) return record;
  const url =
    ctx && record[d.flag] === true
      ? ctx.state.downloadOrigin + d.path + ctx.state.tokens.issue(String(record.id))
      : null;
  return { ...record, [d.url]: url };
}

/** `record`: on an item, the record as the key may see it (403, 404 first) */
type Run = (ctx: HandlerCtx, def: ResourceDef, id: string, record: ApiRecord) => SandboxResponse;
const listed = (def: ResourceDef) => (row: Row) => present(def, row.data);

type VerbDef = { item: boolean; method: Method; action: ScopeAction; run: Run };
const verb = (item: boolean, method: Method, action: ScopeAction, run: Run): VerbDef => ({ item, method, action, run });

/** Each verb: on a record the key may see (`item`) or on the collection (`/{resource}`), its method, scope and run. */
const VERBS: Record<Verb, VerbDef> = {
  list: verb(false, 'GET', 'read', (ctx, def) =>
    listPage(ctx, def.name, (after) => ctx.state.store.rows(def.name, after), listed(def)),
  ),
  create: verb(false, 'POST', 'write', (ctx, def) => {
    const record = ctx.state.store.create(def.name, validateRecord(def, ctx.body(), false), ctx.key.user);
    return success(ctx.rm, record, 201, location(ctx, def.name, String(record.id)));
  }),
  get: verb(true, 'GET', 'read', (ctx, def, _id, record) => success(ctx.rm, present(def, record, ctx))),
  update: verb(true, 'PATCH', 'write', (ctx, def, id) => {
    const fields = validateRecord(def, ctx.body(), true);
    requireOwnerChange(ctx.key, fields[UPDATABLE_READ_ONLY] as string | undefined); // a non-empty string once validated
    return success(ctx.rm, ctx.state.store.update(def.name, id, fields));
  }),
  delete: verb(true, 'DELETE', 'delete', (ctx, def, id) =>
    success(ctx.rm, { id, deleted: ctx.state.store.delete(def.name, id) }),
  ),
};

function verbRoutes(def: ResourceDef, id?: string): PathRoutes {
  const routes: PathRoutes = {};
  for (const verb of def.verbs) {
    const { item, method, action, run } = VERBS[verb];
    if (item !== (id !== undefined)) continue;
    const record = (ctx: HandlerCtx) => (id === undefined ? {} : visibleRecord(ctx, def, id));
    routes[method] = { scope: scopeFor(def.name, action), run: (ctx) => run(ctx, def, id ?? '', record(ctx)) };
  }
  return routes;
}

/** `/{resource}/batch`: up to 100 creates, one by one; failures are items, the status stays 200. */
function batch(ctx: HandlerCtx, def: ResourceDef): SandboxResponse {
  const body = ctx.body();
  if (!Array.isArray(body)) throw invalidBody('A batch body must be a JSON array of objects');
  if (body.length === 0) throw invalidBody('A batch needs at least one item');
  if (body.length > BATCH_MAX) {
    const details = [{ max_items: BATCH_MAX, items: body.length }];
    throw new ApiError(422, 'BATCH_TOO_LARGE', `A batch holds at most ${BATCH_MAX} items, got ${body.length}`, details);
  }
  const items = body.map((item: unknown, index) => {
    const details = isPlainObject(item)
      ? recordIssues(def, item, false)
      : [{ field: '(item)', issue: 'must_be_object' }];
    if (details.length > 0) {
      const message = details.map((d) => `${String(d.field)}: ${String(d.issue).replace(/_/g, ' ')}`).join('; ');
      return { index, status: 'error' as const, error: { code: 'VALIDATION_FAILED', message, details } };
    }
    return {
      index,
      status: 'created' as const,
      data: ctx.state.store.create(def.name, item as ApiRecord, ctx.key.user),
    };
  });
  const succeeded = items.filter((i) => i.status === 'created').length;
  const summary = { total: items.length, succeeded, failed: items.length - succeeded };
  return { status: 200, headers: {}, body: { object: 'batch', data: { items, summary }, meta: meta(ctx.rm) } };
}

/** The routes of a path below `/api/v2` (already split and decoded), or undefined (404). */
export function resolveV2(segments: string[]): PathRoutes | undefined {
  if (segments.some((s) => s === '')) return undefined;
  const [name, id, relation, childId, ...rest] = segments;
  const def = name === undefined ? undefined : findResource(name);
  if (!def || rest.length > 0) return undefined;
  let routes: PathRoutes | undefined;
  if (id === 'batch' && def.batch && relation === undefined)
    routes = { POST: { scope: scopeFor(def.name, 'write'), run: (ctx) => batch(ctx, def) } };
  else if (relation === undefined) routes = verbRoutes(def, id);
  else {
    const link = def.links?.find((l) => l.relation === relation);
    const assoc = def.associations?.find((a) => a.name === relation);
    if (link)
      routes = childId === undefined ? relationRoutes(def, id!, link) : linkedChildRoutes(def, id!, link, childId);
    else if (assoc && childId === undefined) routes = associationRoutes(def, id!, assoc);
  }
  return routes && Object.keys(routes).length > 0 ? routes : undefined;
}
