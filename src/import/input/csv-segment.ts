// One csv-parse parser over the file from a line start to its end (reader.ts starts a new one
// after an unclosed quote or a record over the size limit), and the line index of the bytes it read:
// line numbers from byte offsets (csv-parse's info.lines is the end line and counts a quoted CRLF
// twice); only bytes not yet walked over are kept.
import { createReadStream } from 'node:fs';
import { Transform, pipeline, type Readable } from 'node:stream';
import { Parser, type CsvError } from 'csv-parse';
import { CR, LF, LineCounter } from '../../util/lines.js';

interface CsvRecord {
  record: string[];
  info: { bytes: number };
}

const HALT = Symbol('halt');

/**
 * csv-parse with each record paired with where it ends (`info.bytes`), read from the parser's running
 * count as the record is pushed: its `info: true` copies the whole info object per record (a twentieth
 * of an import's time), for the one number used here.
 */
class BytesParser extends Parser {
  override push(record: unknown): boolean {
    return super.push(record === null ? null : { record, info: { bytes: this.info.bytes } });
  }
}

export class Segment {
  private readonly file: Readable;
  private readonly parser: Parser;
  private readonly it: AsyncIterator<CsvRecord>;
  /** the first malformed record, reported through on_skip, and how many records came before it */
  malformedAt?: { err: CsvError; records: number };
  /** a record went over the size limit: no more bytes go to the parser (it would hold them all) */
  private halted = false;
  /** ends the pull under way when halted */
  private wake: () => void = () => undefined;
  /** the iterator's next() not yet consumed (a pull that lost its race against halt) */
  private pending?: Promise<IteratorResult<CsvRecord>>;
  readError?: unknown;
  /** records the parser had ready after a pull, taken in one go (one await per pull, not per record), and the next to hand out */
  private ready: CsvRecord[] = [];
  private readyAt = 0;
  /** absolute end of the last record read */
  private prevEnd: number;
  private consumed = 0;
  /** bytes read, not yet walked over; chunks[0][0] is at `base` */
  private chunks: Buffer[] = [];
  private base: number;
  /** the cursor's absolute byte offset; `lines.line` is the line it is on */
  offset: number;
  private readonly lines = new LineCounter();

  /** `start`: an absolute offset at the start of line `line`; every byte read goes to `saw` */
  constructor(
    path: string,
    private readonly start: number,
    line: number,
    maxRecord: number,
    saw: (at: number, b: Buffer) => void,
    signal?: AbortSignal,
  ) {
    this.prevEnd = this.base = this.offset = start;
    this.lines.line = line;
    this.file = createReadStream(path, { start, signal });
    this.parser = new BytesParser({
      // a BOM only counts at the very start of the file, not where a resumed parser starts
      bom: start === 0,
      relax_column_count: true,
      skip_empty_lines: true,
      // files concatenated from two systems mix line ends: all three are accepted
      record_delimiter: ['\r\n', '\n', '\r'],
      // a quote inside an unquoted field (`37°36'37.8"N`) is kept as a character
      relax_quotes: true,
      max_record_size: maxRecord,
      // a malformed record is reported here rather than as a stream error, which would throw away
      // the good records buffered before it; the first one is acted on once those are read
      skip_records_with_error: true,
      on_skip: (err) => {
        if (!err) return;
        this.malformedAt ??= { err, records: Number(err.records ?? 0) };
        if (err.code === 'CSV_MAX_RECORD_SIZE' && !this.halted) {
          this.halted = true;
          this.wake();
        }
      },
    });
    let read = start;
    const indexer = new Transform({
      transform: (chunk: Buffer, _enc, cb) => {
        // halted: never called back, so the file stops being read (the segment is closed soon)
        if (this.halted) return;
        saw(read, chunk);
        read += chunk.length;
        if (chunk.length > 0) this.chunks.push(chunk);
        cb(null, chunk);
      },
    });
    pipeline(this.file, indexer, this.parser, (err) => void (err && (this.readError = err)));
    this.it = this.parser[Symbol.asyncIterator]() as AsyncIterator<CsvRecord>;
  }

  /** every record before the malformed one has been read */
  get broken(): boolean {
    return this.malformedAt !== undefined && this.consumed >= this.malformedAt.records;
  }

  /** The next record, its start line and end offset; null at the end; undefined once broken. */
  async next(): Promise<{ cells: string[]; line: number; end: number } | null | undefined> {
    if (this.broken) return undefined;
    if (this.readyAt < this.ready.length) return this.take(this.ready[this.readyAt++]!);
    if (!this.pending) {
      this.pending = this.it.next();
      this.pending.catch(() => undefined); // abandoned when the segment closes
    }
    const p = this.pending;
    // not Promise.race with a promise of the halt: each race would leave a reaction on it, holding
    // its record, for as long as the segment lives (RSS grew by ~1 KB a row)
    const got = await new Promise<IteratorResult<CsvRecord> | typeof HALT>((resolve, reject) => {
      this.wake = () => resolve(HALT);
      if (this.halted) resolve(HALT);
      p.then(resolve, reject);
    });
    this.wake = () => undefined;
    if (got === HALT && this.broken) return undefined;
    this.pending = undefined;
    const r = got === HALT ? await p : got;
    if (this.broken) return undefined;
    if (r.done) return null;
    this.ready = [];
    this.readyAt = 0;
    for (
      let more = this.parser.read() as CsvRecord | null;
      more !== null;
      more = this.parser.read() as CsvRecord | null
    )
      this.ready.push(more);
    return this.take(r.value);
  }

  private take(v: CsvRecord): { cells: string[]; line: number; end: number } {
    this.consumed++;
    const line = this.recordStart();
    this.prevEnd = this.start + v.info.bytes;
    return { cells: v.record, line, end: this.prevEnd };
  }

  /** The line the record after the last one read starts on (blank lines, skipped by the parser, walked over). */
  recordStart(): number {
    this.advanceTo(this.prevEnd);
    while (this.chunks.length > 0) {
      const b = this.chunks[0]![this.offset - this.base]!;
      if (b !== CR && b !== LF) break;
      this.lines.count(Buffer.of(b), 0, 1);
      this.offset++;
      this.drop();
    }
    return this.lines.line;
  }

  /** the 1-based line the cursor is on */
  get line(): number {
    return this.lines.line;
  }

  /** A copy of the bytes from the cursor to `end` (absolute; default: all that was read). The cursor stays. */
  peek(end = Infinity): Buffer {
    const parts: Buffer[] = [];
    let at = this.base;
    for (const c of this.chunks) {
      const from = Math.max(this.offset - at, 0);
      const to = Math.min(c.length, end - at);
      if (to > from) parts.push(c.subarray(from, to));
      at += c.length;
      if (at >= end) break;
    }
    return Buffer.concat(parts);
  }

  /** Walk the cursor to `offset`, counting line breaks. */
  advanceTo(offset: number): void {
    while (this.offset < offset && this.chunks.length > 0) {
      const end = Math.min(this.chunks[0]!.length, offset - this.base);
      this.lines.count(this.chunks[0]!, this.offset - this.base, end);
      this.offset = this.base + end;
      this.drop();
    }
  }

  private drop(): void {
    while (this.chunks.length > 0 && this.base + this.chunks[0]!.length <= this.offset)
      this.base += this.chunks.shift()!.length;
  }

  close(): void {
    this.file.destroy();
    this.parser.destroy();
  }
}
