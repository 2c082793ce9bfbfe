// STAND-IN (lead's branch): replaced by the match helper's key.ts at merge.
export const isEmailField = (field: string): boolean => field === 'email' || field.endsWith('_email');
export function keyPart(field: string, value: unknown): string | undefined {
  if (typeof value === 'string') {
    const t = value.trim().normalize('NFC');
    return t === '' ? undefined : isEmailField(field) ? t.toLowerCase() : t;
  }
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value === 'boolean') return String(value);
  return undefined;
}
export function matchKey(fields: readonly string[], record: Record<string, unknown>): string | undefined {
  const parts: string[] = [];
  for (const f of fields) {
    const p = keyPart(f, record[f]);
    if (p === undefined) return undefined;
    parts.push(p);
  }
  return JSON.stringify(parts);
}
