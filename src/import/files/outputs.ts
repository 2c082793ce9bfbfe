// The rejects, unknown and --results files, written whole at the end (AtomicTextFile). Rejects are in line
// order, rectangular, without the formula guard; server text (`_error_*`, `id`) goes through serverCell.
import { readFile, statfs } from 'node:fs/promises';
import { dirname, extname } from 'node:path';
import { DiskError } from '../../http/errors.js';
import { errnoOf, fsReason, isDiskError, naming } from '../../util/fs-error.js';
import { stringifyJson } from '../../json/exact-json.js';
import { cellText } from '../../output/cell.js';
import { quoteCsv } from '../../output/csv.js';
import { guardFormula } from '../../output/formula-guard.js';
import { sanitizeForTerminal } from '../../output/sanitize.js';
import { AtomicTextFile, removeRegularFile } from '../../util/atomic-file.js';
import type { InputFormat, RawRow } from '../shapes.js';
import { SortedLines } from '../../util/sorted-lines.js';
import { detectBom } from '../../util/text.js';
import { moveToOwnName } from '../../util/own-name.js';
import { readHead, UTF8 } from '../input/source.js';
import { fieldHeader } from '../input/header.js';

const REJECT_COLUMNS = ['_line', '_error_code', '_error_message'] as const;
/** an input's own copies of the columns these files write (a fed-back rejects file) are dropped */
const RESERVED = new Set<string>([...REJECT_COLUMNS, '_raw']);

export const csvLine = (cells: readonly string[]): string => cells.map(quoteCsv).join(',') + '\r\n';

/** An NDJSON value as a CSV cell that reads back as it was: text formula-guarded (an import undoes it exactly). */
const valueCell = (v: unknown): string => (typeof v === 'string' ? guardFormula(v) : cellText(v));

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

/** The input a file carries rows of: its format and header; for NDJSON the keys found (the results file's columns). */
export interface RowShape {
  format: InputFormat;
  header: readonly string[] | null;
  ndjsonKeys?: readonly string[];
  ndjsonKeysOverflow?: boolean;
  /** CSV input in another encoding: a BOM, as the rejects file */
  bom?: boolean;
}

/** The shape of the input's rows, as the check pass read them, for the files that carry them. */
export async function rowShapeOf(
  input: { path: string; encoding: string },
  rows: { format: InputFormat; header: string[] | null; ndjsonKeys: string[]; ndjsonKeysOverflow: boolean },
): Promise<Required<RowShape>> {
  // a BOM when the input had one (an Excel-made CSV: without it Excel reads the rejects as ANSI, "ZoÃ«"), or was
  // in another encoding (it is UTF-8 now)
  const bom = input.encoding !== UTF8 || (await readHead(input.path).then((h) => detectBom(h) !== undefined));
  const { format, header, ndjsonKeys, ndjsonKeysOverflow } = rows;
  return { format, header, bom, ndjsonKeys, ndjsonKeysOverflow };
}

/** The rejects (or unknown) file. `bom`: the input was in another encoding (CSV only). */
export async function createRejectsWriter(
  target: string,
  /** `kept`: told where an edited rejects file there before was moved (keepingEdits) */
  o: RowShape & { memoryBytes?: number; kept?: Kept },
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
    return stringifyJson({ ...base, ...why })! + '\n';
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
      if (count > 0) return file.commit(keepingEdits(target, Date.now(), o.kept)).then(() => target);
      await file.discard();
      await removeRegularFile(target); // a stale one; never /dev/null or a pipe given as --rejects
      return null;
    },
    discard: () => Promise.all([sorted.dispose(), file.discard()]).then(() => undefined),
  };
}

/** The `--results` file. */
export async function createResultsWriter(
  target: string,
  o: RowShape & { idIsTarget?: boolean },
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
    const row = Array.isArray(raw) ? raw : [];
    if (o.format === 'csv') return csvLine([String(line), serverCell(id ?? ''), ...keep.map((i) => row[i] ?? '')]);
    const obj = typeof raw === 'object' && !Array.isArray(raw) ? stripReserved(raw) : {};
    if (ndjsonOut) {
      // the row's own id is not crm's (a create's old id: `_input_id`, as in a CSV results file; the same id: left out)
      const { id: input, ...rest } = obj;
      const old = input !== undefined && !o.idIsTarget ? { _input_id: input } : {};
      return stringifyJson({ _line: line, id, ...old, ...rest })! + '\n';
    }
    const cells = [
      String(line),
      serverCell(id ?? ''),
      ...keys.map((k) => (Object.hasOwn(obj, k) ? valueCell(obj[k]) : '')),
    ];
    const rest = Object.entries(obj).filter(([k]) => !keySet.has(k) && k !== 'id');
    if (more) cells.push(rest.length > 0 ? stringifyJson(Object.fromEntries(rest))! : '');
    return csvLine(cells);
  };
  return {
    target,
    add: (raw, line, id) => file.write(text(raw, line, id)),
    commit: () => file.commit().then(() => target),
    discard: () => file.discard(),
  };
}

// The rows of the input carried into a file written whole per run (the ambiguous file, `--plan FILE`): after the
// file's own columns, the input's, as the rejects and results files carry them.
/**
 * How a row's own values follow a file's `own` columns: CSV, the input's columns (a stale copy of an own
 * `_` column dropped, an input `id` kept as `_input_id`); NDJSON, its keys as the results file makes them
 * columns (`_more` for keys past the limit), or whole objects when the target is `.ndjson`/`.jsonl`.
 */
interface Carried {
  /** whole NDJSON objects, no header */
  ndjson: boolean;
  names: string[];
  cells(raw: RawRow): string[];
  object(raw: RawRow): Record<string, unknown>;
}

function carried(target: string, shape: RowShape, own: readonly string[]): Carried {
  const name = (h: string): string | undefined =>
    h === 'id' && own.includes('id') ? '_input_id' : own.includes(h) ? undefined : h;
  const obj = (raw: RawRow): Record<string, unknown> => (typeof raw === 'object' && !Array.isArray(raw) ? raw : {});
  const renamed = (raw: RawRow): Array<[string, unknown]> =>
    Object.entries(obj(raw)).flatMap(([k, v]) => (name(k) === undefined ? [] : [[name(k)!, v] as [string, unknown]]));
  if (shape.format === 'ndjson' && /\.(ndjson|jsonl)$/i.test(target)) {
    return { ndjson: true, names: [], cells: () => [], object: (raw) => Object.fromEntries(renamed(raw)) };
  }
  const object = () => ({});
  if (shape.format === 'csv') {
    const header = shape.header ?? [];
    const keep = header.flatMap((h, i) => (name(h.trim()) === undefined ? [] : [i]));
    const cells = (raw: RawRow): string[] => keep.map((i) => (Array.isArray(raw) ? raw : [])[i] ?? '');
    return { ndjson: false, names: keep.map((i) => name(header[i]!.trim())!), cells, object };
  }
  // an NDJSON row's values into CSV columns as an undo file writes them (issue 28's trial: an ambiguous file's bare
  // `ratio:number` header read back as a typed column, `7` as text): `"ratio:number":json`, each cell the value's
  // JSON (an absent key: an empty cell, left out); crm's own `_` columns as they are
  const crmOwn = (k: string): boolean => k.startsWith('_');
  const keys = (shape.ndjsonKeys ?? []).filter((k) => name(k) !== undefined);
  const more = shape.ndjsonKeysOverflow === true;
  const cells = (raw: RawRow): string[] => {
    const row = new Map(renamed(raw));
    const out = keys.map((k) => {
      const field = name(k)!;
      if (crmOwn(field)) return valueCell(row.get(field));
      return row.has(field) ? guardFormula(stringifyJson(row.get(field)) ?? 'null') : '';
    });
    keys.forEach((k) => row.delete(name(k)!));
    return more ? [...out, row.size > 0 ? stringifyJson(Object.fromEntries(row))! : ''] : out;
  };
  const header = (k: string): string => (crmOwn(name(k)!) ? name(k)! : fieldHeader(name(k)!, 'json'));
  return { ndjson: false, names: [...keys.map(header), ...(more ? ['_more'] : [])], cells, object };
}

/** A file of rows written whole at commit; `head` its own columns, `ownCells` a row's values of them. */
export class RowsOut {
  /** rows added */
  rows = 0;
  private constructor(
    private readonly file: AtomicTextFile,
    private readonly shape: Carried,
    private readonly head: readonly string[],
  ) {}

  static async create(target: string, shape: RowShape, head: readonly string[]): Promise<RowsOut> {
    const out = new RowsOut(await AtomicTextFile.create(target), carried(target, shape, head), head);
    if (!out.shape.ndjson) out.file.write((shape.bom ? '\ufeff' : '') + csvLine([...head, ...out.shape.names]));
    return out;
  }

  add(raw: RawRow, ownCells: readonly string[], ownValues: readonly unknown[]): void {
    this.rows++;
    if (!this.shape.ndjson) return this.file.write(csvLine([...ownCells, ...this.shape.cells(raw)]));
    const mine = Object.fromEntries(this.head.map((h, i) => [h, ownValues[i]]));
    this.file.write(stringifyJson({ ...mine, ...this.shape.object(raw) })! + '\n');
  }

  commit = (): Promise<void> => this.file.commit();
  discard = (): Promise<void> => this.file.discard();

  /** Commits over a file a user may have edited (keepingEdits): the name the one there was moved to, if it was. */
  async commitKeeping(now: number): Promise<string | undefined> {
    let kept: string | undefined;
    await this.file.commit(keepingEdits(this.file.target, now, (_from, to) => (kept = to)));
    return kept;
  }
}

/**
 * A file of crm's that a user may have edited (its hint says to fix or choose rows in it), about to be written again:
 * one there that is not what this run wrote is moved to an own name first (`<stem>.<time><ext>`), never overwritten
 * (the trial: edits to the rejects and ambiguous files were lost to the rerun). An AtomicTextFile's beforeRename.
 */
export function keepingEdits(target: string, now: number, kept?: Kept) {
  return async (written: string): Promise<void> => {
    const there = await readFile(target).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT' || err.code === 'EISDIR') return undefined;
      throw err;
    });
    if (there === undefined || there.equals(await readFile(written))) return;
    const ext = extname(target);
    const to = await moveToOwnName(target, target.slice(0, target.length - ext.length), ext, now);
    if (to !== undefined) kept?.(target, to);
  };
}

/** Told of a file keepingEdits moved aside: where it was, where it is now. */
export type Kept = (from: string, to: string) => void;

/** What a run says of a file keepingEdits moved aside. */
export const keptText = (from: string, to: string): string =>
  `${from} was there already, other than this run writes it (an earlier run's, or edited): kept as ${to}`;

/** A Kept that says so through `warn` (the run's notices). */
export const warnKept =
  (warn?: (message: string) => void): Kept =>
  (from, to) =>
    warn?.(keptText(from, to));

/**
 * A way-back file that cannot be written (CONTRACT §7c): a DiskError (exit 8) naming the file, its folder's free space
 * and what was not done, never "a bug in crm" and never the journal's name. Any other error comes back named.
 */
export async function unwritable(err: unknown, path: string, what: string, then: string): Promise<unknown> {
  if (err instanceof DiskError || !isDiskError(err)) return naming(err, path);
  const free = await statfs(dirname(path)).then(
    (st) => `; ${Math.floor((st.bavail * st.bsize) / 1024)} KiB free in ${dirname(path)}`,
    () => '',
  );
  return new DiskError(`cannot write ${what} ${path}: ${fsReason(err)}${free}; ${then}`, {
    cause: err,
    code: errnoOf(err) === 'ENOSPC' || errnoOf(err) === 'EDQUOT' ? 'DISK_FULL' : 'DISK_ERROR',
  });
}
