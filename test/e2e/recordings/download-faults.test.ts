// Faults on the transcript download endpoint (the sandbox applies them there as on the API): a
// body cut in half never becomes a file that looks complete, and 5xx, dropped connections and
// 429s are retried (each retry with a fresh link) until every transcript is in.
import fs from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { runDownload } from '../../../src/commands/recordings/download.js';
import { runTranscript } from '../../../src/commands/recordings/transcript.js';
import { PartialFailureError } from '../../../src/http/errors.js';
import { transcriptFor } from '../../../src/sandbox/downloads.js';
import { leftovers, useRecordingsSandbox, type LogEntry } from './helpers.js';

const env = useRecordingsSandbox();
const DOWNLOADS = '^/transcripts/download/';

beforeEach(async () => {
  await env.control('/limits', { transcript_ttl_ms: 300_000, download_rate_limit: 1000, download_window_ms: 1000 });
  await env.control('/faults', { fail_rate: 0, latency_ms: 0, faults: {}, next: [] });
});

const isDownload = (e: LogEntry) => e.path.startsWith('/transcripts/download/');
const isRecordingGet = (e: LogEntry) => e.method === 'GET' && /^\/api\/v2\/recordings\/[^/]+$/.test(e.path);

async function withTranscripts(): Promise<Array<Record<string, any>>> {
  return (await env.recordings()).filter((r) => r.has_transcript === true);
}

function expectAllSaved(dir: string, ready: Array<Record<string, any>>): void {
  expect(fs.readdirSync(dir).sort()).toEqual(ready.map((r) => `${r.id}.json`).sort());
  for (const r of ready) {
    expect(JSON.parse(fs.readFileSync(path.join(dir, `${r.id}.json`), 'utf8'))).toEqual(
      transcriptFor(r.id, r.duration_seconds),
    );
  }
}

describe('download endpoint faults', () => {
  it.each([
    ['500', 500],
    ['html-502', 502],
    ['drop', null],
    ['truncated', 200],
    ['429', 429],
  ] as const)(
    '%s on some downloads: retried with a fresh link, every transcript saved complete',
    async (kind, status) => {
      const dir = env.tmpDir();
      const ready = await withTranscripts();
      await env.control('/faults', { next: [{ kind, path: DOWNLOADS, count: 4 }] });
      const from = await env.mark();
      const ctx = env.ctx();
      await runDownload({ dir, concurrency: 4 }, ctx);

      expect(JSON.parse(ctx.stdoutText())).toMatchObject({ downloaded: ready.length, failed: 0 });
      expectAllSaved(dir, ready);
      expect(leftovers(dir)).toEqual([]);
      const log = await env.requests(from);
      const downloads = log.filter(isDownload);
      const faulted = downloads.filter((e) => e.fault === kind);
      expect(faulted).toHaveLength(4);
      for (const f of faulted) expect(f.status).toBe(status);
      expect(downloads.filter((e) => e.status === 200 && !e.fault)).toHaveLength(ready.length);
      // a fresh link for every try
      expect(log.filter(isRecordingGet)).toHaveLength(downloads.length);
    },
  );

  it('a download cut short every time fails, leaving no file at all (nothing that looks complete), exit 9', async () => {
    const dir = env.tmpDir();
    const ready = await withTranscripts();
    await env.control('/faults', { faults: { truncated: 1 }, paths: DOWNLOADS }); // every download, every try
    const ctx = env.ctx({ globals: { output: 'json', maxRetries: 1 } });
    const err = await runDownload({ dir, concurrency: 4 }, ctx).catch((e: unknown) => e);

    expect(err).toBeInstanceOf(PartialFailureError);
    expect((err as PartialFailureError).exitCode).toBe(9);
    const summary = JSON.parse(ctx.stdoutText());
    expect(summary).toMatchObject({ downloaded: 0, failed: ready.length });
    for (const f of summary.failures) expect(f.error).toMatch(/not valid JSON \(truncated\?\)/);
    expect(fs.readdirSync(dir)).toEqual([]); // no file, no temp file

    // once the fault is gone, a rerun completes them
    await env.control('/faults', { faults: {}, next: [] });
    const rerun = env.ctx();
    await runDownload({ dir, concurrency: 4 }, rerun);
    expect(JSON.parse(rerun.stdoutText())).toMatchObject({ downloaded: ready.length, failed: 0 });
    expectAllSaved(dir, ready);
  });

  it('crm recordings transcript --out never writes a cut body, and retries it', async () => {
    const rec = (await withTranscripts())[0]!;
    const dir = env.tmpDir();
    const file = path.join(dir, 'out.json');
    await env.control('/faults', { next: [{ kind: 'truncated', path: DOWNLOADS, count: 2 }] });
    await runTranscript({ id: rec.id, out: file }, env.ctx());
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual(transcriptFor(rec.id, rec.duration_seconds));
    expect(fs.readdirSync(dir)).toEqual(['out.json']);
  });
});
