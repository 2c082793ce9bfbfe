// Valid rows → chunks and their Idempotency-Key; deterministic, so a rerun recognises and replays what it sent.
import { createHash } from 'node:crypto';
import type { ApiRecord } from '../api/envelopes.js';
import type { RawRow } from './input-row.js';
import { trimBase } from './journal-format.js';

export interface ValidRow {
  line: number;
  record: ApiRecord;
  raw: RawRow;
  /** JSON.stringify(record), when already made */
  json?: string;
}

export interface Chunk {
  /** 1-based, in file order */
  seq: number;
  rows: ValidRow[];
  /** item index → line */
  lines: number[];
  /** the exact JSON body: an array of the rows' records */
  body: string;
}

export const CHUNK_KEY_PREFIX = 'crm-batch-';

/**
 * `crm-batch-` + sha256 hex of base URL, resource and body (NUL-separated: none of them holds one); an
 * update, delete or link (one row) is `crm-update-`, `crm-delete-`, `crm-link-` + the same, its describe() in place of the resource.
 */
export function chunkKey(baseUrl: string, resource: string, body: string, op?: string): string {
  const digest = createHash('sha256')
    .update(`${trimBase(baseUrl)}\0${resource}\0${body}`)
    .digest('hex');
  return `${op ? `crm-${op}-` : CHUNK_KEY_PREFIX}${digest}`;
}

/** Push rows, get a chunk back each time one fills; flush() the rest at the end. */
export class Chunker {
  private pending: ValidRow[] = [];
  private seq = 0;

  constructor(readonly size: number) {}

  push(row: ValidRow): Chunk | undefined {
    this.pending.push(row);
    return this.pending.length >= this.size ? this.take() : undefined;
  }

  /** rows pushed and not yet in a chunk */
  get held(): number {
    return this.pending.length;
  }

  flush(): Chunk | undefined {
    return this.pending.length > 0 ? this.take() : undefined;
  }

  private take(): Chunk {
    const rows = this.pending;
    this.pending = [];
    return { seq: ++this.seq, rows, lines: rows.map((r) => r.line), body: `[${rows.map((r) => r.json ?? JSON.stringify(r.record)).join(',')}]` };
  }
}
