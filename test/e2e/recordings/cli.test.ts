// The real binary (`bin/crm`, built by `npm test`) against the sandbox: wiring, output streams,
// exit codes and SIGINT for `crm recordings transcript|download`.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transcriptFor } from '../../../src/sandbox/downloads.js';
import { collect, runCrm, startCrm } from '../../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../../helpers/sandbox.js';

let t: TestSandbox;
let work: string;
let recordings: Array<Record<string, any>>;

beforeAll(async () => {
  t = await startTestSandbox({ seed: 3, rateLimit: 1_000_000, orgRateLimit: 1_000_000, downloadRateLimit: 1000 });
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'crm-rec-cli-'));
  const res = await fetch(`${t.sb.baseUrl}/recordings?limit=100`, {
    headers: { 'X-Service-Api-Key': t.sb.keys.admin },
  });
  recordings = ((await res.json()) as { data: Array<Record<string, any>> }).data;
});

afterAll(async () => {
  await t?.close();
  fs.rmSync(work, { recursive: true, force: true });
});

const crm = (args: string[]) => runCrm(args, { env: t.env('admin'), cwd: work });
const ready = () => recordings.filter((r) => r.has_transcript === true);

describe('crm recordings (binary)', () => {
  it('transcript prints the JSON; a recording still processing is exit 5 with the reason', async () => {
    const rec = ready()[0]!;
    const ok = await crm(['recordings', 'transcript', rec.id]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toEqual(transcriptFor(rec.id, rec.duration_seconds));

    const processing = recordings.find((r) => r.transcript_status === 'processing')!;
    const none = await crm(['recordings', 'transcript', processing.id]);
    expect(none.code).toBe(5);
    expect(none.stdout).toBe('');
    expect(none.stderr).toMatch(/still being transcribed, try again later/);
  });

  it('download writes DIR/<id>.json, prints the JSON summary, and a rerun skips everything', async () => {
    const first = await crm(['-o', 'json', 'recordings', 'download', '--dir', 'board']);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({
      downloaded: ready().length,
      skipped: 0,
      without_transcript: recordings.length - ready().length,
      failed: 0,
      dir: path.join(fs.realpathSync(work), 'board'),
    });
    expect(fs.readdirSync(path.join(work, 'board')).sort()).toEqual(
      ready()
        .map((r) => `${r.id}.json`)
        .sort(),
    );

    const again = await crm(['-o', 'json', 'recordings', 'download', '--dir', 'board']);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ downloaded: 0, skipped: ready().length });
  });

  it('download fails with exit 9 when some transcripts cannot be had, naming them', async () => {
    await t.control('/limits', { transcript_ttl_ms: 0, download_rate_limit: 1000 });
    try {
      // every link is expired by the time it is used: all fail after 3 fresh links each
      const res = await crm(['-o', 'json', 'recordings', 'download', '--dir', 'expired', '--concurrency', '8']);
      expect(res.code).toBe(9);
      const summary = JSON.parse(res.stdout);
      expect(summary.failed).toBe(ready().length);
      expect(res.stderr).toMatch(/failed/);
      expect(fs.existsSync(path.join(work, 'expired')) ? fs.readdirSync(path.join(work, 'expired')) : []).toEqual([]);
    } finally {
      await t.control('/limits', { transcript_ttl_ms: 300_000, download_rate_limit: 1000 });
    }
  });

  it('SIGINT stops the run with exit 130, keeps finished files, and a rerun completes it', async () => {
    // 1 download per 300 ms: the run takes seconds, so the interrupt lands mid-way
    await t.control('/limits', { download_rate_limit: 1, download_window_ms: 300 });
    try {
      const child = startCrm(['-o', 'json', 'recordings', 'download', '--dir', 'partial'], {
        env: t.env('admin'),
        cwd: work,
      });
      const done = collect(child);
      const dir = path.join(work, 'partial');
      const until = Date.now() + 10_000;
      while (Date.now() < until && !(fs.existsSync(dir) && fs.readdirSync(dir).length >= 2)) {
        await new Promise((r) => setTimeout(r, 20));
      }
      child.kill('SIGINT');
      const res = await done;
      expect(res.code, res.stderr).toBe(130);
      const summary = JSON.parse(res.stdout);
      expect(summary.downloaded).toBeGreaterThanOrEqual(2);
      expect(summary.downloaded).toBeLessThan(ready().length);
      const files = fs.readdirSync(dir);
      expect(files.every((f) => f.endsWith('.json') && !f.startsWith('.'))).toBe(true);
      expect(files).toHaveLength(summary.downloaded);
    } finally {
      await t.control('/limits', { download_rate_limit: 1000, download_window_ms: 1000 });
    }
    const rerun = await crm(['-o', 'json', 'recordings', 'download', '--dir', 'partial']);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(fs.readdirSync(path.join(work, 'partial'))).toHaveLength(ready().length);
  });

  it('a bad --since is a usage error (exit 2)', async () => {
    const res = await crm(['recordings', 'download', '--since', 'last tuesday']);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/--since/);
  });
});
