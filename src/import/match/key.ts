// The key a row and a record are matched on (`--match`, CONTRACT §7b). One function for both: a row's
// key is its cells of the match fields (after --map and types), a record's the server's values. Pure; and UnseenFields,
// the match fields no record read has had (a misspelt --match).
import { RawNumber } from '../../json/exact-json.js';

import { isCaseFreeField, isEmailField } from '../../api/resources.js';
export { isCaseFreeField, isEmailField };

/**
 * A value's text for matching, or undefined when it cannot be a key (null, absent, blank, a list or object):
 * text trimmed and NFC-normalised (an email or domain field lower-cased too); a number as its shortest text (`1.0` is `1`).
 */
export function keyPart(field: string, value: unknown): string | undefined {
  switch (typeof value) {
    case 'string': {
      const t = value.trim();
      if (t === '') return undefined;
      // lower-case first, NFC last: the text is NFC whatever the case mapping did
      return (isCaseFreeField(field) ? t.toLowerCase() : t).normalize('NFC');
    }
    case 'number':
      return Number.isFinite(value) ? String(value) : undefined;
    case 'boolean':
      return String(value);
    default:
      // a number no double holds, as the server wrote it
      return value instanceof RawNumber ? value.text : undefined;
  }
}

/**
 * The key of a row or record on `fields`, or undefined when one part is not usable. One field: its part
 * as is; several: the JSON of the parts, so no part's text can pass for a separator.
 */
export function matchKey(fields: readonly string[], record: Record<string, unknown>): string | undefined {
  const parts: string[] = [];
  for (const field of fields) {
    const part = keyPart(field, record[field]); // an inherited `constructor` is a function: no part
    if (part === undefined) return undefined;
    parts.push(part);
  }
  return parts.length === 1 ? parts[0] : JSON.stringify(parts);
}

/**
 * The match fields no record seen so far has (a misspelt `--match`: every key undefined), and the first record's
 * fields for its "did you mean". A new array only when a field is first seen: a field no record has costs no
 * allocation per record read.
 */
export class UnseenFields {
  unseen: string[];
  first: string[] | undefined;

  constructor(fields: readonly string[]) {
    this.unseen = [...fields];
  }

  see(record: object): void {
    this.first ??= Object.keys(record);
    if (this.unseen.some((f) => Object.hasOwn(record, f)))
      this.unseen = this.unseen.filter((f) => !Object.hasOwn(record, f));
  }
}
