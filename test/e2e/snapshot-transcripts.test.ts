// `crm snapshot DIR --transcripts` against a seeded sandbox: every transcript of a recording with one
// lands in DIR/transcripts/<id>.json exactly as `crm recordings download` / `transcript` give it, each
// recording got once (the snapshot's recordings.ndjson, not a second listing), links that expire are
// renewed or counted as failed (the manifest complete only when every transcript is there), kill -9
// mid-transcripts then the same command leaves every file once and whole; and `crm sandbox --from`
// serves those files as the transcripts (fresh links on its own download origin), byte for byte.
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { transcriptFor } from '../../src/sandbox/downloads.js';
import { collect, runCrm, startCrm, startSandboxProcess, type SandboxProcess } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';

interface LogEntry {
  method: string;
  path: string;
  status: number | null;
  listener?: 'api' | 'download';
  headers: Record<string, string>;
}

const LIMITS = { transcript_ttl_ms: 300_000, download_rate_limit: 1000, download_window_ms: 1000 };
let t: TestSandbox;
let ready: Array<{ id: string; duration_seconds?: number }>;
beforeAll(async () => {
  t = await startTestSandbox({
    seed: 11,
    seedRecords: { recordings: 40 },
    rateLimit: 1_000_000,
    orgRateLimit: 1_000_000,
  });
  ready = (await recordings(t.sb.baseUrl, t.sb.keys.admin)).filter((r) => r.has_transcript === true) as typeof ready;
});
afterAll(() => t.close());
beforeEach(async () => {
  await t.control('/limits', LIMITS);
  await t.control('/faults', { fail_rate: 0, latency_ms: 0, faults: {}, next: [] });
});

async function recordings(baseUrl: string, key: string): Promise<Array<Record<string, unknown>>> {
  const res = await fetch(`${baseUrl}/recordings?limit=100`, { headers: { 'X-Service-Api-Key': key } });
  const body = (await res.json()) as { data: Array<Record<string, unknown>>; page_info: { has_next_page: boolean } };
  expect(body.page_info.has_next_page).toBe(false);
  return body.data;
}
const mark = async () => ((await t.control('/stats')) as { requests: number }).requests;
const requests = async (since: number) => (await t.control(`/requests?since=${since}`)) as LogEntry[];
const isDownload = (e: LogEntry) => e.path.startsWith('/transcripts/download/');
const isRecordingGet = (e: LogEntry) => e.method === 'GET' && /^\/api\/v2\/recordings\/[^/]+$/.test(e.path);
const isListing = (e: LogEntry) => e.method === 'GET' && e.path === '/api/v2/recordings';
const manifest = (dir: string) => JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Record<string, any>;
const files = (dir: string) => (existsSync(dir) ? readdirSync(dir).sort() : []);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ARGS = ['--resources', 'recordings', '--transcripts'];

/** What `crm recordings download` writes from the same sandbox: the reference, file by file. */
let reference: string | undefined;
async function referenceDir(): Promise<string> {
  if (reference) return reference;
  const dir = join(tempDir('crm-snapshot-tr-ref-'), 'ref');
  const r = await runCrm(['recordings', 'download', '--dir', dir], { env: t.env(), timeoutMs: 60_000 });
  expect(r.code, r.stderr).toBe(0);
  return (reference = dir);
}
async function expectSameAsDownload(dir: string): Promise<void> {
  const ref = await referenceDir();
  expect(files(join(dir, 'transcripts'))).toEqual(files(ref));
  for (const f of files(ref))
    expect(readFileSync(join(dir, 'transcripts', f), 'utf8'), f).toBe(readFileSync(join(ref, f), 'utf8'));
}

describe('crm snapshot --transcripts', () => {
  it('writes every transcript as crm recordings download and transcript give it, each recording got once, and counts them', async () => {
    expect(ready.length).toBeGreaterThanOrEqual(20);
    const dir = tempDir('crm-snapshot-tr-');
    const from = await mark();
    const r = await runCrm(['snapshot', dir, '--resources', 'recordings,meetings', '--transcripts'], {
      env: t.env(),
      timeoutMs: 60_000,
    });
    expect(r.code, r.stderr).toBe(0);
    const log = await requests(from);
    await expectSameAsDownload(dir);
    expect(files(join(dir, 'transcripts'))).toEqual(ready.map((x) => `${x.id}.json`).sort());
    // and as `crm recordings transcript` prints it
    const one = await runCrm(['recordings', 'transcript', ready[3]!.id], { env: t.env() });
    expect(JSON.parse(readFileSync(join(dir, 'transcripts', `${ready[3]!.id}.json`), 'utf8'))).toEqual(
      JSON.parse(one.stdout),
    );

    const m = manifest(dir);
    expect(JSON.parse(r.stdout)).toEqual(m);
    expect(m.complete).toBe(true);
    expect(m.finished_at).not.toBeNull();
    expect(m.transcripts).toEqual({
      dir: 'transcripts',
      files: ready.length,
      complete: true,
      without_transcript: 40 - ready.length,
      recordings_gone: 0,
      failed: 0,
      failures: [],
      not_started: 0,
    });
    expect(m.left_out.map((l: { what: string }) => l.what)).not.toContain('transcripts');
    // the server's side: the recordings listed once (the collection), each one with a transcript got once, downloaded once
    expect(log.filter(isListing)).toHaveLength(1);
    expect(log.filter(isRecordingGet)).toHaveLength(ready.length);
    expect(log.filter(isDownload).map((e) => e.status)).toEqual(ready.map(() => 200));
    for (const d of log.filter(isDownload)) expect(Object.keys(d.headers)).not.toContain('x-service-api-key');

    // a rerun of the finished snapshot sends nothing and says so
    const again0 = await mark();
    const again = await runCrm(
      ['snapshot', dir, '--resources', 'recordings,meetings', '--transcripts', '-o', 'table'],
      { env: t.env() },
    );
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain('already holds a complete snapshot');
    expect(await requests(again0)).toEqual([]);
  });

  it('without recordings in --resources it is a usage error (exit 2) before anything is written', async () => {
    const dir = join(tempDir('crm-snapshot-tr-'), 'none');
    const r = await runCrm(['snapshot', dir, '--resources', 'contacts', '--transcripts'], { env: t.env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--transcripts needs recordings in --resources');
    expect(existsSync(dir)).toBe(false);
  });

  it('links that keep expiring: each recording failed and counted, exit 9, not complete; a rerun with live links completes', async () => {
    const dir = tempDir('crm-snapshot-tr-');
    await t.control('/limits', { ...LIMITS, transcript_ttl_ms: 0 });
    const r = await runCrm(['snapshot', dir, ...ARGS], { env: t.env(), timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(9);
    expect(r.stderr).toContain(`${ready.length} of ${ready.length} transcripts could not be downloaded`);
    let m = manifest(dir);
    expect(m).toMatchObject({ complete: false, finished_at: null });
    expect(m.collections.recordings.complete).toBe(true);
    expect(m.transcripts).toMatchObject({ files: 0, complete: false, failed: ready.length });
    expect(m.transcripts.failures[0].error).toContain('kept expiring (4 links tried)');
    expect(files(join(dir, 'transcripts'))).toEqual([]);

    await t.control('/limits', LIMITS);
    const again = await runCrm(['snapshot', dir, ...ARGS], { env: t.env(), timeoutMs: 60_000 });
    expect(again.code, again.stderr).toBe(0);
    m = manifest(dir);
    expect(m.complete).toBe(true);
    expect(m.transcripts).toMatchObject({ files: ready.length, complete: true, failed: 0, failures: [] });
    await expectSameAsDownload(dir);
  });

  it('links that live 150 ms under a tight download limit (4 per 400 ms): every transcript, complete', async () => {
    const dir = tempDir('crm-snapshot-tr-');
    await t.control('/limits', { transcript_ttl_ms: 150, download_rate_limit: 4, download_window_ms: 400 });
    const from = await mark();
    const started = Date.now();
    const r = await runCrm(['snapshot', dir, ...ARGS], { env: t.env(), timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    // the run outlives many links: each is got just before its download
    expect(Date.now() - started).toBeGreaterThan((Math.ceil(ready.length / 4) - 1) * 400);
    expect(manifest(dir).transcripts).toMatchObject({ files: ready.length, complete: true, failed: 0 });
    const downloads = (await requests(from)).filter(isDownload);
    expect(downloads.filter((e) => e.status === 200)).toHaveLength(ready.length);
    await expectSameAsDownload(dir);
  }, 60_000);

  it('Ctrl-C while downloading transcripts: exit 130 saying how to resume, the manifest says what is left; the same command finishes', async () => {
    await t.control('/limits', { ...LIMITS, download_rate_limit: 3, download_window_ms: 200 });
    const dir = tempDir('crm-snapshot-tr-');
    const child = startCrm(['snapshot', dir, ...ARGS], { env: t.env() });
    const result = collect(child, { timeoutMs: 60_000 });
    while (files(join(dir, 'transcripts')).length < 3) await sleep(2);
    child.kill('SIGINT');
    const r = await result;
    expect(r.code, r.stderr).toBe(130);
    expect(r.stderr).toContain('run the same command again to resume');
    const m = manifest(dir);
    expect(m.complete).toBe(false);
    expect(m.transcripts.complete).toBe(false);
    expect(m.transcripts.files + m.transcripts.not_started).toBe(ready.length);
    expect(m.transcripts.files).toBe(files(join(dir, 'transcripts')).length);
    await t.control('/limits', LIMITS);
    const again = await runCrm(['snapshot', dir, ...ARGS], { env: t.env(), timeoutMs: 60_000 });
    expect(again.code, again.stderr).toBe(0);
    expect(manifest(dir)).toMatchObject({
      complete: true,
      transcripts: { files: ready.length, complete: true, not_started: 0 },
    });
    await expectSameAsDownload(dir);
  });

  it('killed (-9) at seeded points while downloading transcripts, then run again: each transcript once and whole, complete only at the end', async () => {
    await t.control('/limits', { ...LIMITS, download_rate_limit: 3, download_window_ms: 150 });
    const dir = tempDir('crm-snapshot-tr-');
    const folder = join(dir, 'transcripts');
    const points = [0, 90, 17, 160, 41, 5, 120];
    const from = await mark();
    let done = false;
    let kills = 0;
    for (let i = 0; i <= points.length && !done; i++) {
      const before = files(folder).length;
      const child = startCrm(['snapshot', dir, ...ARGS], { env: t.env() });
      const result = collect(child, { timeoutMs: 60_000 });
      let exited = false;
      void result.then(() => (exited = true));
      if (i < points.length) {
        while (!exited && files(folder).length <= before) await sleep(2);
        await sleep(points[i]!);
        child.kill('SIGKILL');
      }
      const r = await result;
      if (r.code === 0) done = true;
      else {
        expect(r.signal, r.stderr).toBe('SIGKILL');
        kills++;
        const m = manifest(dir);
        const all = ready.every((x) => existsSync(join(folder, `${x.id}.json`)));
        expect(m.complete, 'complete only when every transcript is there').toBe(m.complete && all);
      }
    }
    expect(done).toBe(true);
    expect(kills).toBeGreaterThanOrEqual(3);
    expect(manifest(dir)).toMatchObject({ complete: true, transcripts: { files: ready.length, complete: true } });
    // no temp file left, every file whole (the same bytes as a plain download)
    await expectSameAsDownload(dir);
    // each transcript downloaded once, but for those a kill cut between the download and the rename (4 in flight at most)
    const ok = (await requests(from)).filter((e) => isDownload(e) && e.status === 200);
    expect(ok.length).toBeGreaterThanOrEqual(ready.length);
    expect(ok.length).toBeLessThanOrEqual(ready.length + 4 * kills);
  }, 120_000);
});

describe('crm sandbox --from a snapshot with transcripts', () => {
  let dir: string;
  beforeAll(async () => {
    dir = join(tempDir('crm-snapshot-tr-trip-'), 'backup');
    const r = await runCrm(['snapshot', dir, ...ARGS], { env: t.env(), timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
  });

  it('serves them: fresh links on its own download origin, and crm recordings download gives the same files byte for byte', async () => {
    let copy: SandboxProcess | undefined;
    try {
      copy = await startSandboxProcess(['--port', '0', '--from', dir]);
      const env = t.env('admin', { CRM_BASE_URL: copy.baseUrl, CRM_API_KEY: copy.admin });
      const rec = await fetch(`${copy.baseUrl}/recordings/${ready[0]!.id}`, {
        headers: { 'X-Service-Api-Key': copy.admin },
      });
      const url = new URL(((await rec.json()) as { data: { transcript_url: string } }).data.transcript_url);
      expect(url.origin).not.toBe(new URL(t.sb.downloadUrl).origin); // never the snapshot's (expired) link
      expect(url.origin).not.toBe(new URL(copy.baseUrl).origin);
      const out = join(tempDir('crm-snapshot-tr-trip-'), 'out');
      const r = await runCrm(['recordings', 'download', '--dir', out], { env, timeoutMs: 60_000 });
      expect(r.code, r.stderr).toBe(0);
      expect(files(out)).toEqual(files(join(dir, 'transcripts')));
      for (const f of files(out))
        expect(readFileSync(join(out, f), 'utf8'), f).toBe(readFileSync(join(dir, 'transcripts', f), 'utf8'));
    } finally {
      await copy?.stop();
    }
  });

  it("serves the snapshot's file, not a generated one; a recording whose file is missing gets the generated transcript", async () => {
    const [edited, removed] = [ready[1]!, ready[2]!];
    const text = `${JSON.stringify({ recording_id: edited.id, language: 'fr', segments: [{ speaker: 'Ada', text: 'édité' }] }, null, 2)}\n`;
    writeFileSync(join(dir, 'transcripts', `${edited.id}.json`), text);
    rmSync(join(dir, 'transcripts', `${removed.id}.json`));
    let copy: SandboxProcess | undefined;
    try {
      copy = await startSandboxProcess(['--port', '0', '--from', dir]);
      const env = t.env('admin', { CRM_BASE_URL: copy.baseUrl, CRM_API_KEY: copy.admin });
      const a = await runCrm(['recordings', 'transcript', edited.id], { env });
      expect(a.code, a.stderr).toBe(0);
      expect(JSON.parse(a.stdout)).toEqual(JSON.parse(text));
      const b = await runCrm(['recordings', 'transcript', removed.id], { env });
      expect(b.code, b.stderr).toBe(0);
      expect(JSON.parse(b.stdout)).toEqual(transcriptFor(removed.id, removed.duration_seconds));
      // the record itself is served unchanged: it still says it has a transcript
      const rec = await fetch(`${copy.baseUrl}/recordings/${removed.id}`, {
        headers: { 'X-Service-Api-Key': copy.admin },
      });
      expect(((await rec.json()) as { data: { has_transcript: boolean } }).data.has_transcript).toBe(true);
    } finally {
      await copy?.stop();
    }
  });

  it('a transcript file that is not JSON: exit 2 at start, naming the file', async () => {
    const bad = join(dir, 'transcripts', `${ready[4]!.id}.json`);
    writeFileSync(bad, '{"recording_id": "cut sh');
    const r = await runCrm(['sandbox', '--port', '0', '--from', dir]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(bad);
    expect(r.stderr).toContain('not valid JSON');
    expect(r.stdout).toBe('');
  });
});
