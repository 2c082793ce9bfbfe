// A text cell as a typed value: as the kind a record holds (a reconcile's update: its own record; a create or an
// `--update`: the kinds the collection's records hold, FieldKinds). Pure but for columnTyping's one read.
import { parseJson, RawNumber, stringifyJson } from '../../json/exact-json.js';
import { setOwn } from '../../util/set-own.js';
import type { ImportDeps } from '../types.js';
import { convertCell, type HeaderMapping, type RowResult } from './header.js';
import { INVALID_CODES } from '../shapes.js';

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

  /** The records seen hold `field` as different kinds (`true` in one, `"true"` in another). */
  mixed(field: string): boolean {
    return this.kinds.get(field) === 'mixed';
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

/** Each typed field and a value of its kind (FieldKinds.sample), or MIXED: JSON, so that a journal pins it for its job's resume. */
export type Typing = ReadonlyArray<readonly [field: string, sample: unknown]>;

/**
 * An `--update`'s field its records hold as different kinds: a cell JSON writes as a number, boolean, list
 * or object (an export's `true`) may be that value or text, and an update does not read its row's own
 * record to tell (a reconcile by id does), so the row is not sent: never a guess that turns a record's
 * `true` into `"true"`.
 */
export const MIXED = '(mixed kinds)';

/**
 * A create's or update's untyped CSV columns, sent as the kind the collection's records hold each field as (one
 * page, read once) when the cell is written as JSON writes it: an exported `37`, `false`, `{"city":…}` is that
 * value, `00501` stays text. Empty when no column is typed. The journal keeps it: a resumed job types its cells
 * as its first run did (the chunks, and so their keys, are the same), whatever the records hold by then.
 */
export async function columnTyping(
  mapping: HeaderMapping | undefined,
  knownFields: ImportDeps['knownFields'],
  update = false,
): Promise<Typing> {
  const text = mapping?.columns.filter((c) => !c.ignored && c.type === 'string').map((c) => c.field) ?? [];
  const known = text.length > 0 ? await knownFields?.() : undefined;
  if (!known?.sample) return [];
  return text.flatMap((f) => {
    if (update && known.mixed?.(f)) return [[f, MIXED] as const];
    const sample = known.sample!(f);
    return sample === undefined ? [] : [[f, sample] as const];
  });
}

/** A valid row's untyped cells typed as Typing says; invalid when a cell could be either of its field's kinds (MIXED), saying how to tell. */
export function typedRow(r: RowResult, kinds: Typing): RowResult {
  if (!r.ok) return r;
  for (const [field, sample] of kinds) {
    const cell = Object.hasOwn(r.record, field) ? r.record[field] : undefined;
    if (typeof cell !== 'string') continue;
    if (sample !== MIXED) {
      setOwn(r.record, field, typedByKind(cell, sample));
      continue;
    }
    const kind = Object.entries(HEADER_TYPE_OF).find(([k]) => asHeldType(cell, SAMPLES[k], true) !== undefined)?.[1];
    if (kind !== undefined)
      return {
        ...{ ok: false, code: INVALID_CODES.value, field },
        reason:
          `${field} ${JSON.stringify(cell.trim())} may be a ${kind} or text: the CRM's records hold ${field} as both, and an ` +
          `--update does not read the row's record to tell; reconcile by id instead (--match id reads each record), or ` +
          `type the column in the header (${field}:${kind}, or ${field}:string)`,
      };
  }
  return r;
}
/** A kind of FieldKinds as a header's `:type` says it. */
const HEADER_TYPE_OF: Record<string, string> = { number: 'number', boolean: 'boolean', list: 'json', object: 'json' };
