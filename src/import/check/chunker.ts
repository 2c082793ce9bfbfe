// Valid rows → chunks and their Idempotency-Key; deterministic within a run (its id from the journal), so a
// resume recognises and replays what it sent, and a new run of the job sends fresh keys.
import { stringifyJson } from '../../json/exact-json.js';
import { createHash, randomBytes } from 'node:crypto';
import type { ApiRecord } from '../../api/envelopes.js';
import type { RawRow } from '../input/reader.js';
import { trimBase } from '../shapes.js';

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
 * `crm-batch-` + sha256 hex of the run's salt, base URL, resource and body (NUL-separated: none of them holds
 * one); an update, delete or link (one row) is `crm-update-`, `crm-delete-`, `crm-link-` + the same, its
 * describe() in place of the resource. The salt is the journal's run id (a key belongs to one run of one
 * job: a resume reuses it, a new run gets fresh keys), for a row also its number (two rows of one record
 * are two changes), and for a row sent again after an answer its earlier key. An empty salt (a journal from
 * before run ids) gives the keys of that time, so its chunks in doubt still replay.
 */
export function chunkKey(baseUrl: string, resource: string, body: string, op?: string, salt = ''): string {
  const digest = createHash('sha256')
    .update(`${salt === '' ? '' : `${salt}\0`}${trimBase(baseUrl)}\0${resource}\0${body}`)
    .digest('hex');
  return `${op ? `crm-${op}-` : CHUNK_KEY_PREFIX}${digest}`;
}

/** A fresh run id: 16 random hex digits, kept in the journal's header. */
export const newRunId = (): string => randomBytes(8).toString('hex');

/** Push rows, get a chunk back each time one fills; flush() the rest at the end. */
export class Chunker {
  private pending: ValidRow[] = [];
  private seq = 0;

  /** `nextSeq`: where chunk numbers come from when other requests share them (reconcile's updates) */
  constructor(
    readonly size: number,
    private readonly nextSeq: () => number = () => ++this.seq,
  ) {}

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
    return {
      seq: this.nextSeq(),
      rows,
      lines: rows.map((r) => r.line),
      body: `[${rows.map((r) => r.json ?? stringifyJson(r.record)!).join(',')}]`,
    };
  }
}
