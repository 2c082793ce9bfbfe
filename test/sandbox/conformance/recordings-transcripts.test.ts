// Spec "Recording (version 2, read-only)" table, Endpoints rules 5–6, Limits rule 5, Errors (404 for
// an expired transcript link); docs/sandbox.md "Recordings and transcripts" and "Rate limits".
import { describe, expect, test } from 'vitest';
import { listEnvelope, successEnvelope } from '../../../src/api/envelopes.js';
import {
  call,
  expectError,
  expectStatus,
  expectV2Envelope,
  listAll,
  origin,
  sleep,
  testClock,
  startSandbox,
  useSandbox,
  withSandbox,
  type SandboxHandle,
} from '../helpers.js';

// Long TTL here; the expiry tests use a second sandbox with a 100 ms TTL.
const ctx = useSandbox({ downloadRateLimit: 1000, downloadWindowMs: 1000 });
const short = useSandbox({ transcriptTtlMs: 100, downloadRateLimit: 1000, downloadWindowMs: 1000 });
// its clock moved by the test: a burst of 12 in one window however long a loaded machine takes to send it
const dlClock = testClock();
const dl = useSandbox({
  downloadRateLimit: 3,
  downloadWindowMs: 200,
  rateLimit: 1000,
  orgRateLimit: 1000,
  now: dlClock.now,
});

async function withTranscript(sb: SandboxHandle, key?: string): Promise<Record<string, any>> {
  const all = await listAll(sb, 'recordings', { key });
  const r = all.find((x) => x.has_transcript === true);
  expect(r, 'a recording with a transcript').toBeTruthy();
  return r!;
}

async function freshUrl(sb: SandboxHandle, id: string, key?: string): Promise<string> {
  const res = await call(sb, 'GET', `/recordings/${id}`, { key });
  expectStatus(res, 200);
  expect(typeof res.body.data.transcript_url).toBe('string');
  return res.body.data.transcript_url;
}

describe('recording fields', () => {
  test('in lists: transcript_url null, recording_url null, video_status "skipped", has_transcript boolean', async () => {
    const res = await call(ctx.sb, 'GET', '/recordings', { query: { limit: 100 } });
    expectStatus(res, 200);
    expectV2Envelope(res, listEnvelope);
    expect(res.body.data.length).toBeGreaterThan(0);
    for (const r of res.body.data) {
      expect(r.transcript_url).toBeNull();
      expect('recording_url' in r).toBe(true);
      expect(r.recording_url).toBeNull();
      expect(r.video_status).toBe('skipped');
      expect(typeof r.has_transcript).toBe('boolean');
      expect(r.id).toMatch(/^rec_/);
      for (const f of ['title', 'meeting_id', 'started_at', 'duration_seconds', 'transcript_status', 'owner_id']) {
        expect(r, f).toHaveProperty(f);
      }
    }
  });

  test('has_transcript is true exactly when transcript_status is "ready"; others are processing or no_audio', async () => {
    const all = await listAll(ctx.sb, 'recordings');
    for (const r of all) {
      expect(['ready', 'processing', 'no_audio']).toContain(r.transcript_status);
      expect(r.has_transcript).toBe(r.transcript_status === 'ready');
    }
  });

  test('get with has_transcript true → a tokenized {download origin}/transcripts/download/{token} link; deprecated fields fixed', async () => {
    const r = await withTranscript(ctx.sb);
    const res = await call(ctx.sb, 'GET', `/recordings/${r.id}`);
    expectStatus(res, 200);
    expectV2Envelope(res, successEnvelope);
    const url: string = res.body.data.transcript_url;
    expect(new URL(url).origin).not.toBe(origin(ctx.sb));
    expect(url.startsWith(`${ctx.sb.downloadUrl}/transcripts/download/`)).toBe(true);
    const token = url.slice(`${ctx.sb.downloadUrl}/transcripts/download/`.length);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/); // 32 random bytes, base64url
    expect(res.body.data.recording_url).toBeNull();
    expect(res.body.data.video_status).toBe('skipped');
  });

  test('get with has_transcript false → transcript_url null', async () => {
    const all = await listAll(ctx.sb, 'recordings');
    const without = all.filter((x) => !x.has_transcript);
    expect(without.length).toBeGreaterThan(0);
    for (const r of without) {
      const res = await call(ctx.sb, 'GET', `/recordings/${r.id}`);
      expectStatus(res, 200);
      expect(res.body.data.has_transcript).toBe(false);
      expect(res.body.data.transcript_url).toBeNull();
      expect(res.body.data.recording_url).toBeNull();
      expect(res.body.data.video_status).toBe('skipped');
    }
  });

  test('each get issues a fresh token', async () => {
    const r = await withTranscript(ctx.sb);
    const urls = new Set<string>();
    for (let i = 0; i < 5; i++) urls.add(await freshUrl(ctx.sb, r.id));
    expect(urls.size).toBe(5);
  });

  test('?has_transcript=true lists only recordings with a transcript', async () => {
    const res = await call(ctx.sb, 'GET', '/recordings', { query: { has_transcript: 'true', limit: 100 } });
    expectStatus(res, 200);
    expect(res.body.data.length).toBeGreaterThan(0);
    for (const r of res.body.data) expect(r.has_transcript).toBe(true);
  });
});

describe('transcript download', () => {
  test('works without any API key and returns the transcript JSON of that recording', async () => {
    const r = await withTranscript(ctx.sb);
    const url = await freshUrl(ctx.sb, r.id);
    const res = await call(ctx.sb, 'GET', url, { key: null });
    expectStatus(res, 200);
    expect(res.headers.get('content-type') ?? '').toMatch(/^application\/json/);
    expect(res.body.recording_id).toBe(r.id);
    expect(typeof res.body.language).toBe('string');
    expect(typeof res.body.duration_seconds).toBe('number');
    expect(Array.isArray(res.body.segments)).toBe(true);
    expect(res.body.segments.length).toBeGreaterThan(0);
    for (const s of res.body.segments) {
      expect(typeof s.speaker).toBe('string');
      expect(typeof s.start_ms).toBe('number');
      expect(typeof s.end_ms).toBe('number');
      expect(s.end_ms).toBeGreaterThanOrEqual(s.start_ms);
      expect(typeof s.text).toBe('string');
    }
  });

  test('reusable while valid, and deterministic from the recording id', async () => {
    const r = await withTranscript(ctx.sb);
    const url1 = await freshUrl(ctx.sb, r.id);
    const a = await call(ctx.sb, 'GET', url1, { key: null });
    const b = await call(ctx.sb, 'GET', url1, { key: null });
    const c = await call(ctx.sb, 'GET', url1, { key: null });
    for (const x of [a, b, c]) expectStatus(x, 200);
    expect(b.body).toEqual(a.body);
    expect(c.body).toEqual(a.body);
    const url2 = await freshUrl(ctx.sb, r.id);
    const d = await call(ctx.sb, 'GET', url2, { key: null });
    expect(d.body).toEqual(a.body);
  });

  test('an older link stays valid after a fresh one is issued', async () => {
    const r = await withTranscript(ctx.sb);
    const old = await freshUrl(ctx.sb, r.id);
    await freshUrl(ctx.sb, r.id);
    expectStatus(await call(ctx.sb, 'GET', old, { key: null }), 200);
  });

  test('other methods on a download link → 405; no token → 404', async () => {
    const r = await withTranscript(ctx.sb);
    const url = await freshUrl(ctx.sb, r.id);
    expectError(await call(ctx.sb, 'POST', url, { key: null, body: {} }), 405, 'METHOD_NOT_ALLOWED');
    expectError(await call(ctx.sb, 'DELETE', url, { key: null }), 405, 'METHOD_NOT_ALLOWED');
    expectError(await call(ctx.sb, 'GET', '/transcripts/download', { key: null }), 404);
    expectStatus(await call(ctx.sb, 'GET', url, { key: null }), 200);
  });

  test('an unknown token → 404 LINK_EXPIRED', async () => {
    const res = await call(ctx.sb, 'GET', '/transcripts/download/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', {
      key: null,
    });
    expectError(res, 404, 'LINK_EXPIRED');
  });

  test('after the TTL the link → 404 LINK_EXPIRED; a new get gives a working link', async () => {
    const r = await withTranscript(short.sb);
    // A 100 ms TTL: under heavy machine load the first fetch may itself come too late; then retry.
    async function usableUrl(): Promise<string> {
      for (let attempt = 0; ; attempt++) {
        const t0 = performance.now();
        const url = await freshUrl(short.sb, r.id);
        const res = await call(short.sb, 'GET', url, { key: null });
        if (res.status === 200) return url;
        if (attempt >= 4 || performance.now() - t0 < 90) expectStatus(res, 200);
      }
    }
    const url = await usableUrl();
    await sleep(160);
    expectError(await call(short.sb, 'GET', url, { key: null }), 404, 'LINK_EXPIRED');
    const again = await usableUrl();
    expect(again).not.toBe(url);
  });

  test('the download endpoint is not under the API: a token sent to /api/v2 is not a route', async () => {
    const r = await withTranscript(ctx.sb);
    const url = await freshUrl(ctx.sb, r.id);
    const token = url.split('/').pop()!;
    const res = await call(ctx.sb, 'GET', `${ctx.sb.baseUrl}/transcripts/download/${token}`);
    expectError(res, 404, 'NOT_FOUND');
  });

  test('the discovery flow: list, keep has_transcript, get each, download each', async () => {
    const all = await listAll(ctx.sb, 'recordings');
    const withT = all.filter((x) => x.has_transcript);
    for (const r of withT) {
      const url = await freshUrl(ctx.sb, r.id);
      const res = await call(ctx.sb, 'GET', url, { key: null });
      expectStatus(res, 200);
      expect(res.body.recording_id).toBe(r.id);
    }
  });
});

describe('download rate limit (spec Endpoints rule 5, Limits rule 5)', () => {
  test('over its own limit → 429 RATE_LIMITED with Retry-After and the X-RateLimit-* headers', async () => {
    await withSandbox({ downloadRateLimit: 3, downloadWindowMs: 60_000 }, async (sb) => {
      const r = await withTranscript(sb);
      const url = await freshUrl(sb, r.id);
      const remaining: string[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await call(sb, 'GET', url, { key: null });
        expectStatus(res, 200);
        expect(res.headers.get('x-ratelimit-limit')).toBe('3');
        remaining.push(res.headers.get('x-ratelimit-remaining')!);
        expect(res.headers.get('x-ratelimit-reset')).toMatch(/^\d+(\.\d{1,3})?$/);
      }
      expect(remaining).toEqual(['2', '1', '0']);
      const limited = await call(sb, 'GET', url, { key: null });
      expectError(limited, 429, 'RATE_LIMITED');
      const retryAfter = Number(limited.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(60);
      for (const h of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'])
        expect(limited.headers.get(h), h).not.toBeNull();
      // independent of the API limit: the API still answers
      expectStatus(await call(sb, 'GET', '/recordings', { query: { limit: 1 } }), 200);
      expectStatus(await call(sb, 'GET', `/recordings/${r.id}`), 200);
    });
  });

  test('the download limit is shared by all tokens', async () => {
    await withSandbox({ downloadRateLimit: 3, downloadWindowMs: 60_000 }, async (sb) => {
      const all = (await listAll(sb, 'recordings')).filter((x) => x.has_transcript);
      const urls = [await freshUrl(sb, all[0]!.id), await freshUrl(sb, all[1]!.id), await freshUrl(sb, all[2]!.id)];
      for (const u of urls) expectStatus(await call(sb, 'GET', u, { key: null }), 200);
      const fresh = await freshUrl(sb, all[3]!.id);
      expectError(await call(sb, 'GET', fresh, { key: null }), 429, 'RATE_LIMITED');
      expectError(await call(sb, 'GET', urls[0]!, { key: null }), 429, 'RATE_LIMITED');
    });
  });

  test('the download window resets after Retry-After (short window)', async () => {
    const r = await withTranscript(dl.sb);
    const url = await freshUrl(dl.sb, r.id);
    const burst = await Promise.all(Array.from({ length: 12 }, () => call(dl.sb, 'GET', url, { key: null })));
    const limited = burst.find((x) => x.status === 429);
    expect(limited, 'a 429 in a burst of 12 over a limit of 3').toBeTruthy();
    for (const x of burst) expect([200, 429]).toContain(x.status);
    expect(burst.filter((x) => x.status === 200).length).toBeLessThanOrEqual(6);
    const retryAfter = Number(limited!.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(0.2);
    dlClock.pass(retryAfter * 1000 + 30);
    expectStatus(await call(dl.sb, 'GET', url, { key: null }), 200);
  });

  test("downloads do not use the API key's limit (and the API limit does not block downloads)", async () => {
    const sb = await startSandbox({
      seed: 42,
      rateLimit: 4,
      orgRateLimit: 1000,
      rateWindowMs: 60_000,
      downloadRateLimit: 1000,
      downloadWindowMs: 1000,
    });
    try {
      const r = await withTranscript(sb); // uses 1 unit
      const url = await freshUrl(sb, r.id); // 2
      for (let i = 0; i < 10; i++) expectStatus(await call(sb, 'GET', url, { key: null }), 200);
      const after = await call(sb, 'GET', '/recordings', { query: { limit: 1 } }); // 3
      expectStatus(after, 200);
      expect(after.headers.get('x-ratelimit-remaining')).toBe('1');
      expectStatus(await call(sb, 'GET', '/recordings', { query: { limit: 1 } }), 200); // 4
      expectError(await call(sb, 'GET', '/recordings', { query: { limit: 1 } }), 429, 'RATE_LIMITED');
      expectStatus(await call(sb, 'GET', url, { key: null }), 200);
    } finally {
      await sb.close();
    }
  });
});

describe('read-only and access', () => {
  test('recordings cannot be created, updated or deleted (405)', async () => {
    const r = await withTranscript(ctx.sb);
    expectError(await call(ctx.sb, 'POST', '/recordings', { body: { title: 'x' } }), 405, 'METHOD_NOT_ALLOWED');
    expectError(
      await call(ctx.sb, 'PATCH', `/recordings/${r.id}`, { body: { title: 'x' } }),
      405,
      'METHOD_NOT_ALLOWED',
    );
    expectError(await call(ctx.sb, 'DELETE', `/recordings/${r.id}`), 405, 'METHOD_NOT_ALLOWED');
  });

  test("the user-bound key sees only its own recordings; another's → 403 FORBIDDEN_RECORD", async () => {
    const mine = await listAll(ctx.sb, 'recordings', { key: ctx.sb.keys.user });
    for (const r of mine) expect(r.owner_id).toBe('usr_user');
    const all = await listAll(ctx.sb, 'recordings');
    const other = all.find((r) => r.owner_id !== 'usr_user');
    expect(other).toBeTruthy();
    expectError(
      await call(ctx.sb, 'GET', `/recordings/${other!.id}`, { key: ctx.sb.keys.user }),
      403,
      'FORBIDDEN_RECORD',
    );
  });
});
