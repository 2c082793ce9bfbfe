// `crm batch RESOURCE FILE` (CONTRACT §7) as phases: prepare → earlier → check → journal → send → finish.
// Exactly once: chunks and keys are a function of content and plan (pinned by the journal); a chunk is
// journaled only once answered; anything else is resent under the same key (README.md, "In flight").
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { inspect } from 'node:util';
import { InterruptedError, UsageError } from '../http/errors.js';
import { count, plural } from '../output/plural.js';
import { listDir } from '../util/fs.js';
import type { ImportDeps, ImportOptions, ImportSummary } from './engine-types.js';
import { parseColumnMaps } from './header.js';
import { findJournal, readComplete } from './journal-format.js';
import { pruneJournals } from './journal-prune.js';
import { checkOptions, listInvalid } from './plan.js';
import { defaultRejectsPath, unknownPathFor } from './outputs.js';
import { detectFormat } from './reader.js';
import { fromTotals, identityOf, progress, summaryOf, withSummary, type Run } from './run.js';
import { scanInput, type ScanResult } from './scan.js';
import { openJournal, rejectsTaken, sendRows, type Sent } from './send.js';
import { prepareInput, readHead, type PreparedInput } from './source.js';
import { Spool } from './spool.js';
import { onDisk } from './disk.js';
import { reconcile } from './match/run.js';

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
    if (opts.match) return await reconcile(run, check);
    const earlier = await finishedEarlier(run);
    if (earlier) return earlier;
    if (!opts.dryRun) run.spool = await Spool.create(deps.journalDir ?? tmpdir());
    const scan = await check(run);
    if (!opts.dryRun) await deps.beforeSend?.(scan);
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

async function prepare(opts: ImportOptions, deps: ImportDeps): Promise<Run> {
  const started = deps.clock.now();
  const sizes = checkOptions(opts);
  const maps = parseColumnMaps(opts.maps);
  const { encoding, signal, stdin } = { ...opts, ...deps };
  const input = await prepareInput(opts.input, { stdin, tmpDir: deps.journalDir ?? tmpdir(), encoding, signal });
  try {
    const format = opts.format ?? detectFormat(input.name);
    // a default-CSV file starting with `{` is refused, pointing at --input-format: the format is never guessed
    const head = opts.format === undefined && format === 'csv' ? await readHead(input.path).catch(() => Buffer.alloc(0)) : undefined;
    if (head && /^\s*\{/.test(head.toString('utf8', 0, 256).replace(/^\ufeff/, ''))) throw looksLikeNdjson(input);
    const name = input.isStdin ? '-' : input.name;
    const rejectsPath = opts.rejectsPath ?? defaultRejectsPath(name, format, started, deps.cwd ?? process.cwd(), opts.operation?.tag);
    // an unreadable input is reported by the scan, as a usage error naming it
    const st = await stat(input.path).catch(() => undefined);
    const [size, mtimeMs] = [st?.size ?? 0, st?.mtimeMs ?? 0];
    return { opts, deps, started, ...sizes, maps, input, format, rejectsPath, unknownPath: unknownPathFor(rejectsPath), size, mtimeMs };
  } catch (err) {
    await input.cleanup();
    throw err;
  }
}

function looksLikeNdjson(input: PreparedInput): UsageError {
  const why = input.isStdin
    ? 'standard input is read as CSV unless --input-format says otherwise'
    : 'its name does not end in .ndjson or .jsonl';
  return new UsageError(
    `${input.name === '-' ? 'standard input' : input.name} starts with "{" like NDJSON, but would be read as CSV (${why}); nothing was sent`,
    { hint: 'say which with --input-format ndjson (or --input-format csv to read it as CSV)' },
  );
}

/** A finished earlier import needing nothing (resuming; no --results/--strict/--dry-run; its rejects file there): hashed, not parsed. */
async function finishedEarlier(run: Run): Promise<ImportSummary | undefined> {
  const { opts, deps } = run;
  const dir = deps.journalDir;
  if (!dir || opts.resume === false || opts.resultsPath !== undefined || opts.dryRun || opts.strict) return undefined;
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

/** The first pass: the whole file is read and checked before anything is sent. */
export async function check(run: Run): Promise<ScanResult> {
  const { opts, deps, input } = run;
  const scan = await scanInput(input.path, {
    format: run.format,
    name: input.name,
    maps: run.maps,
    chunkSize: run.chunkSize,
    signal: deps.signal,
    encoding: input.encoding,
    warn: deps.warn,
    sha: run.sha,
    op: opts.operation,
    spool: run.spool,
    rowsOnly: opts.match !== undefined,
    keep: opts.match?.fields.filter((f) => f === 'id'),
    onRow: (rows, bytes) => progress(run, 'check', { rows, bytes }, null),
  });
  if (deps.signal?.aborted) throw withSummary(new InterruptedError('interrupted before anything was sent'), summaryOf(run));
  if (opts.strict && scan.invalid > 0) {
    throw new UsageError(
      `${input.name}: ${count(scan.invalid)} of ${count(scan.rows)} rows are invalid; nothing was sent (--strict)\n${listInvalid(scan.firstInvalid)}`,
    );
  }
  return scan;
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
  const [unit, created] = run.opts.operation ? ['row', run.opts.operation.done] : ['chunk', 'created'];
  const message =
    `interrupted after ${count(chunksDone)} of ${plural(Math.ceil((scan.valid - scan.repeated) / run.chunkSize), unit)}: ${plural(c.created + c.skipped, 'row')} ${created}${earlier}` +
    `${rejected > 0 ? `, ${count(rejected)} not ${created} (in the rejects file)` : ''}` +
    `${c.unknown > 0 ? `, ${count(c.unknown)} unknown (in the unknown file)` : ''}; ` +
    `${plural(left, 'row')} of ${count(scan.rows)} left (not sent yet${c.inDoubt > 0 ? ', or sent without an answer' : ''}), not in the rejects file`;
  throw withSummary(new InterruptedError(message), result);
}
