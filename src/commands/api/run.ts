// `crm api METHOD PATH`: any request relative to the base URL, printing the whole envelope;
// with --paginate (GET only) the concatenated `data` arrays, streamed (CONTRACT §10).
import { UsageError } from '../../http/errors.js';
import type { HttpMethod } from '../../http/types.js';
import { safeJson } from '../../output/sanitize.js';
import { createListWriter, writeWhole } from '../../output/writers.js';
import type { Ctx } from '../context.js';
import type { ApiOptions } from './command.js';
import { buildBody } from '../shared/body.js';
import { printDryRun, type PlannedRequest } from '../shared/dry-run.js';

export const METHODS: readonly HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

export async function runApi(o: ApiOptions, ctx: Ctx): Promise<void> {
  const method = o.method.toUpperCase() as HttpMethod;
  if (!METHODS.includes(method)) throw new UsageError(`unknown method '${o.method}'; use one of ${METHODS.join(', ')}`);
  if (/^[a-z][a-z0-9+.-]*:/i.test(o.path) || o.path.startsWith('//')) {
    throw new UsageError(`the path must be relative to the base URL (e.g. /contacts), got '${o.path}'`);
  }
  const path = o.path.startsWith('/') ? o.path : `/${o.path}`;
  if (o.paginate && method !== 'GET') throw new UsageError('--paginate works only with GET');
  if (o.paginate && o.v1)
    throw new UsageError('--paginate follows version 2 cursors; version 1 queries page with nextCursor in the body');
  const hasBody = o.data !== undefined || o.set !== undefined;
  if (hasBody && (method === 'GET' || method === 'DELETE'))
    throw new UsageError(`${method} takes no body (--data/--set)`);
  const body = hasBody ? await buildBody(o, ctx.io.stdin) : undefined;
  const writes = method === 'POST' || method === 'PATCH';
  const req: PlannedRequest = {
    method,
    path,
    body,
    idempotencyKey: writes ? (o.idempotencyKey ?? true) : undefined,
    v1: o.v1,
  };
  if (o.dryRun) return printDryRun(ctx, req);
  const client = await ctx.client({ v1: o.v1 });
  if (o.paginate) {
    const [bare, qs = ''] = path.split('?', 2) as [string, string?];
    const query = Object.fromEntries(new URLSearchParams(qs));
    const { limit, cursor, ...rest } = query;
    const writer = createListWriter(ctx.format() === 'table' ? 'json' : ctx.format(), ctx.io.stdout, {
      fields: ctx.globals.fields,
    });
    const paging = { query: rest, limit: limit ? Number(limit) : 100, cursor, signal: ctx.signal };
    return writeWhole(writer, async () => {
      for await (const record of client.paginate(bare, paging)) await writer.write(record);
    });
  }
  const res = await client.request({ ...req, expect: o.v1 ? 'v1' : 'v2', signal: ctx.signal });
  // safeJson: the same JSON, with C1 and bidi characters written as \u escapes (a terminal would act on them)
  ctx.io.stdout.write(`${safeJson(res.body, 2)}\n`);
}
