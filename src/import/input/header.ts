// Header row → field mapping (CONTRACT §7): normalised names, `:type` suffixes, `--map`, `_` columns ignored; and a
// row → the record sent to the API, or the reason it cannot be sent. Pure.
import { isEmailField, READ_ONLY_FIELDS } from '../../api/resources.js';
import { UsageError } from '../../http/errors.js';
import { unguardFormula } from '../../output/formula-guard.js';
import { HEADER_TYPES } from '../../output/csv.js';
import { exactNumber, parseJson, RawNumber } from '../../json/exact-json.js';
import type { PlanColumn } from '../types.js';
import type { ApiRecord } from '../../api/envelopes.js';
import { setOwn } from '../../util/set-own.js';
import { nearestTypo } from '../../util/nearest.js';
import type { ReadRow } from './reader.js';
import { INVALID_CODES, type RowOperation } from '../shapes.js';

export const FIELD_TYPES = HEADER_TYPES;
export type FieldType = (typeof FIELD_TYPES)[number];

export interface ColumnSpec {
  readonly index: number;
  /** the header cell as written in the file (BOM removed) */
  readonly column: string;
  readonly field: string;
  readonly type: FieldType;
  /** `_`-prefixed or mapped to nothing: present in the file, never sent */
  readonly ignored: boolean;
  /** ignored because its field is one the server sets (`id`, `created_at`, …: READ_ONLY_FIELDS) */
  readonly readOnly?: boolean;
  /** named by a `--map` (its field is the user's word) */
  readonly mapped?: boolean;
}

export interface HeaderMapping {
  /** number of columns in the header row: every data row must have exactly this many */
  readonly width: number;
  readonly columns: readonly ColumnSpec[];
}

/** `--map` values, keyed by the original column name (as written, or without its type suffix). */
export type ColumnMap = ReadonlyMap<string, string>;

/** `First Name` → `first_name`; NFC and combining marks keep `Café` one field however the é is spelled. */
export function normalizeFieldName(name: string): string {
  return name
    .trim()
    .toLowerCase()
    .normalize('NFC')
    .replace(/[^\p{L}\p{M}\p{N}]+/gu, '_')
    .replace(/^_+|_+$/g, '');
}

/**
 * A header naming its field exactly, as a JSON string (`"firstName"`, `"tags:list":json`): what crm writes for a field
 * a plain header would name otherwise (an undo file's `"First Name":json`). Undefined for any other header.
 */
export function exactFieldName(name: string): string | undefined {
  if (!/^".*"$/s.test(name)) return undefined;
  try {
    const v: unknown = JSON.parse(name);
    return typeof v === 'string' && v !== '' ? v : undefined;
  } catch {
    return undefined;
  }
}

/** The header that names `field` exactly: as it is when a plain header reads back as it, else as a JSON string. */
export function fieldHeader(field: string, type?: FieldType): string {
  const plain = normalizeFieldName(field) === field && splitType(field).name === field;
  return `${plain ? field : JSON.stringify(field)}${type ? `:${type}` : ''}`;
}

/** `amount:number` → {name: 'amount', type: 'number'}; an unknown suffix is part of the name. */
export function splitType(header: string): { name: string; type: FieldType; typed: boolean } {
  const m = /^(.*?)\s*:\s*([A-Za-z]+)\s*$/s.exec(header);
  if (m) {
    const t = m[2]!.toLowerCase();
    if ((FIELD_TYPES as readonly string[]).includes(t)) return { name: m[1]!, type: t as FieldType, typed: true };
  }
  return { name: header, type: 'string', typed: false };
}

/** `--map` flags (`column=field`, `column=field:type`, `column=` to drop a column) → ColumnMap. */
export function parseColumnMaps(flags: readonly string[] = []): Map<string, string> {
  const out = new Map<string, string>();
  for (const flag of flags) {
    const eq = flag.lastIndexOf('=');
    if (eq <= 0) throw new UsageError(`--map ${JSON.stringify(flag)}: expected column=field`);
    const column = flag.slice(0, eq).trim();
    if (column === '') throw new UsageError(`--map ${JSON.stringify(flag)}: the column name is empty`);
    if (out.has(column)) throw new UsageError(`--map: column ${JSON.stringify(column)} is mapped twice`);
    out.set(column, flag.slice(eq + 1).trim());
  }
  return out;
}

/** `--map "E-mail Address=email"` (single-quoted where double quotes would not keep it as it is). */
export function mapFlag(column: string, field: string): string {
  const value = `${column}=${field}`;
  return `--map ${/^[^"$`\\!]*$/.test(value) ? `"${value}"` : `'${value.replace(/'/g, `'\\''`)}'`}`;
}

/** True for a header that is ignored on import: `_line`, `_error_code`, any `_…` column. */
export function isIgnoredHeader(header: string): boolean {
  return header.trim().startsWith('_');
}

/**
 * The headers whose name, as written, is not the field it would be made into (`Email`, `First Name`, `__proto__`,
 * `firstName`): only for those does the field the CRM's records name that way matter (parseHeader's `known`).
 */
function namesToCheck(cells: readonly string[]): boolean {
  return cells.some((c) => {
    const name = splitType(c.trim()).name.trim();
    return name !== '' && normalizeFieldName(name) !== name && exactFieldName(name) === undefined;
  });
}

/** parseHeader with the fields the CRM's records have, read (`knownFields`: one page) only for a header not a field's name. */
export async function mapHeader(
  cells: readonly string[],
  maps: ColumnMap,
  keep: readonly string[] | undefined,
  knownFields?: () => Promise<ReadonlySet<string> | undefined>,
): Promise<HeaderMapping> {
  return parseHeader(cells, maps, keep, namesToCheck(cells) ? await knownFields?.() : undefined);
}

/**
 * Map a header row; a UsageError (exit 2) for an empty name, a clash, or a `--map` of a missing column. `known`: the
 * fields the CRM's records have — a header naming one exactly as written is that field (`firstName`, `__proto__`,
 * a name in NFD: an export reads back as it was written), else it is normalised (`First Name` → `first_name`).
 */
export function parseHeader(
  cells: readonly string[],
  maps: ColumnMap = new Map(),
  keep: readonly string[] = [],
  known?: ReadonlySet<string>,
): HeaderMapping {
  const columns: ColumnSpec[] = [];
  const used = new Map<string, ColumnSpec>();
  const unusedMaps = new Set(maps.keys());
  cells.forEach((column, index) => {
    const trimmed = column.trim();
    const own = splitType(trimmed);
    const where = `column ${index + 1}`;
    const mapKey = [trimmed, own.name.trim()].find((k) => maps.has(k));
    const ignore = (why?: { readOnly: true } | { mapped: true }): void =>
      void columns.push({ index, column, field: '', type: 'string', ignored: true, ...why });
    let field: string;
    let type: FieldType;
    if (mapKey !== undefined) {
      unusedMaps.delete(mapKey);
      const target = maps.get(mapKey)!;
      if (target === '') return ignore({ mapped: true });
      // the map may retype (`price=amount:number`); otherwise the header's own type stays
      const t = splitType(target);
      field = t.name.trim();
      type = t.typed ? t.type : own.type;
      if (field === '') throw new UsageError(`--map ${JSON.stringify(mapKey)}: the field name is empty`);
    } else if (exactFieldName(own.name.trim()) !== undefined) {
      // named exactly (an undo file's `"First Name":json`): that field, whatever the records hold
      field = exactFieldName(own.name.trim())!;
      type = own.type;
    } else if (known?.has(own.name.trim()) && !READ_ONLY_FIELDS.includes(own.name.trim())) {
      // a field the records have, named as they name it (crm's own `_line`, … are never record fields)
      field = own.name.trim();
      type = own.type;
    } else {
      if (trimmed === '') throw new UsageError(`the header of ${where} is empty; name it, or drop the column`);
      if (isIgnoredHeader(trimmed)) return ignore();
      field = normalizeFieldName(own.name);
      type = own.type;
      // an exported list's id, created_at, … (a --map to such a field is sent: the user asked for it)
      if (READ_ONLY_FIELDS.includes(field) && !keep.includes(field)) return ignore({ readOnly: true });
      if (field === '') {
        throw new UsageError(
          `the header ${JSON.stringify(column)} (${where}) has no letters or digits to make a field name; use --map`,
        );
      }
    }
    const spec: ColumnSpec = {
      index,
      column,
      field,
      type,
      ignored: false,
      ...(mapKey === undefined ? {} : { mapped: true }),
    };
    const clash = used.get(field);
    if (clash) {
      throw new UsageError(
        `columns ${JSON.stringify(clash.column)} (column ${clash.index + 1}) and ${JSON.stringify(column)} (${where}) both fill the field "${field}"`,
        { hint: 'rename one of them, or use --map "COLUMN=other_field" (or "COLUMN=" to leave it out)' },
      );
    }
    used.set(field, spec);
    columns.push(spec);
  });
  if (unusedMaps.size > 0) throw unusedMapError([...unusedMaps], cells, maps);
  if (used.size === 0) throw new UsageError('the header has no column to import (every column is ignored)');
  return { width: cells.length, columns };
}

/** The --maps naming a column the header lacks (a cell trimmed, or without its `:type`, is its name), as mapColumns reads them. */
export function unusedMaps(cells: readonly string[], maps: ColumnMap): string[] {
  const named = new Set(cells.flatMap((c) => [c.trim(), splitType(c.trim()).name.trim()]));
  return [...maps.keys()].filter((m) => !named.has(m));
}

/** A --map of a column the header lacks: the header's nearest column named with the --map to use, else its columns. */
export function unusedMapError(unused: readonly string[], cells: readonly string[], maps: ColumnMap): UsageError {
  // the columns no --map names yet, as a --map names them (trimmed, without a `:type` suffix)
  const names = cells.filter((c) => !maps.has(c.trim())).map((c) => splitType(c.trim()).name.trim());
  const free = [...new Set(names)].filter((c) => c !== '' && !maps.has(c));
  const fixes = unused.flatMap((u) => {
    const near = nearestTypo(u, free);
    return near === undefined ? [] : [`did you mean ${JSON.stringify(near)}? use ${mapFlag(near, maps.get(u)!)}`];
  });
  const shown = free.slice(0, 10).map((c) => JSON.stringify(c));
  const columns = `the header's columns: ${shown.join(', ')}${free.length > 10 ? ', …' : ''}`;
  return new UsageError(
    `--map names a column that is not in the header: ${unused.map((c) => JSON.stringify(c)).join(', ')}`,
    { hint: fixes.length > 0 ? fixes.join('; ') : `${columns} (--map names a column as the header writes it)` },
  );
}

export type CellValue = { ok: true; value: unknown; empty: boolean } | { ok: false; reason: string };

const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
/** `+.5e3` → `0.5e3`: the JSON grammar's form of a number NUMBER accepts (a RawNumber is sent as its text). */
const jsonNumberText = (t: string): string =>
  t
    .replace(/^\+/, '')
    .replace(/^(-?)(?=\.)/, '$10')
    .replace(/\.(?=$|[eE])/, '')
    .replace(/^(-?)0+(?=\d)/, '$1');
const TRUE = new Set(['true', 'yes', '1']);
const FALSE = new Set(['false', 'no', '0']);

/** One cell → its typed value (the formula guard undone first); never changed silently: a number a double cannot hold is kept as written (RawNumber). */
export function convertCell(raw: string, type: FieldType): CellValue {
  const cell = unguardFormula(raw);
  const t = cell.trim();
  if (t === '') return { ok: true, value: undefined, empty: true };
  switch (type) {
    case 'string':
      return { ok: true, value: cell, empty: false };
    case 'number': {
      if (!NUMBER.test(t) || !Number.isFinite(Number(t))) return { ok: false, reason: 'is not a number' };
      // a number no double holds is sent as written (RawNumber), never rounded
      return { ok: true, value: exactNumber(t) ?? new RawNumber(jsonNumberText(t)), empty: false };
    }
    case 'boolean': {
      const l = t.toLowerCase();
      if (TRUE.has(l)) return { ok: true, value: true, empty: false };
      if (FALSE.has(l)) return { ok: true, value: false, empty: false };
      return { ok: false, reason: 'is not a boolean (true/false, yes/no, 1/0)' };
    }
    case 'list': {
      const items = cell
        .split(';')
        .map((s) => s.trim())
        .filter((s) => s !== '');
      return items.length === 0
        ? { ok: true, value: undefined, empty: true }
        : { ok: true, value: items, empty: false };
    }
    case 'json': {
      try {
        return { ok: true, value: parseJson(t), empty: false };
      } catch (err) {
        return { ok: false, reason: `is not valid JSON (${(err as Error).message})` };
      }
    }
  }
}

/** A column as a --dry-run plan shows it: the field it fills, or none (left out, or set by the server). */
export function planColumn(c: ColumnSpec): PlanColumn {
  return {
    column: c.column.trim(),
    field: c.ignored ? null : c.field,
    type: c.type,
    ignored: c.ignored,
    read_only: c.readOnly === true,
  };
}

// Rows: one input row → the record sent to the API, or the reason it cannot be sent. Pure.
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
    if (!v.ok)
      return invalid(
        INVALID_CODES.value,
        `column ${JSON.stringify(col.column)}: ${showValue(cell)} ${v.reason}`,
        col.field,
      );
    // an address with spaces around is not another address: sent trimmed (as --match sends a key), so a plain
    // import never stores `" ada@x.test "` that every later reconcile counts as unchanged (issue 29's re-trial)
    if (v.empty) continue;
    const address = col.type === 'string' && typeof v.value === 'string' && isEmailField(col.field);
    setOwn(record, col.field, address ? (v.value as string).trim() : v.value);
  }
  if (Object.keys(record).length === 0) return invalid(INVALID_CODES.empty, 'the row has no value to import');
  return { ok: true, record };
}

/** The keys crm's own files add to a record's (rejects, results, plan and ambiguous files): never a record's field. */
export const isCrmOwnKey = (key: string): boolean => CRM_OWN_KEYS.has(key);
const CRM_OWN_KEYS = new Set([
  '_line',
  '_error_code',
  '_error_message',
  '_raw',
  '_input_id',
  '_more',
  '_candidates',
  '_action',
  '_changes',
  '_side',
  // a delete's backup: the record's own links (files/backup-links.ts), made again after the create, never a field
  '_links',
]);

/** An NDJSON object → record: crm's own `_` keys left out (a record's `__proto__` or `_x` is its field), `--map` renames, null kept. */
export function objectToRecord(obj: unknown, maps: ColumnMap = new Map(), keep: readonly string[] = []): RowResult {
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) {
    const kind = obj === null ? 'null' : Array.isArray(obj) ? 'an array' : typeof obj;
    return invalid(INVALID_CODES.json, `expected a JSON object, got ${kind}`);
  }
  // a rejects file's line that was not JSON (`_raw`: its text, and crm's own keys), fixed there as the hint says:
  // the row it holds (issue 28's trial: read as an object of crm's keys alone, "no field to import")
  const raw = (obj as Record<string, unknown>)._raw;
  if (typeof raw === 'string' && Object.keys(obj).every(isCrmOwnKey)) {
    let row: unknown;
    try {
      row = parseJson(raw);
    } catch (err) {
      return invalid(INVALID_CODES.json, `its _raw is not JSON yet (${(err as Error).message}): fix the text there`);
    }
    return objectToRecord(row, maps, keep);
  }
  const record: ApiRecord = {};
  for (const [key, value] of Object.entries(obj as Record<string, unknown>)) {
    const mapped = maps.get(key);
    if (mapped === '') continue;
    if (mapped === undefined && (isCrmOwnKey(key) || (READ_ONLY_FIELDS.includes(key) && !keep.includes(key)))) continue;
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
