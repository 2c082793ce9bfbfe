// `--results FILE`: one row per created record — `_line`, `id`, then the original columns — so an
// admin can join what was created back to the input. Written whole at the end of each run, like
// the rejects file, including rows created by earlier runs of the same import (ids read back from
// the journal as the sending pass reaches their chunks).
//
// Always CSV, except NDJSON input written to a file named `.ndjson`/`.jsonl` (one object per line,
// `_line`, `id` and the original keys). For NDJSON input the CSV's "original columns" are the
// top-level keys of the input's objects in first-seen order (collected by the first pass, at most
// MAX_NDJSON_KEYS; beyond that, the other keys of a row go as a JSON object into `_more`); strings
// are written as they are, other values (numbers, booleans, objects, arrays) JSON-encoded, null or
// missing as an empty cell.
import { AtomicTextFile } from './atomic-file.js';
import { csvRow, serverCell } from './csv-write.js';
import type { InputFormat, RawRow } from './reader.js';
import { ColumnProjection, stripReserved } from './rejects.js';

export interface ResultsWriter {
  readonly target: string;
  readonly count: number;
  add(raw: RawRow, line: number, id: string | null): void;
  commit(): Promise<string>;
  discard(): Promise<void>;
}

const RESERVED = new Set(['_line', 'id']);

/** An NDJSON value as a CSV cell. */
export function jsonCell(v: unknown): string {
  if (v === undefined || v === null) return '';
  return typeof v === 'string' ? v : JSON.stringify(v);
}

export async function createResultsWriter(
  target: string,
  opts: { format: InputFormat; header: readonly string[] | null; ndjsonKeys?: readonly string[]; ndjsonKeysOverflow?: boolean },
): Promise<ResultsWriter> {
  const file = await AtomicTextFile.create(target);
  const ndjsonOut = opts.format === 'ndjson' && /\.(ndjson|jsonl)$/i.test(target);
  const projection = opts.format === 'csv' ? new ColumnProjection(opts.header ?? []) : undefined;
  // NDJSON input written as CSV: the keys as columns (a key named like `_line`/`id` is left out: the
  // input's own copy of a column this file writes itself)
  const keys =
    opts.format === 'ndjson' && !ndjsonOut
      ? (opts.ndjsonKeys ?? []).filter((k) => !RESERVED.has(k) && !k.startsWith('_error_') && k !== '_raw')
      : [];
  const keySet = new Set(keys);
  const more = opts.ndjsonKeysOverflow === true;
  let count = 0;
  if (projection) file.write(csvRow(['_line', 'id', ...projection.names]));
  else if (!ndjsonOut) file.write(csvRow(['_line', 'id', ...keys, ...(more ? ['_more'] : [])]));
  return {
    target,
    get count() {
      return count;
    },
    add(raw, line, id) {
      count++;
      if (projection) {
        file.write(csvRow([String(line), serverCell(id ?? ''), ...projection.cells(Array.isArray(raw) ? raw : []).cells]));
        return;
      }
      const obj = typeof raw === 'object' && !Array.isArray(raw) ? stripReserved(raw) : {};
      if (ndjsonOut) {
        file.write(JSON.stringify({ _line: line, id, ...obj }) + '\n');
        return;
      }
      const cells = [String(line), serverCell(id ?? ''), ...keys.map((k) => jsonCell(obj[k]))];
      if (more) {
        const rest = Object.fromEntries(Object.entries(obj).filter(([k]) => !keySet.has(k) && !RESERVED.has(k)));
        cells.push(Object.keys(rest).length > 0 ? JSON.stringify(rest) : '');
      }
      file.write(csvRow(cells));
    },
    async commit() {
      await file.commit();
      return target;
    },
    discard: () => file.discard(),
  };
}
