// An import file's rows, CSV or NDJSON, each with its line: a function of the bytes alone. Below: what the readers
// hand out, then the CSV reader.
import { isUtf8 } from 'node:buffer';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { CsvError } from 'csv-parse';
import { InterruptedError, UsageError } from '../../http/errors.js';
import { parseJson } from '../../json/exact-json.js';
import { countLines, CR, LF, splitLines } from '../../util/lines.js';
import { unescapeTsv } from '../../output/csv.js';
import { INVALID_CODES, type InputFormat, type RawRow } from '../shapes.js';
import { Segment } from './csv-segment.js';
import { openJsonArray } from './json-array.js';
import type { InputReader, OpenInputOptions, ReaderOptions, ReadRow } from './rows.js';
export type { InputReader, OpenInputOptions, ReaderOptions, ReadRow } from './rows.js';
import * as q from './quote-scan.js';
import { INVALID_ENCODING, textProblem, undecodable, UTF8 } from './source.js';

export { splitLine, UNCLOSED_QUOTE_CODE, UNCLOSED_QUOTE_REASON } from './quote-scan.js';
/** The rows' shape by the file's name: objects (`.ndjson`, `.jsonl`, a `.json` array) or a header and cells. */
export function detectFormat(path: string): InputFormat {
  return /\.(ndjson|jsonl|json)$/i.test(path) ? 'ndjson' : 'csv';
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
  // crm's own -o tsv (one row a line, backslash escapes) and -o json (an array): read back as they were written
  if (format === 'csv' && /\.tsv$/i.test(name)) return openLines(path, o, 'tsv');
  if (format === 'ndjson' && /\.json$/i.test(name))
    return openJsonArray(
      path,
      o,
      (text, line) => jsonRow(text, line, o),
      (line) => lineRow(null, line, o, 'ndjson') as ReadRow,
    );
  return format === 'csv' ? new CsvReader(path, o).open() : openLines(path, o, 'ndjson');
}

// NDJSON rows, split on bytes (LF, CRLF, CR): a line over the limit is dropped as read (RECORD_TOO_LARGE),
// one that is not JSON or not UTF-8 is an invalid row.
/** One line's row; `skip` for a blank line or a placeholder row of a fed-back rejects file. */
function lineRow(buf: Buffer | null, line: number, o: ReaderOptions, kind: 'ndjson' | 'tsv'): ReadRow | 'skip' {
  if (buf === null) {
    const reason = tooLargeReason(o.maxRecordBytes, { name: o.name, format: 'ndjson', first: line, last: line });
    return { line, raw: '', error: { code: RECORD_TOO_LARGE_CODE, reason } };
  }
  if (line === 1 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) buf = buf.subarray(3);
  const text = buf.toString('utf8');
  if (!isUtf8(buf))
    return { line, raw: text, error: { code: INVALID_ENCODING, reason: undecodable(o.encoding, 'the line') } };
  if (text.trim() === '') return 'skip';
  if (kind === 'tsv') {
    const cells = text.split('\t').map(unescapeTsv);
    return { line, cells, raw: cells };
  }
  return jsonRow(text, line, o);
}

/** One JSON text's row (an NDJSON line, an element of a JSON array); `skip` for a placeholder row of a fed-back rejects file. */
function jsonRow(text: string, line: number, o: ReaderOptions): ReadRow | 'skip' {
  let json: unknown;
  try {
    // a number no double holds is kept as its digits (RawNumber) and sent as written: never rounded
    json = parseJson(text);
  } catch (err) {
    return {
      line,
      raw: text,
      error: { code: INVALID_CODES.json, reason: `not valid JSON: ${(err as Error).message}` },
    };
  }
  const raw =
    json !== null && typeof json === 'object' && !Array.isArray(json) ? (json as Record<string, unknown>) : text;
  if (typeof raw === 'object' && isTooLargePlaceholder(Object.entries(raw))) {
    o.onPlaceholder?.(line);
    return 'skip';
  }
  return { line, json, raw };
}

/** NDJSON, or crm's TSV (its first line the header): one row a line. */
async function openLines(path: string, o: ReaderOptions, kind: 'ndjson' | 'tsv'): Promise<InputReader> {
  let bytes = 0;
  const file = createReadStream(path, { signal: o.signal });
  async function* tap(): AsyncGenerator<Buffer, void, undefined> {
    for await (const chunk of file as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      o.onChunk?.(chunk);
      yield chunk;
    }
  }
  const lines = splitLines(tap(), o.maxRecordBytes);
  let lineNo = 0;
  let placeholders = 0;
  const close = (): void => {
    file.destroy();
    void lines.return(undefined).catch(() => undefined);
  };
  const lo = { ...o, onPlaceholder: (l: number) => (placeholders++, o.onPlaceholder?.(l)) };
  const next = async (): Promise<ReadRow | null> => {
    for (;;) {
      const r = await lines.next().catch((err: unknown) => {
        if (o.signal?.aborted) throw readInterrupted(o.name);
        throw new UsageError(`cannot read ${o.name}: ${(err as Error).message}`, { cause: err });
      });
      if (o.signal?.aborted) throw readInterrupted(o.name);
      if (r.done) return null;
      const row = lineRow(r.value, ++lineNo, lo, kind);
      if (row !== 'skip') return row;
    }
  };
  const opened = async (): Promise<[ReadRow | null, string[] | null]> => {
    const head = kind === 'tsv' ? ((await next())?.cells ?? null) : null;
    if (kind === 'tsv' && head === null) throw new UsageError(`${o.name} is empty: no header line`);
    return [await next(), head];
  };
  const [first, header] = await opened().catch((err: unknown) => {
    close();
    throw err;
  });
  // a fed-back rejects file of placeholder rows only is not empty: it is imported as no rows
  if (!first && placeholders === 0 && kind === 'ndjson') {
    close();
    throw new UsageError(`${o.name} is empty: no JSON object to import`);
  }
  async function* rows(): AsyncGenerator<ReadRow, void, undefined> {
    try {
      for (let r = first; r; r = await next()) yield r;
    } finally {
      close();
    }
  }
  return { format: kind === 'tsv' ? 'csv' : 'ndjson', header, rows: rows(), bytesRead: () => bytes, close };
}

// What the readers hand out (rows.ts: their types), and the row-size limit shared by the readers.
/** The largest row read (CSV record or NDJSON line), in bytes: an API row is far smaller, and memory stays a few times this. */
export const MAX_RECORD_BYTES = 1024 * 1024;
/** `_error_code` of a row over MAX_RECORD_BYTES */
export const RECORD_TOO_LARGE_CODE = 'RECORD_TOO_LARGE';

export function readInterrupted(name: string): InterruptedError {
  return new InterruptedError(
    `interrupted while reading ${name === '-' ? 'standard input' : name}; nothing more was sent`,
  );
}

/** Why a row over the limit has no cells in the rejects file, and how to import it (a new file, as a changed file is refused). */
export function tooLargeReason(
  max: number,
  at: { name: string; format: InputFormat; first: number; last: number },
): string {
  const lines = at.last > at.first ? `lines ${at.first}–${at.last}` : `line ${at.first}`;
  const file = at.name === '-' ? 'standard input' : at.name;
  const into = at.format === 'csv' ? 'a new file under a copy of its header line' : 'a new .ndjson file';
  return (
    `the row is larger than ${formatBytes(max)}, the limit for one row, so its cells are not copied here ` +
    `(importing this file skips this row): copy ${lines} of ${file} into ${into}, shorten the row, and import that file`
  );
}

const REJECT_KEYS = new Set(['_line', '_error_code', '_error_message', '_raw']);

/** A RECORD_TOO_LARGE row of a fed-back rejects file: skipped with a notice, not an EMPTY_ROW reject. */
export function isTooLargePlaceholder(cells: Iterable<readonly [string, unknown]>): boolean {
  let marked = false;
  for (const [k, v] of cells) {
    const key = k.trim();
    if (key === '_error_code') marked = v === RECORD_TOO_LARGE_CODE;
    else if (!REJECT_KEYS.has(key) && !(typeof v === 'string' && v.trim() === '')) return false;
  }
  return marked;
}

export function formatBytes(n: number): string {
  return n >= 1048576 ? `${Math.round(n / 1048576)} MiB` : n >= 1024 ? `${Math.round(n / 1024)} KiB` : `${n} bytes`;
}

export type { InputFormat, RawRow };

// The CSV reader: csv-parse over segments of the file (csv-segment.ts), a new segment after an unclosed quote or a
// record over the size limit.
type Next = { cells: string[]; line: number } | { row: ReadRow };

const isBlank = (cells: readonly string[]): boolean => cells.every((c) => c.trim() === '');

export class CsvReader {
  /** bytes handed to onChunk: every byte once, in order, however the segments overlap */
  private seen = 0;
  private seg: Segment;
  private headerRead = false;
  private header: string[] = [];

  constructor(
    private readonly path: string,
    private readonly o: ReaderOptions,
  ) {
    this.seg = this.segment(0, 1);
  }

  private readonly saw = (at: number, chunk: Buffer): void => {
    const end = at + chunk.length;
    if (end <= this.seen) return;
    this.o.onChunk?.(at >= this.seen ? chunk : chunk.subarray(this.seen - at));
    this.seen = end;
  };

  private segment(start: number, line: number): Segment {
    return new Segment(this.path, start, line, this.o.maxRecordBytes, this.saw, this.o.signal);
  }

  private restartAt(start: number, line: number): void {
    this.seg.close();
    this.seg = this.segment(start, line);
  }

  close(): void {
    this.seg.close();
  }

  /** The header, then the rows. */
  async open(): Promise<InputReader> {
    let first: Next | null;
    try {
      do first = await this.next();
      while (first && 'cells' in first && isBlank(first.cells));
    } catch (err) {
      this.close();
      throw err;
    }
    if (!first || !('cells' in first)) {
      this.close();
      throw new UsageError(`${this.o.name} is empty: a header row is required`, {
        hint: 'the first line names the fields, e.g. "email,first_name,last_name"',
      });
    }
    this.headerRead = true;
    const bare = this.o.headerless?.(first.cells);
    this.header = bare ?? first.cells;
    const rows = this.rows(bare ? { line: first.line, cells: first.cells, raw: first.cells } : undefined);
    return { format: 'csv', header: this.header, rows, bytesRead: () => this.seen, close: () => this.close() };
  }

  /** `data`: a first line that is a row, not the header */
  private async *rows(data?: ReadRow): AsyncGenerator<ReadRow, void, undefined> {
    const { header } = this;
    // only a file with the rejects file's `_error_code` column can hold a placeholder row
    const placeholders = header.some((h) => h.trim() === '_error_code');
    try {
      if (data) yield data;
      for (let r = await this.next(); r; r = await this.next()) {
        if ('row' in r) yield r.row;
        else if (isBlank(r.cells)) continue;
        else if (placeholders && isTooLargePlaceholder(r.cells.map((c, i) => [header[i] ?? '', c] as const)))
          this.o.onPlaceholder?.(r.line);
        else yield { line: r.line, cells: r.cells, raw: r.cells };
      }
    } finally {
      this.close();
    }
  }

  private interrupted(): InterruptedError {
    return readInterrupted(this.o.name);
  }

  private async next(): Promise<Next | null> {
    const { o } = this;
    if (o.signal?.aborted) throw this.interrupted();
    const s = this.seg;
    let r;
    try {
      r = await s.next();
    } catch (err) {
      return this.fail(err);
    }
    if (o.signal?.aborted) throw this.interrupted();
    if (r === undefined) return this.onBroken(s);
    if (r === null) {
      if (s.readError)
        throw new UsageError(`cannot read ${o.name}: ${(s.readError as Error).message}`, { cause: s.readError });
      return null;
    }
    const { cells, line, end } = r;
    // only a record over several lines can hold a quote that swallowed the lines after it
    if (this.headerRead && cells.some(q.hasLineBreak)) {
      const bytes = s.peek(end);
      const open = q.brokenQuoteAt(bytes);
      if (open >= 0) return { row: this.resume(line, bytes, open) };
    }
    const where = (i: number): string =>
      this.headerRead ? `column ${JSON.stringify(this.header[i] ?? String(i + 1))}` : `the header (line ${line})`;
    const bad = textProblem(cells, () => s.peek(end), o.encoding, where);
    if (bad && !this.headerRead)
      throw new UsageError(`${o.name}: ${bad.reason}`, { code: bad.code, hint: 'crm batch reads CSV or NDJSON text' });
    return bad ? { row: { line, raw: cells, error: bad } } : { cells, line };
  }

  private async onBroken(s: Segment): Promise<Next> {
    const err = s.malformedAt!.err;
    if (this.headerRead && err.code === 'CSV_QUOTE_NOT_CLOSED') return { row: this.unclosedAtEnd() };
    if (this.headerRead && err.code === 'CSV_MAX_RECORD_SIZE') return { row: await this.tooLarge() };
    return this.fail(err);
  }

  private fail(err: unknown): never {
    if (this.o.signal?.aborted) throw this.interrupted();
    throw malformed(err, this.o.name, this.seg.recordStart(), this.o.maxRecordBytes);
  }

  /** Lines of a record up to the one a broken quote opens on (`open`, in `bytes`) → one UNCLOSED_QUOTE row; a new parser reads on from the next line. */
  private resume(line: number, bytes: Buffer, open: number): ReadRow {
    const s = this.seg;
    let end = open;
    while (end < bytes.length && bytes[end] !== CR && bytes[end] !== LF) end++;
    let next = end;
    if (bytes[next] === CR) next++;
    if (bytes[next] === LF && (next === end || bytes[end] === CR)) next++;
    const at = s.offset + next;
    const quoteLine = line + countLines(bytes.subarray(0, open));
    s.advanceTo(at);
    this.restartAt(at, s.line);
    const reason =
      quoteLine === line
        ? q.UNCLOSED_QUOTE_REASON
        : q.UNCLOSED_QUOTE_REASON.replace('on this line', `on line ${quoteLine}`);
    return {
      line,
      raw: q.splitLine(bytes.subarray(0, end).toString('utf8')),
      error: { code: q.UNCLOSED_QUOTE_CODE, reason },
    };
  }

  /** CSV_QUOTE_NOT_CLOSED: the record starting after the last one read runs to the end of the file. */
  private unclosedAtEnd(): ReadRow {
    const line = this.seg.recordStart();
    const bytes = this.seg.peek();
    const open = q.brokenQuoteAt(bytes);
    return this.resume(line, bytes, open < 0 ? 0 : open);
  }

  /** A record over the size limit: its end found by a byte scan, reading resumes after it (a short broken quote is UNCLOSED_QUOTE). */
  private async tooLarge(): Promise<ReadRow> {
    const { maxRecordBytes: max, name } = this.o;
    const line = this.seg.recordStart();
    const start = this.seg.offset;
    const found = await this.findRecordEnd(start);
    if (found.brokenQuote !== undefined && found.end - start <= max)
      return this.resume(line, this.seg.peek(found.end), found.brokenQuote - start);
    this.restartAt(found.end, line + found.lines);
    const last = Math.max(line, line + found.lines - 1);
    const reason = tooLargeReason(max, { name, format: 'csv', first: line, last });
    return { line, raw: [], error: { code: RECORD_TOO_LARGE_CODE, reason } };
  }

  private async findRecordEnd(start: number): Promise<q.RecordEnd> {
    const scanner = new q.RecordEndScanner(start);
    let at = start;
    try {
      for await (const chunk of createReadStream(this.path, {
        start,
        signal: this.o.signal,
      }) as AsyncIterable<Buffer>) {
        this.saw(at, chunk);
        at += chunk.length;
        const found = scanner.push(chunk);
        if (found) return found;
      }
      return scanner.finish();
    } catch (err) {
      if (this.o.signal?.aborted) throw this.interrupted();
      throw new UsageError(`cannot read ${this.o.name}: ${(err as Error).message}`, { cause: err });
    }
  }
}

function malformed(err: unknown, name: string, line: number, maxRecord: number): UsageError {
  if (!(err instanceof CsvError))
    return new UsageError(`cannot read ${name}: ${(err as Error).message}`, { cause: err });
  const where = `${name}, line ${line}`;
  if (err.code === 'CSV_QUOTE_NOT_CLOSED') {
    return new UsageError(
      `${where}: a quoted field starts here and is never closed, so the rest of the file cannot be read`,
      {
        code: err.code,
        cause: err,
        hint: 'close the quote (a quote inside a quoted field is written twice: "")',
      },
    );
  }
  if (err.code === 'CSV_MAX_RECORD_SIZE') {
    const big = `${where}: the record starting here is larger than ${formatBytes(maxRecord)} (an unclosed quote?)`;
    return new UsageError(big, { code: err.code, cause: err });
  }
  return new UsageError(`${where}: malformed CSV in the record starting here: ${err.message}`, {
    code: err.code,
    cause: err,
  });
}
