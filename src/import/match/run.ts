// Reconcile (`crm batch RESOURCE FILE --match FIELD`, CONTRACT §7b): the engine's phases with a match stage, top
// to bottom — check → read → match → plan → journal → send → finish. The plan a run makes (its spool) is kept beside
// the journal until the job is done: an interrupted run's rerun sends that plan under the same keys (nothing twice),
// while a run after a finished one reads the CRM again and makes a new plan under new keys (a change made since by
// someone else is seen, and sent again if the file still says otherwise).
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { rename, unlink } from 'node:fs/promises';
import { resolve } from 'node:path';
import { tmpdir } from 'node:os';
import { inspect } from 'node:util';
import { InterruptedError } from '../../http/errors.js';
import { tempPathFor } from '../../util/atomic-file.js';
import { exists } from '../../util/fs.js';
import type { ImportSummary, MatchPlan } from '../engine-types.js';
import { findJournal, journalFolder, readComplete, readHeader } from '../journal/format.js';
import { lockJob } from '../journal/lock.js';
import { pruneJournals } from '../journal/prune.js';
import { ImportJournal } from '../journal/journal.js';
import { identityOf, progress, summaryOf, withSummary, type Run } from '../run.js';
import { check } from '../check/check.js';
import type { ScanResult } from '../check/scan.js';
import { sendRows, shapeOf } from '../send/send.js';
import { sweepOutputs } from '../journal/open.js';
import { Spool } from '../check/spool.js';
import { PlanFile } from './files.js';
import { openMatchFiles, planShape } from './outputs.js';
import { checkMatchColumns, matchStage } from './stage.js';

export async function reconcile(run: Run): Promise<ImportSummary> {
  const { job, deps, input } = run;
  const { fields, planPath: planCsv } = job.match!;
  const dir = deps.journalDir;
  const tmp = dir ?? tmpdir();
  // check: the whole file, each valid row an entry of the rows spool
  const rows = (run.spool = await Spool.create(tmp));
  const scan = await check(run);
  checkMatchColumns(scan, fields, input.name);
  const identity = identityOf(run, scan.contentSha256);
  const file = dir ? await findJournal(dir, identity) : undefined;
  if (!job.dryRun && dir && file) {
    run.unlock = await lockJob(journalFolder(dir), identity, input.name);
    await pruneJournals(dir, run.started, { keep: file.own }).catch(() => 0);
  }
  const planPath = file && !job.dryRun ? `${file.own}.plan` : undefined;
  // --no-resume: a new plan, whatever an interrupted run left
  const pinned = planPath && file?.exists && job.resume ? await pinnedPlan(file.path, planPath, run.started) : undefined;
  let plan: MatchPlan;
  let planned: Spool | undefined;
  if (pinned) {
    planned = Spool.existing(planPath!, tmp);
    plan = { ...emptyPlan(run, scan), resumed: pinned.at, read: `none: resuming the plan made ${pinned.at}` };
    deps.warn?.(`resuming the plan an interrupted run made (${pinned.at}): what it did not finish is sent, under the same keys`);
    if (planCsv) deps.warn?.(`--plan ${planCsv}: not written again for a resumed plan (the run that made it wrote it, if asked)`);
  } else {
    // read → match → plan: written to a temporary file, renamed beside the journal once whole
    planned = job.dryRun ? undefined : await Spool.create(tmp, planPath ? tempPathFor(planPath) : undefined);
    const planFile = planCsv ? await PlanFile.create(planCsv, await shapeOf(run, scan)) : undefined;
    const o = { resource: job.resource, fields, rows, out: planned, planFile, chunkSize: job.chunkSize, signal: deps.signal };
    const more = { maps: job.maps, name: input.name, warn: deps.warn };
    plan = await matchStage(
      { ...o, ...more, read: (req) => deps.readIndex!(req, (p) => progress(run, 'read', { rows: p.records, chunks: p.requests }, null)) },
      scan,
    ).catch(async (err: unknown) => {
      await Promise.all([planned?.remove(), planFile?.drop()]);
      throw err;
    });
    await planFile?.commit();
    if (planned && planPath) {
      await rename(planned.path, planPath);
      await planned.remove(); // its temporary name (gone) forgotten
      planned = Spool.existing(planPath, tmp);
    }
  }
  await rows.remove();
  run.spool = planned;
  if (deps.signal?.aborted) throw withSummary(new InterruptedError('interrupted before anything was sent'), summaryOf(run));
  await deps.onPlan?.(plan);
  if (job.dryRun || !planned) return { ...summaryOf(run), rows: scan.rows, reconcile: { plan, ...NONE } };
  await deps.beforeSend?.(scan);
  if (!pinned) run.planRequests = plan.requests;
  return send(run, scan, plan, planPath, pinned !== undefined);
}

/** journal → send → finish: the plan's requests, its files, the plan removed once the job is done. */
async function send(run: Run, scan: ScanResult, plan: MatchPlan, planPath: string | undefined, resume: boolean): Promise<ImportSummary> {
  const { job, deps, input } = run;
  const dir = deps.journalDir;
  const identity = identityOf(run, scan.contentSha256);
  const digest = planPath ? await hashFile(planPath) : '';
  const inputId = input.isStdin ? '-' : resolve(input.origin);
  const journal = dir ? await ImportJournal.open(dir, identity, { plan: digest, resume, input: inputId, now: run.started }) : undefined;
  // rows the server rejected are in the rejects file: the next run plans them again
  run.retryRejected = false;
  // the plan's fields are known; a resumed plan's are read back from it
  const shape = resume ? await planShape(run.spool!) : { changed: Object.keys(plan.changes), creates: plan.create > 0 };
  const base = input.isStdin ? job.rejectsPath.replace(/\.rejects\.(csv|ndjson)$/, '') : input.origin;
  // a killed run's temporary copies of the rejects and ambiguous files
  await sweepOutputs(run, [`${base}.ambiguous.csv`]);
  const files = await openMatchFiles(base, await shapeOf(run, scan), job.match!.fields, { ...shape, resume });
  run.matchFiles = files;
  const sent = await sendRows(run, scan, journal).catch(async (err: unknown) => {
    await files.discard();
    throw err;
  });
  const named = await files.commit();
  const { counters: c, fatal, aborted } = sent.result;
  const done = !aborted && fatal === undefined && c.failedChunks === 0;
  if (done && planPath) await unlink(planPath).catch(() => undefined);
  run.spool = undefined;
  const summary = summaryOf(run, c, sent.files, { rows: scan.rows, reasons: sent.result.reasons });
  const out: ImportSummary = {
    ...summary,
    reconcile: {
      plan,
      updated: c.updated,
      unchanged: c.unchanged,
      ambiguous: c.ambiguous,
      duplicate: c.duplicate,
      ...named,
      plan_file: resume ? null : (job.match!.planPath ?? null),
    },
  };
  if (fatal !== undefined) throw withSummary(fatal instanceof Error ? fatal : new Error(inspect(fatal)), out);
  if (aborted) {
    const left = out.not_sent + c.inDoubt;
    throw withSummary(new InterruptedError(`interrupted: ${left} of ${scan.rows} rows left (not sent yet, or sent without an answer)`), out);
  }
  return out;
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

function emptyPlan(run: Run, scan: ScanResult): MatchPlan {
  const zero = { create: 0, update: 0, unchanged: 0, ambiguous: 0, duplicate: 0, invalid: 0, requests: 0, read_requests: 0 };
  return { resource: run.job.resource, rows: scan.rows, read: '', ...zero, changes: {} };
}

/**
 * A plan is resumed while the server still remembers its keys (`PLAN_LIFETIME_MS`, under the sandbox's 24 h): its
 * requests in doubt then replay. Past that, or for a plan made long ago, the CRM is read again — the truth about
 * what an interrupted run did, and about what changed since.
 */
export const PLAN_LIFETIME_MS = 20 * 60 * 60 * 1000;

/** The plan an interrupted run of this job made: its journal unfinished, recent, and naming this plan (its hash). */
async function pinnedPlan(journalPath: string, planPath: string, now: number): Promise<{ at: string } | undefined> {
  if (!(await exists(planPath)) || (await readComplete(journalPath))) return undefined;
  const header = await readHeader(journalPath);
  if (!header || now - Date.parse(header.created_at) > PLAN_LIFETIME_MS) return undefined;
  return header.plan === (await hashFile(planPath)) ? { at: header.created_at } : undefined;
}

async function hashFile(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const piece of createReadStream(path)) h.update(piece as Buffer);
  return h.digest('hex');
}
