// Relationship sub-resources (`/{parent}/{id}/{relation}`) and a meeting's single deal and
// company (`/meetings/{id}/deal|company`): docs/sandbox.md, "Paths".
import {
  DEAL_CONTACT_TYPES,
  NOTE_RECORD_TYPES,
  type Association,
  type LinkRelation,
  type ResourceDef,
  type ResourceName,
  findResource,
  scopeFor,
} from '../api/resources.js';
import type { ApiRecord } from '../api/envelopes.js';
import { canSee, requireOwner } from './auth.js';
import { paginate } from './cursor.js';
import { ApiError, notFound } from './errors.js';
import { matches, parseListQuery, type HandlerCtx, type PathRoutes } from './handler.js';
import { list, success } from './responses.js';
import { visibleRecord } from './resource-handlers.js';
import { failed, requireIdField, requireObject } from './validation.js';

const RECORD_TYPE_RESOURCE: Record<(typeof NOTE_RECORD_TYPES)[number], ResourceName> = {
  contact: 'contacts',
  company: 'companies',
  deal: 'deals',
};

/** Fields a link body may carry besides the child's id. */
function optionalLinkFields(link: LinkRelation): string[] {
  if (link.childKey === 'contact_id' && link.relation === 'contacts') return ['type', 'supervisor'];
  if (link.childKey === 'record_id') return ['record_type'];
  return [];
}

function rejectUnknownFields(body: ApiRecord, allowed: string[]): void {
  const unknown = Object.keys(body).filter((k) => !allowed.includes(k));
  if (unknown.length > 0) throw failed(unknown.map((field) => ({ field, issue: 'unknown_field' })));
}

/** The existing record a body field names, among `resources`; 404 when there is none. */
function referencedRecord(ctx: HandlerCtx, resources: readonly ResourceName[], field: string, id: string) {
  const found = ctx.state.store.find(resources, id);
  if (!found) throw new ApiError(404, 'NOT_FOUND', `No ${resources.join(' or ')} record ${id} (${field})`, [{ field, issue: 'not_found', id }]);
  requireOwner(ctx.key, found.data);
  return found;
}

/** The checked extra fields of a link body (type, supervisor, record_type) and the child's kinds. */
function linkExtras(link: LinkRelation, body: ApiRecord): { extra: ApiRecord; resources: readonly ResourceName[] } {
  const extra: ApiRecord = {};
  let resources = link.childResources;
  if (body.type !== undefined) {
    if (typeof body.type !== 'string' || !(DEAL_CONTACT_TYPES as readonly string[]).includes(body.type)) {
      throw failed([{ field: 'type', issue: 'invalid_enum', allowed: DEAL_CONTACT_TYPES }]);
    }
    extra.type = body.type;
  }
  if (body.supervisor !== undefined) {
    if (typeof body.supervisor !== 'string') throw failed([{ field: 'supervisor', issue: 'must_be_string' }]);
    extra.supervisor = body.supervisor;
  }
  if (body.record_type !== undefined) {
    const type = body.record_type;
    if (typeof type !== 'string' || !(type in RECORD_TYPE_RESOURCE)) {
      throw failed([{ field: 'record_type', issue: 'invalid_enum', allowed: NOTE_RECORD_TYPES }]);
    }
    resources = [RECORD_TYPE_RESOURCE[type as keyof typeof RECORD_TYPE_RESOURCE]];
    extra.record_type = type;
  }
  return { extra, resources };
}

/** `/{parent}/{id}/{relation}`: list the linked records, or link one more. */
export function relationRoutes(parent: ResourceDef, id: string, link: LinkRelation): PathRoutes {
  const scope = `${parent.name}/${id}/${link.relation}`;
  return {
    GET: {
      scope: scopeFor(parent.name, 'read'),
      run: (ctx) => {
        visibleRecord(ctx, parent, id);
        const q = parseListQuery(ctx.query, scope, ctx.state.cursors);
        const rows = ctx.state.store
          .links(parent.name, id, link.relation)
          .map((l) => ({ seq: l.seq, link: l.data, child: ctx.state.store.get(l.data.child_type, l.data.child_id) }))
          .filter((r) => r.child !== undefined && canSee(ctx.key, r.child) && matches(r.child, q.filters));
        const page = paginate(rows, scope, q.limit, q.afterSeq, ctx.state.cursors);
        return list(
          ctx.rm,
          page.items.map((r) => ({ ...r.child, link: r.link })),
          { end_cursor: page.endCursor, has_next_page: page.hasNextPage },
        );
      },
    },
    POST: {
      scope: scopeFor(parent.name, 'write'),
      run: (ctx) => {
        visibleRecord(ctx, parent, id);
        const body = requireObject(ctx.body());
        rejectUnknownFields(body, [link.childKey, ...optionalLinkFields(link)]);
        const childId = requireIdField(body, link.childKey);
        const { extra, resources } = linkExtras(link, body);
        const child = referencedRecord(ctx, resources, link.childKey, childId);
        const result = ctx.state.store.link(parent.name, id, link.relation, child.resource, childId, extra);
        // A relink is a no-op (spec): the same 201 + Location, with the existing link unchanged
        // (its id and original created_at, earlier than meta.timestamp).
        const location = `${ctx.state.origin}/api/v2/${parent.name}/${encodeURIComponent(id)}/${link.relation}/${encodeURIComponent(childId)}`;
        return success(ctx.rm, result.link, 201, { Location: location });
      },
    },
  };
}

/** `/{parent}/{id}/{relation}/{child_id}`: unlink. */
export function linkedChildRoutes(parent: ResourceDef, id: string, link: LinkRelation, childId: string): PathRoutes {
  return {
    DELETE: {
      scope: scopeFor(parent.name, 'write'),
      run: (ctx) => {
        visibleRecord(ctx, parent, id);
        const child = ctx.state.store.find(link.childResources, childId);
        if (child) requireOwner(ctx.key, child.data);
        const removed = ctx.state.store.unlink(parent.name, id, link.relation, childId);
        if (!removed) throw notFound(`A link from ${parent.singular} ${id} to ${childId}`);
        return success(ctx.rm, { ...removed, deleted: true });
      },
    },
  };
}

/** `/meetings/{id}/deal` and `/meetings/{id}/company`: get, set (PUT) and clear. */
export function associationRoutes(parent: ResourceDef, id: string, assoc: Association): PathRoutes {
  const target = findResource(assoc.target)!;
  const field = assoc.bodyKey;
  const current = (ctx: HandlerCtx): ApiRecord | null => {
    const meeting = visibleRecord(ctx, parent, id);
    const targetId = meeting[field];
    const record = typeof targetId === 'string' ? ctx.state.store.get(target.name, targetId) : undefined;
    if (!record) return null; // unset (or its record deleted)
    // Set, but to another user's record: 403 FORBIDDEN_RECORD for a user-bound key, never `data:
    // null`, which would read as "no deal set".
    requireOwner(ctx.key, record);
    return record;
  };
  return {
    GET: { scope: scopeFor(parent.name, 'read'), run: (ctx) => success(ctx.rm, current(ctx)) },
    PUT: {
      scope: scopeFor(parent.name, 'write'),
      run: (ctx) => {
        visibleRecord(ctx, parent, id);
        const body = requireObject(ctx.body());
        rejectUnknownFields(body, [field]);
        const targetId = requireIdField(body, field);
        const record = referencedRecord(ctx, [target.name], field, targetId).data;
        ctx.state.store.update(parent.name, id, { [field]: targetId });
        return success(ctx.rm, record);
      },
    },
    DELETE: {
      scope: scopeFor(parent.name, 'write'),
      run: (ctx) => {
        visibleRecord(ctx, parent, id);
        ctx.state.store.update(parent.name, id, { [field]: null });
        return success(ctx.rm, null);
      },
    },
  };
}
