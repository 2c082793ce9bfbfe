// The rejects, unknown and --results files, written whole at the end (AtomicTextFile). Rejects are in line
// order, rectangular, without the formula guard; server text (`_error_*`, `id`) goes through serverCell.
import { join } from 'node:path';
import { cellText } from '../../output/cell.js';
import { quoteCsv } from '../../output/csv.js';
import { guardFormula } from '../../output/formula-guard.js';
import { sanitizeForTerminal } from '../../output/sanitize.js';
import { AtomicTextFile, removeRegularFile } from '../../util/atomic-file.js';
import type { InputFormat, RawRow } from '../shapes.js';
import { SortedLines } from '../../util/sorted-lines.js';
import { fileStamp } from '../../util/stamp.js';

export const REJECT_COLUMNS = ['_line', '_error_code', '_error_message'] as const;
/** an input's own copies of the columns these files write (a fed-back rejects file) are dropped */
const RESERVED = new Set<string>([...REJECT_COLUMNS, '_raw']);

export const csvLine = (cells: readonly string[]): string => cells.map(quoteCsv).join(',') + '\r\n';

/** Server text for a column never imported back: controls escaped, a formula made inert. */
export function serverCell(text: string): string {
  return guardFormula(sanitizeForTerminal(text));
}

/** The input columns carried into these files: all but its own `_line`, `_error_code`, `_error_message`. */
export function keptColumns(header: readonly string[]): number[] {
  return header.flatMap((h, i) => ((REJECT_COLUMNS as readonly string[]).includes(h.trim()) ? [] : [i]));
}

const stripReserved = (obj: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(obj).filter(([k]) => !RESERVED.has(k)));

export interface RowsFile<A extends unknown[]> {
  readonly target: string;
  add(raw: RawRow, line: number, ...rest: A): void;
  /** Renamed into place; with no rows a rejects file is not written, and a stale one removed (null). */
  commit(): Promise<string | null>;
  discard(): Promise<void>;
}

export type Outputs = {
  rejects: RowsFile<[string, string]>;
  unknown: RowsFile<[string, string]>;
  results?: RowsFile<[string | null]>;
};

interface FileShape {
  format: InputFormat;
  header: readonly string[] | null;
}

/** The rejects (or unknown) file. `bom`: the input was in another encoding (CSV only). */
export async function createRejectsWriter(
  target: string,
  o: FileShape & { bom?: boolean; memoryBytes?: number },
): Promise<RowsFile<[string, string]>> {
  const file = await AtomicTextFile.create(target);
  const sorted = new SortedLines(target, o.memoryBytes);
  const header = o.header ?? [];
  const keep = keptColumns(header);
  let count = 0;
  if (o.format === 'csv')
    file.write((o.bom ? '\ufeff' : '') + csvLine([...keep.map((i) => header[i]!), ...REJECT_COLUMNS]));
  const text = (raw: RawRow, line: number, code: string, message: string): string => {
    if (o.format === 'csv') {
      const cells = Array.isArray(raw) ? raw : [];
      const extra = cells.slice(header.length).map((x) => JSON.stringify(x));
      const more = extra.length > 0 ? `; cells beyond the header: ${extra.join(', ')}` : '';
      return csvLine([...keep.map((i) => cells[i] ?? ''), String(line), serverCell(code), serverCell(message + more)]);
    }
    const base =
      typeof raw === 'object' && !Array.isArray(raw)
        ? stripReserved(raw)
        : { _raw: Array.isArray(raw) ? raw.join(',') : raw };
    // JSON escapes C0 itself; C1 and bidi controls are escaped too (no formula guard: not for a spreadsheet)
    const why = { _line: line, _error_code: sanitizeForTerminal(code), _error_message: sanitizeForTerminal(message) };
    return JSON.stringify({ ...base, ...why }) + '\n';
  };
  return {
    target,
    add: (raw, line, code, message) => {
      count++;
      sorted.add(line, text(raw, line, code, message));
    },
    async commit() {
      try {
        if (count > 0)
          await sorted.drainTo(
            (t) => file.write(t),
            () => file.drain(),
          );
      } catch (err) {
        await Promise.all([sorted.dispose(), file.discard()]);
        throw err;
      }
      await sorted.dispose();
      if (count > 0) return file.commit().then(() => target);
      await file.discard();
      await removeRegularFile(target); // a stale one; never /dev/null or a pipe given as --rejects
      return null;
    },
    discard: () => Promise.all([sorted.dispose(), file.discard()]).then(() => undefined),
  };
}

/** how many distinct NDJSON keys become columns of a --results CSV */

/** The `--results` file. */
export async function createResultsWriter(
  target: string,
  o: FileShape & { ndjsonKeys?: readonly string[]; ndjsonKeysOverflow?: boolean; bom?: boolean; idIsTarget?: boolean },
): Promise<RowsFile<[string | null]>> {
  const file = await AtomicTextFile.create(target);
  const ndjsonOut = o.format === 'ndjson' && /\.(ndjson|jsonl)$/i.test(target);
  const header = o.header ?? [];
  // the file's own `id` is crm's: an input `id` column is the same value for an update or delete (left
  // out), the old id for a create (kept as `_input_id`, which an import ignores)
  const isId = (i: number): boolean => header[i]!.trim() === 'id';
  const keep = keptColumns(header).filter((i) => !(o.idIsTarget && isId(i)));
  const named = (i: number): string => (isId(i) ? '_input_id' : header[i]!);
  const own = (k: string): boolean => k === '_line' || k === 'id' || k.startsWith('_error_') || k === '_raw';
  const keys = o.format === 'ndjson' && !ndjsonOut ? (o.ndjsonKeys ?? []).filter((k) => !own(k)) : [];
  const keySet = new Set(keys);
  const more = o.ndjsonKeysOverflow === true;
  if (o.format === 'csv') file.write((o.bom ? '\ufeff' : '') + csvLine(['_line', 'id', ...keep.map(named)]));
  else if (!ndjsonOut) file.write(csvLine(['_line', 'id', ...keys, ...(more ? ['_more'] : [])]));
  const text = (raw: RawRow, line: number, id: string | null): string => {
    if (o.format === 'csv')
      return csvLine([
        String(line),
        serverCell(id ?? ''),
        ...keep.map((i) => (Array.isArray(raw) ? raw : [])[i] ?? ''),
      ]);
    const obj = typeof raw === 'object' && !Array.isArray(raw) ? stripReserved(raw) : {};
    if (ndjsonOut) return JSON.stringify({ _line: line, id, ...obj }) + '\n';
    const cells = [String(line), serverCell(id ?? ''), ...keys.map((k) => cellText(obj[k]))];
    const rest = Object.entries(obj).filter(([k]) => !keySet.has(k) && k !== 'id');
    if (more) cells.push(rest.length > 0 ? JSON.stringify(Object.fromEntries(rest)) : '');
    return csvLine(cells);
  };
  return {
    target,
    add: (raw, line, id) => file.write(text(raw, line, id)),
    commit: () => file.commit().then(() => target),
    discard: () => file.discard(),
  };
}

/** `people.csv.rejects.csv` → `people.csv.unknown.csv`, `out.csv` → `out.unknown.csv`. */
export function unknownPathFor(rejectsPath: string): string {
  return rejectsPath.replace(
    /(\.rejects)?(\.[^./\\]*)?$/,
    (_m, _r: string | undefined, ext: string | undefined) => `.unknown${ext ?? ''}`,
  );
}

/** The default rejects file (CONTRACT §7): `<input>.rejects.csv`; for stdin `crm-rejects-<time>.csv` in `cwd`. */
export function defaultRejectsPath(input: string, format: InputFormat, now: number, cwd: string, tag?: string): string {
  const ext = format === 'ndjson' ? 'ndjson' : 'csv';
  if (input !== '-') return `${input}${tag ? `.${tag}` : ''}.rejects.${ext}`;
  return join(cwd, `crm-rejects-${fileStamp(now)}.${ext}`);
}
