// The CSV reader (reader.ts says what it promises): csv-parse over segments of the file
// (csv-segment.ts), a new segment after an unclosed quote or a record over the size limit.
import { createReadStream } from 'node:fs';
import { CsvError } from 'csv-parse';
import { UsageError, type InterruptedError } from '../../http/errors.js';
import { Segment } from './csv-segment.js';
import { textProblem } from './text.js';
import * as row from './input-row.js';
import type { InputReader, ReaderOptions, ReadRow } from './input-row.js';
import * as q from './quote-scan.js';
import { countLines, CR, LF } from '../../util/lines.js';

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
        else if (placeholders && row.isTooLargePlaceholder(r.cells.map((c, i) => [header[i] ?? '', c] as const)))
          this.o.onPlaceholder?.(r.line);
        else yield { line: r.line, cells: r.cells, raw: r.cells };
      }
    } finally {
      this.close();
    }
  }

  private interrupted(): InterruptedError {
    return row.readInterrupted(this.o.name);
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
    const reason = row.tooLargeReason(max, { name, format: 'csv', first: line, last });
    return { line, raw: [], error: { code: row.RECORD_TOO_LARGE_CODE, reason } };
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
    const big = `${where}: the record starting here is larger than ${row.formatBytes(maxRecord)} (an unclosed quote?)`;
    return new UsageError(big, { code: err.code, cause: err });
  }
  return new UsageError(`${where}: malformed CSV in the record starting here: ${err.message}`, {
    code: err.code,
    cause: err,
  });
}
