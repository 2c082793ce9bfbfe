// STAND-IN (lead's branch): replaced by the match helper's classify.ts at merge.
import { isEmailField } from './key.js';
export interface Change {
  field: string;
  before: unknown;
  after: unknown;
}
export type Action = 'create' | 'update' | 'unchanged' | 'ambiguous';
const same = (f: string, a: unknown, b: unknown): boolean => {
  if (typeof a === 'string' && typeof b === 'string')
    return isEmailField(f) ? a.trim().toLowerCase() === b.trim().toLowerCase() : a.trim() === b.trim();
  if (typeof a === 'string' && (typeof b === 'number' || typeof b === 'boolean')) return a.trim() === String(b);
  return JSON.stringify(a) === JSON.stringify(b);
};
export function diffRecord(row: Record<string, unknown>, record: Record<string, unknown>, skip: readonly string[]): Change[] {
  const out: Change[] = [];
  for (const [field, after] of Object.entries(row)) {
    if (skip.includes(field)) continue;
    if (typeof after === 'string' && after.trim() === '') continue;
    const before = record[field] ?? null;
    if (after === null ? before !== null : !same(field, after, before)) out.push({ field, before, after });
  }
  return out;
}
export function classify(
  row: Record<string, unknown>,
  candidates: readonly { id: string; record: Record<string, unknown> }[],
  skip: readonly string[],
): { action: Action; id?: string; changes: Change[]; candidates?: string[] } {
  if (candidates.length === 0) return { action: 'create', changes: [] };
  if (candidates.length > 1) return { action: 'ambiguous', changes: [], candidates: candidates.map((c) => c.id).sort() };
  const changes = diffRecord(row, candidates[0]!.record, skip);
  return { action: changes.length > 0 ? 'update' : 'unchanged', id: candidates[0]!.id, changes };
}
export const changeText = (c: Change): string => `${c.field}: ${JSON.stringify(c.before)} → ${JSON.stringify(c.after)}`;
export const changesText = (cs: readonly Change[]): string => cs.map(changeText).join('; ');
