// Streams the rows of an import file: CSV through csv-parse (BOM, CRLF, quoted commas, quotes and
// newlines, ragged rows passed through for the row check to reject), or NDJSON (`.ndjson`/`.jsonl`,
// one JSON object per line). Every row carries the line it starts on. Memory holds the parser's
// read-ahead only. A malformed CSV (an unclosed quote, a stray quote) stops with a UsageError that
// names the line; the engine reads the file once before sending anything, so that error comes
// before any request.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { Transform, pipeline, type Readable } from 'node:stream';
import { CsvError, parse } from 'csv-parse';
import { UsageError } from '../http/errors.js';
import { LineIndex } from './line-index.js';
import { INVALID_CODES } from './rows.js';

export type InputFormat = 'csv' | 'ndjson';

/** The original values of a row, as written: CSV cells, an NDJSON object, or an NDJSON line that is not one. */
export type RawRow = string[] | Record<string, unknown> | string;

export interface ReadRow {
  /** the 1-based line the row starts on */
  line: number;
  /** CSV: the cells (as many as the row has, which may differ from the header) */
  cells?: string[];
  /** NDJSON: the parsed value of the line */
  json?: unknown;
  raw: RawRow;
  /** NDJSON: the line is not JSON */
  error?: { code: string; reason: string };
}

export interface InputReader {
  readonly format: InputFormat;
  /** CSV: the header row's cells; NDJSON: null */
  readonly header: string[] | null;
  readonly rows: AsyncGenerator<ReadRow, void, undefined>;
  /** bytes read so far (for progress / ETA) */
  bytesRead(): number;
  /** stop reading early (the generator's return() does the same) */
  close(): void;
}

export interface OpenInputOptions {
  format?: InputFormat;
  /** how the file is named in messages (`-` for stdin) */
  name?: string;
  /** every chunk of bytes read, in order (hashing) */
  onChunk?: (chunk: Buffer) => void;
  /** largest CSV record accepted; beyond it the file is malformed (default 64 MiB) */
  maxRecordBytes?: number;
}

export function detectFormat(path: string): InputFormat {
  return /\.(ndjson|jsonl)$/i.test(path) ? 'ndjson' : 'csv';
}

const DEFAULT_MAX_RECORD = 64 * 1024 * 1024;

/** Opens the file and reads its header (CSV) or first record (NDJSON). */
export async function openInput(path: string, opts: OpenInputOptions = {}): Promise<InputReader> {
  const name = opts.name ?? path;
  try {
    const st = await stat(path);
    if (st.isDirectory()) throw new UsageError(`cannot read ${name}: it is a directory`);
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`cannot read ${name}: ${(err as Error).message}`, { cause: err });
  }
  let bytes = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      bytes += chunk.length;
      opts.onChunk?.(chunk);
      cb(null, chunk);
    },
  });
  const file = createReadStream(path);
  const format = opts.format ?? detectFormat(path);
  if (format === 'ndjson') return openNdjson(file, tap, name, () => bytes);
  return openCsv(file, tap, name, () => bytes, opts.maxRecordBytes ?? DEFAULT_MAX_RECORD);
}

async function openCsv(file: Readable, tap: Transform, name: string, bytes: () => number, maxRecord: number): Promise<InputReader> {
  const index = new LineIndex();
  // A malformed record is reported through on_skip rather than as a stream error: a stream error
  // would throw away the good records still buffered before it, and with them where it starts.
  // The first one is kept and thrown once every record before it has been read.
  let malformedAt: { err: CsvError; records: number } | undefined;
  const parser = parse({
    bom: true,
    info: true,
    relax_column_count: true,
    skip_empty_lines: true,
    // a file may mix line ends (files concatenated from two systems): accept all three rather than
    // let the first one found make the others part of a field, which would merge two rows
    record_delimiter: ['\r\n', '\n', '\r'],
    // a quote inside an unquoted field (`37°36'37.8"N`) is kept as a character
    relax_quotes: true,
    max_record_size: maxRecord,
    skip_records_with_error: true,
    on_skip: (err) => {
      if (err && !malformedAt) malformedAt = { err, records: Number(err.records ?? 0) };
    },
  });
  const indexer = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      index.push(chunk);
      cb(null, chunk);
    },
  });
  let readError: unknown;
  pipeline(file, tap, indexer, parser, (err) => {
    if (err) readError = err;
  });
  const it = parser[Symbol.asyncIterator]() as AsyncIterator<{ record: string[]; info: { bytes: number } }>;
  let prevEnd = 0;
  let consumed = 0;
  const fail = (err: unknown): never => {
    index.advanceTo(prevEnd);
    throw malformed(err, name, index.startLine(), maxRecord);
  };

  const next = async (): Promise<{ cells: string[]; line: number } | null> => {
    if (malformedAt && consumed >= malformedAt.records) fail(malformedAt.err);
    let r: IteratorResult<{ record: string[]; info: { bytes: number } }>;
    try {
      r = await it.next();
    } catch (err) {
      return fail(err);
    }
    if (malformedAt && consumed >= malformedAt.records) fail(malformedAt.err);
    if (r.done) {
      if (readError) throw new UsageError(`cannot read ${name}: ${(readError as Error).message}`, { cause: readError });
      return null;
    }
    consumed++;
    index.advanceTo(prevEnd);
    const line = index.startLine();
    prevEnd = r.value.info.bytes;
    return { cells: r.value.record, line };
  };

  let first: { cells: string[]; line: number } | null;
  try {
    first = await next();
    while (first && isBlank(first.cells)) first = await next();
  } catch (err) {
    close();
    throw err;
  }
  if (!first) {
    close();
    throw new UsageError(`${name} is empty: a header row is required`, {
      hint: 'the first line names the fields, e.g. "email,first_name,last_name"',
    });
  }
  const header = first.cells;
  function close(): void {
    file.destroy();
    parser.destroy();
  }
  async function* rows(): AsyncGenerator<ReadRow, void, undefined> {
    try {
      for (;;) {
        const r = await next();
        if (!r) return;
        if (isBlank(r.cells)) continue;
        yield { line: r.line, cells: r.cells, raw: r.cells };
      }
    } finally {
      close();
    }
  }
  return { format: 'csv', header, rows: rows(), bytesRead: bytes, close };
}

async function openNdjson(file: Readable, tap: Transform, name: string, bytes: () => number): Promise<InputReader> {
  let readError: unknown;
  pipeline(file, tap, (err) => {
    if (err) readError = err;
  });
  const lines = createInterface({ input: tap, crlfDelay: Infinity });
  const it = lines[Symbol.asyncIterator]();
  let lineNo = 0;
  const close = (): void => {
    lines.close();
    file.destroy();
  };
  const next = async (): Promise<ReadRow | null> => {
    for (;;) {
      const r = await it.next();
      if (r.done) {
        if (readError) throw new UsageError(`cannot read ${name}: ${(readError as Error).message}`, { cause: readError });
        return null;
      }
      lineNo++;
      let text = r.value;
      if (lineNo === 1 && text.startsWith('\ufeff')) text = text.slice(1);
      if (text.trim() === '') continue;
      try {
        const json: unknown = JSON.parse(text);
        const raw = json !== null && typeof json === 'object' && !Array.isArray(json) ? (json as Record<string, unknown>) : text;
        return { line: lineNo, json, raw };
      } catch (err) {
        return { line: lineNo, raw: text, error: { code: INVALID_CODES.json, reason: `not valid JSON: ${(err as Error).message}` } };
      }
    }
  };
  const first = await next();
  if (!first) {
    close();
    throw new UsageError(`${name} is empty: no JSON object to import`);
  }
  async function* rows(): AsyncGenerator<ReadRow, void, undefined> {
    try {
      yield first!;
      for (;;) {
        const r = await next();
        if (!r) return;
        yield r;
      }
    } finally {
      close();
    }
  }
  return { format: 'ndjson', header: null, rows: rows(), bytesRead: bytes, close };
}

function isBlank(cells: readonly string[]): boolean {
  return cells.every((c) => c.trim() === '');
}

function isCsvError(err: unknown): err is CsvError {
  return err instanceof CsvError;
}

function malformed(err: unknown, name: string, line: number, maxRecord: number): UsageError {
  if (!isCsvError(err)) return new UsageError(`cannot read ${name}: ${(err as Error).message}`, { cause: err });
  const where = `${name}, line ${line}`;
  switch (err.code) {
    case 'CSV_QUOTE_NOT_CLOSED':
      return new UsageError(`${where}: a quoted field starts here and is never closed, so the rest of the file cannot be read`, {
        code: err.code,
        cause: err,
        hint: 'close the quote (a quote inside a quoted field is written twice: "")',
      });
    case 'CSV_MAX_RECORD_SIZE':
      return new UsageError(`${where}: the record starting here is larger than ${formatBytes(maxRecord)} (an unclosed quote?)`, {
        code: err.code,
        cause: err,
      });
    default:
      return new UsageError(`${where}: malformed CSV in the record starting here: ${err.message}`, { code: err.code, cause: err });
  }
}

function formatBytes(n: number): string {
  return n >= 1048576 ? `${Math.round(n / 1048576)} MiB` : n >= 1024 ? `${Math.round(n / 1024)} KiB` : `${n} bytes`;
}
