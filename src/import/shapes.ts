// The bottom of the batch engine: the codes and shapes its stages share (a row, a journal's chunk, a row operation,
// a request and its answer, a record the reconcile read kept). It imports nothing of src/import, so every stage may
// use it and none has to reach up to another for a type; the engine's options and summary are types.ts.
import type { ApiRecord, BatchEnvelope } from '../api/envelopes.js';
import { UsageError } from '../http/errors.js';
import { ensureDir } from '../util/fs.js';

/** how rows are read: `--input-format`, else from the input's name */
export type InputFormat = 'csv' | 'ndjson';
/** a row's raw values: a CSV row's cells, an NDJSON line's object, or a line that is neither */
export type RawRow = string[] | Record<string, unknown> | string;

// The `_error_code`s of rows never sent or never answered (CONTRACT §7, §7b).
/** reconcile: a row whose key another row of the file has with other values (none of them sent): the other lines are in its message */
/** Codes written to `_error_code` for rows that were never sent. */
export const INVALID_CODES = {
  columns: 'INVALID_COLUMN_COUNT',
  value: 'INVALID_VALUE',
  json: 'INVALID_JSON',
  empty: 'EMPTY_ROW',
} as const;

export const DUPLICATE_KEY = 'DUPLICATE_KEY';
/** reconcile: a row with an empty cell in a --match field */
export const MISSING_KEY = 'MISSING_KEY';
/** `--match id`: a row naming an id no record has (the server gives ids: it cannot be created under it) */
export const NOT_FOUND = 'NOT_FOUND';
/** reconcile: the record with the row's key has no id crm can use (`null`, an object): never updated, never created again */
export const NO_ID = 'RECORD_WITHOUT_ID';
/** a row the batch answer said nothing about: in the unknown file */
export const NO_RESULT_CODE = 'NO_ITEM_RESULT';
/** NDJSON: the objects' top-level keys kept for the rows files (beyond: ndjsonKeysOverflow) */
export const MAX_NDJSON_KEYS = 1000;

export interface InvalidRow {
  line: number;
  code: string;
  reason: string;
}

/** Why rows failed, grouped by code and message (send/reasons.ts). */
export interface Reason {
  code: string;
  message: string;
  count: number;
}

/** A journal's identity: one job of one content (journal/journal.ts names its file from it). */
export interface JournalIdentity {
  /** sha256 hex of the input file's bytes */
  contentSha256: string;
  resource: string;
  baseUrl: string;
  /** keyIdentity(apiKey); never the key itself */
  keyId?: string;
  /** the key masked (`service_live_…f3a9`), kept in the header to name it in a refusal; not part of the identity */
  keyMask?: string;
  /** an update, delete or link (RowOperation.describe); a reconcile (`match FIELDS`); absent for a create, whose journals keep their names */
  operation?: string;
  /** a fingerprint of the options that change what is sent (--map, --id-column, --chunk-size, --input-format);
   * absent for the defaults, whose journals keep their names */
  options?: string;
}

export interface ChunkReject {
  i: number;
  code: string;
  message: string;
}

/** A chunk answered, as the journal keeps it. */
export interface FinishedChunk {
  seq: number;
  key: string;
  /** item index → input line */
  lines: number[];
  /** item index → created id (null: not created) */
  ids: Array<string | null>;
  rejects: ChunkReject[];
}

/** A journal's `complete` line. */
export interface CompleteInfo {
  at: string;
  /** cut down to its header and this line (pruning): no ids any more */
  compacted?: boolean;
  rows?: number;
  created?: number;
  failed?: number;
  invalid?: number;
  /** of `failed`: rows the batch answer said nothing about (the unknown file) */
  unknown?: number;
}

/** The journal folder (also where stdin is copied and spools live), made if missing; a UsageError naming it if it cannot be. */
export function journalFolder(dir: string): string {
  try {
    ensureDir(dir);
    return dir;
  } catch (err) {
    throw new UsageError(`cannot use the folder ${dir} for the import journal: ${(err as Error).message}`, {
      hint: 'CRM_CONFIG_DIR chooses another config folder',
    });
  }
}

/** A base URL without its trailing slashes: one API root, however it was typed. */
export const trimBase = (u: string): string => u.replace(/\/+$/, '');

export type OperationKind = 'update' | 'delete' | 'link';

export interface RowRequest {
  method: 'PATCH' | 'DELETE' | 'POST' | 'PUT';
  path: string;
  body?: ApiRecord;
  /** the record the row is about (the results file's `id`) */
  target: string;
  /** what the row changes (a record; a link: its parent and child): rows of one subject are applied in file order */
  subject: string;
}

export type RowPlan = { ok: true; request: RowRequest } | { ok: false; code: string; reason: string; field: string };

/** What one row of a bulk update, delete or link becomes (operation.ts makes them). */
export interface RowOperation {
  kind: OperationKind;
  /** what a row done is called in summaries: `updated`, `deleted`, `linked` */
  done: 'updated' | 'deleted' | 'linked';
  /** how the target is named in messages: `contacts`, `deals contacts` */
  name: string;
  /** fields kept though the server sets them on create (`id`), and the fields every row needs */
  keep: readonly string[];
  required: readonly string[];
  /** fields a row may have beyond `required`; undefined: any (an update's body) */
  allowed?: readonly string[];
  /** a one-column file whose first line is not a column name is read as values of this field, one per line */
  bare?: string;
  /** pinned in the journal's plan: another operation, parent or relation is another plan */
  describe: string;
  /** in the default rejects file's name (`ids.txt.delete.rejects.csv`): runs of one file for other jobs keep theirs */
  tag: string;
  plan(record: ApiRecord): RowPlan;
  /** a 404 to a row sent again (retried, or in doubt from an earlier run) means the earlier attempt did it */
  goneIsDone: boolean;
  /** one parent for every row (`links add … --file`): its path, looked up once when a row is answered 404 */
  parentPath?: string;
}

export interface BatchRequest {
  resource: string;
  /** the chunk's sequence number, 1-based */
  seq: number;
  /** the Idempotency-Key to send (derived from the body) */
  key: string;
  /** the records, in chunk order; JSON.stringify(records) === body */
  records: ApiRecord[];
  body: string;
  /** an earlier run sent it without an answer being journaled (in doubt) */
  resent?: boolean;
  /** reconcile (`--match`): a PATCH of one record, a row of this operation (the plan's update), not a batch create */
  update?: RowOperation;
}

export interface BatchResponse {
  envelope: BatchEnvelope;
  /** how many times the request was retried */
  retries?: number;
  /** the server answered from its idempotency cache (`Idempotent-Replayed: true`) */
  replayed?: boolean;
}

/** Sends one chunk (or one row); throws InterruptedError only when the request was never sent. */
export type BatchSender = (req: BatchRequest) => Promise<BatchResponse>;

/** A record the reconcile read kept: its id and only the fields later stages read. */
export interface Indexed {
  id: string;
  record: ApiRecord;
}
/** `ids`: two or more records share the key (ambiguous); `noId`: a record with it has no id crm can use */
export type IndexEntry = { one: Indexed } | { ids: string[] } | { noId: true };

/** A reconcile run's way-back files: `<input>.undo.csv` and `<input>.created.csv`, or a later run's own names. */
export interface WayBackNames {
  undo: string;
  created: string;
}
