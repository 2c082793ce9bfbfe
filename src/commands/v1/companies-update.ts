// `crm v1 companies update ID`: PATCH {v1}/companies/{companyId}, fields checked first.
import { V1_COMPANY_UPDATE } from '../../api/v1.js';
import { writeRecord } from '../../output/writers.js';
import type { Ctx } from '../context.js';
import { buildBody } from '../shared/body.js';
import { printDryRun, type PlannedRequest } from '../shared/dry-run.js';
import { segment } from '../shared/paths.js';
import { checkCompanyUpdate } from './company-fields.js';
import { deprecationNotice } from './notice.js';
import type { V1CompanyUpdateOptions } from './command.js';
import { outputOptions } from '../shared/output-options.js';

export async function runV1CompanyUpdate(o: V1CompanyUpdateOptions, ctx: Ctx): Promise<void> {
  deprecationNotice(ctx, V1_COMPANY_UPDATE);
  const body = await buildBody(o, ctx.io.stdin);
  checkCompanyUpdate(body);
  const req: PlannedRequest = {
    method: 'PATCH',
    path: `/companies/${segment(o.companyId, 'company id')}`,
    body,
    idempotencyKey: o.idempotencyKey ?? true,
    v1: true,
  };
  if (o.dryRun) return printDryRun(ctx, req);
  const client = await ctx.client({ v1: true });
  const res = await client.request<{ data: Record<string, unknown> }>({ ...req, expect: 'v1' });
  await writeRecord(ctx.format(), ctx.io.stdout, res.body.data, outputOptions(ctx));
}
