// `crm batch RESOURCE FILE` (CONTRACT §7, §7b) as one pipeline over a frozen plan, in the order runImport calls it:
//   plan (plan.ts) → earlier (journal/stage.ts) → check (check/) → claim (journal/stage.ts: the job's lock)
//   → [match (match/), --match only] → journal (journal/stage.ts) → send (send/) → finish (finish.ts).
// Each stage takes its slice of the plan and the value the stage before returned, and hands the next a value; this
// function alone knows the order, and holds what the run must let go of whatever happens (the input's copy, the
// spools, the job's lock: `Held`, released in its `finally`).
// Exactly once: chunks and keys are a function of content and plan (pinned by the journal); a chunk is journaled
// only once answered; anything else is resent under the same key (DESIGN.md, "In flight").
import { tmpdir } from 'node:os';
import type { ApiRecord } from '../api/envelopes.js';
import { InterruptedError, UsageError } from '../http/errors.js';
import {
  importSummaryOf,
  withSummary,
  type ImportDeps,
  type ImportOptions,
  type ImportSummary,
  type Report,
} from './types.js';
import { prepare, type Plan } from './plan.js';
import { check } from './check/check.js';
import { checkRunColumns } from './check/columns.js';
import { Spool } from './check/spool.js';
import { match, type Matched } from './match/match.js';
import { claimJob, doneEarlier, earlier, openJournal } from './journal/stage.js';
import { send } from './send/send.js';
import { onDisk } from './send/disk.js';
import { dryRunSummary, emptySummary, finish, finishedSummary, progressOf } from './finish.js';

export { importSummaryOf } from './types.js';
export type { ImportDeps, ImportOptions, ImportPlan, ImportProgress, ImportSummary } from './types.js';

/** 0 when every row was created (or had been), 9 when any failed or was invalid. */
export function importExitCode(s: ImportSummary): 0 | 9 {
  return s.failed > 0 || s.invalid > 0 ? 9 : 0;
}

export async function runImport(opts: ImportOptions, deps: ImportDeps): Promise<ImportSummary> {
  const plan = await prepare(opts, deps);
  const held = new Held();
  try {
    return await pipeline(plan, deps, held);
  } catch (err) {
    // stopped before anything was sent: the summary says so; the spool (beside the journal) or another of crm's
    // files on a full disk: a DiskError, not a bug
    const stopped =
      err instanceof InterruptedError && !importSummaryOf(err)
        ? withSummary(err, emptySummary(plan.finish, deps.clock.now()))
        : err;
    throw onDisk(stopped, (err as { path?: unknown } | null)?.path === undefined ? held.spoolPath : undefined);
  } finally {
    await held.release();
    await plan.input.cleanup();
  }
}

async function pipeline(plan: Plan, deps: ImportDeps, held: Held): Promise<ImportSummary> {
  const report = progressOf(plan.finish, deps);
  const found = await earlier(plan.journal, deps);
  if (found.finished) return finishedSummary(plan.finish, deps.clock.now(), found.finished, found.backup);
  const dryRun = plan.journal.dryRun;
  // reconcile reads the file's rows for its match stage, also for a dry run
  const rows = dryRun && !plan.match ? undefined : held.spool(await Spool.create(deps.journalDir ?? tmpdir()));
  const scan = await check(plan.check, { sha: found.sha, spool: rows, typing: found.typing }, { ...deps, report });
  const claimed = await claimJob(plan.journal, found, scan);
  held.unlock = claimed.unlock;
  let matched: Matched | undefined;
  if (plan.match) {
    matched = await match(plan.match, scan, rows!, claimed.pinned, { ...deps, report });
    if (matched.spool) held.spool(matched.spool);
    await rows!.remove();
    if (deps.signal?.aborted) throw new InterruptedError('interrupted before anything was sent');
    await deps.onPlan?.(matched.plan);
    if (dryRun) return finish(plan.finish, deps.clock.now(), scan, undefined, matched);
    await deps.beforeSend?.(scan);
  } else if (!dryRun) {
    const done = await doneEarlier(plan.journal, found, scan);
    const resumes = found.file?.exists === true || done > 0;
    await deps.beforeSend?.({ ...scan, done, resumes, backup: found.backup, records: () => spooledRecords(rows!) });
  }
  const opened = await openJournal(plan.journal, scan, found, claimed, matched, deps);
  if ('dry' in opened) {
    // the columns checked as the run checks them (issue 29's re-trial: a dry run said 1,000 valid, the run refused):
    // its plan is shown, then the refusal
    const refused = await checkRunColumns({ ...plan.send, name: plan.send.input.name, dryRun: true }, scan, deps).then(
      () => undefined,
      (err: unknown) => {
        if (err instanceof UsageError) return err;
        throw err;
      },
    );
    return { ...dryRunSummary(plan.finish, deps.clock.now(), scan, opened.dry), ...(refused ? { refused } : {}) };
  }
  if ('finished' in opened) return finishedSummary(plan.finish, deps.clock.now(), opened.finished);
  if (opened.rows) held.spool(opened.rows);
  const sent = await send(plan.send, scan, opened.rows ?? rows!, opened, matched, {
    ...deps,
    report: reportSending(report, matched),
  });
  return finish(plan.finish, deps.clock.now(), scan, sent, matched);
}

/** While sending, a reconcile's progress counts the requests its plan has left (its creates and updates carry different numbers of rows). */
function reportSending(report: Report, matched: Matched | undefined): Report {
  const planned = matched?.plan.requests;
  if (planned === undefined) return report;
  return (phase, c, rowsTotal) => report(phase, c, rowsTotal, Math.max(0, planned - (c.chunks ?? 0)));
}

/** The valid rows' records, in file order, read back from the spool. */
async function* spooledRecords(spool: Spool): AsyncGenerator<ApiRecord> {
  for await (const e of spool.entries()) if (e.chunk) yield* e.chunk.records();
}

/** What a run holds until it ends: its spools and the job's lock, let go in the engine's `finally`. */
class Held {
  private readonly spools: Spool[] = [];
  unlock?: () => Promise<void>;

  spool(s: Spool): Spool {
    this.spools.push(s);
    return s;
  }

  /** the newest spool: a full disk while it was written is named by it */
  get spoolPath(): string | undefined {
    return this.spools.at(-1)?.path;
  }

  async release(): Promise<void> {
    await this.unlock?.();
    for (const s of this.spools) await s.remove();
  }
}
