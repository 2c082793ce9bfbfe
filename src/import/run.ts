// What every stage of an import run (engine.ts) knows: the job plan prepare resolved (plan.ts), the input, what
// the stages find out; and the summaries they build.
import { exists as there } from '../util/fs.js';
import type { Counters, ImportDeps, ImportProgress, ImportSummary } from './engine-types.js';
import type { ColumnMap } from './input/header.js';
import type { CompleteInfo, JournalFile, JournalIdentity } from './journal/format.js';
import type { InputFormat } from './input/reader.js';
import type { ScanResult } from './check/scan.js';
import type { Reason } from './send/reasons.js';
import type { PreparedInput } from './input/source.js';
import type { Spool, SpooledChunk } from './check/spool.js';
import type { ApiRecord } from '../api/envelopes.js';
import type { RawRow } from './input/input-row.js';
import type { RowOperation } from './operation.js';
import { isBackupFile } from './send/backup.js';

/**
 * The job plan: the options, checked and resolved once by prepare (plan.ts). Every later stage reads this, never
 * ImportOptions: the chunk size, the format, the rejects paths, the operation and what reconcile needs are decided
 * in one place.
 */
export interface Job {
  resource: string;
  /** an update, delete or link (one request per row); undefined: a batch create */
  operation?: RowOperation;
  /** the version 2 root and the key's identity: part of the journal's identity and of every Idempotency-Key */
  baseUrl: string;
  keyId?: string;
  keyMask?: string;
  /** how the rows are read: `--input-format`, else from the input's name */
  format: InputFormat;
  /** rows per request (1 for an operation), chunks in flight */
  chunkSize: number;
  concurrency: number;
  /** `--map`s parsed (`--id-column` being one) */
  maps: ColumnMap;
  /** the options that change what is sent, as a fingerprint (`optionsOf`); undefined for the defaults */
  options?: string;
  rejectsPath: string;
  /** beside the rejects file (unknownPathFor) */
  unknownPath: string;
  /** the rejects file as a journal's header names it (no cwd: a stdin import's stamped name), for the rerun checks */
  journalRejectsPath: string;
  resultsPath?: string;
  dryRun: boolean;
  strict: boolean;
  /** false: `--no-resume` */
  resume: boolean;
  /** stop after this many chunks fail in a row */
  maxConsecutiveFailures: number;
  /** `--match` (CONTRACT §7b): the key fields, the `--plan` file, and the update its changed rows are sent as */
  match?: { fields: readonly string[]; planPath?: string; update: RowOperation };
}

/** What every phase of a run knows: the job plan, the dependencies, the input; then what the phases find out. */
export interface Run {
  job: Job;
  deps: ImportDeps;
  started: number;
  input: PreparedInput;
  /** the input's size and mtime before it was first read: compared again before anything is sent */
  size: number;
  mtimeMs: number;
  /** the content hash, when the earlier-import check has computed it (the scan then does not) */
  sha?: string;
  /** this import's journal file, once looked up */
  file?: JournalFile;
  /** the check pass's chunks and invalid rows, which the sending pass reads (not for a dry run) */
  spool?: Spool;
  /** false: rows an earlier run of this job rejected are not sent again (its rejects file was imported since) */
  retryRejected?: boolean;
  /** releases the job's lock (journal/lock.ts), taken before the journal is opened */
  unlock?: () => Promise<void>;
  /** reconcile (`--match`): the files the sending pass writes besides the rejects */
  matchFiles?: MatchFiles;
  /** reconcile: the requests its plan sends (the ETA counts them) */
  planRequests?: number;
}

/** Reconcile's files written while sending (match/files.ts): the way back, and the ambiguous rows. */
export interface MatchFiles {
  /** the values an update changes, durable before it is sent */
  undo: { add(id: string, before: ApiRecord): Promise<void> };
  ambiguous: { add(raw: RawRow, line: number, candidates: string[]): void };
  /** a create chunk answered: the ids of the records it created, durable when the promise resolves */
  created(chunk: SpooledChunk, ids: ReadonlyArray<string | null>): Promise<void>;
}

/** The summary of a run that ended with an error (interrupted, fatal), attached to the error. */
export function importSummaryOf(err: unknown): ImportSummary | undefined {
  return (err as { importSummary?: ImportSummary } | null)?.importSummary;
}

export function withSummary<E extends Error>(err: E, summary: ImportSummary): E {
  Object.defineProperty(err, 'importSummary', { value: summary, enumerable: false, configurable: true });
  return err;
}

export function identityOf(run: Run, sha: string): JournalIdentity {
  const { resource, baseUrl, keyId, keyMask, operation, options, match } = run.job;
  // a reconcile is a job of its own, per match fields: never the journal of a create of the same file
  const job = operation ? operation.describe : match ? `match ${match.fields.join(',')}` : undefined;
  const op = job ? { operation: job } : {};
  return {
    contentSha256: sha,
    resource,
    baseUrl,
    ...(keyId ? { keyId } : {}),
    ...(keyMask ? { keyMask } : {}),
    ...op,
    ...(options ? { options } : {}),
  };
}

/**
 * The summary of an import finished earlier (nothing sent), from its journal's totals, with a warning;
 * undefined when `whole` is asked for and its rejects or unknown file is gone (a full rerun writes them).
 */
export async function fromTotals(run: Run, info: CompleteInfo, scan?: ScanResult, whole = false): Promise<ImportSummary | undefined> {
  const [failed, unknown] = [info.failed ?? 0, info.unknown ?? 0];
  const invalid = info.invalid ?? scan?.invalid ?? 0;
  // null: none needed
  const rejects = failed + invalid - unknown > 0 ? await there(run.job.rejectsPath) : null;
  const unknowns = unknown > 0 ? await there(run.job.unknownPath) : null;
  if (whole && (rejects === false || unknowns === false)) return undefined;
  warnImported(run, info.at);
  return {
    ...summaryOf(run),
    rows: info.rows ?? scan?.rows ?? 0,
    skipped: info.created ?? 0,
    failed,
    invalid,
    rejects_file: rejects ? run.job.rejectsPath : null,
    unknown,
    unknown_file: unknowns ? run.job.unknownPath : null,
  };
}

export function progress(run: Run, phase: ImportProgress['phase'], c: Partial<Counters>, rowsTotal: number | null): void {
  const { rows = 0, failed = 0, invalid = 0, chunks = 0, inFlight = 0, bytes = 0 } = c;
  // reconcile: rows updated count as done, and rows needing no request as skipped
  const created = (c.created ?? 0) + (c.updated ?? 0);
  const skipped = (c.skipped ?? 0) + (c.unchanged ?? 0) + (c.ambiguous ?? 0) + (c.duplicate ?? 0);
  const elapsedMs = run.deps.clock.now() - run.started;
  const left = run.planRequests === undefined || phase !== 'send' ? {} : { requestsLeft: Math.max(0, run.planRequests - chunks) };
  const sizes = { bytesTotal: run.size, rowsPerRequest: run.job.chunkSize, ...left };
  run.deps.onProgress?.({ phase, rowsTotal, rows, created, failed, invalid, skipped, chunks, inFlight, bytes, ...sizes, elapsedMs });
}

/**
 * The summary of a run; `totals`: the file's rows (the check pass's count), so that rows not sent when the run
 * stopped are counted (`not_sent`), and the reasons of the failed ones.
 */
export function summaryOf(
  run: Run,
  c?: Counters,
  files: Partial<Pick<ImportSummary, 'rejects_file' | 'unknown_file'>> = {},
  totals: { rows?: number; reasons?: Reason[] } = {},
): ImportSummary {
  const rows = Math.max(totals.rows ?? 0, c?.rows ?? 0);
  const matched = (c?.updated ?? 0) + (c?.unchanged ?? 0) + (c?.ambiguous ?? 0) + (c?.duplicate ?? 0);
  const done = (c?.created ?? 0) + (c?.failed ?? 0) + (c?.invalid ?? 0) + (c?.skipped ?? 0) + matched;
  return {
    resource: run.job.resource,
    ...(run.job.operation ? { operation: run.job.operation } : {}),
    rows,
    created: c?.created ?? 0,
    failed: c?.failed ?? 0,
    invalid: c?.invalid ?? 0,
    skipped: c?.skipped ?? 0,
    chunks: c?.chunks ?? 0,
    requests: c?.requests ?? 0,
    retries: c?.retries ?? 0,
    elapsed_ms: run.deps.clock.now() - run.started,
    rejects_file: files.rejects_file ?? null,
    in_doubt: c?.inDoubt ?? 0,
    unknown: c?.unknown ?? 0,
    unknown_file: files.unknown_file ?? null,
    not_sent: Math.max(0, rows - done),
    reasons: totals.reasons ?? [],
    ...(c?.repeated ? { repeated: c.repeated } : {}),
  };
}

/** The one "already imported" warning. */
export function warnImported(run: Run, at: string): void {
  const op = run.job.operation;
  const job = op ? `used to ${op.describe}` : `imported into ${run.job.resource}`;
  // a delete's backup (issue 19): imported again, every record would be created a second time
  const again =
    !op && isBackupFile(run.input.name)
      ? 'its records were already created again then (their new ids and owners: the --results file if one was named, and ' +
        `${run.input.name}.owners.csv); --no-resume would create every one of them a second time`
      : `use --no-resume to ${op ? 'send it' : 'import it'} again`;
  run.deps.warn?.(`${run.input.name} was already ${job} (${at}): nothing will be sent; ${again}`);
}
