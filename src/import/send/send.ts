// The send stage (engine.ts): the spooled chunks (or a reconcile's plan) read back and sent (dispatch.ts); the rejects,
// unknown and results files opened and committed, and a reconcile's way back (its undo and created files, its
// ambiguous rows: files/way-back.ts); the journal completed; a finished reconcile's plan removed.
import { stat } from 'node:fs/promises';
import { UsageError } from '../../http/errors.js';
import { fsReason } from '../../util/fs-error.js';
import type { ImportSummary, StageDeps } from '../types.js';
import type { SendSlice } from '../plan.js';
import type { ScanResult } from '../check/check.js';
import type { Spool } from '../check/spool.js';
import { newRunId } from '../check/chunker.js';
import { checkRunColumns } from '../check/columns.js';
import {
  createRejectsWriter,
  createResultsWriter,
  rowShapeOf,
  warnKept,
  type Kept,
  type Outputs,
  type RowsFile,
} from '../files/outputs.js';
import type { RowShape } from '../files/outputs.js';
import { openMatchFiles, wayBackNames, type MatchFileNames, type OpenedMatchFiles } from '../files/way-back.js';
import { keyPart } from '../match/key.js';
import type { Matched } from '../match/match.js';
import type { ImportJournal } from '../journal/journal.js';
import { dropPlan } from '../journal/stage.js';
import { dispatchRows, type DispatchResult } from './dispatch.js';
import { onDisk } from './disk.js';

/** The send stage's value: what the pass did, and the files it left. */
export interface Sent {
  result: DispatchResult;
  files: Pick<ImportSummary, 'rejects_file' | 'unknown_file'>;
  /** reconcile: its way back and its ambiguous rows */
  wayBack?: MatchFileNames;
}

/** What the journal stage opened for the pass. */
interface Journaled {
  journal?: ImportJournal;
  retryRejected: boolean;
  /** reconcile: its plan beside the journal, removed once the job is done */
  planPath?: string;
}

export async function send(
  slice: SendSlice,
  scan: ScanResult,
  rows: Spool,
  opened: Journaled,
  matched: Matched | undefined,
  deps: StageDeps,
): Promise<Sent> {
  // a reconcile's way back beside the input; a new run that sends anything first moves the earlier run's aside
  const m = slice.match;
  const keyCells = (r: Record<string, unknown>): string[] => m!.fields.map((f) => keyPart(f, r[f]) ?? '');
  const opening = async () => {
    const shape = await rowShapeOf(slice.input, scan);
    const kept = warnKept(deps.warn);
    const o = matched && { changed: matched.changed, creates: matched.creates, resume: matched.resumed, kept };
    // a resumed job's way back is the interrupted run's (from standard input: named by when the job began)
    const began = matched?.began;
    const base = m?.baseAt && began !== undefined ? m.baseAt(began) : m?.base;
    if (!m || !o) return { shape, wayBack: undefined };
    // …as its journal names it (one from before it named them: the plain names); a new run's, named in its journal
    const plain = { undo: `${base!}.undo.csv`, created: `${base!}.created.csv` };
    const names = o.resume ? (matched.wayBack ?? plain) : await wayBackNames(base!, deps.clock.now());
    opened.journal?.nameWayBack(names);
    return { shape, wayBack: await openMatchFiles(base!, names, shape, m.fields, keyCells, o) };
  };
  const { shape, wayBack } = await opening().catch(async (err: unknown) => {
    // the pass never starts: the journal it would close is closed here
    await opened.journal?.close().catch(() => undefined);
    throw err;
  });
  const sent = await sendRows(slice, scan, rows, opened, { shape, wayBack }, deps).catch(async (err: unknown) => {
    await wayBack?.discard();
    throw err;
  });
  if (!wayBack) return sent;
  const named = await wayBack.commit();
  const { aborted, fatal, counters } = sent.result;
  if (!aborted && fatal === undefined && counters.failedChunks === 0) await dropPlan(opened.planPath);
  return { ...sent, wayBack: named };
}

/** The pass, with the output files open; the files committed (or dropped) and the journal completed and closed. */
async function sendRows(
  slice: SendSlice,
  scan: ScanResult,
  spool: Spool,
  opened: Journaled,
  out: { shape: Required<RowShape>; wayBack?: OpenedMatchFiles },
  deps: StageDeps,
): Promise<Sent> {
  const { input } = slice;
  const journal = opened.journal;
  try {
    const now = await stat(input.path);
    if (now.size !== input.size || now.mtimeMs !== input.mtimeMs)
      throw new UsageError(`${input.name} changed while it was being checked; nothing was sent`);
    if (!slice.match) await checkRunColumns({ ...slice, name: input.name }, scan, deps);
    const files = await openOutputs(slice, out.shape, warnKept(deps.warn));
    const stats0 = deps.stats?.();
    const { resource, baseUrl, concurrency, maxConsecutiveFailures, op } = slice;
    const result = await dispatchRows({
      ...{ resource, baseUrl, concurrency, maxConsecutiveFailures, op, spool, journal, ...files },
      ...{ send: deps.send, signal: deps.signal, warn: deps.warn, resent: new Set(journal?.inDoubt() ?? []) },
      ...{ repeated: scan.repeated, updateOp: slice.match?.update, match: out.wayBack, retry: opened.retryRejected },
      runId: journal ? journal.runId : newRunId(),
      lastChunk: Math.ceil((scan.valid - scan.repeated) / slice.chunkSize),
      chunkSize: slice.chunkSize,
      onChange: (c) => deps.report('send', c, scan.rows),
    }).catch(async (err: unknown) => {
      for (const f of Object.values(files)) await f?.discard();
      throw err;
    });
    const c = result.counters;
    const stats1 = deps.stats?.();
    if (stats0 && stats1)
      [c.requests, c.retries] = [stats1.requests - stats0.requests, stats1.retries - stats0.retries];
    const committed = await commitOutputs(files).catch((err: unknown) => {
      // a full disk: the summary still says what was done (finish.ts throws it with the error)
      result.fatal ??= err;
      return { rejects_file: null, unknown_file: null };
    });
    if (journal && !result.aborted && result.fatal === undefined && c.failedChunks === 0) {
      const { rows, failed, invalid, unknown } = c;
      await journal.complete(deps.clock.now(), { rows, created: c.created + c.skipped, failed, invalid, unknown });
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

async function openOutputs(
  slice: SendSlice,
  shape: Required<RowShape>,
  /** an edited rejects file there before, moved aside (keepingEdits) */
  kept: Kept,
): Promise<Outputs> {
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
  const { rejectsPath, unknownPath, resultsPath, op } = slice;
  const writer = (path: string) => createRejectsWriter(path, { ...shape, kept });
  const rejects = await open(rejectsPath, () => writer(rejectsPath));
  const unknown = await open(unknownPath, () => writer(unknownPath));
  if (resultsPath === undefined) return { rejects, unknown };
  // (the shape carries the NDJSON keys the check pass found: the results file's columns)
  const idIsTarget = op?.required.includes('id') === true;
  const results = await open(resultsPath, () => createResultsWriter(resultsPath, { ...shape, idIsTarget }));
  return { rejects, unknown, results };
}
