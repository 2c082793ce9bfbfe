// The list and single-resource writers for every output format. Lists stream: records are
// written as they arrive, with backpressure, so memory does not grow with the list.
import type { OutputFormat } from './format.js';
import { writeChunk, type OutputStream } from './backpressure.js';
import { csvRow, headerName, type CsvSeparator } from './csv.js';
import { columnsFor, getPath, headerColumns, projectFields } from './format.js';
import { PAGE_SIZE_MAX } from '../api/resources.js';
import { safeJson, sanitizeForTerminal } from './sanitize.js';
import { cellDisplay, DEFAULT_MAX_CELL_WIDTH } from './cell.js';
import { fitNotice, isWholeColumn } from './fit.js';
import { plural } from './plural.js';

/** The table renderer, loaded on first use: cli-table3 is not needed by json/csv output or at startup. */
export const loadTableRenderer = (): Promise<typeof import('./table.js')> => import('./table.js');

export interface WriterOptions {
  /** `--fields`: selects and orders fields (dot paths) in every format */
  fields?: readonly string[];
  /** the command's default columns when `--fields` is not given: a table's, and the header of an empty csv/tsv */
  columns?: readonly string[];
  /** table only: ANSI colours (false for --no-color / NO_COLOR / not a TTY) */
  color?: boolean;
  /** table only: rows per table; a longer list prints several tables of this many rows (default 1000) */
  tableChunkSize?: number;
  /** table only: longest list cell before it is cut with `…` (default 60; 0 = never) */
  maxCellWidth?: number;
  /** tables: fit this width (default: the stream's `columns`, if a TTY): lists hide or cut columns (never ids), a key/value table wraps */
  width?: number;
  /** tables: `--wide`, every column shown whole, even wider than the terminal */
  wide?: boolean;
  /** table only: columns never hidden nor cut (default `id`) */
  pinned?: readonly string[];
  /** table only: columns never cut besides ids: shown whole or hidden */
  whole?: readonly string[];
  /** tables: says on stderr what was hidden, cut or broken to fit, and how to see it */
  notice?: (message: string) => void;
}

/** The width tables fit: none with --wide or off a terminal (then the terminal, if any, wraps). */
function fitWidth(stdout: OutputStream, opts: WriterOptions): number | undefined {
  if (opts.wide) return undefined;
  const width = opts.width ?? (stdout.isTTY ? stdout.columns : undefined);
  return width !== undefined && width > 0 ? width : undefined;
}

export interface ListWriter {
  /** Writes one record; returns a promise when the stream needs draining: await it. */
  write(record: unknown): void | Promise<void>;
  /** Finishes the output (closing `]`, last table, csv header of an empty list). Does not end the stream. */
  end(): Promise<void>;
}

/**
 * Runs `fill` with the writer, then ends it, also when `fill` throws (a later page failed, Ctrl-C):
 * standard output is then still a whole document (the closing `]`), and `fill`'s error is thrown.
 */
export async function writeWhole(writer: ListWriter, fill: (writer: ListWriter) => Promise<void>): Promise<void> {
  try {
    await fill(writer);
  } catch (err) {
    await writer.end().catch(() => undefined);
    throw err;
  }
  await writer.end();
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The cells of `record` for `columns`; a record that is not an object is its own single cell. */
function rowOf(record: unknown, columns: readonly string[]): unknown[] {
  return isPlainObject(record) ? columns.map((c) => getPath(record, c)) : [record];
}

function project(record: unknown, fields: readonly string[] | undefined): unknown {
  return fields && fields.length > 0 && isPlainObject(record) ? projectFields(record, fields) : record;
}

// Says once, at the end, which `--fields` no printed record has (a typo such as `emial` would
// otherwise print an empty column); an empty list says nothing.
function fieldChecker(opts: WriterOptions): { see(record: unknown): void; report(): void } | undefined {
  const { fields, notice } = opts;
  if (!fields || fields.length === 0 || !notice) return undefined;
  const missing = new Set(fields);
  let sample: string[] | undefined;
  let seen = 0;
  return {
    see(record) {
      if (!isPlainObject(record)) return;
      seen++;
      sample ??= Object.keys(record);
      for (const f of missing) if (getPath(record, f) !== undefined) missing.delete(f);
    },
    report() {
      if (seen === 0 || missing.size === 0) return;
      const names = [...missing].map((f) => JSON.stringify(f)).join(', ');
      const has = sample!.slice(0, 15).join(', ') + (sample!.length > 15 ? ', …' : '');
      const which = seen === 1 ? 'the record printed has no' : `none of the ${seen} records printed has`;
      notice(
        sanitizeForTerminal(`--fields: ${which} ${names}; ${seen === 1 ? 'its' : "the first one's"} fields: ${has}`),
      );
    },
  };
}

/** A streaming writer for a list of records in `format`. */
export function createListWriter(format: OutputFormat, stdout: OutputStream, opts: WriterOptions = {}): ListWriter {
  const writer = formatListWriter(format, stdout, opts);
  const check = fieldChecker(opts);
  if (!check) return writer;
  return {
    write(record) {
      check.see(record);
      return writer.write(record);
    },
    async end() {
      await writer.end();
      check.report();
    },
  };
}

function formatListWriter(format: OutputFormat, stdout: OutputStream, opts: WriterOptions): ListWriter {
  switch (format) {
    case 'json':
      return jsonListWriter(stdout, opts);
    case 'ndjson':
      return { write: (r) => writeChunk(stdout, `${safeJson(project(r, opts.fields))}\n`), end: async () => {} };
    case 'csv':
      return delimitedWriter(stdout, ',', opts);
    case 'tsv':
      return delimitedWriter(stdout, '\t', opts);
    case 'table':
      return tableWriter(stdout, opts);
  }
}

// `[`, records separated by `,\n`, `]`: byte for byte JSON.stringify(list, null, 2) + '\n'.
function jsonListWriter(stdout: OutputStream, opts: WriterOptions): ListWriter {
  let count = 0;
  return {
    write(record) {
      const body = safeJson(project(record, opts.fields), 2).replace(/\n/g, '\n  ');
      return writeChunk(stdout, `${count++ === 0 ? '[\n  ' : ',\n  '}${body}`);
    },
    async end() {
      await writeChunk(stdout, count === 0 ? '[]\n' : '\n]\n');
    },
  };
}

/** How many records a csv/tsv header is made of: a whole page at the largest page size (`--all`'s). */
export const HEADER_SAMPLE = PAGE_SIZE_MAX;

// Header from --fields, else from the first HEADER_SAMPLE records (headerColumns: the fields of them all, not of
// the first alone); an empty list: --fields, else the command's default columns. Those records wait until the
// header is known, later ones stream. A field the header lacks that a later record has is not in the file: said
// once, at the end, with the --fields that includes it (an export is the file a user reconciles back).
function delimitedWriter(stdout: OutputStream, sep: CsvSeparator, opts: WriterOptions): ListWriter {
  const cellOpts = { terminal: stdout.isTTY === true };
  const fields = opts.fields?.length ? opts.fields : undefined;
  let columns: string[] | undefined;
  let known = new Set<string>();
  let sample: unknown[] = [];
  const left = new Map<string, number>();
  const row = (cells: readonly unknown[]): string => `${csvRow(cells, sep, cellOpts)}\n`;
  // the header and the rows of the records held for it
  const begin = (): string => {
    const cols = (columns = fields ? [...fields] : headerColumns(sample, opts.columns));
    known = new Set(cols);
    const text = [row(cols.map(headerName)), ...sample.map((r) => row(rowOf(r, cols)))].join('');
    sample = [];
    return text;
  };
  return {
    write(record) {
      if (columns === undefined) {
        sample.push(record);
        return fields || sample.length >= HEADER_SAMPLE ? writeChunk(stdout, begin()) : undefined;
      }
      if (!fields && isPlainObject(record))
        for (const k of Object.keys(record)) if (!known.has(k)) left.set(k, (left.get(k) ?? 0) + 1);
      return writeChunk(stdout, row(rowOf(record, columns)));
    },
    async end() {
      if (columns === undefined && sample.length > 0) await writeChunk(stdout, begin());
      // an empty list is still a whole file: the header of --fields, else of the default columns
      const header = fields ?? opts.columns;
      if (columns === undefined && header?.length)
        await writeChunk(stdout, row((columns = [...header]).map(headerName)));
      if (left.size > 0) opts.notice?.(leftOutNotice(columns!, left));
    },
  };
}

/** What a csv/tsv left out: later records' fields the header lacks (how many records hold each), and how to have them. */
function leftOutNotice(columns: readonly string[], left: ReadonlyMap<string, number>): string {
  const names = [...left.keys()];
  const shown = names.slice(0, 10).map((f) => `${JSON.stringify(f)} (${plural(left.get(f)!, 'record')})`);
  const all = [...columns, ...names];
  // a name --fields can carry in a pasted command: no comma, quote, space or shell character
  const flag = all.every((f) => /^[\p{L}\p{N}_.-]+$/u.test(f))
    ? `--fields ${all.join(',')} (or -o ndjson)`
    : '-o ndjson';
  return sanitizeForTerminal(
    `Not in this file: fields that records after the first ${HEADER_SAMPLE} have and the header ` +
      `(the fields of those ${HEADER_SAMPLE}) lacks: ${shown.join(', ')}` +
      `${names.length > 10 ? `, and ${names.length - 10} more` : ''}. To include them: ${flag}.`,
  );
}

// Rows are buffered as display strings and printed as one table per `tableChunkSize` rows; the first
// chunk decides which columns fit, later chunks show the same ones. One notice, after the list.
function tableWriter(stdout: OutputStream, opts: WriterOptions): ListWriter {
  const chunkSize = Math.max(1, opts.tableChunkSize ?? 1000);
  const maxCellWidth = opts.wide ? 0 : (opts.maxCellWidth ?? DEFAULT_MAX_CELL_WIDTH);
  const width = fitWidth(stdout, opts);
  const pinned = opts.pinned ?? ['id'];
  let columns: string[] | undefined;
  let whole: boolean[] = [];
  let shown: boolean[] | undefined;
  let rows: string[][] = [];
  const seen = { hidden: new Set<string>(), hiddenEmpty: new Set<string>(), cut: new Set<string>() };
  const flush = async (): Promise<void> => {
    if (rows.length === 0 || columns === undefined) return;
    const [cols, batch] = [columns, rows];
    rows = [];
    const { renderTable } = await loadTableRenderer();
    const table = renderTable(cols, batch, {
      color: opts.color,
      maxCellWidth,
      width,
      pinned,
      whole: opts.whole,
      show: shown,
    });
    shown ??= table.shown;
    for (const k of ['hidden', 'hiddenEmpty', 'cut'] as const) table.layout[k].forEach((c) => seen[k].add(c));
    await writeChunk(stdout, table.text);
  };
  return {
    write(record) {
      if (columns === undefined) {
        columns = columnsFor(record, opts.fields, opts.columns);
        whole = columns.map((c) => isWholeColumn(c, pinned, opts.whole));
      }
      // the code-point cap bounds memory; table.ts cuts again by display width
      rows.push(rowOf(record, columns).map((v, i) => cellDisplay(v, whole[i] ? 0 : maxCellWidth)));
      return rows.length >= chunkSize ? flush() : undefined;
    },
    async end() {
      await flush();
      if (width === undefined || opts.notice === undefined) return;
      const hiddenEmpty = [...seen.hiddenEmpty].filter((c) => !seen.hidden.has(c));
      const shownPinned = pinned.filter((c) => columns?.includes(c));
      const notice = fitNotice(
        { widths: [], hidden: [...seen.hidden], hiddenEmpty, cut: [...seen.cut] },
        width,
        shownPinned,
      );
      if (notice) opts.notice(notice);
    },
  };
}

/** Writes one resource: json pretty-printed, ndjson/csv/tsv as a list of one, table as key/value rows. */
export async function writeRecord(
  format: OutputFormat,
  stdout: OutputStream,
  record: unknown,
  opts: WriterOptions = {},
): Promise<void> {
  const check = fieldChecker(opts);
  check?.see(record);
  await writeRecordAs(format, stdout, record, opts);
  check?.report();
}

async function writeRecordAs(
  format: OutputFormat,
  stdout: OutputStream,
  record: unknown,
  opts: WriterOptions,
): Promise<void> {
  if (format === 'json') return writeChunk(stdout, `${safeJson(project(record, opts.fields), 2)}\n`);
  if (format !== 'table') {
    const writer = formatListWriter(format, stdout, opts);
    await writer.write(record);
    return writer.end();
  }
  if (typeof record !== 'object' || record === null) {
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- not an object here
    const text = sanitizeForTerminal(record === null || record === undefined ? 'null' : String(record));
    return writeChunk(stdout, `${text}\n`);
  }
  const entries: Array<[string, unknown]> = opts.fields?.length
    ? opts.fields.map((f) => [f, getPath(record, f)])
    : Object.entries(record);
  if (entries.length === 0) return undefined;
  const width = fitWidth(stdout, opts);
  const { renderKeyValueTable } = await loadTableRenderer();
  let broken: string[] = [];
  await writeChunk(
    stdout,
    renderKeyValueTable(entries, { color: opts.color, width, onBroken: (keys) => (broken = keys) }),
  );
  if (broken.length > 0) {
    opts.notice?.(
      `Long values broken across lines to fit ${width} columns: ${broken.join(', ')}. To see them whole: --wide or -o json.`,
    );
  }
  return undefined;
}
