// The rejects file: every row that was not created, with its original columns plus `_line`,
// `_error_code` and `_error_message`. Same header names as the input (type suffixes included), so
// after fixing it is fed straight back to `crm batch`: `_`-prefixed columns are ignored on import.
// It is written whole each run (temporary file, renamed at the end): the run that writes it knows
// every reject of the file, including those of chunks finished by an earlier run (from the
// journal), so a rerun never duplicates reject rows and a crash never leaves a half file behind.
import { join } from 'node:path';
import { AtomicTextFile, removeRegularFile } from './atomic-file.js';
import { sanitizeForTerminal } from '../output/sanitize.js';
import { csvRow, serverCell } from './csv-write.js';
import { SortedLines } from './sorted-lines.js';
import type { InputFormat, RawRow } from './reader.js';

export const REJECT_COLUMNS = ['_line', '_error_code', '_error_message'] as const;
/** columns this tool writes itself; an input's own copies (a fed-back rejects file) are dropped */
const RESERVED_COLUMNS = new Set<string>(REJECT_COLUMNS);
/** NDJSON rejects also carry `_raw`, the text of a line that is not a JSON object */
const RESERVED_KEYS = new Set<string>([...REJECT_COLUMNS, '_raw']);

/** Which input columns are carried into rejects/results: all but the reserved `_line`, … */
export class ColumnProjection {
  readonly keep: number[];
  readonly names: string[];
  constructor(readonly header: readonly string[]) {
    this.keep = header.flatMap((h, i) => (RESERVED_COLUMNS.has(h.trim()) ? [] : [i]));
    this.names = this.keep.map((i) => header[i]!);
  }

  /** the kept cells, padded to the header's width; cells beyond the header come back separately */
  cells(raw: readonly string[]): { cells: string[]; extra: string[] } {
    return {
      cells: this.keep.map((i) => raw[i] ?? ''),
      extra: raw.slice(this.header.length),
    };
  }
}

/** An NDJSON object without the reserved keys. */
export function stripReserved(obj: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) if (!RESERVED_KEYS.has(k)) out[k] = v;
  return out;
}

export interface RejectsWriter {
  readonly target: string;
  readonly count: number;
  add(raw: RawRow, line: number, code: string, message: string): void;
  /** Renames the file into place and returns its path; with no rejects, removes a stale one and returns null. */
  commit(): Promise<string | null>;
  discard(): Promise<void>;
}

export async function createRejectsWriter(
  target: string,
  opts: {
    format: InputFormat;
    header: readonly string[] | null;
    memoryBytes?: number;
    /** start a CSV file with a UTF-8 byte order mark: the input was in another encoding, and the
     * BOM makes a later `--encoding` of that one a refusal instead of mangled text (and tells
     * spreadsheets the file is UTF-8) */
    bom?: boolean;
  },
): Promise<RejectsWriter> {
  const file = await AtomicTextFile.create(target);
  // rows arrive out of order (chunks finish concurrently); the file lists them in line order
  const sorted = new SortedLines(target, opts.memoryBytes);
  const projection = opts.format === 'csv' ? new ColumnProjection(opts.header ?? []) : undefined;
  let count = 0;
  if (projection) file.write((opts.bom ? '\ufeff' : '') + csvRow([...projection.names, ...REJECT_COLUMNS]));
  return {
    target,
    get count() {
      return count;
    },
    add(raw, line, code, message) {
      count++;
      if (projection) {
        const cells = Array.isArray(raw) ? raw : [];
        const { cells: kept, extra } = projection.cells(cells);
        // cells beyond the header (a ragged row) go into the message, quoted, so none is lost and
        // the file stays rectangular
        const more = extra.length > 0 ? `; cells beyond the header: ${extra.map((x) => JSON.stringify(x)).join(', ')}` : '';
        sorted.add(line, csvRow([...kept, String(line), serverCell(code), serverCell(message + more)]));
        return;
      }
      const base = typeof raw === 'string' || Array.isArray(raw) ? { _raw: typeof raw === 'string' ? raw : raw.join(',') } : stripReserved(raw);
      // JSON already escapes C0; C1 and bidi controls from the server are escaped too (no formula
      // guard: NDJSON is not opened in a spreadsheet)
      const safe = { _line: line, _error_code: sanitizeForTerminal(code), _error_message: sanitizeForTerminal(message) };
      sorted.add(line, JSON.stringify({ ...base, ...safe }) + '\n');
    },
    async commit() {
      if (count === 0) {
        await sorted.dispose();
        await file.discard();
        await removeRegularFile(target); // a stale one; never /dev/null or a pipe given as --rejects
        return null;
      }
      try {
        await sorted.drainTo(
          (t) => file.write(t),
          () => file.drain(),
        );
      } catch (err) {
        await sorted.dispose();
        await file.discard();
        throw err;
      }
      await sorted.dispose();
      await file.commit();
      return target;
    },
    discard: async () => {
      await sorted.dispose();
      await file.discard();
    },
  };
}

/**
 * Where rows go whose outcome no rerun can settle (the batch answer said nothing about them): beside
 * the rejects file, `people.csv.rejects.csv` → `people.csv.unknown.csv`, `out.csv` → `out.unknown.csv`.
 * Kept apart so that the file users are told to fix and import holds only rows never created.
 */
export function unknownPathFor(rejectsPath: string): string {
  return rejectsPath.replace(/(\.rejects)?(\.[^./\\]*)?$/, (_m, _r: string | undefined, ext: string | undefined) => `.unknown${ext ?? ''}`);
}

/** The default rejects file (CONTRACT §7): `<input>.rejects.csv`; for stdin `crm-rejects-<time>.csv`. */
export function defaultRejectsPath(input: string, format: InputFormat, now: number, cwd: string): string {
  const ext = format === 'ndjson' ? 'ndjson' : 'csv';
  if (input === '-') {
    const stamp = new Date(now)
      .toISOString()
      .replace(/[-:]/g, '')
      .replace(/\.\d+Z$/, 'Z');
    return join(cwd, `crm-rejects-${stamp}.${ext}`);
  }
  return `${input}.rejects.${ext}`;
}
