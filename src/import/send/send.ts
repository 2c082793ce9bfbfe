// The send phase of a run (engine.ts): the spool read back and sent (dispatch.ts), the rejects, unknown and
// results files opened and committed, the journal completed.
import { stat } from 'node:fs/promises';
import { UsageError } from '../../http/errors.js';
import { dispatchRows, type DispatchResult } from './dispatch.js';
import type { ImportSummary } from '../engine-types.js';
import { UTF8 } from '../input/encoding.js';
import type { ImportJournal } from '../journal/journal.js';
import { createRejectsWriter, createResultsWriter, type Outputs, type RowsFile } from './outputs.js';
import { fsReason } from '../../util/fs-error.js';
import { onDisk } from './disk.js';
import { checkRunColumns } from '../check/columns.js';
import type { Run } from '../run.js';
import type { ScanResult } from '../check/scan.js';
import { readHead } from '../input/source.js';
import { detectBom } from '../../util/text.js';

export interface Sent {
  result: DispatchResult;
  files: Pick<ImportSummary, 'rejects_file' | 'unknown_file'>;
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
  const { rejectsPath, unknownPath, resultsPath: path, operation } = run.job;
  const rejects = await open(rejectsPath, () => createRejectsWriter(rejectsPath, shape));
  const unknown = await open(unknownPath, () => createRejectsWriter(unknownPath, shape));
  if (path === undefined) return { rejects, unknown };
  const keys = { ndjsonKeys: scan.ndjsonKeys, ndjsonKeysOverflow: scan.ndjsonKeysOverflow };
  const idIsTarget = operation?.required.includes('id') === true;
  return { rejects, unknown, results: await open(path, () => createResultsWriter(path, { ...shape, ...keys, idIsTarget })) };
}
