// A record's or a row's match key (CONTRACT §7b "Keys"): its values of the match fields, text
// trimmed, an email field lower-cased, numbers and booleans as their text; no key when any part is
// missing or empty. (A stand-in of the key helper's version, with the same signature.)
import type { ApiRecord } from '../../api/envelopes.js';

const isEmailField = (field: string): boolean => /(^|_)email$/i.test(field);

function part(field: string, value: unknown): string | undefined {
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (text === '') return undefined;
  return isEmailField(field) ? text.toLowerCase() : text;
}

export function matchKey(fields: readonly string[], record: ApiRecord): string | undefined {
  const parts: string[] = [];
  for (const field of fields) {
    const p = part(field, record[field]);
    if (p === undefined) return undefined;
    parts.push(p);
  }
  return JSON.stringify(parts);
}
