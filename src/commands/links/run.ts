// `crm links …`: list/add/remove on the link sub-resources, get/set/clear on a meeting's deal or
// company (CONTRACT §6). Pairs are checked against the resource table before anything is sent.
import { UsageError } from '../../http/errors.js';
import { safeJson, sanitizeForTerminal } from '../../output/sanitize.js';
import { writeRecord } from '../../output/writers.js';
import type { Ctx } from '../context.js';
import { readData } from '../shared/body.js';
import { printDryRun, type PlannedRequest } from '../shared/dry-run.js';
import { outputOptions } from '../shared/output-options.js';
import { pathSegment } from '../../http/url.js';
import { printList } from '../shared/print-list.js';
import type { BatchOptions } from '../batch/command.js';
import { linkOperation } from '../../import/index.js';
import type { LinkOptions } from './command.js';

type OneLink = Extract<LinkOptions, { id: string }>;
import { linkBody, linkListColumns, resolveAssociation, resolveImportPair, resolveLink } from './plan.js';

export async function runLinks(o: LinkOptions, ctx: Ctx): Promise<void> {
  if (o.verb === 'import' && !/\.(ndjson|jsonl|json)$/i.test(o.file ?? '') && o.inputFormat !== 'ndjson') {
    resolveImportPair(o.parent, o.relation);
    const { runKeyed } = await import('./keyed.js');
    if (await runKeyed(o, ctx)) return;
  }
  if (o.remove || o.plan !== undefined)
    throw new UsageError('--remove and --plan read a CSV file of pairs, not NDJSON');
  if (o.verb === 'import' || o.file !== undefined) {
    const batch = linkFileBatch(o);
    const { runBatch } = await import('../batch/run.js');
    return runBatch(batch, ctx);
  }
  if (o.verb === 'add') fileFlagsNeedFile(o);
  const base = `/${pathSegment(o.parent, 'parent')}/${pathSegment(o.id)}`;
  if (o.verb === 'get' || o.verb === 'set' || o.verb === 'clear') return association(o, ctx, base);
  const path = `${base}/${o.relation}`;
  const link = resolveLink(o.parent, o.relation);
  if (o.verb === 'list') {
    // a supervisor is a contact's id in practice: shown whole or not at all
    const page = { limit: o.limit, cursor: o.cursor, all: Boolean(o.all), max: o.max };
    const nextWords = ['links', 'list', o.parent, o.id, o.relation];
    return printList(ctx, { columns: linkListColumns(link), whole: ['link.supervisor'], path, ...page, nextWords });
  }
  const what = sanitizeForTerminal(`${o.parent} ${o.id} → ${o.relation} ${o.childId}`);
  if (o.verb === 'add') {
    const assumed = linkBody(o, link); // checks the flags even when --data replaces it
    const body = o.data !== undefined ? await readData(o.data, ctx.io.stdin) : assumed;
    const req: PlannedRequest = { method: 'POST', path, body, idempotencyKey: true };
    if (o.dryRun) return printDryRun(ctx, req);
    const client = await ctx.client();
    const started = ctx.clock.now();
    const res = await client.request<{ data: Record<string, unknown> }>({ ...req, expect: 'success' });
    ctx.warn(
      alreadyLinked(res.status, res.body, ctx.clock.now() - started)
        ? `Already linked: ${what} (no change).`
        : `Linked ${what}.`,
    );
    return writeRecord(ctx.format(), ctx.io.stdout, res.body.data, outputOptions(ctx));
  }
  const req: PlannedRequest = { method: 'DELETE', path: `${path}/${pathSegment(o.childId ?? '')}` };
  if (o.dryRun) return printDryRun(ctx, req);
  const res = await (await ctx.client()).request({ ...req, expect: 'success' });
  if (res.goneOnRetry) ctx.warn("The first attempt's answer was lost; its retry found the link already removed.");
  if (ctx.format() === 'table') ctx.io.stdout.write(`Unlinked ${what}.\n`);
  else
    ctx.io.stdout.write(
      `${safeJson({ unlinked: true, parent: o.parent, id: o.id, relation: o.relation, child_id: o.childId })}\n`,
    );
}

async function association(o: OneLink, ctx: Ctx, base: string): Promise<void> {
  const assoc = resolveAssociation(o.parent, o.relation);
  const path = `${base}/${assoc.name}`;
  let req: PlannedRequest = { method: o.verb === 'get' ? 'GET' : 'DELETE', path };
  if (o.verb === 'set') {
    if (!o.childId) throw new UsageError(`links set needs the ${assoc.name} id`);
    req = {
      method: 'PUT',
      path,
      body: o.data !== undefined ? await readData(o.data, ctx.io.stdin) : { [assoc.bodyKey]: o.childId },
    };
  }
  if (o.dryRun) return printDryRun(ctx, req);
  const res = await (
    await ctx.client()
  ).request<{ data: Record<string, unknown> | null }>({ ...req, expect: 'success' });
  const [data, table] = [res.body.data, ctx.format() === 'table'];
  if (o.verb === 'clear')
    ctx.io.stdout.write(table ? `Cleared the ${assoc.name} of meeting ${sanitizeForTerminal(o.id)}.\n` : 'null\n');
  else if (data === null || data === undefined) ctx.io.stdout.write(table ? `no ${assoc.name} set\n` : 'null\n');
  else await writeRecord(ctx.format(), ctx.io.stdout, data, outputOptions(ctx));
}

/** The flags of one link, refused with --file (a row's own columns say them; its key is its cells). */
const ONE_LINK_FLAGS = [
  ['type', 'type'],
  ['supervisor', 'supervisor'],
  ['recordType', 'record-type'],
  ['data', 'data'],
] as const;

/** `links add` without --file: a child id, and none of the flags of a run over a file. */
function fileFlagsNeedFile(o: LinkOptions): void {
  if (o.childId === undefined) throw new UsageError('links add needs the child id, or --file FILE to link many');
  const given = {
    map: o.map,
    rejects: o.rejects,
    results: o.results,
    strict: o.strict,
    'input-format': o.inputFormat,
    encoding: o.encoding,
  };
  const flags = Object.entries(given).flatMap(([flag, v]) => (v === undefined ? [] : [`--${flag}`]));
  if (o.resume === false) flags.push('--no-resume');
  if (flags.length > 0)
    throw new UsageError(`${flags.join(', ')} ${flags.length === 1 ? 'applies' : 'apply'} only with --file`);
}

/**
 * `links import` (a file of pairs) and `links add --file` (one parent, a file of children) as the
 * batch engine's options, the links its operation. A fixed parent is part of the resource, which
 * the rows' Idempotency-Keys and journal are derived from: its rows name only the children.
 */
export function linkFileBatch(o: LinkOptions): BatchOptions {
  let parentId: string | undefined;
  if (o.verb === 'import') resolveImportPair(o.parent, o.relation);
  else {
    if (o.childId !== undefined)
      throw new UsageError(`give the child id or --file, not both (got ${sanitizeForTerminal(o.childId)} and --file)`);
    for (const [key, flag] of ONE_LINK_FLAGS) {
      if (o[key] === undefined) continue;
      const instead = flag === 'data' ? 'each row is its own link' : `give the rows a ${flag.replace('-', '_')} column`;
      throw new UsageError(`--${flag} applies to one link, not with --file: ${instead}`);
    }
    resolveLink(o.parent, o.relation);
    parentId = o.id;
    pathSegment(parentId, 'parent id');
  }
  const { map, concurrency = 4, rejects, results, dryRun, strict, resume = true, inputFormat, encoding } = o;
  return {
    ...{ map, concurrency, rejects, results, dryRun, strict, resume, inputFormat, encoding, chunkSize: 1 },
    resource: [o.parent, parentId, o.relation].filter((w) => w !== undefined).join('/'),
    file: o.file!,
    argv: o.argv,
    operation: linkOperation(o.parent, o.relation, parentId),
  };
}

/**
 * Relinking is a no-op that answers like a new link (spec: 201); a link made by this request was
 * created no earlier than `meta.timestamp` minus the request's time (both the server's clock).
 */
export function alreadyLinked(
  status: number,
  body: { data?: unknown; meta?: { timestamp?: unknown } },
  elapsedMs: number,
): boolean {
  if (status === 200) return true;
  const time = (v: unknown) => Date.parse(typeof v === 'string' ? v : ''); // NaN: not judged
  const created = time((body.data as { created_at?: unknown } | null)?.created_at);
  const answered = time(body.meta?.timestamp);
  return Number.isFinite(created) && Number.isFinite(answered) && created < answered - elapsedMs - 50;
}
