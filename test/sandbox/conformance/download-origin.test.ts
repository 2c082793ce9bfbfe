// Spec "Recording" (transcript_url: a tokenized link; clients must read it, not build it), Endpoints
// rule 5; docs/sandbox.md "Recordings and transcripts" and "Faults": transcript links live on a
// second listener (another origin) that never accepts an API key, and the fault machinery (random
// faults narrowed by `paths`, the `next` queue) reaches the download endpoint too.
import { describe, expect, test } from 'vitest';
import { errorEnvelope } from '../../../src/api/envelopes.js';
import {
  call,
  clearFaults,
  control,
  expectError,
  expectStatus,
  expectV2Envelope,
  listAll,
  origin,
  queueFaults,
  rawRequest,
  useSandbox,
  type SandboxHandle,
} from '../helpers.js';

const ctx = useSandbox({ downloadRateLimit: 100_000, downloadWindowMs: 1000 });

async function freshUrl(sb: SandboxHandle): Promise<string> {
  const rec = (await listAll(sb, 'recordings')).find((r) => r.has_transcript === true);
  expect(rec, 'a recording with a transcript').toBeTruthy();
  const res = await call(sb, 'GET', `/recordings/${rec!.id}`);
  expectStatus(res, 200);
  return res.body.data.transcript_url;
}

async function logSince(sb: SandboxHandle, since: number): Promise<any[]> {
  const res = await control(sb, 'GET', `/requests?since=${since}`);
  expectStatus(res, 200);
  return res.body;
}

async function logLength(sb: SandboxHandle): Promise<number> {
  return (await control(sb, 'GET', '/stats')).body.requests;
}

describe('the download listener: a second origin', () => {
  test('downloadUrl is another port on the same host, and transcript_url is built on it', async () => {
    const api = new URL(ctx.sb.baseUrl);
    const dl = new URL(ctx.sb.downloadUrl);
    expect(dl.hostname).toBe(api.hostname);
    expect(dl.port).not.toBe(api.port);
    expect(dl.origin).toBe(ctx.sb.downloadUrl);
    const url = new URL(await freshUrl(ctx.sb));
    expect(url.origin).toBe(ctx.sb.downloadUrl);
    expect(url.pathname).toMatch(/^\/transcripts\/download\/[A-Za-z0-9_-]{43}$/);
  });

  test('the link works on the download origin without a key; the same path on the API origin still answers', async () => {
    const url = await freshUrl(ctx.sb);
    const res = await call(ctx.sb, 'GET', url, { key: null });
    expectStatus(res, 200);
    expect(Array.isArray(res.body.segments)).toBe(true);
    const onApi = await call(ctx.sb, 'GET', origin(ctx.sb) + new URL(url).pathname, { key: null });
    expectStatus(onApi, 200);
    expect(onApi.body).toEqual(res.body);
  });

  test('the download origin serves only transcript links: no API, no control endpoint', async () => {
    const dl = ctx.sb.downloadUrl;
    expectError(await call(ctx.sb, 'GET', `${dl}/api/v2/contacts`), 404, 'NOT_FOUND');
    expectError(
      await call(ctx.sb, 'POST', `${dl}/api/v1/people/query`, { key: ctx.sb.keys.v1, body: {} }),
      404,
      'NOT_FOUND',
    );
    expectError(await call(ctx.sb, 'GET', `${dl}/__sandbox/stats`, { key: null }), 404, 'NOT_FOUND');
    expectError(
      await call(ctx.sb, 'GET', `${dl}/transcripts/download/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`, {
        key: null,
      }),
      404,
      'LINK_EXPIRED',
    );
  });

  test('the request log holds download requests of the second listener, with their headers, auth values hidden', async () => {
    const since = await logLength(ctx.sb);
    const url = await freshUrl(ctx.sb); // listAll + get: API requests
    const before = await logLength(ctx.sb);
    await call(ctx.sb, 'GET', url, { key: null, headers: { 'x-trace': 'plain' } });
    await call(ctx.sb, 'GET', url, { key: ctx.sb.keys.admin });
    await call(ctx.sb, 'GET', url, { key: ctx.sb.keys.admin, auth: 'bearer' });
    const all = await logSince(ctx.sb, since);
    const downloads = all.filter((e) => e.index >= before);
    expect(downloads).toHaveLength(3);
    for (const e of downloads) {
      expect(e).toMatchObject({ method: 'GET', path: new URL(url).pathname, listener: 'download' });
      expect(e.headers.host).toBe(new URL(ctx.sb.downloadUrl).host);
    }
    expect(downloads.map((e) => e.status)).toEqual([200, 400, 400]);
    expect(downloads[0].headers['x-trace']).toBe('plain');
    expect(downloads[0].headers['x-service-api-key']).toBeUndefined();
    expect(downloads[1].headers['x-service-api-key']).toBe('<present>');
    expect(downloads[2].headers['authorization']).toBe('<present>');
    expect(all.filter((e) => e.index < before).every((e) => e.listener === 'api')).toBe(true);
    const text = JSON.stringify(all);
    for (const k of Object.values(ctx.sb.keys)) expect(text).not.toContain(k);
  });

  test('both listeners close with the sandbox', async () => {
    const { startSandbox } = await import('../helpers.js');
    const sb = await startSandbox({ seed: 1 });
    const url = await freshUrl(sb);
    expectStatus(await call(sb, 'GET', url, { key: null }), 200);
    await sb.close();
    await expect(fetch(url)).rejects.toThrow();
    await expect(fetch(`${sb.baseUrl}/contacts`)).rejects.toThrow();
  });
});

describe('an API key sent to the download endpoint is refused loudly', () => {
  test.each([
    ['X-Service-Api-Key', (k: string) => ({ 'x-service-api-key': k })],
    ['Authorization: Bearer', (k: string) => ({ authorization: `Bearer ${k}` })],
    ['Authorization of another scheme', () => ({ authorization: 'Basic dXNlcjpwYXNz' })],
    ['an empty X-Service-Api-Key', () => ({ 'x-service-api-key': '' })],
  ])('%s → 400 CREDENTIALS_NOT_ALLOWED (error envelope), on both origins', async (_label, headers) => {
    const url = await freshUrl(ctx.sb);
    for (const target of [url, origin(ctx.sb) + new URL(url).pathname]) {
      const raw = await rawRequest(target, 'GET', headers(ctx.sb.keys.admin));
      expect(raw.status, raw.text).toBe(400);
      const body = JSON.parse(raw.text!);
      expect(errorEnvelope.safeParse(body).success).toBe(true);
      expect(body.error.code).toBe('CREDENTIALS_NOT_ALLOWED');
      expect(body.error.message).toMatch(/without an API key/);
      expect(body.error.details[0]).toMatchObject({ issue: 'not_allowed' });
      expect(raw.text).not.toContain(ctx.sb.keys.admin);
    }
    // the link itself is still good
    expectStatus(await call(ctx.sb, 'GET', url, { key: null }), 200);
  });

  test('also for an unknown or expired token (the key is refused before the token is looked at)', async () => {
    const res = await call(
      ctx.sb,
      'GET',
      `${ctx.sb.downloadUrl}/transcripts/download/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`,
    );
    expectError(res, 400, 'CREDENTIALS_NOT_ALLOWED');
    expectV2Envelope(res, errorEnvelope);
  });

  test('refused requests do not use the download limit', async () => {
    const { withSandbox } = await import('../helpers.js');
    await withSandbox({ downloadRateLimit: 2, downloadWindowMs: 60_000 }, async (sb) => {
      const url = await freshUrl(sb);
      for (let i = 0; i < 5; i++) expectError(await call(sb, 'GET', url), 400, 'CREDENTIALS_NOT_ALLOWED');
      expectStatus(await call(sb, 'GET', url, { key: null }), 200);
      expectStatus(await call(sb, 'GET', url, { key: null }), 200);
      expectError(await call(sb, 'GET', url, { key: null }), 429, 'RATE_LIMITED');
    });
  });
});

describe('faults reach the download endpoint (docs/sandbox.md "Faults")', () => {
  test('queued faults with a path regex: truncated, 500, html-502, 429, drop — then a normal download', async () => {
    await clearFaults(ctx.sb);
    const url = await freshUrl(ctx.sb);
    const good = await call(ctx.sb, 'GET', url, { key: null });
    expectStatus(good, 200);
    await queueFaults(ctx.sb, [
      { kind: 'truncated', path: '^/transcripts/download/' },
      { kind: '500', path: 'transcripts' },
      { kind: 'html-502', path: 'transcripts' },
      { kind: '429', path: 'transcripts' },
      { kind: 'drop', path: 'transcripts' },
      { kind: 'drop-after-write', path: 'transcripts' },
      { kind: '500-after-write', path: 'transcripts' },
    ]);
    // an API request in between is not consumed by these faults
    expectStatus(await call(ctx.sb, 'GET', '/contacts', { query: { limit: 1 } }), 200);

    const cut = await rawRequest(url, 'GET');
    expect(cut.status).toBe(200);
    expect(() => JSON.parse(cut.text!)).toThrow();
    expect(good.text.startsWith(cut.text!)).toBe(true);
    expect(cut.text!.length).toBe(Math.floor(good.text.length / 2));

    expectError(await call(ctx.sb, 'GET', url, { key: null }), 500, 'INTERNAL_ERROR');
    const html = await rawRequest(url, 'GET');
    expect(html.status).toBe(502);
    expect(html.headers?.['content-type']).toMatch(/^text\/html/);
    const limited = await call(ctx.sb, 'GET', url, { key: null });
    expectError(limited, 429, 'RATE_LIMITED');
    expect(limited.headers.get('retry-after')).toBe('0.05');
    expect((await rawRequest(url, 'GET')).error).toBeDefined();
    expect((await rawRequest(url, 'GET')).error).toBeDefined();
    expectError(await call(ctx.sb, 'GET', url, { key: null }), 500, 'INTERNAL_ERROR');

    expect((await control(ctx.sb, 'GET', '/faults')).body.next).toEqual([]);
    const ok = await call(ctx.sb, 'GET', url, { key: null });
    expectStatus(ok, 200);
    expect(ok.body).toEqual(good.body);
  });

  test('the request log names the injected fault of each download', async () => {
    await clearFaults(ctx.sb);
    const url = await freshUrl(ctx.sb);
    const since = await logLength(ctx.sb);
    await queueFaults(ctx.sb, [{ kind: 'truncated', method: 'GET', path: 'transcripts' }]);
    await rawRequest(url, 'GET');
    const log = (await logSince(ctx.sb, since)).filter((e) => e.listener === 'download');
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ status: 200, fault: 'truncated' });
  });

  test('a queued fault without a path applies to the next request, a download included', async () => {
    await clearFaults(ctx.sb);
    const url = await freshUrl(ctx.sb);
    await queueFaults(ctx.sb, [{ kind: '500', method: 'GET' }]);
    expectError(await call(ctx.sb, 'GET', url, { key: null }), 500, 'INTERNAL_ERROR');
    expectStatus(await call(ctx.sb, 'GET', url, { key: null }), 200);
  });

  test('random faults narrowed by `paths` to the download endpoint hit downloads and spare the API', async () => {
    await clearFaults(ctx.sb);
    const url = await freshUrl(ctx.sb);
    const set = await control(ctx.sb, 'POST', '/faults', { faults: { truncated: 1 }, paths: '^/transcripts/' });
    expectStatus(set, 200);
    try {
      for (let i = 0; i < 3; i++) {
        const raw = await rawRequest(url, 'GET');
        expect(raw.status).toBe(200);
        expect(() => JSON.parse(raw.text!)).toThrow();
      }
      expectStatus(await call(ctx.sb, 'GET', '/contacts', { query: { limit: 1 } }), 200);
      await control(ctx.sb, 'POST', '/faults', { faults: { '500': 1 }, paths: 'transcripts' });
      expectError(await call(ctx.sb, 'GET', url, { key: null }), 500, 'INTERNAL_ERROR');
      await control(ctx.sb, 'POST', '/faults', { faults: { '500': 1 }, paths: '^/api/' });
      expectStatus(await call(ctx.sb, 'GET', url, { key: null }), 200);
    } finally {
      await clearFaults(ctx.sb);
    }
  });

  test('--fault-paths at start narrows random faults to downloads too', async () => {
    const { withSandbox } = await import('../helpers.js');
    await withSandbox(
      { faults: { '429': 1 }, faultPaths: 'transcripts/download', downloadRateLimit: 1000 },
      async (sb) => {
        const url = await freshUrl(sb); // API requests: spared
        const res = await call(sb, 'GET', url, { key: null });
        expectError(res, 429, 'RATE_LIMITED');
        expect(res.headers.get('retry-after')).toBe('0.05');
      },
    );
  });
});
