// The engine of `crm recordings download` (CONTRACT §8): list the recordings with a transcript, get
// each (getTranscript) and write DIR/<safe id>.json atomically, N at a time; files already there are
// skipped, so a rerun resumes. No terminal output: the command renders what this returns.
import { lstat, mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { ApiRecord } from '../../api/envelopes.js';
import { CrmError, InterruptedError, NotFoundError, UsageError } from '../../http/errors.js';
import { neverSent } from '../../http/network-error.js';
import type { Pacer } from '../../http/pacer.js';
import type { Clock, HttpClient } from '../../http/types.js';
import { writeFileAtomic } from '../../util/atomic-file.js';
import { removeStaleTemps } from '../../util/fs.js';
import { forEachLimit } from '../../util/pool.js';
import { stringifyJson } from '../../json/exact-json.js';
import { fileNames, resolveInside } from '../../util/safe-name.js';
import { getTranscript } from './transcript-source.js';

export interface DownloadPlan {
  dir: string;
  concurrency: number;
  overwrite: boolean;
  /** keep recordings whose `started_at` is at or after this (ms since the epoch) */
  since?: number;
  /** the recordings to choose from (a snapshot's recordings.ndjson); default: list `/recordings` */
  recordings?: AsyncIterable<ApiRecord>;
  /** a recording deleted since it was read (its GET a 404) is counted in `gone`, not failed (a snapshot's older records) */
  goneIsSkipped?: boolean;
}

export interface DownloadEngineDeps {
  client: HttpClient;
  clock: Clock;
  /** the first Ctrl-C: no new download starts; those in flight finish */
  signal: AbortSignal;
  /** the download endpoint's pacer, apart from the API client's */
  pacer: Pacer;
  onProgress?(progress: DownloadProgress): void;
}

/**
 * The `-o json` summary field for field, and the rest of the table; `interrupted`: by Ctrl-C, `notStarted` left for a rerun.
 * Every recording listed is in one count (`accounted`): downloaded, skipped, without_transcript, failed, not_started,
 * before_since (and `gone`, a snapshot's); a recording listed twice is listed once.
 */
function emptyReport(dir: string) {
  const failures: Array<{ id: string; error: string }> = [];
  const summary = {
    downloaded: 0,
    skipped: 0,
    without_transcript: 0,
    failed: 0,
    not_started: 0,
    before_since: 0,
    listed: 0,
    dir,
    elapsed_ms: 0,
    failures,
  };
  /** a download that never reached its host (the proxy refused the tunnel, no connection): every other would fail alike, so the rest were not started */
  const unreachable = undefined as CrmError | undefined;
  return {
    summary,
    listed: 0,
    filteredOut: 0,
    interrupted: false,
    notStarted: 0,
    retries: 0,
    linkRefreshes: 0,
    gone: 0,
    unreachable,
  };
}
export type DownloadReport = ReturnType<typeof emptyReport>;
type Item = { id: string; file: string };

export type DownloadProgress = { phase: 'listing' | 'downloading'; listed: number; total: number; done: number } & Pick<
  DownloadReport['summary'],
  'downloaded' | 'skipped' | 'failed'
>;

export async function downloadAll(plan: DownloadPlan, deps: DownloadEngineDeps): Promise<DownloadReport> {
  const started = deps.clock.now();
  const dir = path.resolve(plan.dir);
  const report = emptyReport(dir);
  const s = report.summary;
  let done = 0;
  let total = 0;
  const progress = (phase: DownloadProgress['phase']): void =>
    deps.onProgress?.({
      phase,
      listed: report.listed,
      total,
      done,
      downloaded: s.downloaded,
      skipped: s.skipped,
      failed: s.failures.length,
    });

  const ids = await listIds(plan, deps, report, () => progress('listing'));
  if (!ids) return finish(report, started, deps.clock);
  total = ids.length;
  const items = fileNames(ids).map((file, i) => ({ id: ids[i]!, file }));
  if (items.length > 0) await prepareDir(dir);

  // A write is never cut short by Ctrl-C, and a failed one removes its temp file.
  const one = async (item: Item): Promise<void> => {
    try {
      await downloadOne(item, dir, plan, deps, report);
    } catch (err) {
      // After Ctrl-C an error is most likely the interruption itself; a rerun retries the item.
      if (err instanceof InterruptedError || deps.signal.aborted) report.notStarted += 1;
      else if (report.unreachable)
        report.notStarted += 1; // failed alike after the first: said once
      else s.failures.push({ id: item.id, error: err instanceof Error ? err.message : String(err) });
      if (neverSent(err)) report.unreachable ??= err;
    }
    done += 1;
    progress('downloading');
  };
  progress('downloading');
  // Until one download was sent, one at a time: its answer tells the pacer the download limit,
  // so a small one is not met by every worker at once (429s).
  let first = 0;
  const stop = () => deps.signal.aborted || report.unreachable !== undefined;
  while (!stop() && first < items.length && done === s.skipped) await one(items[first++]!);
  const begun = first + (await forEachLimit(items.slice(first), plan.concurrency, one, stop));
  report.notStarted += items.length - begun;
  report.interrupted = deps.signal.aborted;
  return finish(report, started, deps.clock);
}

/** The ids to download (only ids are kept: memory stays small); undefined after Ctrl-C. */
async function listIds(
  plan: DownloadPlan,
  deps: DownloadEngineDeps,
  report: DownloadReport,
  progress: () => void,
): Promise<string[] | undefined> {
  const s = report.summary;
  const ids = new Set<string>(); // in listing order, each once
  try {
    const recordings = plan.recordings ?? deps.client.paginate('/recordings', { limit: 100, signal: deps.signal });
    for await (const rec of recordings) {
      report.listed += 1;
      if (report.listed % 100 === 0) progress();
      const choice = selectRecording(rec, plan.since);
      if (choice === 'filtered') report.filteredOut += 1;
      else if (choice === 'without') s.without_transcript += 1;
      else if (choice === 'no-id') s.failures.push({ id: '', error: 'the server listed a recording without an id' });
      else if (ids.has(choice.id))
        report.listed -= 1; // listed twice (pages that moved): one recording
      else ids.add(choice.id);
    }
  } catch (err) {
    if (!deps.signal.aborted) throw err;
    report.interrupted = true;
    report.notStarted += ids.size; // listed with a transcript, none tried: a rerun gets them
    return undefined;
  }
  return [...ids];
}

async function prepareDir(dir: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true });
  } catch (err) {
    throw new UsageError(`cannot create the folder ${dir}: ${(err as Error).message}`, { cause: err });
  }
  // a run killed between writing a temp file and renaming it left `<id>.json.tmp-PID-hex`
  await removeStaleTemps(dir, Date.now(), (name) => name.endsWith('.json')).catch(() => 0);
}

/** The recordings counted in the summary: every one listed, once (a pure sum; equals `listed`). */
export function accounted(report: DownloadReport): number {
  const s = report.summary;
  return s.downloaded + s.skipped + s.without_transcript + s.failed + s.not_started + s.before_since + report.gone;
}

function finish(report: DownloadReport, started: number, clock: Clock): DownloadReport {
  const s = report.summary;
  s.failed = s.failures.length;
  s.not_started = report.notStarted;
  s.before_since = report.filteredOut;
  s.listed = report.listed;
  report.summary.elapsed_ms = Math.max(0, Math.round(clock.now() - started));
  return report;
}

type Selection = { id: string } | 'filtered' | 'without' | 'no-id';

/** What the listing says of one recording: left out by --since, without a transcript, or to download. */
export function selectRecording(rec: ApiRecord, since?: number): Selection {
  if (since !== undefined) {
    const at = typeof rec.started_at === 'string' ? Date.parse(rec.started_at) : NaN;
    if (!(at >= since)) return 'filtered';
  }
  if (rec.has_transcript !== true) return 'without';
  if (typeof rec.id !== 'string' || rec.id === '') return 'no-id';
  return { id: rec.id };
}

/** One item: skipped (already there), without a transcript, or written; counted in `report`. */
async function downloadOne(
  item: Item,
  dir: string,
  plan: DownloadPlan,
  deps: DownloadEngineDeps,
  report: DownloadReport,
): Promise<void> {
  const s = report.summary;
  const target = resolveInside(dir, item.file);
  if (!plan.overwrite && (await exists(target))) {
    s.skipped += 1;
    return;
  }
  // No requestSignal: a download in flight when Ctrl-C comes is let finish; only the waits stop.
  const { client, clock, pacer, signal } = deps;
  const result = await getTranscript(item.id, { client, clock, pacer, signal }).catch((err: unknown) => {
    // the recording's own 404, not an expired link's
    if (plan.goneIsSkipped && err instanceof NotFoundError && err.code !== 'LINK_EXPIRED') return 'gone' as const;
    throw err;
  });
  if (result === 'gone') {
    report.gone += 1;
    return;
  }
  if (result.kind === 'none') {
    s.without_transcript += 1;
    return;
  }
  const owner = (result.body as { recording_id?: unknown }).recording_id;
  if (typeof owner === 'string' && owner !== item.id) {
    throw new Error(`the link returned the transcript of another recording (${owner})`);
  }
  // 0600, like the config file: call transcripts are confidential.
  await writeFileAtomic(target, `${stringifyJson(result.body, 2)}\n`, 0o600);
  s.downloaded += 1;
  report.retries += result.retries;
  report.linkRefreshes += result.linkRefreshes;
}

/** lstat: a symlink counts as there, never followed; an empty file (a crash's leftover) does not. */
function exists(file: string): Promise<boolean> {
  return lstat(file)
    .then((st) => !st.isFile() || st.size > 0)
    .catch(() => false);
}
