// `crm snapshot DIR --transcripts` (issue 19): after the collections, the transcript of every
// recording of DIR/recordings.ndjson with `has_transcript` goes to DIR/transcripts/<safe id>.json
// through the engine of `crm recordings download` (no second listing: the snapshot's own records
// say which recordings have one). The engine gets each recording just before its download (a fresh
// link; an expired one renewed up to 3 times), writes each file atomically and skips files already
// there, so a rerun after Ctrl-C or kill -9 fetches only the missing ones and no half file is left.
import { textLines } from '../../util/text-lines.js';
import path from 'node:path';
import type { ResourceName } from '../../api/resources.js';
import type { ApiRecord } from '../../api/envelopes.js';
import { InterruptedError, PartialFailureError, UsageError } from '../../http/errors.js';
import { Pacer } from '../../http/pacer.js';
import { paceWatch } from '../../http/pace-info.js';
import type { Clock, HttpClient, PaceInfo } from '../../http/types.js';
import { etaMs } from '../../output/eta.js';
import { plural } from '../../output/plural.js';
import { formatDuration } from '../batch/progress-text.js';
import { DEFAULT_CONCURRENCY } from '../recordings/download.js';
import { downloadAll, type DownloadProgress } from '../recordings/download-engine.js';

/** the folder inside DIR */
export const TRANSCRIPTS_DIR = 'transcripts';

/** The manifest's `transcripts`: files in DIR/transcripts, and the recordings that have none there and why. */
export interface TranscriptsEntry {
  dir: string;
  /** transcript files the folder holds (downloaded now or by an earlier run) */
  files: number;
  /** true when every recording with a transcript has its file */
  complete: boolean;
  /** recordings without a transcript (listed so, or so when got) */
  without_transcript: number;
  /** recordings deleted since recordings.ndjson was read (their GET a 404): skipped */
  recordings_gone: number;
  /** recordings whose transcript could not be got (a link that kept expiring …) */
  failed: number;
  failures: Array<{ id: string; error: string }>;
  /** left for a rerun by Ctrl-C */
  not_started: number;
}

/** `--transcripts` takes the transcripts of the recordings the snapshot holds: without recordings it is a usage error. */
export function checkTranscriptsOption(transcripts: boolean | undefined, chosen: readonly ResourceName[]): void {
  if (transcripts && !chosen.includes('recordings')) {
    throw new UsageError(
      '--transcripts needs recordings in --resources (the transcripts taken are those of the recordings in the snapshot)',
    );
  }
}

/** What this part of a snapshot uses of the run (run.ts's), the manifest's `transcripts` its to set. */
export interface TranscriptsRun {
  dir: string;
  client: HttpClient;
  ctx: { clock: Clock; signal: AbortSignal };
  manifest: { transcripts?: TranscriptsEntry };
  /** writes the manifest (atomically) */
  save(): Promise<void>;
  progress: { update(text: string): void };
}

/** Every transcript into DIR/transcripts, the manifest's entry saved; an InterruptedError after Ctrl-C (the entry saved first). */
export async function snapshotTranscripts(run: TranscriptsRun): Promise<void> {
  const { dir, client, ctx } = run;
  // its own pacer: the download endpoint's limit is not the API's (spec: Limits rule 5)
  const pacer = new Pacer(ctx.clock);
  const downloads = paceWatch(pacer, () => ctx.clock.now());
  const started = ctx.clock.now();
  const report = await downloadAll(
    {
      dir: path.join(dir, TRANSCRIPTS_DIR),
      concurrency: DEFAULT_CONCURRENCY,
      overwrite: false,
      recordings: readRecordings(path.join(dir, 'recordings.ndjson')),
      goneIsSkipped: true,
    },
    {
      client,
      clock: ctx.clock,
      signal: ctx.signal,
      pacer,
      onProgress: (p) => {
        const now = ctx.clock.now();
        run.progress.update(
          transcriptsProgressText(p, {
            now,
            elapsedMs: now - started,
            api: client.pace?.(),
            downloads: downloads.info(),
          }),
        );
      },
    },
  );
  const s = report.summary;
  run.manifest.transcripts = {
    dir: TRANSCRIPTS_DIR,
    files: s.downloaded + s.skipped,
    complete: !report.interrupted && s.failed === 0 && report.notStarted === 0,
    without_transcript: s.without_transcript,
    recordings_gone: report.gone,
    failed: s.failed,
    failures: s.failures,
    not_started: report.notStarted,
  };
  await run.save();
  if (report.interrupted) throw new InterruptedError('interrupted while downloading transcripts');
}

/** ` and N transcripts` for the last line, when they were taken. */
export function transcriptsSaid(entry: TranscriptsEntry | undefined): string {
  return entry ? ` and ${plural(entry.files, 'transcript')}` : '';
}

/** Exit 9 (after the manifest is written) when some transcripts could not be got. */
export function transcriptsFailure(entry: TranscriptsEntry | undefined): PartialFailureError | undefined {
  if (!entry || entry.failed === 0) return undefined;
  return new PartialFailureError(
    `${entry.failed} of ${plural(entry.files + entry.failed, 'transcript')} could not be downloaded`,
    {
      details: entry.failures.slice(0, 50),
      hint: 'Run the same command again to retry them; transcripts already in the folder are skipped.',
    },
  );
}

/** The records of a snapshot's recordings.ndjson, one by one (a missing file: none). */
async function* readRecordings(file: string): AsyncGenerator<ApiRecord> {
  for await (const line of textLines(file, { missingOk: true })) yield JSON.parse(line) as ApiRecord;
}

export interface TranscriptsPaceNow {
  now: number;
  elapsedMs: number;
  /** the API client's pacer (each transcript costs a GET of its recording) */
  api?: PaceInfo;
  /** the download endpoint's pacer (and a download) */
  downloads?: PaceInfo;
}

/** `Transcripts 12/40 (10 new, 2 already there, 0 failed) · ETA 1m5s`: the ETA is the slower of the two limits. */
export function transcriptsProgressText(p: DownloadProgress, at: TranscriptsPaceNow): string {
  if (p.phase === 'listing') return `Transcripts: reading recordings.ndjson… ${p.listed}`;
  const text = `Transcripts ${p.done}/${p.total} (${p.downloaded} new, ${p.skipped} already there, ${p.failed} failed)`;
  const eta = transcriptsEtaMs(p, at);
  return eta !== undefined && eta > 0 ? `${text} · ETA ${formatDuration(eta / 1000)}` : text;
}

/**
 * What is left costs one GET and one download a transcript: the ETA is the longer of what the API's
 * limit and the download limit allow for them (src/output/eta.ts), at the rate seen so far.
 */
export function transcriptsEtaMs(p: DownloadProgress, at: TranscriptsPaceNow): number | undefined {
  const left = Math.max(0, p.total - p.done);
  if (left === 0) return 0;
  const sent = p.downloaded + p.failed;
  const observedRatePerMs = sent > 0 && at.elapsedMs > 0 ? sent / at.elapsedMs : undefined;
  const etas = [at.api, at.downloads]
    .map((pace) => etaMs({ requestsLeft: left, now: at.now, pace, observedRatePerMs }))
    .filter((ms): ms is number => ms !== undefined);
  return etas.length > 0 ? Math.max(...etas) : undefined;
}
