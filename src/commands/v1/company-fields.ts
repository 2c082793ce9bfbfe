// Checks a version 1 company update against the spec's field list before anything is sent.
import { V1_COMPANY_FIELDS } from '../../api/v1.js';
import { UsageError } from '../../http/errors.js';

/** Every problem with the body, one line each; empty when it is valid. */
export function companyUpdateProblems(body: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const known = Object.keys(V1_COMPANY_FIELDS);
  for (const [field, value] of Object.entries(body)) {
    const type = V1_COMPANY_FIELDS[field];
    if (!type) {
      const near = known.find((k) => k.toLowerCase() === field.toLowerCase().replace(/_/g, ''));
      problems.push(`${field}: not a version 1 company field${near ? ` (did you mean ${near}?)` : ''}`);
    } else if (type === 'string' && typeof value !== 'string') {
      problems.push(`${field}: must be a string, got ${JSON.stringify(value)}`);
    } else if (type === 'integer' && !Number.isInteger(value)) {
      problems.push(`${field}: must be an integer (use --set ${field}:=1998), got ${JSON.stringify(value)}`);
    } else if (type === 'string[]' && !(Array.isArray(value) && value.every((v) => typeof v === 'string'))) {
      problems.push(`${field}: must be an array of strings (use --set '${field}:=["a","b"]'), got ${JSON.stringify(value)}`);
    }
  }
  return problems;
}

export function checkCompanyUpdate(body: Record<string, unknown>): void {
  if (Object.keys(body).length === 0) {
    throw new UsageError(`nothing to update: give fields with --data or --set (allowed: ${Object.keys(V1_COMPANY_FIELDS).join(', ')})`);
  }
  const problems = companyUpdateProblems(body);
  if (problems.length) {
    throw new UsageError(`invalid version 1 company update:\n  - ${problems.join('\n  - ')}`, {
      hint: `Allowed fields: ${Object.keys(V1_COMPANY_FIELDS).join(', ')}.`,
    });
  }
}
