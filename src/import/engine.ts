// `crm batch RESOURCE FILE` (CONTRACT §7) as stages, in the order runImport calls them: prepare (plan.ts: the
// options resolved once into run.job) → earlier (journal/open.ts) → check (check/) → match (match/run.ts, for
// --match) → journal (journal/open.ts) → send (send/) → finish (below). The map: README.md.
// Exactly once: chunks and keys are a function of content and plan (pinned by the journal); a chunk is
// journaled only once answered; anything else is resent under the same key (README.md, "In flight").
import { tmpdir } from 'node:os';
import type { ApiRecord } from '../api/envelopes.js';
import { inspect } from 'node:util';
import { InterruptedError } from '../http/errors.js';
import { count, plural } from '../output/plural.js';
import type { ImportDeps, ImportOptions, ImportSummary } from './engine-types.js';
import { prepare } from './plan.js';
import { finishedEarlier, openJournal } from './journal/open.js';
import { ImportJournal } from './journal/journal.js';
import { identityOf } from './run.js';
import { check } from './check/check.js';
import type { ScanResult } from './check/scan.js';
import { Spool } from './check/spool.js';
import { reconcile } from './match/run.js';
import { sendRows, type Sent } from './send/send.js';
import { onDisk } from './send/disk.js';
import { summaryOf, withSummary, type Run } from './run.js';

export { importSummaryOf, type Run } from './run.js';
export type { ImportDeps, ImportOptions, ImportPlan, ImportProgress, ImportSummary } from './engine-types.js';

/** 0 when every row was created (or had been), 9 when any failed or was invalid. */
export function importExitCode(s: ImportSummary): 0 | 9 {
  return s.failed > 0 || s.invalid > 0 ? 9 : 0;
}

export async function runImport(opts: ImportOptions, deps: ImportDeps): Promise<ImportSummary> {
  const run = await prepare(opts, deps);
  try {
    // --match: make the CRM agree with the file (match/run.ts)
    if (run.job.match) return await reconcile(run);
    const earlier = await finishedEarlier(run);
    if (earlier) return earlier;
    if (!run.job.dryRun) run.spool = await Spool.create(deps.journalDir ?? tmpdir());
    const scan = await check(run);
    if (!run.job.dryRun) await deps.beforeSend?.({ ...scan, done: await doneEarlier(run, scan), records: () => spooledRecords(run.spool!) });
    const journal = await openJournal(run, scan);
    if ('summary' in journal) return journal.summary;
    return finish(run, scan, await sendRows(run, scan, journal.journal));
  } catch (err) {
    // the spool (beside the journal) or another of crm's files on a full disk: a DiskError, not a bug
    throw onDisk(err, (err as { path?: unknown } | null)?.path === undefined ? run.spool?.path : undefined);
  } finally {
    await run.unlock?.();
    await run.spool?.remove();
    await run.input.cleanup();
  }
}

/** The rows (chunks) an earlier run of this job finished, read from its journal without opening it (0 when none or not resuming). */
async function doneEarlier(run: Run, scan: ScanResult): Promise<number> {
  const dir = run.deps.journalDir;
  if (!dir || !run.job.resume) return 0;
  const peeked = await ImportJournal.peek(dir, identityOf(run, run.sha ?? scan.contentSha256)).catch(() => undefined);
  return peeked?.size ?? 0;
}

/** The valid rows' records, in file order, read back from the spool. */
async function* spooledRecords(spool: Spool): AsyncGenerator<ApiRecord> {
  for await (const e of spool.entries()) if (e.chunk) yield* e.chunk.records();
}

/** The summary, or the error that carries it: a fatal error, or the interruption saying how far it got. */
function finish(run: Run, scan: ScanResult, sent: Sent): ImportSummary {
  const { counters: c, fatal, aborted } = sent.result;
  const result = summaryOf(run, c, sent.files, { rows: scan.rows, reasons: sent.result.reasons });
  if (fatal !== undefined)
    throw withSummary(fatal instanceof Error ? fatal : new Error(typeof fatal === 'string' ? fatal : inspect(fatal)), result);
  if (!aborted) return result;
  // chunks are cut from the valid rows in order; done: answered now or by an earlier run
  const chunksDone = c.skippedChunks + c.chunks - c.failedChunks;
  const left = result.not_sent + c.inDoubt;
  const byEarlier = c.skipped - c.repeated;
  const earlier = byEarlier > 0 ? ` (${count(byEarlier)} of them by an earlier run)` : '';
  const rejected = c.failed - c.inDoubt - c.unknown + c.invalid;
  const [unit, created] = run.job.operation ? ['row', run.job.operation.done] : ['chunk', 'created'];
  const message =
    `interrupted after ${count(chunksDone)} of ${plural(Math.ceil((scan.valid - scan.repeated) / run.job.chunkSize), unit)}: ${plural(c.created + c.skipped, 'row')} ${created}${earlier}` +
    `${rejected > 0 ? `, ${count(rejected)} not ${created} (in the rejects file)` : ''}` +
    `${c.unknown > 0 ? `, ${count(c.unknown)} unknown (in the unknown file)` : ''}; ` +
    `${plural(left, 'row')} of ${count(scan.rows)} left (not sent yet${c.inDoubt > 0 ? ', or sent without an answer' : ''}), not in the rejects file`;
  throw withSummary(new InterruptedError(message), result);
}
