// One csv-parse parser over the file from a line start to its end (csv-reader.ts starts a new one
// after an unclosed quote or a record over the size limit), its LineIndex fed the same bytes.
import { createReadStream } from 'node:fs';
import { Transform, pipeline, type Readable } from 'node:stream';
import { parse, type CsvError } from 'csv-parse';
import { LineIndex } from './line-index.js';

interface CsvRecord {
  record: string[];
  info: { bytes: number };
}

const HALT = Symbol('halt');

export class Segment {
  private readonly file: Readable;
  private readonly parser: ReturnType<typeof parse>;
  readonly index: LineIndex;
  private readonly it: AsyncIterator<CsvRecord>;
  private read = 0;
  /** the first malformed record, reported through on_skip, and how many records came before it */
  malformedAt?: { err: CsvError; records: number };
  /** a record went over the size limit: no more bytes go to the parser (it would hold them all) */
  private halted = false;
  /** ends the pull under way when halted */
  private wake: () => void = () => undefined;
  /** the iterator's next() not yet consumed (a pull that lost its race against halt) */
  private pending?: Promise<IteratorResult<CsvRecord>>;
  readError?: unknown;
  /** absolute end of the last record read */
  prevEnd: number;
  consumed = 0;

  /** `start`: an absolute offset at the start of line `line`; every byte read goes to `saw` */
  constructor(
    path: string,
    readonly start: number,
    line: number,
    maxRecord: number,
    saw: (at: number, b: Buffer) => void,
    signal?: AbortSignal,
  ) {
    this.prevEnd = start;
    this.index = new LineIndex(start, line);
    this.file = createReadStream(path, { start, signal });
    this.parser = parse({
      // a BOM only counts at the very start of the file, not where a resumed parser starts
      bom: start === 0,
      info: true,
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
    const indexer = new Transform({
      transform: (chunk: Buffer, _enc, cb) => {
        // halted: never called back, so the file stops being read (the segment is closed soon)
        if (this.halted) return;
        saw(start + this.read, chunk);
        this.read += chunk.length;
        this.index.push(chunk);
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

  /** The next record; undefined when the parser was halted and every record before the large one is read. */
  async pull(): Promise<IteratorResult<CsvRecord> | undefined> {
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
    return got === HALT ? p : got;
  }

  close(): void {
    this.file.destroy();
    this.parser.destroy();
  }
}
