// The bottom of the batch engine: the options, dependencies, progress and summary (CONTRACT §7), and the codes
// and shapes its stages share (a journal's chunk, a row operation, a request). It imports nothing of src/import,
// so every stage may use it and none has to reach up to another for a type.
import type { Readable } from 'node:stream';
import type { ApiRecord, BatchEnvelope } from '../api/envelopes.js';
import { UsageError } from '../http/errors.js';
import { ensureDir } from '../util/fs.js';
import type { HashTable } from '../util/hash-table.js';

/** how rows are read: `--input-format`, else from the input's name */
export type InputFormat = 'csv' | 'ndjson';
/** a row's raw values: a CSV row's cells, an NDJSON line's object, or a line that is neither */
export type RawRow = string[] | Record<string, unknown> | string;

// The `_error_code`s of rows never sent or never answered (CONTRACT §7, §7b).
/** reconcile: a row whose key an earlier row of the file has: the earlier line is in its message */
export const DUPLICATE_KEY = 'DUPLICATE_KEY';
/** reconcile: a row with an empty cell in a --match field */
export const MISSING_KEY = 'MISSING_KEY';
/** `--match id`: a row naming an id no record has (the server gives ids: it cannot be created under it) */
export const NOT_FOUND = 'NOT_FOUND';
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

/** A journal's identity: one job of one content (journal/files.ts names its file from it). */
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
/** `ids`: two or more records share the key (ambiguous) */
export type IndexEntry = { one: Indexed } | { ids: string[] };

/** The summary of a run that ended with an error (interrupted, fatal), attached to the error. */
export function importSummaryOf(err: unknown): ImportSummary | undefined {
  return (err as { importSummary?: ImportSummary } | null)?.importSummary;
}

export function withSummary<E extends Error>(err: E, summary: ImportSummary): E {
  Object.defineProperty(err, 'importSummary', { value: summary, enumerable: false, configurable: true });
  return err;
}

export interface ImportPlan {
  rows: number;
  valid: number;
  invalid: number;
  /** a create's valid rows repeating an earlier row: would be skipped */
  repeated: number;
  chunks: number;
  chunk_size: number;
  concurrency: number;
  /** chunks an earlier run finished, which would be skipped */
  finished_chunks: number;
  first_invalid: InvalidRow[];
  /** an update, delete or link: the first requests it would send */
  first_requests?: string[];
  /** a CSV: each column and the field it fills (`field` null for a column left out) */
  mapping?: PlanColumn[];
}

/** A column of the --dry-run plan: `ignored` (a `_` column, or `--map "COL="`), `read_only` (the server sets it: left out). */
export interface PlanColumn {
  column: string;
  field: string | null;
  type: string;
  ignored: boolean;
  read_only: boolean;
}

export interface ImportOptions {
  resource: string;
  /** an update, delete or link per row (one request each) instead of a batch create */
  operation?: RowOperation;
  /** a path, `-` (read deps.stdin), or a stream */
  input: string | Readable;
  /** the version 2 root: part of every chunk's Idempotency-Key and of the journal's identity */
  baseUrl: string;
  /** keyIdentity(apiKey): part of the journal's identity (another key is another import) */
  keyId?: string;
  /** maskKey(apiKey): kept in the journal's header, so a refusal can name the key an import was started with */
  keyMask?: string;
  /** `--input-format`; default: from the extension (`.ndjson`/`.jsonl`), else csv (stdin: csv); a
   * default csv input starting with `{` is refused, pointing at --input-format */
  format?: InputFormat;
  maps?: readonly string[];
  /** rows per request, 1–100 (default 100) */
  chunkSize?: number;
  /** chunks in flight (default 4) */
  concurrency?: number;
  /** default `<input>.rejects.csv`; for stdin `crm-rejects-<time>.csv` in deps.cwd */
  rejectsPath?: string;
  /** `--results FILE`: `_line`, `id` and the original columns of every created row */
  resultsPath?: string;
  dryRun?: boolean;
  strict?: boolean;
  resume?: boolean;
  /** `--encoding`: the input's encoding when it has no byte order mark (default UTF-8) */
  encoding?: string;
  /** stop after this many chunks fail in a row (default 5) */
  maxConsecutiveFailures?: number;
  /** `--match FIELD[,FIELD]` (CONTRACT §7b): make the CRM agree with the file, matching rows to records on these fields */
  match?: { fields: readonly string[] };
  /** `--plan FILE`: every row's action and changes as CSV (with --match) */
  planPath?: string;
}

/** What the CRM holds for the file's keys (src/import/match/read.ts). */
export interface MatchIndex {
  get(key: string): IndexEntry | undefined;
  /** distinct records read, requests spent, and how: listing the collection, or one GET per row */
  records: number;
  requests: number;
  how: 'list' | 'get';
  /** every field a record read had (the column check) */
  fieldsSeen: ReadonlySet<string>;
  /** why this read was chosen (one sentence for the plan), and how long it took */
  why?: string;
  ms?: number;
  /** the index's temporary file removed, once the plan is made */
  close?(): void;
  /** a value of the type the records read hold a field as, when they agree (0, false) */
  sample?(field: string): unknown;
}

/** What reconcile's read is asked for: the records whose key the file has (their fields in `keep`). */
export interface MatchRead {
  fields: readonly string[];
  keep: readonly string[];
  wanted: (key: string) => boolean;
  /** the same keys as a two-column table (column 0: each key's first line), which the index fills in (column 1) */
  table?: HashTable;
  /** distinct keys in the file */
  keys: number;
  /** `--match id`: the ids, for one GET per row */
  ids?: string[];
  /** a folder for the index's temporary file (the journal folder) */
  dir: string;
}

/** Reconcile's plan (`--dry-run`, and on a terminal before the run): CONTRACT §7b. */
export interface MatchPlan {
  resource: string;
  rows: number;
  /** which read, and why */
  read: string;
  create: number;
  update: number;
  unchanged: number;
  ambiguous: number;
  duplicate: number;
  invalid: number;
  /** requests to send (create chunks + updates), and those the read spent */
  requests: number;
  read_requests: number;
  /** for updates: field → how many rows change it */
  changes: Record<string, number>;
  /** columns → fields, as the header was read */
  mapping?: PlanColumn[];
  /** a resumed run sends the plan an interrupted run made (no read) */
  resumed?: string;
}

export interface ImportProgress extends ImportCounts {
  /** read: reconcile reading what the CRM holds (`rows`: records read, `chunks`: requests) */
  phase: 'check' | 'read' | 'send';
  /** data rows in the file (known after the check) */
  rowsTotal: number | null;
  inFlight: number;
  bytes: number;
  bytesTotal: number;
  elapsedMs: number;
  /** rows one request carries: the chunk size for a batch create, 1 for one request per row (the ETA counts requests) */
  rowsPerRequest: number;
  /** reconcile: the requests its plan has left (its creates and updates carry different numbers of rows) */
  requestsLeft?: number;
}

export interface ImportDeps {
  /** sends one chunk: httpSender(client, …) in the CLI, a fake in tests */
  send: BatchSender;
  /** where journals (and buffered stdin) live: `<config folder>/imports`; undefined: no journal */
  journalDir?: string;
  clock: { now(): number };
  /** stop starting chunks; those in flight finish, then InterruptedError */
  signal?: AbortSignal;
  onProgress?: (p: ImportProgress) => void;
  stdin?: Readable;
  /** folder of the default stdin rejects file (default process.cwd()) */
  cwd?: string;
  /** the HTTP client's counters: when given, requests/retries are its difference over the run */
  stats?: () => { requests: number; retries: number };
  warn?: (message: string) => void;
  /** reconcile (`--match`): read what the CRM holds for the file's keys (the command's HTTP client) */
  readIndex?: (req: MatchRead, onProgress: (p: { records: number; requests: number }) => void) => Promise<MatchIndex>;
  /** reconcile: the plan, once made (before anything is sent; also for a dry run) */
  onPlan?: (plan: MatchPlan) => void | Promise<void>;
  /**
   * The field names the collection's records have (one page read), for a create or an update; undefined: an empty
   * collection or a failed read (no check). Asked once the journal is open, just before the send pass (columns.ts).
   */
  knownFields?: () => Promise<ReadonlySet<string> | undefined>;
  /** after the whole file is checked and before anything is sent (not for a dry run): a delete's confirmation; throwing stops the run */
  beforeSend?: (checked: BeforeSend) => Promise<void>;
}

/** What beforeSend is told: the counts, and the valid rows' records read back in file order (a delete's ids, for its backup). */
export interface BeforeSend {
  rows: number;
  valid: number;
  invalid: number;
  /** rows (chunks) an earlier run of this job finished: a rerun sends the rest */
  done?: number;
  records?: () => AsyncIterable<ApiRecord>;
}

export interface ImportSummary extends ImportCounts {
  resource: string;
  /** an update, delete or link: `created` counts the rows done */
  operation?: RowOperation;
  /** a delete: the file each deleted record was copied to first (set by `crm batch`) */
  backup_file?: string;
  /** the command's (issue 19): a delete's backup imported again, the links its records had that did not come back (`deals/{id}/contacts`) */
  links_not_restored?: string[];
  /** the command's (issue 19): a delete's backup imported again, `<input>.owners.csv` (each new id and the owner its record had) */
  owners_file?: string;
  requests: number;
  retries: number;
  elapsed_ms: number;
  rejects_file: string | null;
  /** rows of requests that got no answer (may have been created): not in the rejects file; rerunning the same command settles them */
  in_doubt: number;
  /** rows the server's answer said nothing about: in unknown_file, to be checked in the CRM first */
  unknown: number;
  unknown_file: string | null;
  /** rows neither answered nor rejected: left when the run stopped (Ctrl-C, a fatal error, a full disk); the
   * parts add up: rows = created + failed + invalid + skipped + not_sent (in_doubt and unknown are among failed) */
  not_sent: number;
  /** why rows failed or were invalid, the largest groups first (reasons.ts); the counts add up to failed + invalid */
  reasons: Reason[];
  /** rows of a create skipped as repeating an earlier row (among skipped); not a field of the printed summary */
  repeated?: number;
  plan?: ImportPlan;
  /** reconcile (`--match`): its plan, and the counts and files only it has */
  reconcile?: {
    plan: MatchPlan;
    updated: number;
    unchanged: number;
    ambiguous: number;
    duplicate: number;
    ambiguous_file: string | null;
    undo_file: string | null;
    created_file: string | null;
    plan_file: string | null;
  };
}

/** The row and chunk counts of a run, in progress and the summary. */
export interface ImportCounts {
  rows: number;
  created: number;
  failed: number;
  invalid: number;
  skipped: number;
  chunks: number;
}

export interface Counters extends ImportCounts {
  requests: number;
  retries: number;
  /** chunks whose request failed without a refusal (not journaled: a rerun sends them again) */
  failedChunks: number;
  /** rows of those chunks: may have been created; not in the rejects file */
  inDoubt: number;
  /** rows the batch answer said nothing about: in the unknown file */
  unknown: number;
  /** chunks taken from the journal */
  skippedChunks: number;
  /** a create's rows repeating an earlier row (among skipped) */
  repeated: number;
  /** reconcile: rows updated, needing no request (unchanged, ambiguous), and repeating an earlier row's key */
  updated: number;
  unchanged: number;
  ambiguous: number;
  duplicate: number;
  inFlight: number;
  bytes: number;
}

/** How a stage reports its progress (the engine makes it once: finish.ts, `progressOf`). */
export type Report = (
  phase: ImportProgress['phase'],
  c: Partial<Counters>,
  rowsTotal: number | null,
  requestsLeft?: number,
) => void;

/** What every stage is given besides its slice of the plan: the command's dependencies and the progress reporter. */
export type StageDeps = ImportDeps & { report: Report };

/** A job an earlier run finished, answered from its journal's totals (journal/stage.ts → finish.ts). */
export interface Finished {
  info: CompleteInfo;
  rows?: number;
  invalid?: number;
  rejects_file: string | null;
  unknown_file: string | null;
}
