// `crm v1 people query` and `crm v1 interactions query`: POST {v1}/{kind}/query, following the
// top-level `nextCursor` with --all (interactions only when the server sends one).
import { createListWriter, writeWhole } from '../../output/writers.js';
import { ServerError } from '../../http/errors.js';
import { PageGuard } from '../../http/page-guard.js';
import type { Ctx } from '../context.js';
import { crmCommand } from '../shared/command-line.js';
import { outputOptions } from '../shared/output-options.js';
import { findV1Query, type V1Operation } from '../../api/v1.js';
import type { V1QueryOptions } from './command.js';

/** The one-line notice every version 1 command prints on stderr (not with --quiet). */
export function deprecationNotice(ctx: Ctx, op: V1Operation): void {
  const same = op.kind === op.resource ? '' : ` (version 1 ${op.kind} are version 2 ${op.resource})`;
  ctx.warn(`Notice: the version 1 API is deprecated; use 'crm ${op.resource} ${op.instead}'${same} instead.`);
}

type V1Page = { nextCursor?: string | null; data: Record<string, unknown> };

export async function runV1Query(o: V1QueryOptions, ctx: Ctx): Promise<void> {
  const op = findV1Query(o.kind)!;
  deprecationNotice(ctx, op);
  const client = await ctx.client({ v1: true });
  const filter = definedOnly(o.filter);
  const writer = createListWriter(ctx.format(), ctx.io.stdout, outputOptions(ctx, { columns: op.columns }));
  const guard = new PageGuard(o.cursor);
  let [cursor, next] = [o.cursor, undefined as string | undefined];
  await writeWhole(writer, async () => {
    for (;;) {
      const body = definedOnly({ cursor, limit: o.limit, filter: Object.keys(filter).length ? filter : undefined });
      const path = `/${o.kind}/query`;
      const res = await client.request<V1Page>({
        method: 'POST',
        path,
        body,
        idempotencyKey: true,
        expect: 'v1',
        signal: ctx.signal,
      });
      const records = res.body.data?.[o.kind];
      if (!Array.isArray(records)) {
        const message = `version 1 ${o.kind}/query answered without data.${o.kind} (HTTP ${res.status})`;
        throw new ServerError(message, { status: res.status, requestId: res.requestId });
      }
      for (const record of records) await writer.write(record as Record<string, unknown>);
      next = res.body.nextCursor || undefined;
      // the spec's interactions/query has no cursor: a full page may mean there is more to see
      if (!next && o.all && op.nextCursor === 'optional' && records.length >= (o.limit ?? 25)) {
        const n = records.length;
        ctx.warn(
          `Warning: the server sent no nextCursor, so --all cannot page further; there may be more than these ${n} interactions (narrow with --company-id or --contact-id).`,
        );
      }
      if (!next || !o.all) break;
      cursor = guard.next({ records: records.length, more: true, next }, res.requestId);
    }
  });
  if (next !== undefined && ctx.format() === 'table') {
    // the filters again (companyId → --company-id), or the cursor would page another query
    const flags = Object.entries(filter).flatMap(([k, v]) => [
      `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`,
      String(v),
    ]);
    const limit = o.limit === undefined ? [] : ['--limit', String(o.limit)];
    ctx.warn(
      `More results: ${crmCommand(ctx.globals, ['v1', o.kind, 'query', ...flags, ...limit, '--cursor', next])} (or --all)`,
    );
  }
}

const definedOnly = (o: object): Record<string, unknown> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
