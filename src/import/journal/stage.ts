// The stages of the journal folder (engine.ts), over the plan's journal slice:
// - earlier: a job an earlier run finished, answered from its journal's last line (the file hashed, not parsed);
// - claim: once the file is checked, the job locked (one run at a time), old journals pruned, and a reconcile's plan
//   that an interrupted run made found, to be resumed;
// - journal: an unsafe rerun refused, a reconcile's new plan pinned beside the journal, the journal opened or
//   resumed, one warning saying what an earlier run left; a --dry-run stops here with what an earlier run finished.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { rename, unlink } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { InterruptedError, UsageError } from '../../http/errors.js';
import { plural } from '../../output/plural.js';
import { exists, listDir, removeStaleTemps } from '../../util/fs.js';
import { type Finished, type ImportDeps } from '../types.js';
import { journalFolder, type CompleteInfo, type JournalIdentity, type WayBackNames } from '../shapes.js';
import type { JournalSlice } from '../plan.js';
import { isBackupFile } from '../files/backup.js';
import type { ScanResult } from '../check/check.js';
import type { Typing } from '../input/typing.js';
import { Spool } from '../check/spool.js';
import type { Matched, Pinned } from '../match/match.js';
import { lockJob, pruneJournals, refuseUnsafeRerun, rejectsTakenUp } from './folder.js';
import { findJournal, ImportJournal, journalPath, readComplete, readHeader, type JournalFile } from './journal.js';

/** What an earlier run of this job left, as the earlier stage found it. */
export interface Earlier {
  /** the content's hash, when this stage computed it (the check stage then does not) */
  sha?: string;
  /** this job's journal file, once looked up */
  file?: JournalFile;
  /** the typing of its text cells an earlier run of this job pinned in its journal */
  typing?: Typing;
  /** a delete's backup file its journal names (absolute) */
  backup?: string;
  /** decided here: false when rows an earlier run rejected are not sent again (its rejects file was imported since) */
  retryRejected?: boolean;
  /** the job is done: nothing to send */
  finished?: Finished;
}

/** The job claimed (claimJob): its lock, its journal's file, and a reconcile's interrupted plan. */
export interface Claimed {
  /** releases the lock; none for a dry run or without a journal folder */
  unlock?: () => Promise<void>;
  file?: JournalFile;
  /** reconcile: the plan an interrupted run made, and its journal (read only): what it finished, what it left in doubt */
  pinned?: Pinned;
}

/** The journal stage's value: the journal to send under; a dry run's finished chunks; or a job finished long ago. */
export type Opened =
  | { journal?: ImportJournal; retryRejected: boolean; rows?: Spool; planPath?: string }
  | { dry: number }
  | { finished: Finished };

/** a default rejects (or unknown) file of stdin: crm-rejects-<time>.csv */
const STAMPED_REJECTS = /^crm-rejects-\d{8}T\d{6}Z(\.unknown)?\.(csv|ndjson)$/;

/**
 * A plan is resumed while the server still remembers its keys (`PLAN_LIFETIME_MS`, under the sandbox's 24 h): its
 * requests in doubt then replay. Past that, or for a plan made long ago, the CRM is read again — the truth about
 * what an interrupted run did, and about what changed since.
 */
export const PLAN_LIFETIME_MS = 20 * 60 * 60 * 1000;

type Warn = (message: string) => void;
const warnOf = (deps: ImportDeps): Warn => deps.warn ?? (() => undefined);
const identityOf = (slice: JournalSlice, sha: string): JournalIdentity => ({ contentSha256: sha, ...slice.job });

/** The earlier stage: a finished job (resuming; no --results/--strict/--dry-run; its rejects file there), or a reconcile's interrupted plan. */
export async function earlier(slice: JournalSlice, deps: ImportDeps): Promise<Earlier> {
  const { dir, input } = slice;
  // a reconcile's earlier run is looked for once its job is claimed (claimJob): its rows are checked first anyway
  if (!dir || !slice.resume || slice.match || slice.dryRun) return {};
  // no journal at all (a first import): not worth reading the file an extra time
  if (!(await listDir(dir)).some((n) => n.endsWith('.jsonl'))) return {};
  const sha = await hashFile(input.path, deps.signal).catch(() => undefined);
  if (deps.signal?.aborted) throw new InterruptedError('interrupted before anything was sent');
  if (sha === undefined) return {};
  const file = await findJournal(dir, identityOf(slice, sha));
  const header = file.exists ? await readHeader(file.path) : undefined;
  // its cells are typed as its first run typed them (none in a journal from before typing)
  const typing = file.exists ? (header?.typing ?? []) : undefined;
  const known = { sha, file, typing, ...(header?.backup ? { backup: header.backup } : {}) };
  // a finished job is answered from its journal's last line only without --results or --strict
  if (slice.resultsPath !== undefined || slice.strict) return known;
  const info = await readComplete(file.path);
  if (
    !info ||
    info.rows === undefined ||
    info.created === undefined ||
    info.failed === undefined ||
    info.invalid === undefined
  )
    return known;
  // rows it rejected are sent again by this run (issue 17), unless its rejects file was imported since
  let retryRejected: boolean | undefined;
  if (!info.compacted && info.failed - (info.unknown ?? 0) > 0 && (retryRejected = !(await rejectsTaken(slice, sha))))
    return { ...known, retryRejected };
  const finished = await finishedJob(slice, info, { whole: true, warn: warnOf(deps) });
  if (!finished) return { ...known, retryRejected };
  await pruneJournals(dir, slice.started, { keep: file.own }).catch(() => 0);
  return { ...known, retryRejected, finished };
}

/** The rows (chunks) an earlier run of this job finished, read from its journal without opening it (0 when none or not resuming). */
export async function doneEarlier(slice: JournalSlice, found: Earlier, scan: ScanResult): Promise<number> {
  if (!slice.dir || !slice.resume) return 0;
  const peeked = await ImportJournal.peek(slice.dir, identityOf(slice, found.sha ?? scan.contentSha256)).catch(
    () => undefined,
  );
  return peeked?.size ?? 0;
}

/**
 * The job claimed once the file is checked, before anything is read from the CRM, planned or sent: one run of a job
 * at a time (a second is refused, naming the first), old journals pruned, and for a reconcile the plan an interrupted
 * run made (its journal unfinished), to be resumed. Nothing for a dry run or without a journal folder.
 */
export async function claimJob(slice: JournalSlice, found: Earlier, scan: ScanResult): Promise<Claimed> {
  const { dir, input, started } = slice;
  if (slice.dryRun || !dir) return {};
  const identity = identityOf(slice, found.sha ?? scan.contentSha256);
  const file = found.file ?? (await findJournal(dir, identity));
  const unlock = await lockJob(journalFolder(dir), identity, input.name);
  try {
    await pruneJournals(dir, started, { keep: file.own }).catch(() => 0);
    // --no-resume: a new plan, whatever an interrupted run left
    const plan =
      slice.match && slice.resume && file.exists ? await pinnedPlan(file.path, `${file.own}.plan`, started) : undefined;
    const journal = plan && (await ImportJournal.peek(dir, identity, file));
    return { unlock, file, pinned: plan && journal && { ...plan, journal } };
  } catch (err) {
    await unlock();
    throw err;
  }
}

/** The journal stage: this job's journal (none without a journal folder), opened under the lock claimJob took. */
export async function openJournal(
  slice: JournalSlice,
  scan: ScanResult,
  found: Earlier,
  claimed: Claimed,
  matched: Matched | undefined,
  deps: ImportDeps,
): Promise<Opened> {
  const { dir, input } = slice;
  const identity = identityOf(slice, found.sha ?? scan.contentSha256);
  const file = dir ? (claimed.file ?? found.file ?? (await findJournal(dir, identity))) : undefined;
  if (slice.dryRun) {
    const peeked =
      dir && file && slice.resume ? await ImportJournal.peek(dir, identity, file).catch(() => undefined) : undefined;
    return { dry: peeked?.size ?? 0 };
  }
  if (!matched) checkPaths(slice);
  await sweepOutputs(slice);
  if (!dir || !file) return { retryRejected: found.retryRejected !== false && !matched, rows: matched?.spool };
  if (matched) return openPlanJournal(slice, identity, matched);
  const { resume, journalRejectsPath: rejectsPath } = slice;
  await refuseUnsafeRerun({
    dir,
    identity,
    input: input.id,
    name: input.name,
    resume,
    rejectsPath,
    hasOwnJournal: file.exists,
  });
  const journal = await open(slice, identity, { plan: scan.plan, typing: scan.typing, resume, file });
  const done = journal.completed;
  if (done?.compacted) {
    // finished long ago and compacted: nothing is sent again, but the ids and item errors are gone
    await journal.close().catch(() => undefined);
    if (slice.resultsPath === undefined)
      return {
        finished: (await finishedJob(slice, done, { rows: scan.rows, invalid: scan.invalid, warn: warnOf(deps) }))!,
      };
    throw new UsageError(
      `${input.name} was already imported into ${slice.job.resource} (${done.at}); its journal has since been compacted, so the ids for --results are no longer kept. Nothing was sent.`,
      { hint: 'the ids can be looked up in the CRM; --no-resume imports the file again (every row created again)' },
    );
  }
  let retryRejected = found.retryRejected;
  if (journal.resumedChunks > 0 && retryRejected === undefined)
    retryRejected = !(await rejectsTaken(slice, identity.contentSha256));
  warnResumed(slice, journal, retryRejected, warnOf(deps));
  return { journal, retryRejected: retryRejected !== false };
}

/**
 * A reconcile's journal, its plan pinned beside it: every plan is new (a resumed job's too, made by reading the CRM
 * again: match.ts), renamed into place once whole, so that an interrupted run's rerun finds it, under a new journal
 * (new keys; a create an interrupted run left in doubt carries its key in the plan). Rows the server rejected are in
 * the rejects file: the next run plans them again, so they are never sent again by this one.
 */
async function openPlanJournal(slice: JournalSlice, identity: JournalIdentity, matched: Matched): Promise<Opened> {
  const planPath = `${journalPath(slice.dir!, identity)}.plan`;
  // beside the plan first, then named by the new journal, then in place: a kill between any two steps leaves a
  // journal whose plan is found (the old pair, or the new journal and its `.next`: pinnedPlan)
  const next = `${planPath}.next`;
  if (matched.spool) await rename(matched.spool.path, next);
  const digest = await hashFile(next);
  // a resumed job keeps the time it began: its plan's lifetime counts from then, and a stdin job's way back is named by it
  const { began, wayBack } = matched;
  const journal = await open(slice, identity, { plan: digest, resume: false, file: undefined, began, wayBack });
  // a new job's journal is written at its first request (a run refused before it leaves none: its rerun is no
  // resume); a resumed one's now, replacing the interrupted run's before its plan does, so the creates that run
  // left in doubt stay found
  if (matched.resumed) await journal.begin();
  await rename(next, planPath);
  return { journal, retryRejected: false, rows: Spool.existing(planPath, slice.dir!), planPath };
}

async function open(
  slice: JournalSlice,
  identity: JournalIdentity,
  o: { plan: string; typing?: Typing; resume: boolean; file?: JournalFile; began?: number; wayBack?: WayBackNames },
): Promise<ImportJournal> {
  const dir = slice.dir!;
  const { began, ...rest } = o;
  const at = { input: slice.input.id, now: began ?? slice.started, backup: slice.backup };
  return ImportJournal.open(dir, identity, { ...rest, ...at }).catch((err: unknown) => {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`cannot write the import journal in ${dir}: ${(err as Error).message}`, {
      cause: err,
      hint: 'CRM_CONFIG_DIR chooses another config folder',
    });
  });
}

/** A finished job's totals and files; undefined when `whole` is asked for and its rejects or unknown file is gone (a full rerun writes them). */
async function finishedJob(
  slice: JournalSlice,
  info: CompleteInfo,
  o: { whole?: boolean; rows?: number; invalid?: number; warn: Warn },
): Promise<Finished | undefined> {
  const [failed, unknown] = [info.failed ?? 0, info.unknown ?? 0];
  const invalid = info.invalid ?? o.invalid ?? 0;
  // null: none needed
  const rejects = failed + invalid - unknown > 0 ? await exists(slice.rejectsPath) : null;
  const unknowns = unknown > 0 ? await exists(slice.unknownPath) : null;
  if (o.whole && (rejects === false || unknowns === false)) return undefined;
  warnImported(slice, info.at, o.warn);
  const files = { rejects_file: rejects ? slice.rejectsPath : null, unknown_file: unknowns ? slice.unknownPath : null };
  return { info, rows: o.rows, invalid: o.invalid, ...files };
}

/** Temporary copies of this job's output files a killed run left (`<rejects>.tmp-PID-*`), and of reconcile's other files. */
async function sweepOutputs(slice: JournalSlice): Promise<void> {
  const { started, rejectsPath, unknownPath, resultsPath } = slice;
  // the unknown file sits beside the rejects file (unknownPathFor)
  const own = [basename(rejectsPath), basename(unknownPath), ...slice.otherFiles.map((p) => basename(p))];
  await removeStaleTemps(dirname(rejectsPath), started, (n) => own.includes(n) || STAMPED_REJECTS.test(n));
  if (resultsPath !== undefined)
    await removeStaleTemps(dirname(resultsPath), started, (n) => n === basename(resultsPath));
}

/** The rejects file of this job was imported since its run (folder.ts): its rows are not sent again. */
async function rejectsTaken(slice: JournalSlice, sha: string): Promise<boolean> {
  if (!slice.dir) return false;
  return rejectsTakenUp(slice.dir, identityOf(slice, sha), resolve(slice.rejectsPath)).catch(() => false);
}

/** The rejects, unknown and results files must be three files, none of them the input. */
function checkPaths(slice: JournalSlice): void {
  const { input, rejectsPath, unknownPath, resultsPath } = slice;
  const named = [
    ['--rejects', rejectsPath],
    ['--rejects', unknownPath],
    ['--results', resultsPath],
  ] as const;
  for (const [flag, p] of named) {
    if (p !== undefined && !input.isStdin && resolve(p) === resolve(input.origin))
      throw new UsageError(`${flag} names the input file itself`);
  }
  if (resultsPath !== undefined && [rejectsPath, unknownPath].some((p) => resolve(p) === resolve(resultsPath))) {
    throw new UsageError('--results and the rejects file must be different files');
  }
}

/** The one "already imported" warning. */
function warnImported(slice: JournalSlice, at: string, warn: Warn): void {
  const { op, input } = slice;
  const job = op ? `used to ${op.describe}` : `imported into ${slice.job.resource}`;
  // a delete's backup (issue 19): imported again, every record would be created a second time
  const again =
    !op && isBackupFile(input.name)
      ? 'its records were already created again then (their new ids and owners: the --results file if one was named, and ' +
        `${input.name}.owners.csv); --no-resume would create every one of them a second time`
      : `use --no-resume to ${op ? 'send it' : 'import it'} again`;
  warn(`${input.name} was already ${job} (${at}): nothing will be sent; ${again}`);
}

function warnResumed(
  slice: JournalSlice,
  journal: ImportJournal,
  retryRejected: boolean | undefined,
  warn: Warn,
): void {
  // finished, but --results, --strict or a missing rejects file needs the rows read again, or rows it rejected are sent again
  const done = journal.completed;
  const rejected = (done?.failed ?? 0) - (done?.unknown ?? 0);
  const op = slice.op;
  if (done && rejected > 0 && retryRejected !== false) {
    const what = op ? `${plural(rejected, 'row')} not done` : `${plural(rejected, 'row')} not created`;
    return warn(
      `${slice.input.name} was run before (${done.at}) and left ${what}: those rows are sent again; the rows done then are skipped`,
    );
  }
  if (done) return warnImported(slice, done.at, warn);
  const n = journal.resumedChunks;
  const unit = op ? 'row' : 'chunk';
  if (n > 0)
    warn(
      `resuming: ${plural(n, unit)} ${n === 1 ? 'was' : 'were'} finished by an earlier run and ${n === 1 ? 'is' : 'are'} skipped`,
    );
  const doubt = journal.inDoubt();
  if (doubt.length === 0) return;
  if (op) {
    const again =
      op.kind === 'delete'
        ? 'sent again (a 404 then means that earlier request deleted it)'
        : 'sent again under the same Idempotency-Keys';
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

/** The plan an interrupted run of this job made: its journal unfinished, recent, and naming this plan (its hash). */
export async function pinnedPlan(
  journalPath: string,
  planPath: string,
  now: number,
): Promise<{ path: string; at: string; wayBack?: WayBackNames } | undefined> {
  if (await readComplete(journalPath)) return undefined;
  const header = await readHeader(journalPath);
  if (!header || now - Date.parse(header.created_at) > PLAN_LIFETIME_MS) return undefined;
  // a run killed after its journal named its new plan, before the plan was moved into place
  const next = `${planPath}.next`;
  if ((await exists(next)) && header.plan === (await hashFile(next))) await rename(next, planPath);
  if (!(await exists(planPath))) return undefined;
  if (header.plan !== (await hashFile(planPath))) return undefined;
  return { path: planPath, at: header.created_at, ...(header.way_back ? { wayBack: header.way_back } : {}) };
}

/** A file's sha256 (a job's content; a reconcile's plan), read as a stream. */
async function hashFile(path: string, signal?: AbortSignal): Promise<string> {
  const h = createHash('sha256');
  for await (const piece of createReadStream(path, { signal })) h.update(piece as Buffer);
  return h.digest('hex');
}

/** A finished reconcile's plan is removed: the next run reads the CRM again and makes a new one. */
export const dropPlan = (path: string | undefined): Promise<void> =>
  path ? unlink(path).catch(() => undefined) : Promise.resolve();
