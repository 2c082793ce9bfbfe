// `crm v1 people query` and `crm v1 interactions query`: POST {v1}/{kind}/query, following the
// top-level `nextCursor` with --all (interactions only when the server sends one).
import { createListWriter } from '../../output/writers.js';
import { ServerError } from '../../http/errors.js';
import { PageGuard } from '../../http/page-guard.js';
import type { Ctx } from '../context.js';
import { crmCommand } from '../shared/command-line.js';
import { outputOptions } from '../shared/output-options.js';
import { findV1Query } from '../../api/v1.js';
import { deprecationNotice } from './notice.js';
import type { V1QueryOptions } from './command.js';

interface V1QueryBody {
  success: true;
  nextCursor?: string | null;
  data: Record<string, unknown>;
}

export async function runV1Query(o: V1QueryOptions, ctx: Ctx): Promise<void> {
  const op = findV1Query(o.kind)!;
  deprecationNotice(ctx, op);
  const client = await ctx.client({ v1: true });
  const filter = Object.fromEntries(Object.entries(o.filter).filter(([, v]) => v !== undefined));
  const writer = createListWriter(ctx.format(), ctx.io.stdout, outputOptions(ctx, { columns: op.columns }));
  let cursor = o.cursor;
  let more: string | undefined;
  const guard = new PageGuard(cursor);
  for (;;) {
    const body: Record<string, unknown> = {};
    if (cursor !== undefined) body.cursor = cursor;
    if (o.limit !== undefined) body.limit = o.limit;
    if (Object.keys(filter).length) body.filter = filter;
    const res = await client.request<V1QueryBody>({
      method: 'POST',
      path: `/${o.kind}/query`,
      body,
      idempotencyKey: true,
      expect: 'v1',
      signal: ctx.signal,
    });
    const records = res.body.data?.[o.kind];
    if (!Array.isArray(records)) {
      throw new ServerError(`version 1 ${o.kind}/query answered without data.${o.kind} (HTTP ${res.status})`, {
        status: res.status,
        requestId: res.requestId,
      });
    }
    for (const record of records) await writer.write(record as Record<string, unknown>);
    const next = res.body.nextCursor;
    if (!next) {
      // the spec's interactions/query has no cursor: a full page may mean there is more to see
      if (o.all && op.nextCursor === 'optional' && records.length >= (o.limit ?? 25)) {
        ctx.warn(
          `Warning: the server sent no nextCursor, so --all cannot page further; there may be more than these ${records.length} interactions (narrow with --company-id or --contact-id).`,
        );
      }
      break;
    }
    if (!o.all) {
      more = next;
      break;
    }
    cursor = guard.next({ records: records.length, more: true, next }, res.requestId);
  }
  await writer.end();
  if (more !== undefined && ctx.format() === 'table') {
    // the filters again (companyId → --company-id), or the cursor would page another query
    const flags = Object.entries(filter).flatMap(([k, v]) => [`--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`, String(v)]);
    const limit = o.limit === undefined ? [] : ['--limit', String(o.limit)];
    ctx.warn(`More results: ${crmCommand(ctx.globals, ['v1', o.kind, 'query', ...flags, ...limit, '--cursor', more])} (or --all)`);
  }
}
