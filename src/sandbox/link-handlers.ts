// Links (`/{parent}/{id}/{relation}`, their fields from the resource table) and a meeting's single deal
// and company (`/meetings/{id}/deal|company`): docs/sandbox.md, "Paths".
import {
  type Association,
  type LinkRelation,
  type ResourceDef,
  type ResourceName,
  scopeFor,
} from '../api/resources.js';
import type { ApiRecord } from '../api/envelopes.js';
import { requireOwner } from './auth.js';
import { listPage, location, resource, visibleRecord, type HandlerCtx, type PathRoutes } from './handler.js';
import { ApiError, notFound, success } from './responses.js';
import { failed, objectWith, requireIdField } from './validation.js';

/** The existing record a body field names, among `resources`; 404 when there is none. */
function referencedRecord(ctx: HandlerCtx, resources: readonly ResourceName[], field: string, id: string) {
  const found = ctx.state.store.find(resources, id);
  if (!found)
    throw new ApiError(404, 'NOT_FOUND', `No ${resources.join(' or ')} record ${id} (${field})`, [
      { field, issue: 'not_found', id },
    ]);
  requireOwner(ctx.key, found.data);
  return found;
}

/** The checked extra fields of a link body (type, supervisor, record_type) and the child's kinds. */
function linkExtras(link: LinkRelation, body: ApiRecord): { extra: ApiRecord; resources: readonly ResourceName[] } {
  const extra: ApiRecord = {};
  let resources = link.childResources;
  for (const field of link.fields ?? []) {
    const value = body[field.name];
    if (value === undefined) continue;
    if (field.values && (typeof value !== 'string' || !field.values.includes(value))) {
      throw failed([{ field: field.name, issue: 'invalid_enum', allowed: field.values }]);
    }
    if (typeof value !== 'string') throw failed([{ field: field.name, issue: 'must_be_string' }]);
    if (field.namesChild) resources = resources.filter((r) => resource(r).singular === value);
    extra[field.name] = value;
  }
  return { extra, resources };
}

/** `/{parent}/{id}/{relation}`: list the linked records, or link one more. */
export function relationRoutes(parent: ResourceDef, id: string, link: LinkRelation): PathRoutes {
  const listScope = `${parent.name}/${id}/${link.relation}`;
  const listLinks = (ctx: HandlerCtx) => {
    visibleRecord(ctx, parent, id);
    const rows = ctx.state.store.links(parent.name, id, link.relation).flatMap(({ seq, data }) => {
      const child = ctx.state.store.get(data.child_type, data.child_id);
      return child ? [{ seq, data: child, link: data }] : [];
    });
    const withLink = (r: (typeof rows)[number]) => ({ ...r.data, link: r.link });
    return listPage(ctx, listScope, () => rows, withLink);
  };
  const addLink = (ctx: HandlerCtx) => {
    visibleRecord(ctx, parent, id);
    const body = objectWith(ctx.body(), [link.childKey, ...(link.fields ?? []).map((f) => f.name)]);
    const childId = requireIdField(body, link.childKey);
    const { extra, resources } = linkExtras(link, body);
    const child = referencedRecord(ctx, resources, link.childKey, childId);
    const linked = ctx.state.store.link(parent.name, id, link.relation, child.resource, childId, extra);
    // A relink is a no-op (spec): the same 201 + Location, the existing link unchanged (its id and created_at).
    return success(ctx.rm, linked, 201, location(ctx, parent.name, id, link.relation, childId));
  };
  return {
    GET: { scope: scopeFor(parent.name, 'read'), run: listLinks },
    POST: { scope: scopeFor(parent.name, 'write'), run: addLink },
  };
}

/** `/{parent}/{id}/{relation}/{child_id}`: unlink. */
export function linkedChildRoutes(parent: ResourceDef, id: string, link: LinkRelation, childId: string): PathRoutes {
  const unlink = (ctx: HandlerCtx) => {
    visibleRecord(ctx, parent, id);
    const child = ctx.state.store.find(link.childResources, childId);
    if (child) requireOwner(ctx.key, child.data);
    const removed = ctx.state.store.unlink(parent.name, id, link.relation, childId);
    if (!removed) throw notFound(`A link from ${parent.singular} ${id} to ${childId}`);
    return success(ctx.rm, { ...removed, deleted: true });
  };
  return { DELETE: { scope: scopeFor(parent.name, 'write'), run: unlink } };
}

/** `/meetings/{id}/deal` and `/meetings/{id}/company`: get, set (PUT) and clear. */
export function associationRoutes(parent: ResourceDef, id: string, assoc: Association): PathRoutes {
  const field = assoc.bodyKey;
  const current = (ctx: HandlerCtx): ApiRecord | null => {
    const targetId = visibleRecord(ctx, parent, id)[field];
    const record = typeof targetId === 'string' ? ctx.state.store.get(assoc.target, targetId) : undefined;
    if (!record) return null; // unset (or its record deleted)
    // another user's record: 403 for a user-bound key, never `data: null` ("no deal set")
    requireOwner(ctx.key, record);
    return record;
  };
  const set = (ctx: HandlerCtx) => {
    visibleRecord(ctx, parent, id);
    const targetId = requireIdField(objectWith(ctx.body(), [field]), field);
    const record = referencedRecord(ctx, [assoc.target], field, targetId).data;
    ctx.state.store.update(parent.name, id, { [field]: targetId });
    return success(ctx.rm, record);
  };
  const clear = (ctx: HandlerCtx) => {
    visibleRecord(ctx, parent, id);
    ctx.state.store.update(parent.name, id, { [field]: null });
    return success(ctx.rm, null);
  };
  const write = scopeFor(parent.name, 'write');
  return {
    GET: { scope: scopeFor(parent.name, 'read'), run: (ctx) => success(ctx.rm, current(ctx)) },
    PUT: { scope: write, run: set },
    DELETE: { scope: write, run: clear },
  };
}
