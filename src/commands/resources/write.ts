// `crm RESOURCE create|update`: POST /{resource} or PATCH /{resource}/{id}, always with an
// Idempotency-Key so a retry can never create twice (CONTRACT §4, §5).
import { findResource } from '../../api/resources.js';
import { UsageError } from '../../http/errors.js';
import { writeRecord } from '../../output/writers.js';
import type { Ctx } from '../context.js';
import { buildBody } from '../shared/body.js';
import { printDryRun, type PlannedRequest } from '../shared/dry-run.js';
import { recordPath } from '../../http/url.js';
import type { WriteOptions } from './command.js';
import { outputOptions } from '../shared/output-options.js';

export async function runWrite(o: WriteOptions, ctx: Ctx): Promise<void> {
  const body = await buildBody(o, ctx.io.stdin);
  if (Object.keys(body).length === 0) {
    const res = findResource(o.resource);
    const example = res?.required[0] ? ` (e.g. --set ${res.required[0]}=…)` : '';
    throw new UsageError(`nothing to ${o.verb}: give the fields with --data or --set${example}`);
  }
  const req: PlannedRequest = {
    method: o.verb === 'create' ? 'POST' : 'PATCH',
    path: o.verb === 'create' ? `/${o.resource}` : recordPath(o.resource, o.id!),
    body,
    idempotencyKey: o.idempotencyKey ?? true,
  };
  if (o.dryRun) return printDryRun(ctx, req);
  const res = await (await ctx.client()).request<{ data: Record<string, unknown> }>({ ...req, expect: 'success' });
  await writeRecord(ctx.format(), ctx.io.stdout, res.body.data, outputOptions(ctx));
}
