// Transcript links live on another origin than the API (the sandbox's second listener, another
// port) and that origin refuses any request carrying an API key (400 CREDENTIALS_NOT_ALLOWED).
// The request log says which listener got each request and which headers it carried: the
// downloads must all go to the link's origin, with no credential, and still succeed.
import fs from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { runDownload } from '../../../src/commands/recordings/download.js';
import { runTranscript } from '../../../src/commands/recordings/transcript.js';
import { systemClock } from '../../../src/http/clock.js';
import { createClient } from '../../../src/http/client.js';
import { Pacer } from '../../../src/http/pacer.js';
import { transcriptFor } from '../../../src/sandbox/downloads.js';
import { useRecordingsSandbox, type LogEntry } from './helpers.js';

const env = useRecordingsSandbox();

beforeEach(async () => {
  await env.control('/limits', { transcript_ttl_ms: 300_000, download_rate_limit: 1000, download_window_ms: 1000 });
  await env.control('/faults', { fail_rate: 0, latency_ms: 0, faults: {}, next: [] });
});

const isDownload = (e: LogEntry) => e.path.startsWith('/transcripts/download/');
const CREDENTIAL_HEADERS = ['x-service-api-key', 'authorization', 'cookie'];

/** What every download of the log must show: the link's origin, no credential, answered 200. */
function expectCleanDownloads(log: LogEntry[], count: number): void {
  const downloadHost = new URL(env.sb.downloadUrl).host;
  const downloads = log.filter(isDownload);
  expect(downloads).toHaveLength(count);
  for (const d of downloads) {
    expect(d.listener).toBe('download');
    expect(d.headers.host).toBe(downloadHost);
    const names = Object.keys(d.headers).map((h) => h.toLowerCase());
    for (const h of CREDENTIAL_HEADERS) expect(names).not.toContain(h);
    expect(d.status).toBe(200); // not 400 CREDENTIALS_NOT_ALLOWED
  }
  // and the API calls went to the API's origin, with the key
  for (const e of log.filter((x) => !isDownload(x))) {
    expect(e.listener).toBe('api');
    expect(e.headers['x-service-api-key'] ?? e.headers.authorization).toBe('<present>');
  }
}

describe('transcript links on another origin', () => {
  it('the sandbox gives links on its download origin, another port than the API', async () => {
    const downloadOrigin = new URL(env.sb.downloadUrl).origin;
    expect(downloadOrigin).not.toBe(new URL(env.sb.baseUrl).origin);
    const rec = (await env.recordings()).find((r) => r.has_transcript === true)!;
    const res = await fetch(`${env.sb.baseUrl}/recordings/${rec.id}`, {
      headers: { 'x-service-api-key': env.sb.keys.admin },
    });
    const url = ((await res.json()) as { data: { transcript_url: string } }).data.transcript_url;
    expect(new URL(url).origin).toBe(downloadOrigin);
    // the guard these tests rely on: a key sent there is refused
    const leaked = await fetch(url, { headers: { 'x-service-api-key': env.sb.keys.admin } });
    expect(leaked.status).toBe(400);
    expect(((await leaked.json()) as { error: { code: string } }).error.code).toBe('CREDENTIALS_NOT_ALLOWED');
    expect((await fetch(url)).status).toBe(200);
  });

  it('crm recordings download fetches every link on its own origin, with no credential', async () => {
    const dir = env.tmpDir();
    const ready = (await env.recordings()).filter((r) => r.has_transcript === true);
    const from = await env.mark();
    const ctx = env.ctx();
    await runDownload({ dir, concurrency: 4 }, ctx);
    expect(JSON.parse(ctx.stdoutText())).toMatchObject({ downloaded: ready.length, failed: 0 });
    expectCleanDownloads(await env.requests(from), ready.length);
    for (const r of ready) {
      expect(JSON.parse(fs.readFileSync(path.join(dir, `${r.id}.json`), 'utf8'))).toEqual(
        transcriptFor(r.id, r.duration_seconds),
      );
    }
  });

  it('crm recordings transcript does too, also when the key is sent as Authorization: Bearer', async () => {
    const rec = (await env.recordings()).find((r) => r.has_transcript === true)!;
    const bearer = createClient({
      baseUrl: env.sb.baseUrl,
      apiKey: env.sb.keys.admin,
      authHeader: 'bearer',
      clock: systemClock,
      pacer: new Pacer(systemClock),
    });
    try {
      const from = await env.mark();
      const ctx = env.ctx({ client: bearer });
      await runTranscript({ id: rec.id }, ctx);
      expect(JSON.parse(ctx.stdoutText())).toEqual(transcriptFor(rec.id, rec.duration_seconds));
      const log = await env.requests(from);
      expectCleanDownloads(log, 1);
      expect(log.filter((e) => !isDownload(e)).every((e) => e.headers.authorization === '<present>')).toBe(true);
    } finally {
      await bearer.close();
    }
  });
});
