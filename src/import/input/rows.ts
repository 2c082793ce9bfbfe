// One input row → the record sent to the API, or the reason it cannot be sent. Pure.
import type { ApiRecord } from '../../api/envelopes.js';
import { READ_ONLY_FIELDS } from '../../api/resources.js';
import { convertCell, isIgnoredHeader, type ColumnMap, type HeaderMapping } from './header.js';
import { setOwn } from '../../util/set-own.js';
import type { ReadRow } from './input-row.js';
import type { RowOperation } from '../types.js';

/** Codes written to `_error_code` for rows that were never sent. */
export const INVALID_CODES = {
  columns: 'INVALID_COLUMN_COUNT',
  value: 'INVALID_VALUE',
  json: 'INVALID_JSON',
  empty: 'EMPTY_ROW',
} as const;

export type RowResult = { ok: true; record: ApiRecord } | { ok: false; code: string; reason: string; field: string };

const invalid = (code: string, reason: string, field = ''): RowResult => ({ ok: false, code, reason, field });

const MAX_SHOWN = 60;

/** A value quoted for a message, shortened so a 1 MB cell does not make a 1 MB message. */
export function showValue(value: string): string {
  const s = value.length > MAX_SHOWN ? `${value.slice(0, MAX_SHOWN)}…` : value;
  return JSON.stringify(s);
}

/** Cells of a CSV row → record; wrong cell count or a cell not fitting its type is invalid. */
export function rowToRecord(cells: readonly string[], header: HeaderMapping): RowResult {
  if (cells.length !== header.width) {
    return invalid(INVALID_CODES.columns, `expected ${header.width} columns, got ${cells.length}`);
  }
  const record: ApiRecord = {};
  for (const col of header.columns) {
    if (col.ignored) continue;
    const cell = cells[col.index] ?? '';
    const v = convertCell(cell, col.type);
    if (!v.ok) return invalid(INVALID_CODES.value, `column ${JSON.stringify(col.column)}: ${showValue(cell)} ${v.reason}`, col.field);
    if (!v.empty) setOwn(record, col.field, v.value);
  }
  if (Object.keys(record).length === 0) return invalid(INVALID_CODES.empty, 'the row has no value to import');
  return { ok: true, record };
}

/** An NDJSON object → record: `_` keys left out, `--map` renames, null kept. */
export function objectToRecord(obj: unknown, maps: ColumnMap = new Map(), keep: readonly string[] = []): RowResult {
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) {
    const kind = obj === null ? 'null' : Array.isArray(obj) ? 'an array' : typeof obj;
    return invalid(INVALID_CODES.json, `expected a JSON object, got ${kind}`);
  }
  const record: ApiRecord = {};
  for (const [key, value] of Object.entries(obj as Record<string, unknown>)) {
    const mapped = maps.get(key);
    if (mapped === '') continue;
    if (mapped === undefined && (isIgnoredHeader(key) || (READ_ONLY_FIELDS.includes(key) && !keep.includes(key)))) continue;
    const field = mapped ?? key;
    if (Object.hasOwn(record, field)) return invalid(INVALID_CODES.value, `two keys fill the field "${field}"`, field);
    setOwn(record, field, value);
  }
  if (Object.keys(record).length === 0) return invalid(INVALID_CODES.empty, 'the object has no field to import');
  return { ok: true, record };
}

/** A read row → the record to send, or why it is invalid (the reader's own error first, then the operation's check). */
export function classifyRow(
  row: ReadRow,
  mapping: HeaderMapping | undefined,
  maps: ColumnMap,
  op?: RowOperation,
  keep: readonly string[] = op?.keep ?? [],
): RowResult {
  if (row.error) return invalid(row.error.code, row.error.reason);
  const r = row.cells ? rowToRecord(row.cells, mapping!) : objectToRecord(row.json, maps, keep);
  if (!r.ok || !op) return r;
  const plan = op.plan(r.record);
  return plan.ok ? r : plan;
}
