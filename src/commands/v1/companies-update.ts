// `crm v1 companies update ID`: PATCH {v1}/companies/{companyId}, fields checked against the spec first.
import { V1_COMPANY_FIELDS, V1_COMPANY_UPDATE } from '../../api/v1.js';
import { UsageError } from '../../http/errors.js';
import { writeRecord } from '../../output/writers.js';
import { nearestName } from '../../util/nearest.js';
import type { Ctx } from '../context.js';
import { buildBody } from '../shared/body.js';
import { printDryRun, type PlannedRequest } from '../shared/dry-run.js';
import { outputOptions } from '../shared/output-options.js';
import { pathSegment } from '../../http/url.js';
import type { V1CompanyUpdateOptions } from './command.js';
import { deprecationNotice } from './query.js';

export async function runV1CompanyUpdate(o: V1CompanyUpdateOptions, ctx: Ctx): Promise<void> {
  deprecationNotice(ctx, V1_COMPANY_UPDATE);
  const body = await buildBody(o, ctx.io.stdin);
  checkCompanyUpdate(body);
  const path = `/companies/${pathSegment(o.companyId, 'company id')}`;
  const req: PlannedRequest = { method: 'PATCH', path, body, idempotencyKey: o.idempotencyKey ?? true, v1: true };
  if (o.dryRun) return printDryRun(ctx, req);
  const res = await (
    await ctx.client({ v1: true })
  ).request<{ data: Record<string, unknown> }>({ ...req, expect: 'v1' });
  await writeRecord(ctx.format(), ctx.io.stdout, res.body.data, outputOptions(ctx));
}

/** Every problem with the body, one line each; empty when it is valid. */
export function companyUpdateProblems(body: Record<string, unknown>): string[] {
  return Object.entries(body).flatMap(([field, value]) => {
    const type = V1_COMPANY_FIELDS[field];
    const got = JSON.stringify(value);
    if (!type) {
      const near = nearestName(field.replace(/_/g, ''), Object.keys(V1_COMPANY_FIELDS));
      return [`${field}: not a version 1 company field${near ? ` (did you mean ${near}?)` : ''}`];
    }
    if (type === 'string' && typeof value !== 'string') return [`${field}: must be a string, got ${got}`];
    if (type === 'integer' && !Number.isInteger(value))
      return [`${field}: must be an integer (use --set ${field}:=1998), got ${got}`];
    if (type === 'string[]' && !(Array.isArray(value) && value.every((v) => typeof v === 'string')))
      return [`${field}: must be an array of strings (use --set '${field}:=["a","b"]'), got ${got}`];
    return [];
  });
}

export function checkCompanyUpdate(body: Record<string, unknown>): void {
  const allowed = Object.keys(V1_COMPANY_FIELDS).join(', ');
  if (Object.keys(body).length === 0)
    throw new UsageError(`nothing to update: give fields with --data or --set (allowed: ${allowed})`);
  const problems = companyUpdateProblems(body);
  if (problems.length)
    throw new UsageError(`invalid version 1 company update:\n  - ${problems.join('\n  - ')}`, {
      hint: `Allowed fields: ${allowed}.`,
    });
}
