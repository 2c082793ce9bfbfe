// Groups valid rows, in file order, into the chunks sent to `POST /{resource}/batch`. Pure and
// deterministic: the same rows and chunk size always give the same chunks, bodies and keys, which
// is what lets a rerun recognise (journal) and replay (Idempotency-Key) the chunks it already sent.
import { BATCH_MAX } from '../api/resources.js';
import type { ApiRecord } from '../api/envelopes.js';
import type { RawRow } from './reader.js';

export interface ValidRow {
  line: number;
  record: ApiRecord;
  raw: RawRow;
}

export interface Chunk {
  /** 1-based, in file order */
  seq: number;
  rows: ValidRow[];
  /** the rows' line numbers, item index → line */
  lines: number[];
  /** the exact JSON body: an array of the rows' records */
  body: string;
}

export function checkChunkSize(size: number): number {
  if (!Number.isInteger(size) || size < 1 || size > BATCH_MAX) {
    throw new RangeError(`chunk size must be an integer from 1 to ${BATCH_MAX}, got ${size}`);
  }
  return size;
}

export function makeChunk(seq: number, rows: ValidRow[]): Chunk {
  return {
    seq,
    rows,
    lines: rows.map((r) => r.line),
    body: JSON.stringify(rows.map((r) => r.record)),
  };
}

/** Streaming form: push rows, get a chunk back each time one fills; flush() the rest at the end. */
export class Chunker {
  private pending: ValidRow[] = [];
  private seq = 0;
  readonly size: number;

  constructor(size: number) {
    this.size = checkChunkSize(size);
  }

  push(row: ValidRow): Chunk | undefined {
    this.pending.push(row);
    return this.pending.length >= this.size ? this.take() : undefined;
  }

  flush(): Chunk | undefined {
    return this.pending.length > 0 ? this.take() : undefined;
  }

  /** chunks produced so far */
  get count(): number {
    return this.seq;
  }

  private take(): Chunk {
    const rows = this.pending;
    this.pending = [];
    return makeChunk(++this.seq, rows);
  }
}

/** All at once (tests, plans). */
export function chunkRows(rows: Iterable<ValidRow>, size: number): Chunk[] {
  const c = new Chunker(size);
  const out: Chunk[] = [];
  for (const r of rows) {
    const chunk = c.push(r);
    if (chunk) out.push(chunk);
  }
  const last = c.flush();
  if (last) out.push(last);
  return out;
}
