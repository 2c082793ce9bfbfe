// `crm links …`: list/add/remove on the link sub-resources, get/set/clear on a meeting's deal or
// company (CONTRACT §6). Pairs are checked against the resource table before anything is sent.
import { writeRecord } from '../../output/writers.js';
import { safeJson, sanitizeForTerminal } from '../../output/sanitize.js';
import type { Ctx } from '../context.js';
import { readData } from '../shared/body.js';
import { printDryRun, type PlannedRequest } from '../shared/dry-run.js';
import { segment } from '../shared/paths.js';
import { printList } from '../shared/print-list.js';
import { linkBody, linkListColumns, resolveAssociation, resolveLink } from './plan.js';
import type { LinkOptions } from './command.js';
import { UsageError } from '../../http/errors.js';
import { outputOptions } from '../shared/output-options.js';

export async function runLinks(o: LinkOptions, ctx: Ctx): Promise<void> {
  const base = `/${segment(o.parent, 'parent')}/${segment(o.id)}`;
  switch (o.verb) {
    case 'list':
      return printList(ctx, {
        columns: linkListColumns(resolveLink(o.parent, o.relation)),
        // a supervisor is a contact's id in practice: shown whole or not at all
        whole: ['link.supervisor'],
        path: `${base}/${o.relation}`,
        limit: o.limit,
        cursor: o.cursor,
        all: Boolean(o.all),
        max: o.max,
        nextWords: ['links', 'list', o.parent, o.id, o.relation],
      });
    case 'add': {
      const link = resolveLink(o.parent, o.relation);
      const assumed = linkBody(o, link);
      const body = o.data !== undefined ? await readData(o.data, ctx.io.stdin) : assumed;
      const req: PlannedRequest = { method: 'POST', path: `${base}/${o.relation}`, body, idempotencyKey: true };
      if (o.dryRun) return printDryRun(ctx, req);
      const client = await ctx.client();
      const started = ctx.clock.now();
      const res = await client.request<{ data: Record<string, unknown> }>({ ...req, expect: 'success' });
      const elapsed = ctx.clock.now() - started;
      const what = `${o.parent} ${o.id} → ${o.relation} ${o.childId}`;
      ctx.warn(
        alreadyLinked(res.status, res.body, elapsed)
          ? `Already linked: ${sanitizeForTerminal(what)} (no change).`
          : `Linked ${sanitizeForTerminal(what)}.`,
      );
      return writeRecord(ctx.format(), ctx.io.stdout, res.body.data, outputOptions(ctx));
    }
    case 'remove': {
      resolveLink(o.parent, o.relation);
      const req: PlannedRequest = { method: 'DELETE', path: `${base}/${o.relation}/${segment(o.childId ?? '')}` };
      if (o.dryRun) return printDryRun(ctx, req);
      const client = await ctx.client();
      const res = await client.request({ ...req, expect: 'success' });
      if (res.goneOnRetry) ctx.warn("The first attempt's answer was lost; its retry found the link already removed.");
      const what = `${o.parent} ${o.id} → ${o.relation} ${o.childId}`;
      if (ctx.format() === 'table') ctx.io.stdout.write(`Unlinked ${sanitizeForTerminal(what)}.\n`);
      else ctx.io.stdout.write(`${safeJson({ unlinked: true, parent: o.parent, id: o.id, relation: o.relation, child_id: o.childId })}\n`);
      return;
    }
    case 'get':
    case 'set':
    case 'clear':
      return association(o, ctx, base);
  }
}

async function association(o: LinkOptions, ctx: Ctx, base: string): Promise<void> {
  const assoc = resolveAssociation(o.parent, o.relation);
  const path = `${base}/${assoc.name}`;
  let req: PlannedRequest;
  if (o.verb === 'set') {
    if (!o.childId) throw new UsageError(`links set needs the ${assoc.name} id`);
    const body = o.data !== undefined ? await readData(o.data, ctx.io.stdin) : { [assoc.bodyKey]: o.childId };
    req = { method: 'PUT', path, body };
  } else {
    req = { method: o.verb === 'get' ? 'GET' : 'DELETE', path };
  }
  if (o.dryRun) return printDryRun(ctx, req);
  const client = await ctx.client();
  const res = await client.request<{ data: Record<string, unknown> | null }>({ ...req, expect: 'success' });
  const data = res.body.data;
  const format = ctx.format();
  if (o.verb === 'clear') {
    if (format === 'table') ctx.io.stdout.write(`Cleared the ${assoc.name} of meeting ${sanitizeForTerminal(o.id)}.\n`);
    else ctx.io.stdout.write('null\n');
    return;
  }
  if (data === null || data === undefined) {
    ctx.io.stdout.write(format === 'table' ? `no ${assoc.name} set\n` : 'null\n');
    return;
  }
  return writeRecord(format, ctx.io.stdout, data, outputOptions(ctx));
}

/**
 * Relinking is a no-op that answers like a new link (spec: 201). It shows in the link itself: a
 * link made by this request was created after the server received it, i.e. no earlier than the
 * response's `meta.timestamp` minus the time the request took (both on the server's clock, so
 * clock skew does not matter); one created before that already existed.
 */
export function alreadyLinked(status: number, body: { data?: unknown; meta?: { timestamp?: unknown } }, elapsedMs: number): boolean {
  if (status === 200) return true;
  const created = Date.parse(stringOr((body.data as { created_at?: unknown } | null)?.created_at));
  const answered = Date.parse(stringOr(body.meta?.timestamp));
  return Number.isFinite(created) && Number.isFinite(answered) && created < answered - elapsedMs - 50;
}

/** `v` when it is a string (a timestamp), else '' (Date.parse gives NaN: not judged). */
function stringOr(v: unknown): string {
  return typeof v === 'string' ? v : '';
}
