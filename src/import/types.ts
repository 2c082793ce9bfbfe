// The batch engine's face, on the shapes its stages share (shapes.ts): the options, dependencies, progress and
// summary (CONTRACT §7), the plans a dry run shows, and what every stage is given.
import type { Readable } from 'node:stream';
import type { ApiRecord } from '../api/envelopes.js';
import type { HashTable } from '../util/hash-table.js';
import type { BatchSender, CompleteInfo, IndexEntry, InputFormat, InvalidRow, Reason, RowOperation } from './shapes.js';

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
  /** a delete's backup file: kept in its journal, so a rerun names (and adds to) the file its job began */
  backupPath?: string;
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
  /** every row a record of its own (`crm restore`'s snapshot records: two tasks alike are two tasks): none is
   * skipped as repeating an earlier row */
  everyRow?: boolean;
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
  /** rows repeating the first row of their key exactly (a line pasted twice): not sent, counted as skipped */
  repeated: number;
  invalid: number;
  /** requests to send (create chunks + updates), and those the read spent */
  requests: number;
  read_requests: number;
  /** how long the read took, its requests one after another: what a request takes here, for the plan's time */
  read_ms?: number;
  /** for updates: field → how many rows change it */
  changes: Record<string, number>;
  /** columns → fields, as the header was read */
  mapping?: PlanColumn[];
  /** a run resuming a job an interrupted run began (when that run made its plan) */
  resumed?: string;
  /** rows whose record that run changed or created, and which still agree: done by it */
  done?: number;
  /** creates among `create` that run sent without an answer: sent again under its keys (replayed if it made them) */
  resent?: number;
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
   * collection or a failed read (no check). Asked once the journal is open, just before the send pass (check/check.ts).
   */
  knownFields?: () => Promise<KnownFields | undefined>;
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
  /** this job (this content) has a journal: a run of it was here before */
  resumes?: boolean;
  /** the backup file (absolute) this job's earlier run kept its deleted records in, as its journal says */
  backup?: string;
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
  /** a dry run: the refusal the run would meet (its columns), said after the plan (exit 2) */
  refused?: Error;
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
    /** a dry run: the lines of the rows it would create (not printed) */
    createLines?: ReadonlySet<number>;
    /** the ids of the records this run created (not printed) */
    createdIds?: readonly string[];
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
  /** a create's rows repeating an earlier row, or a reconcile's repeating its key's first row (among skipped) */
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

/** The fields one page of the collection's records have (and the resource's own), and the kind each is held as. */
export interface KnownFields extends ReadonlySet<string> {
  /** a value of the kind the records hold `field` as, when they agree (FieldKinds.sample) */
  sample?(field: string): unknown;
  /** the records hold `field` as different kinds (FieldKinds.mixed) */
  mixed?(field: string): boolean;
}
