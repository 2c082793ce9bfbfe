// The CSV reader (reader.ts explains what it promises): csv-parse over segments of the file, a new
// segment after an unclosed quote or a record over the size limit, line numbers from LineIndex.
import { createReadStream } from 'node:fs';
import { Transform, pipeline, type Readable } from 'node:stream';
import { CsvError, parse, type Options as CsvOptions } from 'csv-parse';
import { UsageError } from '../http/errors.js';
import { textProblem } from './encoding.js';
import {
  formatBytes,
  isTooLargePlaceholder,
  RECORD_TOO_LARGE_CODE,
  readInterrupted,
  tooLargeReason,
  type InputReader,
  type ReaderOptions,
  type ReadRow,
} from './input-row.js';
import { LineIndex } from './line-index.js';
import {
  brokenQuoteAt,
  countLines,
  CR,
  hasLineBreak,
  LF,
  RecordEndScanner,
  splitLine,
  UNCLOSED_QUOTE_CODE,
  UNCLOSED_QUOTE_REASON,
  type RecordEnd,
} from './quote-scan.js';

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

export async function openCsv(path: string, o: ReaderOptions): Promise<InputReader> {
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
    const last = Math.max(line, line + found.lines - 1);
    return {
      line,
      raw: [],
      error: { code: RECORD_TOO_LARGE_CODE, reason: tooLargeReason(maxRecord, { name, format: 'csv', first: line, last }) },
    };
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
  // only a file with the rejects file's `_error_code` column can hold a placeholder row
  const placeholderCheck = header.some((h) => h.trim() === '_error_code');
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
        if (placeholderCheck && isTooLargePlaceholder(r.cells.map((c, i) => [header[i] ?? '', c] as const))) {
          o.onPlaceholder?.(r.line);
          continue;
        }
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
