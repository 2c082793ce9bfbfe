// The journal and send phases of a run (engine.ts).
import { stat } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { UsageError } from '../http/errors.js';
import { plural } from '../output/plural.js';
import { removeStaleTemps } from '../util/fs.js';
import { dispatchRows, type DispatchResult } from './dispatch.js';
import type { ImportSummary } from './engine-types.js';
import { UTF8 } from './encoding.js';
import { refuseUnsafeRerun, rejectsTakenUp } from './journal-earlier.js';
import { findJournal, journalFolder } from './journal-format.js';
import { lockJob } from './journal-lock.js';
import { pruneJournals } from './journal-prune.js';
import { ImportJournal } from './journal.js';
import { createRejectsWriter, createResultsWriter, defaultRejectsPath, type Outputs, type RowsFile } from './outputs.js';
import { fsReason } from '../util/fs-error.js';
import { onDisk } from './disk.js';
import { checkRunColumns } from './columns.js';
import { dryRunSummary } from './plan.js';
import { fromTotals, identityOf, summaryOf, warnImported, type Run } from './run.js';
import type { ScanResult } from './scan.js';
import { readHead } from './source.js';
import { detectBom } from '../util/text.js';

/** a default rejects (or unknown) file of stdin: crm-rejects-<time>.csv */
const STAMPED_REJECTS = /^crm-rejects-\d{8}T\d{6}Z(\.unknown)?\.(csv|ndjson)$/;

export interface Sent {
  result: DispatchResult;
  files: Pick<ImportSummary, 'rejects_file' | 'unknown_file'>;
}

/** This import's journal (undefined without a journal folder), or the summary when nothing is to be sent. */
export async function openJournal(run: Run, scan: ScanResult): Promise<{ journal: ImportJournal | undefined } | { summary: ImportSummary }> {
  const { opts, deps, started, input } = run;
  const dir = deps.journalDir;
  const identity = identityOf(run, run.sha ?? scan.contentSha256);
  const file = dir ? (run.file ?? (await findJournal(dir, identity))) : undefined;
  if (opts.dryRun) {
    const peeked = dir && file && opts.resume !== false ? await ImportJournal.peek(dir, identity, file).catch(() => undefined) : undefined;
    return { summary: dryRunSummary(summaryOf(run), scan, run, peeked?.size ?? 0) };
  }
  checkPaths(run);
  // the unknown file sits beside the rejects file (unknownPathFor)
  const own = [basename(run.rejectsPath), basename(run.unknownPath)];
  await removeStaleTemps(dirname(run.rejectsPath), started, (n) => own.includes(n) || STAMPED_REJECTS.test(n));
  if (opts.resultsPath !== undefined) await removeStaleTemps(dirname(opts.resultsPath), started, (n) => n === basename(opts.resultsPath!));
  if (!dir || !file) return { journal: undefined };
  // one run of a job at a time: a second is refused before it reads or writes the journal
  run.unlock = await lockJob(journalFolder(dir), identity, input.name);
  await pruneJournals(dir, started, { keep: file.own }).catch(() => 0);
  // files by absolute path, so a changed file at the same place can be recognised (stdin: '-')
  const inputId = input.isStdin ? '-' : resolve(input.origin);
  const rejectsPath = opts.rejectsPath ?? defaultRejectsPath(input.name, scan.format, started, '', opts.operation?.tag);
  const resume = opts.resume !== false;
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
    if (opts.resultsPath === undefined) return { summary: (await fromTotals(run, done, scan))! };
    throw new UsageError(
      `${input.name} was already imported into ${opts.resource} (${done.at}); its journal has since been compacted, so the ids for --results are no longer kept. Nothing was sent.`,
      { hint: 'the ids can be looked up in the CRM; --no-resume imports the file again (every row created again)' },
    );
  }
  if (journal.resumedChunks > 0 && run.retryRejected === undefined) run.retryRejected = !(await rejectsTaken(run));
  warnResumed(run, journal);
  return { journal };
}

/** The rejects file of this job was imported since its run (journal-earlier.ts): its rows are not sent again. */
export async function rejectsTaken(run: Run): Promise<boolean> {
  const dir = run.deps.journalDir;
  if (!dir) return false;
  return rejectsTakenUp(dir, identityOf(run, run.sha ?? ''), resolve(run.rejectsPath)).catch(() => false);
}

/** The rejects, unknown and results files must be three files, none of them the input. */
function checkPaths(run: Run): void {
  const { input, opts } = run;
  const named = [
    ['--rejects', run.rejectsPath],
    ['--rejects', run.unknownPath],
    ['--results', opts.resultsPath],
  ] as const;
  for (const [flag, p] of named) {
    if (p !== undefined && !input.isStdin && resolve(p) === resolve(input.origin)) throw new UsageError(`${flag} names the input file itself`);
  }
  if (opts.resultsPath !== undefined && [run.rejectsPath, run.unknownPath].some((p) => resolve(p) === resolve(opts.resultsPath!))) {
    throw new UsageError('--results and the rejects file must be different files');
  }
}

function warnResumed(run: Run, journal: ImportJournal): void {
  const warn = run.deps.warn ?? (() => undefined);
  // finished, but --results, --strict or a missing rejects file needs the rows read again, or rows it rejected are sent again
  const done = journal.completed;
  const rejected = (done?.failed ?? 0) - (done?.unknown ?? 0);
  if (done && rejected > 0 && run.retryRejected !== false) {
    const what = run.opts.operation ? `${plural(rejected, 'row')} not done` : `${plural(rejected, 'row')} not created`;
    return warn(`${run.input.name} was run before (${done.at}) and left ${what}: those rows are sent again; the rows done then are skipped`);
  }
  if (done) return warnImported(run, done.at);
  const n = journal.resumedChunks;
  const op = run.opts.operation;
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

/** The second pass, with the output files open; the files committed (or dropped) and the journal completed and closed. */
export async function sendRows(run: Run, scan: ScanResult, journal: ImportJournal | undefined): Promise<Sent> {
  const { deps, input } = run;
  try {
    const now = await stat(input.path);
    if (now.size !== run.size || now.mtimeMs !== run.mtimeMs)
      throw new UsageError(`${input.name} changed while it was being checked; nothing was sent`);
    await checkRunColumns(run, scan);
    const files = await openOutputs(run, scan);
    const stats0 = deps.stats?.();
    const result = await dispatchRows(run, scan, journal, files).catch(async (err: unknown) => {
      for (const f of Object.values(files)) await f?.discard();
      throw err;
    });
    const c = result.counters;
    const stats1 = deps.stats?.();
    if (stats0 && stats1) [c.requests, c.retries] = [stats1.requests - stats0.requests, stats1.retries - stats0.retries];
    const committed = await commitOutputs(files).catch((err: unknown) => {
      // a full disk: the summary still says what was done (engine.ts throws it with the error)
      result.fatal ??= err;
      return { rejects_file: null, unknown_file: null };
    });
    if (journal && !result.aborted && result.fatal === undefined && c.failedChunks === 0) {
      const totals = { rows: c.rows, created: c.created + c.skipped, failed: c.failed, invalid: c.invalid, unknown: c.unknown };
      await journal.complete(deps.clock.now(), totals);
    }
    return { result, files: committed };
  } finally {
    await journal?.close().catch(() => undefined);
  }
}

/** The rejects, unknown and results files renamed into place; the first that cannot be written (named) is the error, the others dropped. */
async function commitOutputs(files: Outputs): Promise<Sent['files']> {
  const commit = (f: RowsFile<never[]>) => f.commit().catch((err: unknown) => Promise.reject(onDisk(err, f.target)));
  try {
    const rejects_file = await commit(files.rejects);
    const unknown_file = await commit(files.unknown);
    if (files.results) await commit(files.results);
    return { rejects_file, unknown_file };
  } catch (err) {
    for (const f of Object.values(files)) await f?.discard().catch(() => undefined);
    throw err;
  }
}

/** What the files carrying the input's rows need to know of it. */
export async function shapeOf(run: Run, scan: ScanResult) {
  // a BOM when the input had one (an Excel-made CSV: without it Excel reads the rejects as ANSI, "ZoÃ«"), or was
  // in another encoding (it is UTF-8 now)
  const bom = run.input.encoding !== UTF8 || (await readHead(run.input.path).then((h) => detectBom(h) !== undefined));
  return { format: scan.format, header: scan.header, bom, ndjsonKeys: scan.ndjsonKeys, ndjsonKeysOverflow: scan.ndjsonKeysOverflow };
}

async function openOutputs(run: Run, scan: ScanResult): Promise<Outputs> {
  const opened: Array<RowsFile<never[]>> = [];
  const open = async <F extends RowsFile<never[]>>(path: string, make: () => Promise<F>): Promise<F> => {
    try {
      const f = await make();
      opened.push(f);
      return f;
    } catch (err) {
      for (const f of opened) await f.discard();
      const disk = onDisk(err, path);
      throw disk !== err ? disk : new UsageError(`cannot write ${path}: ${fsReason(err)}`, { cause: err });
    }
  };
  const shape = await shapeOf(run, scan);
  const rejects = await open(run.rejectsPath, () => createRejectsWriter(run.rejectsPath, shape));
  const unknown = await open(run.unknownPath, () => createRejectsWriter(run.unknownPath, shape));
  const path = run.opts.resultsPath;
  if (path === undefined) return { rejects, unknown };
  const keys = { ndjsonKeys: scan.ndjsonKeys, ndjsonKeysOverflow: scan.ndjsonKeysOverflow };
  const idIsTarget = run.opts.operation?.required.includes('id') === true;
  return { rejects, unknown, results: await open(path, () => createResultsWriter(path, { ...shape, ...keys, idIsTarget })) };
}
