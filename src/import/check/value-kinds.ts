// The kinds a file's values can be sent as, per field (issue 29): what the column check may suggest a column for.
// A `Zip` column of postal codes is never offered a true/false field (`vip`): following the hint would write text
// into a field whose records hold booleans. Seen in the check's one pass over the file (check.ts, Tally).
import type { ApiRecord } from '../../api/envelopes.js';
import { RawNumber } from '../../json/exact-json.js';
import { asHeldType } from '../input/typing.js';
import { MAX_NDJSON_KEYS } from '../shapes.js';

/** Each kind with a value of it (as FieldKinds.sample gives one; text: undefined), one bit each. */
const KINDS: ReadonlyArray<readonly [kind: string, sample: unknown]> = [
  ['text', undefined],
  ['number', 0],
  ['boolean', false],
  ['list', []],
  ['object', {}],
];
const ALL = (1 << KINDS.length) - 1;
const TEXT = 1;
const NUMBER = 2;

/** The bit of the kind `v` is (a sample's, or a typed value's): text for a string or anything else. */
function kindBit(v: unknown): number {
  const kind =
    typeof v === 'number' || v instanceof RawNumber
      ? 'number'
      : typeof v === 'boolean'
        ? 'boolean'
        : Array.isArray(v)
          ? 'list'
          : typeof v === 'object' && v !== null
            ? 'object'
            : 'text';
  return 1 << KINDS.findIndex(([k]) => k === kind);
}

/** An integer as JSON writes it (up to 15 digits: a double holds it as written): a number, read without a parse. */
const PLAIN_INTEGER = /^(?:0|-?[1-9]\d{0,14})$/;

/**
 * The kinds of `left` a value can be sent as: a typed value (`:number`, NDJSON) only as its own; a text cell as
 * text, or as a number, boolean, list or object when the send would read it as one (typedByKind: `37`, `false`,
 * `["a"]`; `02139` and `yes` stay text).
 */
function kindsOf(value: unknown, left: number): number {
  if (typeof value !== 'string') return kindBit(value);
  if (PLAIN_INTEGER.test(value)) return TEXT | (left & NUMBER);
  let bits = TEXT;
  for (let i = 1; i < KINDS.length; i++) {
    const bit = 1 << i;
    if (left & bit && asHeldType(value, KINDS[i]![1], true) !== undefined) bits |= bit;
  }
  return bits;
}

/** Per field of a file's records, the kinds every one of its values can be sent as. */
export class ValueKinds {
  private readonly left = new Map<string, number>();

  /** a valid row's record, as it will be sent: each field keeps the kinds this value can be too */
  see(record: ApiRecord): void {
    for (const field of Object.keys(record)) {
      const value = record[field];
      const had = this.left.get(field);
      // text seen, and text again: nothing to read (most columns, from their first row on)
      if (had === TEXT && typeof value === 'string') continue;
      // an empty cell is no value (a CSV's is left out already); null clears, whatever the field's kind
      if (had === 0 || value === null || (typeof value === 'string' && value.trim() === '')) continue;
      // bounded as Tally bounds an NDJSON file's keys (whose columns are never refused as a typo: columnsVerdict)
      if (had === undefined && this.left.size >= MAX_NDJSON_KEYS) continue;
      this.left.set(field, (had ?? ALL) & kindsOf(value, had ?? ALL));
    }
  }

  /**
   * Every value of `field` in the file can be sent as the kind the records hold another field as (`sample`:
   * FieldKinds.sample's; undefined, a text field or one whose records disagree: as text). A field with no value
   * seen fits any.
   */
  fits(field: string, sample: unknown): boolean {
    return ((this.left.get(field) ?? ALL) & kindBit(sample)) !== 0;
  }

  /** Every value of `field` was a text cell that reads as one same other kind too (`8`, `true`, `["x"]`): that kind (`number`, …). */
  alsoReadsAs(field: string): string | undefined {
    const left = this.left.get(field);
    if (left === undefined || left === ALL || (left & TEXT) === 0) return undefined;
    const other = KINDS.findIndex(([,], i) => i > 0 && (left & (1 << i)) !== 0);
    return other > 0 ? KINDS[other]![0] : undefined;
  }
}
