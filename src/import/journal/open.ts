// The journal phase of a run (engine.ts): this import's journal looked up once, old journals pruned, an unsafe
// rerun refused, the journal opened or resumed, one warning saying what an earlier run left.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { InterruptedError, UsageError } from '../../http/errors.js';
import { plural } from '../../output/plural.js';
import { listDir, removeStaleTemps } from '../../util/fs.js';
import type { ImportSummary } from '../engine-types.js';
import { refuseUnsafeRerun, rejectsTakenUp } from './earlier.js';
import { findJournal, journalFolder, readComplete } from './format.js';
import { lockJob } from './lock.js';
import { pruneJournals } from './prune.js';
import { ImportJournal } from './journal.js';
import { dryRunSummary } from '../plan.js';
import { fromTotals, identityOf, summaryOf, warnImported, type Run } from '../run.js';
import type { ScanResult } from '../check/scan.js';

/** a default rejects (or unknown) file of stdin: crm-rejects-<time>.csv */
const STAMPED_REJECTS = /^crm-rejects-\d{8}T\d{6}Z(\.unknown)?\.(csv|ndjson)$/;

/** This import's journal (undefined without a journal folder), or the summary when nothing is to be sent. */
export async function openJournal(run: Run, scan: ScanResult): Promise<{ journal: ImportJournal | undefined } | { summary: ImportSummary }> {
  const { job, deps, started, input } = run;
  const dir = deps.journalDir;
  const identity = identityOf(run, run.sha ?? scan.contentSha256);
  const file = dir ? (run.file ?? (await findJournal(dir, identity))) : undefined;
  if (job.dryRun) {
    const peeked = dir && file && job.resume ? await ImportJournal.peek(dir, identity, file).catch(() => undefined) : undefined;
    return { summary: dryRunSummary(summaryOf(run), scan, job, peeked?.size ?? 0) };
  }
  checkPaths(run);
  await sweepOutputs(run);
  if (!dir || !file) return { journal: undefined };
  // one run of a job at a time: a second is refused before it reads or writes the journal
  run.unlock = await lockJob(journalFolder(dir), identity, input.name);
  await pruneJournals(dir, started, { keep: file.own }).catch(() => 0);
  // files by absolute path, so a changed file at the same place can be recognised (stdin: '-')
  const inputId = input.isStdin ? '-' : resolve(input.origin);
  const { resume, journalRejectsPath: rejectsPath } = job;
  await refuseUnsafeRerun({ dir, identity, input: inputId, name: input.name, resume, rejectsPath, hasOwnJournal: file.exists });
  const journal = await ImportJournal.open(dir, identity, { plan: scan.plan, resume, input: inputId, now: started, file }).catch(
    (err: unknown) => {
      if (err instanceof UsageError) throw err;
      throw new UsageError(`cannot write the import journal in ${dir}: ${(err as Error).message}`, {
        cause: err,
        hint: 'CRM_CONFIG_DIR chooses another config folder',
      });
    },
  );
  const done = journal.completed;
  if (done?.compacted) {
    // finished long ago and compacted: nothing is sent again, but the ids and item errors are gone
    await journal.close().catch(() => undefined);
    if (job.resultsPath === undefined) return { summary: (await fromTotals(run, done, scan))! };
    throw new UsageError(
      `${input.name} was already imported into ${job.resource} (${done.at}); its journal has since been compacted, so the ids for --results are no longer kept. Nothing was sent.`,
      { hint: 'the ids can be looked up in the CRM; --no-resume imports the file again (every row created again)' },
    );
  }
  if (journal.resumedChunks > 0 && run.retryRejected === undefined) run.retryRejected = !(await rejectsTaken(run));
  warnResumed(run, journal);
  return { journal };
}

/** Temporary copies of this job's output files a killed run left (`<rejects>.tmp-PID-*`); `more`: other files beside the rejects file (reconcile's). */
export async function sweepOutputs(run: Run, more: readonly string[] = []): Promise<void> {
  const { job, started } = run;
  // the unknown file sits beside the rejects file (unknownPathFor)
  const own = [basename(job.rejectsPath), basename(job.unknownPath), ...more.map((p) => basename(p))];
  await removeStaleTemps(dirname(job.rejectsPath), started, (n) => own.includes(n) || STAMPED_REJECTS.test(n));
  if (job.resultsPath !== undefined) await removeStaleTemps(dirname(job.resultsPath), started, (n) => n === basename(job.resultsPath!));
}

/** The rejects file of this job was imported since its run (earlier.ts): its rows are not sent again. */
export async function rejectsTaken(run: Run): Promise<boolean> {
  const dir = run.deps.journalDir;
  if (!dir) return false;
  return rejectsTakenUp(dir, identityOf(run, run.sha ?? ''), resolve(run.job.rejectsPath)).catch(() => false);
}

/** The rejects, unknown and results files must be three files, none of them the input. */
function checkPaths(run: Run): void {
  const { input, job } = run;
  const named = [
    ['--rejects', job.rejectsPath],
    ['--rejects', job.unknownPath],
    ['--results', job.resultsPath],
  ] as const;
  for (const [flag, p] of named) {
    if (p !== undefined && !input.isStdin && resolve(p) === resolve(input.origin)) throw new UsageError(`${flag} names the input file itself`);
  }
  if (job.resultsPath !== undefined && [job.rejectsPath, job.unknownPath].some((p) => resolve(p) === resolve(job.resultsPath!))) {
    throw new UsageError('--results and the rejects file must be different files');
  }
}

function warnResumed(run: Run, journal: ImportJournal): void {
  const warn = run.deps.warn ?? (() => undefined);
  // finished, but --results, --strict or a missing rejects file needs the rows read again, or rows it rejected are sent again
  const done = journal.completed;
  const rejected = (done?.failed ?? 0) - (done?.unknown ?? 0);
  if (done && rejected > 0 && run.retryRejected !== false) {
    const what = run.job.operation ? `${plural(rejected, 'row')} not done` : `${plural(rejected, 'row')} not created`;
    return warn(`${run.input.name} was run before (${done.at}) and left ${what}: those rows are sent again; the rows done then are skipped`);
  }
  if (done) return warnImported(run, done.at);
  const n = journal.resumedChunks;
  const op = run.job.operation;
  const unit = op ? 'row' : 'chunk';
  if (n > 0) warn(`resuming: ${plural(n, unit)} ${n === 1 ? 'was' : 'were'} finished by an earlier run and ${n === 1 ? 'is' : 'are'} skipped`);
  const doubt = journal.inDoubt();
  if (doubt.length === 0) return;
  if (op) {
    const again =
      op.kind === 'delete' ? 'sent again (a 404 then means that earlier request deleted it)' : 'sent again under the same Idempotency-Keys';
    return warn(
      `${plural(doubt.length, 'row')} ${doubt.length === 1 ? 'was' : 'were'} sent by an earlier run without an answer being recorded: ${again}`,
    );
  }
  const list = doubt.slice(0, 5).join(', ') + (doubt.length > 5 ? ', …' : '');
  const one = doubt.length === 1;
  warn(
    `${plural(doubt.length, 'chunk')} (${list}) ${one ? 'was' : 'were'} sent by an earlier run without an answer being recorded (in flight at a crash, or failed): ` +
      `${one ? 'it is' : 'they are'} sent again under the same Idempotency-Keys, so the server answers from its cache if it created them. ` +
      'That is safe only while the server remembers the keys (24 h in the sandbox); after that, rows of those chunks could be created twice.',
  );
}

/** A finished earlier import needing nothing (resuming; no --results/--strict/--dry-run; its rejects file there): hashed, not parsed. */
export async function finishedEarlier(run: Run): Promise<ImportSummary | undefined> {
  const { job, deps } = run;
  const dir = deps.journalDir;
  if (!dir || !job.resume || job.resultsPath !== undefined || job.dryRun || job.strict) return undefined;
  // no journal at all (a first import): not worth reading the file an extra time
  if (!(await listDir(dir)).some((n) => n.endsWith('.jsonl'))) return undefined;
  const h = createHash('sha256');
  try {
    for await (const piece of createReadStream(run.input.path, { signal: deps.signal })) h.update(piece as Buffer);
  } catch {
    if (!deps.signal?.aborted) return undefined;
  }
  if (deps.signal?.aborted) throw new InterruptedError('interrupted before anything was sent');
  run.sha = h.digest('hex');
  run.file = await findJournal(dir, identityOf(run, run.sha));
  const info = await readComplete(run.file.path);
  if (!info || info.rows === undefined || info.created === undefined || info.failed === undefined || info.invalid === undefined) return;
  // rows it rejected are sent again by this run (issue 17), unless its rejects file was imported since
  if (!info.compacted && info.failed - (info.unknown ?? 0) > 0 && (run.retryRejected = !(await rejectsTaken(run)))) return;
  const summary = await fromTotals(run, info, undefined, true);
  if (summary) await pruneJournals(dir, run.started, { keep: run.file.own }).catch(() => 0);
  return summary;
}
