// Streams the rows of an import file: CSV through csv-parse (BOM, CRLF, quoted commas, quotes and
// newlines, ragged rows passed through for the row check to reject), or NDJSON (`.ndjson`/`.jsonl`,
// one JSON object per line). Every row carries the line it starts on. Memory holds the parser's
// read-ahead and at most one record (MAX_RECORD_BYTES, 1 MiB): a larger record is an invalid row
// (RECORD_TOO_LARGE, its cells not kept), skipped by a byte scan (RecordEndScanner) that never
// holds it. The file is UTF-8 (source.ts transcodes others); a row with a NUL byte or bytes that
// do not decode is an invalid row (INVALID_CHARACTER, INVALID_ENCODING), never sent with U+FFFD
// in place of what was written; in the header it is a UsageError. On the abort signal reading
// stops at once with InterruptedError, however long the record being read.
// A quoted field that is never closed makes the row it opens in an invalid row (UNCLOSED_QUOTE),
// and a fresh parser reads on from the next line, so the other rows are read as usual; the rows
// are a function of the bytes alone, so the check pass and the sending pass see the same rows and
// lines. Other malformed CSV (a header with an unclosed quote or beyond the size limit)
// stops with a UsageError that names the line; the engine reads the file once before sending
// anything, so that error comes before any request.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Transform, pipeline, type Readable } from 'node:stream';
import { CsvError, parse, type Options as CsvOptions } from 'csv-parse';
import { InterruptedError, UsageError } from '../http/errors.js';
import { textProblem, UTF8 } from './encoding.js';
import { LineIndex } from './line-index.js';
import { openNdjson } from './ndjson-reader.js';
import {
  brokenQuoteAt, countLines, CR, hasLineBreak, LF, RecordEndScanner, splitLine, UNCLOSED_QUOTE_CODE, UNCLOSED_QUOTE_REASON,
  type RecordEnd,
} from './quote-scan.js';

export { splitLine, UNCLOSED_QUOTE_CODE, UNCLOSED_QUOTE_REASON } from './quote-scan.js';

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
  /** largest record (CSV) or line (NDJSON) read; a larger one is an invalid row (default MAX_RECORD_BYTES) */
  maxRecordBytes?: number;
  /** the encoding the file was transcoded from, for messages (the file itself is UTF-8) */
  encoding?: string;
  /** stops reading at once (InterruptedError) */
  signal?: AbortSignal;
}

/** The largest row read (CSV record or NDJSON line), in bytes: an API row is far smaller, and memory stays a few times this. */
export const MAX_RECORD_BYTES = 1024 * 1024;
/** `_error_code` of a row over MAX_RECORD_BYTES */
export const RECORD_TOO_LARGE_CODE = 'RECORD_TOO_LARGE';

/** The error for reading stopped by the abort signal (Ctrl-C). */
export function readInterrupted(name: string): InterruptedError {
  return new InterruptedError(`interrupted while reading ${name === '-' ? 'standard input' : name}; nothing more was sent`);
}

export function tooLargeReason(max: number): string {
  return `the row is larger than ${formatBytes(max)}, the limit for one row, so it is not copied here: fix or remove it in the input file`;
}

export function detectFormat(path: string): InputFormat {
  return /\.(ndjson|jsonl)$/i.test(path) ? 'ndjson' : 'csv';
}

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
  if (opts.signal?.aborted) throw readInterrupted(name);
  const format = opts.format ?? detectFormat(path);
  const o = { ...opts, name, maxRecordBytes: opts.maxRecordBytes ?? MAX_RECORD_BYTES, encoding: opts.encoding ?? UTF8 };
  return format === 'csv' ? openCsv(path, o) : openNdjson(path, o);
}

export type ReaderOptions = OpenInputOptions & { name: string; maxRecordBytes: number; encoding: string };

interface CsvRecord {
  record: string[];
  info: { bytes: number };
}

/** One parser over the file from `start` (a line start) to its end. */
interface Segment {
  /** absolute byte offset the segment's stream starts at; csv-parse's `info.bytes` count from here */
  start: number;
  file: Readable;
  parser: ReturnType<typeof parse>;
  index: LineIndex;
  it: AsyncIterator<CsvRecord>;
  /** bytes the segment's stream has read */
  read: number;
  /** the first malformed record, reported through on_skip, and how many records came before it */
  malformedAt?: { err: CsvError; records: number };
  /** a record went over the size limit: no more bytes go to the parser (it would hold them all) */
  halted: boolean;
  /** resolves when halted */
  halt: Promise<typeof HALT>;
  wake(): void;
  /** the iterator's next() not yet consumed (a pull that lost its race against halt) */
  pending?: Promise<IteratorResult<CsvRecord>>;
  readError?: unknown;
  /** absolute end of the last record read */
  prevEnd: number;
  /** records read (header included) */
  consumed: number;
}

const HALT = Symbol('halt');

async function openCsv(path: string, o: ReaderOptions): Promise<InputReader> {
  const { name, onChunk, signal, encoding } = o;
  const maxRecord = o.maxRecordBytes;
  // Every byte goes to onChunk once, in order, however the segments overlap: a resumed parser reads
  // again bytes an earlier one had read ahead, and only those beyond are new.
  let seen = 0;
  const saw = (at: number, chunk: Buffer): void => {
    const end = at + chunk.length;
    if (end <= seen) return;
    onChunk?.(at >= seen ? chunk : chunk.subarray(seen - at));
    seen = end;
  };
  const options = (first: boolean, seg: Partial<Segment>): CsvOptions => ({
    // a BOM only counts at the very start of the file, not at a line a resumed parser starts on
    bom: first,
    info: true,
    relax_column_count: true,
    skip_empty_lines: true,
    // a file may mix line ends (files concatenated from two systems): accept all three rather than
    // let the first one found make the others part of a field, which would merge two rows
    record_delimiter: ['\r\n', '\n', '\r'],
    // a quote inside an unquoted field (`37°36'37.8"N`) is kept as a character
    relax_quotes: true,
    max_record_size: maxRecord,
    // A malformed record is reported through on_skip rather than as a stream error: a stream error
    // would throw away the good records still buffered before it, and with them where it starts.
    // The first one is kept and acted on once every record before it has been read.
    skip_records_with_error: true,
    on_skip: (err) => {
      if (!err) return;
      if (!seg.malformedAt) seg.malformedAt = { err, records: Number(err.records ?? 0) };
      if (err.code === 'CSV_MAX_RECORD_SIZE' && !seg.halted) {
        seg.halted = true;
        seg.wake!();
      }
    },
  });

  /** A parser over the bytes from `start`, which is the start of line `line`. */
  const openSegment = (start: number, line: number): Segment => {
    const stream = createReadStream(path, { start, signal });
    const index = new LineIndex(start, line);
    const s: Partial<Segment> = { start, file: stream, index, read: 0, prevEnd: start, consumed: 0, halted: false };
    s.halt = new Promise((resolve) => (s.wake = () => resolve(HALT)));
    const parser = parse(options(start === 0, s));
    s.parser = parser;
    const indexer = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        // halted: never called back, so the file stops being read (the segment is closed soon)
        if (s.halted) return;
        saw(start + s.read!, chunk);
        s.read! += chunk.length;
        index.push(chunk);
        cb(null, chunk);
      },
    });
    const done = (err: NodeJS.ErrnoException | null): void => {
      if (err) s.readError = err;
    };
    pipeline(stream, indexer, parser, done);
    s.it = parser[Symbol.asyncIterator]() as AsyncIterator<CsvRecord>;
    return s as Segment;
  };

  let seg = openSegment(0, 1);
  let headerRead = false;
  let header: string[] = [];
  const fail = (err: unknown): never => {
    if (signal?.aborted) throw readInterrupted(name);
    seg.index.advanceTo(seg.prevEnd);
    throw malformed(err, name, seg.index.startLine(), maxRecord);
  };

  /**
   * Resumes after a quoted field that opens and is never closed. csv-parse finds out in one of two
   * ways: at the end of the file (the quote swallowed every line after it: CSV_QUOTE_NOT_CLOSED),
   * or, more often, when a later quote (the next row's `"Doe, Jane"`, another unclosed quote)
   * "closes" it, not followed by a comma or a line end (relax_quotes keeps such a record and all
   * the lines it swallowed). Either way the lines of the record up to the one where that quote
   * opens become one invalid row, on the line the record starts on, and a new parser reads on
   * from the next line. `bytes`: the record's bytes from its first line on; `open`: where the
   * broken quote is in them.
   */
  const resume = (line: number, bytes: Buffer, open: number): ReadRow => {
    const { index } = seg;
    let end = open;
    while (end < bytes.length && bytes[end] !== CR && bytes[end] !== LF) end++;
    let next = end;
    if (bytes[next] === CR) next++;
    if (bytes[next] === LF && (next === end || bytes[end] === CR)) next++;
    const at = index.offset + next;
    const quoteLine = line + countLines(bytes.subarray(0, open));
    index.advanceTo(at);
    const nextLine = index.cursorLine;
    closeSegment(seg);
    seg = openSegment(at, nextLine);
    const reason = quoteLine === line ? UNCLOSED_QUOTE_REASON : UNCLOSED_QUOTE_REASON.replace('on this line', `on line ${quoteLine}`);
    return { line, raw: splitLine(bytes.subarray(0, end).toString('utf8')), error: { code: UNCLOSED_QUOTE_CODE, reason } };
  };

  /** CSV_QUOTE_NOT_CLOSED: the record starting after the last one read runs to the end of the file. */
  const unclosedAtEnd = (): ReadRow => {
    const { index } = seg;
    index.advanceTo(seg.prevEnd);
    const line = index.startLine();
    const bytes = index.peek();
    const open = brokenQuoteAt(bytes);
    return resume(line, bytes, open < 0 ? 0 : open);
  };

  /**
   * A record over the size limit (the parser stopped being fed when it went over): where it ends
   * is found by scanning the bytes from its start, and the reading resumes after it. If the scan
   * finds a quote that is never closed on a line short enough to hold, it is that (UNCLOSED_QUOTE).
   */
  const tooLarge = async (): Promise<ReadRow> => {
    const { index } = seg;
    index.advanceTo(seg.prevEnd);
    const line = index.startLine();
    const start = index.offset;
    const found = await findRecordEnd(start);
    if (found.brokenQuote !== undefined && found.end - start <= maxRecord) {
      return resume(line, index.peek(found.end), found.brokenQuote - start);
    }
    closeSegment(seg);
    seg = openSegment(found.end, line + found.lines);
    return { line, raw: [], error: { code: RECORD_TOO_LARGE_CODE, reason: tooLargeReason(maxRecord) } };
  };

  const findRecordEnd = async (start: number): Promise<RecordEnd> => {
    const scanner = new RecordEndScanner(start);
    let at = start;
    try {
      for await (const chunk of createReadStream(path, { start, signal }) as AsyncIterable<Buffer>) {
        saw(at, chunk);
        at += chunk.length;
        const found = scanner.push(chunk);
        if (found) return found;
      }
      return scanner.finish();
    } catch (err) {
      if (signal?.aborted) throw readInterrupted(name);
      throw new UsageError(`cannot read ${name}: ${(err as Error).message}`, { cause: err });
    }
  };

  /** The next record of segment `s`; undefined when the parser was halted and every record before the large one is read. */
  const pull = async (s: Segment, broken: () => boolean): Promise<IteratorResult<CsvRecord> | undefined> => {
    if (!s.pending) {
      s.pending = s.it.next();
      s.pending.catch(() => undefined); // abandoned when the segment closes
    }
    const p = s.pending;
    const got = await Promise.race([p, s.halt]);
    if (got === HALT && broken()) return undefined;
    s.pending = undefined;
    return got === HALT ? p : got;
  };

  type Next = { cells: string[]; line: number } | { row: ReadRow };
  const next = async (): Promise<Next | null> => {
    if (signal?.aborted) throw readInterrupted(name);
    const s = seg;
    const broken = (): boolean => s.malformedAt !== undefined && s.consumed >= s.malformedAt.records;
    const onBroken = async (): Promise<Next> => {
      const err = s.malformedAt!.err;
      if (headerRead && err.code === 'CSV_QUOTE_NOT_CLOSED') return { row: unclosedAtEnd() };
      if (headerRead && err.code === 'CSV_MAX_RECORD_SIZE') return { row: await tooLarge() };
      return fail(err);
    };
    if (broken()) return onBroken();
    let r: IteratorResult<CsvRecord> | undefined;
    try {
      r = await pull(s, broken);
    } catch (err) {
      return fail(err);
    }
    if (signal?.aborted) throw readInterrupted(name);
    if (broken() || !r) return onBroken();
    if (r.done) {
      if (s.readError) throw new UsageError(`cannot read ${name}: ${(s.readError as Error).message}`, { cause: s.readError });
      return null;
    }
    s.consumed++;
    s.index.advanceTo(s.prevEnd);
    const line = s.index.startLine();
    s.prevEnd = s.start + r.value.info.bytes;
    const cells = r.value.record;
    // only a record over several lines can hold a quote that swallowed the lines after it
    if (headerRead && cells.some(hasLineBreak)) {
      const bytes = s.index.peek(s.prevEnd);
      const open = brokenQuoteAt(bytes);
      if (open >= 0) return { row: resume(line, bytes, open) };
    }
    const where = (i: number): string => (headerRead ? `column ${JSON.stringify(header[i] ?? String(i + 1))}` : `the header (line ${line})`);
    const bad = textProblem(cells, () => s.index.peek(s.prevEnd), encoding, where);
    if (bad && !headerRead) throw new UsageError(`${name}: ${bad.reason}`, { code: bad.code, hint: 'crm batch reads CSV or NDJSON text' });
    if (bad) return { row: { line, raw: cells, error: bad } };
    return { cells, line };
  };

  let first: Next | null;
  try {
    first = await next();
    while (first && 'cells' in first && isBlank(first.cells)) first = await next();
  } catch (err) {
    close();
    throw err;
  }
  if (!first || !('cells' in first)) {
    close();
    throw new UsageError(`${name} is empty: a header row is required`, {
      hint: 'the first line names the fields, e.g. "email,first_name,last_name"',
    });
  }
  headerRead = true;
  header = first.cells;
  function closeSegment(s: Segment): void {
    s.file.destroy();
    s.parser.destroy();
  }
  function close(): void {
    closeSegment(seg);
  }
  async function* rows(): AsyncGenerator<ReadRow, void, undefined> {
    try {
      for (;;) {
        const r = await next();
        if (!r) return;
        if ('row' in r) {
          yield r.row;
          continue;
        }
        if (isBlank(r.cells)) continue;
        yield { line: r.line, cells: r.cells, raw: r.cells };
      }
    } finally {
      close();
    }
  }
  return { format: 'csv', header, rows: rows(), bytesRead: () => seen, close };
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

export function formatBytes(n: number): string {
  return n >= 1048576 ? `${Math.round(n / 1048576)} MiB` : n >= 1024 ? `${Math.round(n / 1024)} KiB` : `${n} bytes`;
}
