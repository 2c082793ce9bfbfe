// The finish stage (engine.ts): what the stages returned, as the run's summary, or the error that carries it (a fatal
// error; an interruption saying how far it got). Also the summaries of runs that send nothing (a job finished
// earlier, a dry run), and the progress reporter every stage is given.
import { inspect } from 'node:util';
import { InterruptedError } from '../http/errors.js';
import { count, plural } from '../output/plural.js';
import {
  withSummary,
  type Counters,
  type Finished,
  type ImportDeps,
  type ImportSummary,
  type Report,
} from './types.js';
import { type Reason } from './shapes.js';
import { planColumn } from './input/header.js';
import type { FinishSlice } from './plan.js';
import type { ScanResult } from './check/check.js';
import type { Matched } from './match/match.js';
import type { Sent } from './send/send.js';

/** The summary, or the error that carries it: a fatal error, or the interruption saying how far it got. */
export function finish(
  slice: FinishSlice,
  now: number,
  scan: ScanResult,
  sent: Sent | undefined,
  matched?: Matched,
): ImportSummary {
  if (!sent) {
    const { plan, createLines } = matched!;
    return {
      ...summaryOf(slice, now),
      rows: scan.rows,
      reconcile: { plan, ...NONE, ...(createLines ? { createLines } : {}) },
    };
  }
  const { counters: c, fatal, aborted } = sent.result;
  const summary = summaryOf(slice, now, c, sent.files, { rows: scan.rows, reasons: sent.result.reasons });
  const result: ImportSummary = matched ? { ...summary, reconcile: reconciled(matched, c, sent) } : summary;
  if (fatal !== undefined)
    throw withSummary(
      fatal instanceof Error ? fatal : new Error(typeof fatal === 'string' ? fatal : inspect(fatal)),
      result,
    );
  if (!aborted) return result;
  throw withSummary(
    new InterruptedError(matched ? reconcileStopped(scan, result, c) : interrupted(slice, scan, result, c)),
    result,
  );
}

/** The interruption's message: how far the run got, and what is left. */
function interrupted(slice: FinishSlice, scan: ScanResult, result: ImportSummary, c: Counters): string {
  // chunks are cut from the valid rows in order; done: answered now or by an earlier run
  const chunksDone = c.skippedChunks + c.chunks - c.failedChunks;
  const left = result.not_sent + c.inDoubt;
  const byEarlier = c.skipped - c.repeated;
  const earlier = byEarlier > 0 ? ` (${count(byEarlier)} of them by an earlier run)` : '';
  const rejected = c.failed - c.inDoubt - c.unknown + c.invalid;
  const [unit, created] = slice.op ? ['row', slice.op.done] : ['chunk', 'created'];
  return (
    `interrupted after ${count(chunksDone)} of ${plural(Math.ceil((scan.valid - scan.repeated) / slice.chunkSize), unit)}: ${plural(c.created + c.skipped, 'row')} ${created}${earlier}` +
    `${rejected > 0 ? `, ${count(rejected)} not ${created} (in the rejects file)` : ''}` +
    `${c.unknown > 0 ? `, ${count(c.unknown)} unknown (in the unknown file)` : ''}; ` +
    `${plural(left, 'row')} of ${count(scan.rows)} left (not sent yet${c.inDoubt > 0 ? ', or sent without an answer' : ''}), not in the rejects file`
  );
}

function reconcileStopped(scan: ScanResult, result: ImportSummary, c: Counters): string {
  return `interrupted: ${count(result.not_sent + c.inDoubt)} of ${plural(scan.rows, 'row')} left (not sent yet, or sent without an answer)`;
}

/** Reconcile's own counts and files. */
function reconciled(matched: Matched, c: Counters, sent: Sent): NonNullable<ImportSummary['reconcile']> {
  const { updated, unchanged, ambiguous, duplicate } = c;
  const files = sent.wayBack ?? { ambiguous_file: null, undo_file: null, created_file: null };
  return {
    plan: matched.plan,
    updated,
    unchanged,
    ambiguous,
    duplicate,
    ...files,
    plan_file: matched.planCsv ?? null,
  };
}

const NONE = {
  updated: 0,
  unchanged: 0,
  ambiguous: 0,
  duplicate: 0,
  ambiguous_file: null,
  undo_file: null,
  created_file: null,
  plan_file: null,
};

/** A job an earlier run finished: its journal's totals, nothing sent. */
export function finishedSummary(slice: FinishSlice, now: number, f: Finished, backup?: string): ImportSummary {
  const [failed, unknown] = [f.info.failed ?? 0, f.info.unknown ?? 0];
  return {
    ...summaryOf(slice, now),
    // a delete's: the file its records were kept in, as its journal says
    ...(backup ? { backup_file: backup } : {}),
    rows: f.info.rows ?? f.rows ?? 0,
    skipped: f.info.created ?? 0,
    failed,
    invalid: f.info.invalid ?? f.invalid ?? 0,
    rejects_file: f.rejects_file,
    unknown,
    unknown_file: f.unknown_file,
  };
}

/** A --dry-run's plan (not reconcile's: match/plan-rows.ts makes that one). */
export function dryRunSummary(
  slice: FinishSlice,
  now: number,
  scan: ScanResult,
  finishedChunks: number,
): ImportSummary {
  const { rows, valid, invalid, firstInvalid } = scan;
  // a create's rows repeating an earlier row are not sent
  const chunks = Math.ceil((valid - scan.repeated) / slice.chunkSize);
  const plan = {
    rows,
    valid,
    invalid,
    repeated: scan.repeated,
    chunks,
    chunk_size: slice.chunkSize,
    concurrency: slice.concurrency,
  };
  const requests = slice.op ? { first_requests: scan.firstRequests } : {};
  const mapping = scan.mapping ? { mapping: scan.mapping.columns.map(planColumn) } : {};
  const base = summaryOf(slice, now);
  return {
    ...base,
    rows,
    invalid,
    plan: { ...plan, finished_chunks: finishedChunks, first_invalid: firstInvalid, ...requests, ...mapping },
  };
}

/** The summary of a run stopped before anything was sent. */
export const emptySummary = (slice: FinishSlice, now: number): ImportSummary => summaryOf(slice, now);

/**
 * The summary of a run; `totals`: the file's rows (the check pass's count), so that rows not sent when the run
 * stopped are counted (`not_sent`), and the reasons of the failed ones.
 */
function summaryOf(
  slice: FinishSlice,
  now: number,
  c?: Counters,
  files: Partial<Pick<ImportSummary, 'rejects_file' | 'unknown_file'>> = {},
  totals: { rows?: number; reasons?: Reason[] } = {},
): ImportSummary {
  const rows = Math.max(totals.rows ?? 0, c?.rows ?? 0);
  const matched = (c?.updated ?? 0) + (c?.unchanged ?? 0) + (c?.ambiguous ?? 0) + (c?.duplicate ?? 0);
  const done = (c?.created ?? 0) + (c?.failed ?? 0) + (c?.invalid ?? 0) + (c?.skipped ?? 0) + matched;
  return {
    resource: slice.resource,
    ...(slice.op ? { operation: slice.op } : {}),
    rows,
    created: c?.created ?? 0,
    failed: c?.failed ?? 0,
    invalid: c?.invalid ?? 0,
    skipped: c?.skipped ?? 0,
    chunks: c?.chunks ?? 0,
    requests: c?.requests ?? 0,
    retries: c?.retries ?? 0,
    elapsed_ms: now - slice.started,
    rejects_file: files.rejects_file ?? null,
    in_doubt: c?.inDoubt ?? 0,
    unknown: c?.unknown ?? 0,
    unknown_file: files.unknown_file ?? null,
    not_sent: Math.max(0, rows - done),
    reasons: totals.reasons ?? [],
    ...(c?.repeated ? { repeated: c.repeated } : {}),
  };
}

/** The run's progress reporter, made once by the engine and handed to every stage. */
export function progressOf(slice: FinishSlice, deps: ImportDeps): Report {
  const on = deps.onProgress;
  if (!on) return () => undefined;
  return (phase, c, rowsTotal, requestsLeft) => {
    const { rows = 0, failed = 0, invalid = 0, chunks = 0, inFlight = 0, bytes = 0 } = c;
    // reconcile: rows updated count as done, and rows needing no request as skipped
    const created = (c.created ?? 0) + (c.updated ?? 0);
    const skipped = (c.skipped ?? 0) + (c.unchanged ?? 0) + (c.ambiguous ?? 0) + (c.duplicate ?? 0);
    const elapsedMs = deps.clock.now() - slice.started;
    const left = requestsLeft === undefined ? {} : { requestsLeft };
    const sizes = { bytesTotal: slice.input.size, rowsPerRequest: slice.chunkSize, ...left };
    on({ phase, rowsTotal, rows, created, failed, invalid, skipped, chunks, inFlight, bytes, ...sizes, elapsedMs });
  };
}
