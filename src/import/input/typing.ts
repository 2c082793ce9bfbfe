// A text cell as a typed value: as the kind a record holds (a reconcile's update: its own record; a create or an
// `--update`: the kinds the collection's records hold, FieldKinds). Pure but for columnTyping's one read.
import type { ApiRecord } from '../../api/envelopes.js';
import { parseJson, RawNumber, stringifyJson } from '../../json/exact-json.js';
import { setOwn } from '../../util/set-own.js';
import type { ImportDeps } from '../types.js';
import { convertCell, type HeaderMapping } from './header.js';

/** The JSON kind of each field the records seen hold (`mixed` when they differ): what a text cell is typed as without a record of its own. */
export class FieldKinds {
  private readonly kinds = new Map<string, string>();

  see(record: Record<string, unknown>, fields: Iterable<string> = Object.keys(record)): void {
    for (const field of fields) {
      const v = Object.hasOwn(record, field) ? record[field] : undefined;
      if (v === null || v === undefined) continue;
      const [had, kind] = [
        this.kinds.get(field),
        v instanceof RawNumber ? 'number' : Array.isArray(v) ? 'list' : typeof v,
      ];
      if (had !== kind) this.kinds.set(field, had === undefined ? kind : 'mixed');
    }
  }

  /** A value of the kind every record seen holds `field` as (a number: 0, a list: []), when they agree. */
  sample(field: string): unknown {
    return SAMPLES[this.kinds.get(field) ?? ''];
  }
}
const SAMPLES: Record<string, unknown> = { number: 0, boolean: false, list: [], object: {} };

/** A text cell of a row with no record of its own (an update), as the kind its field's records hold when it is written as JSON writes one; else the cell as it is. */
export function typedByKind(cell: string, sample: unknown): unknown {
  return asHeldType(cell, sample, true) ?? cell;
}

/** `"42.0"` → 42 when the record holds a number, `"TRUE"` → true for a boolean, a JSON object or list for one; else undefined. */
export function asHeldType(cell: string, held: unknown, strict = false): unknown {
  const t = cell.trim();
  if (typeof held === 'number' || held instanceof RawNumber) {
    // a JSON number (`1e400` too: kept to its digits), else (an update) text that reads as one
    const json = /^-?\d/.test(t) ? jsonNumber(t) : undefined;
    if (json !== undefined) return !strict || stringifyJson(json) === t ? json : undefined;
    const v = convertCell(t, 'number');
    return v.ok && !strict ? v.value : undefined;
  }
  if (typeof held === 'boolean') {
    const l = strict ? t : t.toLowerCase();
    return l === 'true' ? true : l === 'false' ? false : undefined;
  }
  if (typeof held !== 'object' || held === null || !/^[[{]/.test(t)) return undefined;
  const v = convertCell(t, 'json');
  const same =
    v.ok && typeof v.value === 'object' && v.value !== null && Array.isArray(v.value) === Array.isArray(held);
  return same ? v.value : undefined;
}

/** `t` as JSON reads it when it is a JSON number (a RawNumber when no double holds it); else undefined. */
function jsonNumber(t: string): unknown {
  try {
    const v = parseJson(t);
    return typeof v === 'number' || v instanceof RawNumber ? v : undefined;
  } catch {
    return undefined;
  }
}

/** Each typed field and a value of its kind (FieldKinds.sample): JSON, so that a journal pins it for its job's resume. */
export type Typing = ReadonlyArray<readonly [field: string, sample: unknown]>;

/**
 * A create's or update's untyped CSV columns, sent as the kind the collection's records hold each field as (one
 * page, read once) when the cell is written as JSON writes it: an exported `37`, `false`, `{"city":…}` is that
 * value, `00501` stays text. Empty when no column is typed. The journal keeps it: a resumed job types its cells
 * as its first run did (the chunks, and so their keys, are the same), whatever the records hold by then.
 */
export async function columnTyping(
  mapping: HeaderMapping | undefined,
  knownFields: ImportDeps['knownFields'],
): Promise<Typing> {
  const text = mapping?.columns.filter((c) => !c.ignored && c.type === 'string').map((c) => c.field) ?? [];
  const known = text.length > 0 ? await knownFields?.() : undefined;
  if (!known?.sample) return [];
  return text.flatMap((f) => (known.sample!(f) === undefined ? [] : [[f, known.sample!(f)] as const]));
}

export function typeCells(record: ApiRecord, kinds: Typing): void {
  for (const [field, sample] of kinds) {
    const cell = Object.hasOwn(record, field) ? record[field] : undefined;
    if (typeof cell === 'string') setOwn(record, field, typedByKind(cell, sample));
  }
}
