// The first pass over an import file, before anything is sent: the content hash (the journal's
// key), the header mapping, how many rows are valid or invalid (for --strict, --dry-run and the
// progress ETA), and a malformed CSV found while nothing has been sent yet (exit 2). An unclosed
// quote is not malformed CSV here: the reader makes it an invalid row (UNCLOSED_QUOTE) and reads
// on from the next line, the same way in this pass and in the sending pass (dispatch.ts), so both
// see the same rows, lines and chunks.
import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import type { ApiRecord } from '../api/envelopes.js';
import { READ_ONLY_FIELDS } from '../api/resources.js';
import { UsageError } from '../http/errors.js';
import { INVALID_CHARACTER, INVALID_ENCODING, UTF8 } from './encoding.js';
import { parseHeader, type ColumnMap, type HeaderMapping } from './header.js';
import { openInput, type InputFormat, type ReadRow } from './reader.js';
import { objectToRecord, rowToRecord } from './rows.js';
import { TextCheck } from './text-check.js';
import { plural } from '../output/plural.js';

export interface InvalidRow {
  line: number;
  code: string;
  reason: string;
}

export type Classified = { ok: true; record: ApiRecord } | { ok: false; code: string; reason: string };

/** A read row → the record to send, or why it is invalid. */
export function classifyRow(row: ReadRow, mapping: HeaderMapping | undefined, maps: ColumnMap): Classified {
  if (row.error) return { ok: false, code: row.error.code, reason: row.error.reason };
  if (row.cells) return rowToRecord(row.cells, mapping!);
  return objectToRecord(row.json, maps);
}

export interface ScanResult {
  format: InputFormat;
  contentSha256: string;
  header: string[] | null;
  mapping?: HeaderMapping;
  rows: number;
  valid: number;
  invalid: number;
  /** the first few invalid rows, in file order */
  firstInvalid: InvalidRow[];
  /** fingerprint of how rows become chunks, stored in the journal */
  plan: string;
  size: number;
  mtimeMs: number;
  /** NDJSON: the objects' top-level keys, in first-seen order (at most MAX_NDJSON_KEYS) */
  ndjsonKeys: string[];
  /** NDJSON: some object had keys beyond those */
  ndjsonKeysOverflow: boolean;
}

/** how many distinct NDJSON keys the scan keeps for the --results CSV's columns */
export const MAX_NDJSON_KEYS = 1000;

export interface ScanOptions {
  format: InputFormat;
  name: string;
  maps: ColumnMap;
  chunkSize: number;
  /** how many invalid rows to keep for messages (default 10) */
  keepInvalid?: number;
  signal?: AbortSignal;
  /** the encoding the file was transcoded from (messages) */
  encoding?: string;
  onRow?: (rows: number, bytes: number) => void;
  /** notices (RECORD_TOO_LARGE placeholder rows of a fed-back rejects file, skipped) */
  warn?: (message: string) => void;
}

export function planFingerprint(format: InputFormat, chunkSize: number, mapping: HeaderMapping | undefined, maps: ColumnMap): string {
  const shape =
    format === 'csv'
      ? mapping!.columns.map((c) => [c.index, c.field, c.type, c.ignored])
      : [...maps.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return createHash('sha256').update(JSON.stringify({ format, chunkSize, shape })).digest('hex').slice(0, 32);
}

export async function scanInput(path: string, opts: ScanOptions): Promise<ScanResult> {
  const st = await stat(path).catch(() => undefined);
  const hash = createHash('sha256');
  const text = new TextCheck();
  const placeholders: number[] = [];
  const reader = await openInput(path, {
    format: opts.format,
    name: opts.name,
    encoding: opts.encoding,
    signal: opts.signal,
    onPlaceholder: (line) => placeholders.push(line),
    onChunk: (c) => {
      hash.update(c);
      text.push(c);
    },
  });
  const keep = opts.keepInvalid ?? 10;
  const firstInvalid: InvalidRow[] = [];
  let rows = 0;
  let invalid = 0;
  /** rows with a NUL byte or bytes that do not decode, and the first row with a NUL byte */
  let binary = 0;
  let firstNul: InvalidRow | undefined;
  let mapping: HeaderMapping | undefined;
  const keys = new Set<string>();
  let overflow = false;
  try {
    mapping = reader.header ? parseHeader(reader.header, opts.maps) : undefined;
    for await (const row of reader.rows) {
      if (opts.signal?.aborted) break;
      rows++;
      if (row.json !== null && typeof row.json === 'object' && !Array.isArray(row.json)) {
        for (const k of Object.keys(row.json)) {
          if (keys.has(k)) continue;
          if (keys.size < MAX_NDJSON_KEYS) keys.add(k);
          else overflow = true;
        }
      }
      const c = classifyRow(row, mapping, opts.maps);
      if (!c.ok) {
        invalid++;
        if (c.code === INVALID_CHARACTER || c.code === INVALID_ENCODING) binary++;
        if (c.code === INVALID_CHARACTER) firstNul ??= { line: row.line, code: c.code, reason: c.reason };
        if (firstInvalid.length < keep) firstInvalid.push({ line: row.line, code: c.code, reason: c.reason });
      }
      if (rows % 1000 === 0) opts.onRow?.(rows, reader.bytesRead());
    }
  } finally {
    reader.close();
  }
  if (firstNul && !opts.signal?.aborted) refuseBinary(opts.name, binary, rows, firstNul);
  text.end();
  if (text.lines.length > 0 && !opts.signal?.aborted) {
    await text.resolve(path, opts.signal).catch(() => undefined);
    throw text.error(opts.name, opts.encoding ?? UTF8)!;
  }
  const readOnly = mapping
    ? mapping.columns.filter((c) => c.readOnly).map((c) => c.column.trim())
    : READ_ONLY_FIELDS.filter((f) => keys.has(f) && !opts.maps.has(f));
  if (readOnly.length > 0) {
    opts.warn?.(
      `${opts.name}: leaving out ${readOnly.join(', ')}: the server sets ${readOnly.length === 1 ? 'this field' : 'these fields'} itself ` +
        `(an exported list has them); --map "${readOnly[0]}=FIELD" sends ${readOnly.length === 1 ? 'it' : 'one'} as another field`,
    );
  }
  if (placeholders.length > 0) {
    const lines = placeholders.slice(0, 5).join(', ') + (placeholders.length > 5 ? ', …' : '');
    const many = placeholders.length > 1;
    opts.warn?.(
      `${opts.name}: ${plural(placeholders.length, 'RECORD_TOO_LARGE row')} (${many ? 'lines' : 'line'} ${lines}) ` +
        `${many ? 'hold' : 'holds'} no cells and ${many ? 'are' : 'is'} skipped: ` +
        `the _error_message says how to import ${many ? 'each' : 'it'} from the original file`,
    );
  }
  return {
    format: reader.format,
    contentSha256: hash.digest('hex'),
    header: reader.header,
    mapping,
    rows,
    valid: rows - invalid,
    invalid,
    firstInvalid,
    plan: planFingerprint(reader.format, opts.chunkSize, mapping, opts.maps),
    size: st?.size ?? 0,
    mtimeMs: st?.mtimeMs ?? 0,
    ndjsonKeys: [...keys],
    ndjsonKeysOverflow: overflow,
  };
}

/**
 * A file with NUL bytes whose rows mostly have NUL bytes or bytes that do not decode is not a text
 * file (a program, an archive, an image whose first line happens to look like text): refused whole,
 * before anything is sent, rather than sending the few "rows" that happen to parse. Text never has
 * NUL bytes, so a file in another 8-bit encoding (no NULs) is left to the text check (text-check.ts:
 * refused naming its lines, with the --encoding hint), and a text file with a few NUL bytes keeps
 * those rows as invalid rows.
 */
function refuseBinary(name: string, binary: number, rows: number, firstNul: InvalidRow): void {
  if (binary * 2 <= rows) return;
  throw new UsageError(
    `${name} is not a text file: ${binary} of ${rows} rows have NUL bytes or bytes that are not valid text ` +
      `(the first NUL at line ${firstNul.line}); nothing was sent`,
    { hint: 'crm batch reads CSV or NDJSON text' },
  );
}
