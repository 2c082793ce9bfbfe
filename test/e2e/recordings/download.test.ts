// `crm recordings download` against the real sandbox: content, resume, expiry, 429s, credentials,
// recordings without transcripts, failures and Ctrl-C.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { runDownload } from '../../../src/commands/recordings/download.js';
import { InterruptedError, PartialFailureError, UsageError } from '../../../src/http/errors.js';
import { transcriptFor } from '../../../src/sandbox/downloads.js';
import { interceptRecordingGets, leftovers, realSleep, useRecordingsSandbox, type LogEntry } from './helpers.js';

const env = useRecordingsSandbox();

const DEFAULT_LIMITS = { transcript_ttl_ms: 300_000, download_rate_limit: 1000, download_window_ms: 1000 };

beforeEach(async () => {
  await env.control('/limits', DEFAULT_LIMITS);
});

async function withTranscripts(): Promise<Array<Record<string, any>>> {
  return (await env.recordings()).filter((r) => r.has_transcript === true);
}

function summaryOf(stdout: string): Record<string, any> {
  return JSON.parse(stdout.trim());
}

/** crm's downloads (not the test's own `not-a-token` requests that spend a window) */
const isDownload = (e: LogEntry) => e.path.startsWith('/transcripts/download/') && !e.path.endsWith('/not-a-token');

/**
 * A client that spends the download window (`n` requests) right before crm's first download, so that
 * download meets a 429 for sure: spent before the run, the window could end while crm lists the
 * recordings and reads the first one, on a loaded machine.
 */
function spendingTheWindowFirst(n: number): ReturnType<typeof interceptRecordingGets> {
  let spent = false;
  return interceptRecordingGets(env.client(), async () => {
    if (spent) return;
    spent = true;
    for (let i = 0; i < n; i++) await fetch(`${env.sb.url}/transcripts/download/not-a-token`);
  });
}
const isRecordingGet = (e: LogEntry) => e.method === 'GET' && /^\/api\/v2\/recordings\/[^/]+$/.test(e.path);

describe('crm recordings download', () => {
  it('downloads every transcript with the right content and reports those without one', async () => {
    const dir = path.join(env.tmpDir(), 'transcripts');
    const all = await env.recordings();
    const ready = all.filter((r) => r.has_transcript === true);
    expect(ready.length).toBeGreaterThan(5);
    expect(all.length).toBeGreaterThan(ready.length);
    const ctx = env.ctx();

    await runDownload({ dir }, ctx);

    const summary = summaryOf(ctx.stdoutText());
    expect(summary).toEqual({
      downloaded: ready.length,
      skipped: 0,
      without_transcript: all.length - ready.length,
      failed: 0,
      not_started: 0,
      before_since: 0,
      listed: all.length,
      dir: path.resolve(dir),
      elapsed_ms: expect.any(Number),
      failures: [],
    });
    const files = fs.readdirSync(dir).sort();
    expect(files).toEqual(ready.map((r) => `${r.id}.json`).sort());
    for (const r of ready) {
      const saved = JSON.parse(fs.readFileSync(path.join(dir, `${r.id}.json`), 'utf8'));
      expect(saved).toEqual(transcriptFor(r.id, r.duration_seconds));
    }
    expect(leftovers(dir)).toEqual([]);
  });

  it('never sends a credential to the download endpoint, and gets each recording just before its download', async () => {
    const dir = env.tmpDir();
    const from = await env.mark();
    await runDownload({ dir, concurrency: 1 }, env.ctx());
    const log = await env.requests(from);
    const downloads = log.filter(isDownload);
    expect(downloads.length).toBe((await withTranscripts()).length);
    for (const d of downloads) {
      const names = Object.keys(d.headers).map((h) => h.toLowerCase());
      expect(names).not.toContain('x-service-api-key');
      expect(names).not.toContain('authorization');
      expect(names).not.toContain('cookie');
      expect(d.headers.accept).toBe('application/json');
    }
    // the API calls did carry the key (the log shows it as present)
    expect(log.filter(isRecordingGet).every((e) => e.headers['x-service-api-key'] === '<present>')).toBe(true);
    // with one worker: list, then for each transcript its GET immediately followed by its download
    const api = log.filter((e) => isRecordingGet(e) || isDownload(e));
    for (let i = 0; i < api.length; i += 2) {
      expect(isRecordingGet(api[i]!)).toBe(true);
      expect(isDownload(api[i + 1]!)).toBe(true);
    }
  });

  it('downloads nothing on a rerun, and again everything with --overwrite', async () => {
    const dir = env.tmpDir();
    const ready = await withTranscripts();
    await runDownload({ dir }, env.ctx());

    const from = await env.mark();
    const again = env.ctx();
    await runDownload({ dir }, again);
    expect(summaryOf(again.stdoutText())).toMatchObject({ downloaded: 0, skipped: ready.length, failed: 0 });
    const log = await env.requests(from);
    expect(log.filter(isDownload)).toEqual([]);
    expect(log.filter(isRecordingGet)).toEqual([]);

    const over = env.ctx();
    await runDownload({ dir, overwrite: true }, over);
    expect(summaryOf(over.stdoutText())).toMatchObject({ downloaded: ready.length, skipped: 0 });
  });

  it('resumes: only the missing files are fetched', async () => {
    const dir = env.tmpDir();
    const ready = await withTranscripts();
    await runDownload({ dir }, env.ctx());
    const removed = ready.slice(0, 3).map((r) => r.id as string);
    for (const id of removed) fs.rmSync(path.join(dir, `${id}.json`));
    const from = await env.mark();
    const ctx = env.ctx();
    await runDownload({ dir }, ctx);
    expect(summaryOf(ctx.stdoutText())).toMatchObject({ downloaded: 3, skipped: ready.length - 3 });
    const got = (await env.requests(from))
      .filter(isRecordingGet)
      .map((e) => decodeURIComponent(e.path.split('/').pop()!));
    expect(got.sort()).toEqual(removed.sort());
  });

  it('removes the temp files a killed run (kill -9) left, and only those', async () => {
    const dir = env.tmpDir();
    fs.mkdirSync(dir, { recursive: true });
    const dead = spawnSync(process.execPath, ['-e', '0']).pid; // a process id that is surely gone
    const stale = path.join(dir, `rec_x.json.tmp-${dead}-0a1b2c3d`);
    const live = path.join(dir, `rec_y.json.tmp-${process.pid}-0a1b2c3d`); // a live writer's: kept
    const other = path.join(dir, `notes.txt.tmp-${dead}-0a1b2c3d`); // not a transcript's: kept
    for (const f of [stale, live, other]) fs.writeFileSync(f, '{"half');
    await runDownload({ dir }, env.ctx());
    expect(fs.existsSync(stale)).toBe(false);
    expect(fs.existsSync(live)).toBe(true);
    expect(fs.existsSync(other)).toBe(true);
  });

  it('recovers from links that expire before they are used', async () => {
    const dir = env.tmpDir();
    const ready = await withTranscripts();
    // The first link of every recording is issued expired (a TTL of 0), the fresh one to live: one
    // download at a time, so the TTL in force when each link is issued is known. (A short TTL that the
    // first link was left to outlive also expired fresh links on a loaded machine: 3 runs in 12 failed.)
    await env.control('/limits', { ...DEFAULT_LIMITS, transcript_ttl_ms: 0 });
    const client = interceptRecordingGets(env.client(), async (_id, nth) => {
      // after a first link, the fresh one of the same recording comes next; after that, the next recording's first
      await env.control('/limits', {
        ...DEFAULT_LIMITS,
        transcript_ttl_ms: nth === 1 ? DEFAULT_LIMITS.transcript_ttl_ms : 0,
      });
    });
    const from = await env.mark();
    const ctx = env.ctx({ client });
    await runDownload({ dir, concurrency: 1 }, ctx);

    expect(summaryOf(ctx.stdoutText())).toMatchObject({ downloaded: ready.length, failed: 0 });
    const log = await env.requests(from);
    const downloads = log.filter(isDownload);
    expect(downloads.filter((e) => e.status === 404)).toHaveLength(ready.length);
    expect(downloads.filter((e) => e.status === 200)).toHaveLength(ready.length);
    expect(log.filter(isRecordingGet)).toHaveLength(2 * ready.length);
    for (const r of ready) {
      expect(JSON.parse(fs.readFileSync(path.join(dir, `${r.id}.json`), 'utf8'))).toEqual(
        transcriptFor(r.id, r.duration_seconds),
      );
    }
  });

  it('with a short TTL and a tight download limit: every transcript downloaded with the right content', async () => {
    // The run takes about 3 s (14+ downloads at 4 per 800 ms), ten times the links' life: a link
    // got before the wait for a download slot would be dead when used. (At 150 ms and 4 per 400 ms, a
    // loaded machine's pauses alone expired 3 links in 1 run of 12.)
    const dir = env.tmpDir();
    const ready = await withTranscripts();
    expect(ready.length).toBeGreaterThanOrEqual(14);
    const [ttl, limit, windowMs] = [300, 4, 800];
    await env.control('/limits', { transcript_ttl_ms: ttl, download_rate_limit: limit, download_window_ms: windowMs });
    const from = await env.mark();
    const ctx = env.ctx();
    const started = Date.now();
    await runDownload({ dir, concurrency: 4 }, ctx);
    const elapsed = Date.now() - started;

    expect(summaryOf(ctx.stdoutText())).toMatchObject({ downloaded: ready.length, failed: 0, failures: [] });
    expect(elapsed).toBeGreaterThan(3 * ttl);
    expect(elapsed).toBeGreaterThanOrEqual((Math.ceil(ready.length / limit) - 1) * windowMs);
    for (const r of ready) {
      expect(JSON.parse(fs.readFileSync(path.join(dir, `${r.id}.json`), 'utf8'))).toEqual(
        transcriptFor(r.id, r.duration_seconds),
      );
    }
    expect(leftovers(dir)).toEqual([]);
    const downloads = (await env.requests(from)).filter(isDownload);
    expect(downloads.filter((e) => e.status === 200)).toHaveLength(ready.length);
    // each link is got right before its download: expiries are rare accidents, not the rule
    expect(downloads.filter((e) => e.status === 404).length).toBeLessThanOrEqual(2);
  });

  it('after a 429 waits, a fresh link is got before the download is tried again', async () => {
    const dir = env.tmpDir();
    const ready = await withTranscripts();
    // Retry-After (up to 300 ms) longer than the links live
    await env.control('/limits', { transcript_ttl_ms: 120, download_rate_limit: 3, download_window_ms: 300 });
    const client = spendingTheWindowFirst(3);
    const from = await env.mark();
    const ctx = env.ctx({ client });
    await runDownload({ dir, concurrency: 4 }, ctx);
    expect(summaryOf(ctx.stdoutText())).toMatchObject({ downloaded: ready.length, failed: 0 });
    const log = await env.requests(from);
    const downloads = log.filter(isDownload);
    expect(downloads.filter((e) => e.status === 429).length).toBeGreaterThan(0);
    expect(downloads.filter((e) => e.status === 404).length).toBeLessThanOrEqual(2);
    // one GET of the recording per download tried
    expect(log.filter(isRecordingGet)).toHaveLength(downloads.length);
  });

  it('gives up on a recording after 3 fresh links, and reports it as failed (exit 9)', async () => {
    const dir = env.tmpDir();
    const ready = await withTranscripts();
    await env.control('/limits', { ...DEFAULT_LIMITS, transcript_ttl_ms: 0 });
    const client = interceptRecordingGets(env.client(), () => realSleep(5));
    const from = await env.mark();
    const ctx = env.ctx({ client });
    const err = await runDownload({ dir }, ctx).catch((e: unknown) => e);

    expect(err).toBeInstanceOf(PartialFailureError);
    expect((err as PartialFailureError).exitCode).toBe(9);
    const summary = summaryOf(ctx.stdoutText());
    expect(summary).toMatchObject({ downloaded: 0, failed: ready.length });
    expect(summary.failures.map((f: { id: string }) => f.id).sort()).toEqual(ready.map((r) => r.id).sort());
    expect(summary.failures[0].error).toMatch(/kept expiring/);
    const log = await env.requests(from);
    expect(log.filter(isDownload)).toHaveLength(4 * ready.length); // the first link and 3 fresh ones
    expect(log.filter(isRecordingGet)).toHaveLength(4 * ready.length);
    expect(fs.readdirSync(dir)).toEqual([]); // nothing that looks finished, no temp files
  });

  it('recovers from 429s under a tight download limit, waiting Retry-After', async () => {
    const dir = env.tmpDir();
    const ready = await withTranscripts();
    const [limit, windowMs] = [5, 300];
    await env.control('/limits', { ...DEFAULT_LIMITS, download_rate_limit: limit, download_window_ms: windowMs });
    const client = spendingTheWindowFirst(limit);
    const from = await env.mark();
    const ctx = env.ctx({ client });
    const started = Date.now();
    await runDownload({ dir, concurrency: 4 }, ctx);
    const elapsed = Date.now() - started;

    expect(summaryOf(ctx.stdoutText())).toMatchObject({ downloaded: ready.length, failed: 0 });
    const downloads = (await env.requests(from)).filter(isDownload);
    expect(downloads.filter((e) => e.status === 429).length).toBeGreaterThan(0);
    expect(downloads.filter((e) => e.status === 200)).toHaveLength(ready.length);
    // paced rather than hammering: few 429s, and at least the time the limit needs
    expect(downloads.filter((e) => e.status === 429).length).toBeLessThan(ready.length);
    expect(elapsed).toBeGreaterThanOrEqual((Math.ceil(ready.length / limit) - 1) * windowMs);
  });

  it('--since keeps recordings started at or after the date', async () => {
    const dir = env.tmpDir();
    const all = await env.recordings();
    const times = all.map((r) => Date.parse(r.started_at)).sort((a, b) => a - b);
    const cut = times[Math.floor(times.length / 2)]!;
    const kept = all.filter((r) => Date.parse(r.started_at) >= cut);
    const ctx = env.ctx();
    await runDownload({ dir, since: new Date(cut).toISOString() }, ctx);
    const summary = summaryOf(ctx.stdoutText());
    expect(summary.downloaded).toBe(kept.filter((r) => r.has_transcript).length);
    expect(summary.without_transcript).toBe(kept.filter((r) => !r.has_transcript).length);
    expect(fs.readdirSync(dir).sort()).toEqual(
      kept
        .filter((r) => r.has_transcript)
        .map((r) => `${r.id}.json`)
        .sort(),
    );
  });

  it('refuses a bad --since or --concurrency before sending anything', async () => {
    const from = await env.mark();
    for (const opts of [{ since: 'yesterday' }, { since: '2025-02-30' }, { concurrency: 0 }, { concurrency: '4x' }]) {
      await expect(runDownload({ dir: env.tmpDir(), ...opts }, env.ctx())).rejects.toBeInstanceOf(UsageError);
    }
    expect(await env.requests(from)).toEqual([]);
  });

  it('Ctrl-C stops new downloads, keeps finished files, leaves no temp file, and a rerun resumes', async () => {
    const dir = env.tmpDir();
    const ready = await withTranscripts();
    const client = interceptRecordingGets(env.client(), (_id, nth) => {
      // Ctrl-C while the third recording's download is about to start
      if (nth === 1 && client.gets.size === 3) ctx.abort();
    });
    const ctx = env.ctx({ client });
    const err = await runDownload({ dir, concurrency: 1 }, ctx).catch((e: unknown) => e);

    expect(err).toBeInstanceOf(InterruptedError);
    expect((err as InterruptedError).exitCode).toBe(130);
    const first = summaryOf(ctx.stdoutText());
    expect(first.failed).toBe(0);
    expect(first.downloaded).toBeGreaterThanOrEqual(2);
    expect(first.downloaded).toBeLessThan(ready.length);
    expect(leftovers(dir)).toEqual([]);
    for (const r of ready.filter((r) => fs.existsSync(path.join(dir, `${r.id}.json`)))) {
      expect(JSON.parse(fs.readFileSync(path.join(dir, `${r.id}.json`), 'utf8'))).toEqual(
        transcriptFor(r.id, r.duration_seconds),
      );
    }

    const rerun = env.ctx();
    await runDownload({ dir }, rerun);
    expect(summaryOf(rerun.stdoutText())).toMatchObject({
      downloaded: ready.length - first.downloaded,
      skipped: first.downloaded,
      failed: 0,
    });
  });

  it('prints a table summary on stderr when output is a table', async () => {
    const dir = env.tmpDir();
    const ctx = env.ctx({ globals: { output: 'table' } });
    await runDownload({ dir }, ctx);
    expect(ctx.stdoutText()).toBe('');
    const err = ctx.stderrText();
    expect(err).toMatch(/downloaded\s*│\s*\d+/);
    expect(err).toMatch(/without transcript/);
    expect(err).toMatch(/elapsed/);
  });
});
