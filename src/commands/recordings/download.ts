// `crm recordings download [--dir DIR] [--concurrency N] [--overwrite] [--since DATE]`
// (CONTRACT §8): every transcript into DIR, resumable. The engine does the work; this file reads
// the options, shows progress and prints the summary.
import { InterruptedError, PartialFailureError, UsageError } from '../../http/errors.js';
import { createProgress } from '../../output/progress.js';
import { plural } from '../../output/plural.js';
import { safeJson, sanitizeForTerminal } from '../../output/sanitize.js';
import { wrapHanging } from '../../output/width.js';
import { loadTableRenderer } from '../../output/writers.js';
import type { Ctx } from '../context.js';
import type { DownloadOptions } from './command.js';
import { downloadAll, type DownloadProgress, type DownloadReport } from './download-engine.js';
import { Pacer } from '../../http/pacer.js';

export const DEFAULT_DIR = 'transcripts';
export const DEFAULT_CONCURRENCY = 4;
export const MAX_CONCURRENCY = 32;
/** failures listed under the table; all of them are in `-o json` */
const FAILURES_SHOWN = 20;
/** the indent of a failure's message wrapped under its id (a long id) */
const FAILURE_UNDER = 4;

export async function runDownload(opts: DownloadOptions, ctx: Ctx): Promise<void> {
  const dir = opts.dir ?? DEFAULT_DIR;
  if (dir.trim() === '') throw new UsageError('--dir must not be empty');
  const concurrency = parseConcurrency(opts.concurrency);
  const since = opts.since === undefined ? undefined : parseSince(opts.since);

  const client = await ctx.client({ concurrencyFlag: true });
  const progress = createProgress({
    stream: ctx.io.stderr,
    enabled: Boolean(ctx.io.stderr.isTTY) && !ctx.globals.quiet,
    text: 'Listing recordings…',
    color: ctx.globals.stderrColor,
  });
  let report: DownloadReport;
  try {
    report = await downloadAll(
      { dir, concurrency, overwrite: Boolean(opts.overwrite), ...(since === undefined ? {} : { since }) },
      {
        client,
        clock: ctx.clock,
        signal: ctx.signal,
        // Its own instance: the download endpoint's limit is not the API's (spec: Limits rule 5).
        pacer: new Pacer(ctx.clock),
        onProgress: (p) => progress.update(progressText(p)),
      },
    );
  } finally {
    await progress.stop();
  }

  await printSummary(report, ctx);
  const s = report.summary;
  if (report.interrupted) {
    throw new InterruptedError(
      `interrupted: ${plural(s.downloaded, 'transcript')} downloaded, ${report.notStarted} left; run the same command again to resume`,
    );
  }
  // the proxy refused the transcripts' host, or it cannot be reached: its own message and next step
  if (report.unreachable) throw report.unreachable;
  if (s.failed > 0) {
    const tried = s.downloaded + s.failed;
    throw new PartialFailureError(`${s.failed} of ${plural(tried, 'transcript download')} failed`, {
      details: s.failures.slice(0, 50).map((f) => ({ id: f.id, error: f.error })),
      hint: 'Run the same command again to retry them; files already downloaded are skipped.',
    });
  }
}

export function progressText(p: DownloadProgress): string {
  if (p.phase === 'listing') return `Listing recordings… ${p.listed}`;
  return `Downloading transcripts ${p.done}/${p.total} (${p.downloaded} new, ${p.skipped} already there, ${p.failed} failed)`;
}

async function printSummary(report: DownloadReport, ctx: Ctx): Promise<void> {
  const s = report.summary;
  const format = ctx.format();
  if (format === 'json' || format === 'ndjson') {
    ctx.io.stdout.write(`${safeJson(s)}\n`);
    return;
  }
  if (ctx.globals.quiet) return;
  // every recording listed is in one row: listed = the counts below it
  const rows: Array<[string, unknown]> = [
    ['recordings listed', s.listed],
    ['downloaded', s.downloaded],
    ['skipped (already there)', s.skipped],
    ['without transcript', s.without_transcript],
    ['failed', s.failed],
  ];
  if (s.not_started > 0 || report.interrupted)
    rows.push([report.interrupted ? 'not started (interrupted)' : 'not started', s.not_started]);
  if (s.before_since > 0) rows.push(['before --since', s.before_since]);
  if (report.retries > 0) rows.push(['retries (429, network)', report.retries]);
  if (report.linkRefreshes > 0) rows.push(['expired links renewed', report.linkRefreshes]);
  rows.push(['folder', s.dir], ['elapsed', `${(s.elapsed_ms / 1000).toFixed(1)} s`]);
  const { renderKeyValueTable } = await loadTableRenderer();
  // on a terminal, wrapped to its width by crm, never by the terminal (mid-word, a line starting with a space)
  const columns = ctx.io.stderr.isTTY ? ctx.io.stderr.columns : undefined;
  let text = renderKeyValueTable(rows, { color: ctx.globals.stderrColor, width: columns });
  for (const f of s.failures.slice(0, FAILURES_SHOWN)) {
    const lines = wrapHanging(
      `  ${sanitizeForTerminal(f.id || '(no id)')}: `,
      sanitizeForTerminal(f.error),
      columns,
      FAILURE_UNDER,
      30,
    );
    text += `${lines.join('\n')}\n`;
  }
  if (s.failures.length > FAILURES_SHOWN) {
    text += `  … and ${s.failures.length - FAILURES_SHOWN} more (all of them with -o json)\n`;
  }
  ctx.io.stderr.write(text);
}

export function parseConcurrency(value: number | string | undefined): number {
  if (value === undefined) return DEFAULT_CONCURRENCY;
  const n = typeof value === 'number' ? value : /^\s*\d+\s*$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(n) || n < 1 || n > MAX_CONCURRENCY) {
    throw new UsageError(
      `--concurrency must be a whole number from 1 to ${MAX_CONCURRENCY}, not ${JSON.stringify(String(value))}`,
    );
  }
  return n;
}

/** `2025-01-31` (a year from 0100), or with a time (`T` or a space) to the minute, second or fraction, and an optional offset */
const SINCE =
  /^((?!00)\d{4}-\d{2}-\d{2})(?:[T ]([01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

/** `--since`: an ISO 8601 date (the start of that day) or date-time; without an offset it is UTC. */
export function parseSince(value: string): number {
  const m = SINCE.exec(value.trim());
  const at = !m
    ? NaN
    : Date.parse(m[2] === undefined ? `${m[1]}T00:00Z` : `${m[0].replace(' ', 'T')}${m[3] ? '' : 'Z'}`);
  // Date.parse rolls 2025-02-30 over into March: the day must read back unchanged
  const day = m ? Date.parse(`${m[1]}T00:00Z`) : NaN;
  if (!Number.isNaN(at) && !Number.isNaN(day) && new Date(day).toISOString().startsWith(m![1]!)) return at;
  throw new UsageError(
    `--since must be an ISO date such as 2025-01-31 or 2025-01-31T09:00:00Z, not ${JSON.stringify(value)}`,
  );
}
