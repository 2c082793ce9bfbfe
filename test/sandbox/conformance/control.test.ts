// docs/sandbox.md "Faults" → the control endpoint: requests log, forget-idempotency, reset, stats,
// limits; no key needed, never rate limited, absent with control: false.
import { describe, expect, test } from 'vitest';
import {
  call,
  control,
  create,
  createBody,
  expectError,
  expectStatus,
  origin,
  uniqueKey,
  useSandbox,
  withSandbox,
  SPEC_RESOURCES,
} from '../helpers.js';

const ctx = useSandbox();

/** The log entries of API requests (whether control requests are logged is not specified). */
async function apiLog(since?: number): Promise<Array<Record<string, any>>> {
  const res = await control(ctx.sb, 'GET', since === undefined ? '/requests' : `/requests?since=${since}`);
  expectStatus(res, 200);
  expect(Array.isArray(res.body)).toBe(true);
  return (res.body as Array<Record<string, any>>).filter((e) => !String(e.path).startsWith('/__sandbox'));
}

async function logLength(): Promise<number> {
  return (await control(ctx.sb, 'GET', '/requests')).body.length;
}

test('controlUrl is {origin}/__sandbox', () => {
  expect(ctx.sb.controlUrl).toBe(`${origin(ctx.sb)}/__sandbox`);
  expect(ctx.sb.baseUrl).toBe(`${origin(ctx.sb)}/api/v2`);
  expect(ctx.sb.v1BaseUrl).toBe(`${origin(ctx.sb)}/api/v1`);
  expect(new URL(ctx.sb.baseUrl).hostname).toBe('127.0.0.1');
});

describe('GET /__sandbox/requests', () => {
  test('logs {method, path, query, headers, status, fault}; auth headers replaced by "<present>"', async () => {
    const since = await logLength();
    await call(ctx.sb, 'GET', '/contacts', { query: { limit: 3 } });
    await call(ctx.sb, 'GET', '/deals', { auth: 'bearer' });
    await call(ctx.sb, 'GET', '/deals/deal_missing');
    const log = await apiLog(since);
    expect(log).toHaveLength(3);
    expect(log[0]).toMatchObject({ method: 'GET', status: 200 });
    expect(log[0]!.path).toContain('/contacts');
    expect(JSON.stringify(log[0]!.query)).toContain('3');
    expect(log[0]).toHaveProperty('fault');
    expect(log[0]).toHaveProperty('headers');
    expect(log[0]!.headers['x-service-api-key']).toBe('<present>');
    expect(log[1]!.headers['authorization']).toBe('<present>');
    expect(log[2]!.status).toBe(404);
    const text = JSON.stringify(log);
    for (const k of Object.values(ctx.sb.keys)) expect(text).not.toContain(k);
  });

  test('?since=N returns entries from index N', async () => {
    const n = await logLength();
    await call(ctx.sb, 'GET', '/tasks');
    await call(ctx.sb, 'GET', '/notes');
    const tail = await apiLog(n);
    expect(tail).toHaveLength(2);
    expect(tail[0]!.path).toContain('/tasks');
    expect(tail[1]!.path).toContain('/notes');
    const full = (await control(ctx.sb, 'GET', '/requests')).body as unknown[];
    expect(full.slice(n).filter((e: any) => !String(e.path).startsWith('/__sandbox'))).toEqual(tail);
  });

  test('v1 requests are logged too', async () => {
    const since = await logLength();
    await call(ctx.sb, 'POST', '/api/v1/people/query', { key: ctx.sb.keys.v1, body: {} });
    const log = await apiLog(since);
    expect(log.some((e: any) => e.method === 'POST' && String(e.path).includes('/api/v1/people/query'))).toBe(true);
  });
});

describe('POST /__sandbox/forget-idempotency', () => {
  test('after it, the same key and body run again (a server that forgot)', async () => {
    const key = uniqueKey();
    const body = createBody('contacts');
    const a = await call(ctx.sb, 'POST', '/contacts', { body, headers: { 'Idempotency-Key': key } });
    expectStatus(a, 201);
    const replay = await call(ctx.sb, 'POST', '/contacts', { body, headers: { 'Idempotency-Key': key } });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect((await control(ctx.sb, 'POST', '/forget-idempotency')).status).toBeLessThan(300);
    const b = await call(ctx.sb, 'POST', '/contacts', { body, headers: { 'Idempotency-Key': key } });
    expectStatus(b, 201);
    expect(b.headers.get('idempotent-replayed')).not.toBe('true');
    expect(b.body.data.id).not.toBe(a.body.data.id);
    const list = await call(ctx.sb, 'GET', '/contacts', { query: { email: body.email as string } });
    expect(list.body.data).toHaveLength(2);
  });
});

describe('GET /__sandbox/stats', () => {
  test('{records: {resource: n}, requests, idempotent_replays}', async () => {
    const s1 = (await control(ctx.sb, 'GET', '/stats')).body;
    expect(typeof s1.requests).toBe('number');
    expect(typeof s1.idempotent_replays).toBe('number');
    for (const r of SPEC_RESOURCES) {
      expect(typeof s1.records[r], r).toBe('number');
    }
    await create(ctx.sb, 'pipelines');
    await call(ctx.sb, 'GET', '/pipelines');
    const key = uniqueKey();
    const body = createBody('segments');
    await call(ctx.sb, 'POST', '/segments', { body, headers: { 'Idempotency-Key': key } });
    await call(ctx.sb, 'POST', '/segments', { body, headers: { 'Idempotency-Key': key } });
    const s2 = (await control(ctx.sb, 'GET', '/stats')).body;
    expect(s2.records.pipelines).toBe(s1.records.pipelines + 1);
    expect(s2.records.segments).toBe(s1.records.segments + 1);
    expect(s2.requests).toBeGreaterThanOrEqual(s1.requests + 3);
    expect(s2.idempotent_replays).toBe(s1.idempotent_replays + 1);
  });
});

describe('POST /__sandbox/reset', () => {
  test('empties the store and reseeds with the start seed', async () => {
    await withSandbox({ seed: 42 }, async (sb) => {
      const seeded = (await control(sb, 'GET', '/stats')).body.records;
      const firstIds = (await call(sb, 'GET', '/contacts', { query: { limit: 5 } })).body.data.map((x: any) => x.id);
      const rec = await create(sb, 'contacts', {}, sb.keys.admin);
      expectStatus(await call(sb, 'DELETE', `/contacts/${firstIds[0]}`), 200);
      expect((await control(sb, 'POST', '/reset')).status).toBeLessThan(300);
      expect((await control(sb, 'GET', '/stats')).body.records).toEqual(seeded);
      expectError(await call(sb, 'GET', `/contacts/${rec.id}`), 404, 'NOT_FOUND');
      const again = (await call(sb, 'GET', '/contacts', { query: { limit: 5 } })).body.data.map((x: any) => x.id);
      expect(again).toEqual(firstIds);
    });
  });
});

describe('POST /__sandbox/limits', () => {
  test('sets the limits and resets the windows', async () => {
    await withSandbox({ rateLimit: 3, orgRateLimit: 1000, rateWindowMs: 60_000 }, async (sb) => {
      for (let i = 0; i < 3; i++) expectStatus(await call(sb, 'GET', '/contacts'), 200);
      expectError(await call(sb, 'GET', '/contacts'), 429, 'RATE_LIMITED');
      expect((await control(sb, 'POST', '/limits', { rate_limit: 2 })).status).toBeLessThan(300);
      const a = await call(sb, 'GET', '/contacts');
      expectStatus(a, 200);
      expect(a.headers.get('x-ratelimit-limit')).toBe('2');
      expect(a.headers.get('x-ratelimit-remaining')).toBe('1');
      expectStatus(await call(sb, 'GET', '/contacts'), 200);
      expectError(await call(sb, 'GET', '/contacts'), 429, 'RATE_LIMITED');
    });
  });

  test('org_rate_limit, download limits and transcript_ttl_ms', async () => {
    await withSandbox({}, async (sb) => {
      await control(sb, 'POST', '/limits', { org_rate_limit: 2, rate_limit: 100 });
      expectStatus(await call(sb, 'GET', '/recordings', { query: { has_transcript: 'true', limit: 1 } }), 200);
      await control(sb, 'POST', '/limits', {
        org_rate_limit: 1000,
        download_rate_limit: 1,
        download_window_ms: 60_000,
        transcript_ttl_ms: 60_000,
      });
      const rec = (await call(sb, 'GET', '/recordings', { query: { has_transcript: 'true', limit: 1 } })).body.data[0];
      const url = (await call(sb, 'GET', `/recordings/${rec.id}`)).body.data.transcript_url;
      expectStatus(await call(sb, 'GET', url, { key: null }), 200);
      expectError(await call(sb, 'GET', url, { key: null }), 429, 'RATE_LIMITED');
      await control(sb, 'POST', '/limits', { download_rate_limit: 100, transcript_ttl_ms: 1 });
      const url2 = (await call(sb, 'GET', `/recordings/${rec.id}`)).body.data.transcript_url;
      await new Promise((r) => setTimeout(r, 20));
      expectError(await call(sb, 'GET', url2, { key: null }), 404, 'LINK_EXPIRED');
      // 0: expired when issued, however fast the next request is; below 0 is refused
      await control(sb, 'POST', '/limits', { transcript_ttl_ms: 0 });
      const url3 = (await call(sb, 'GET', `/recordings/${rec.id}`)).body.data.transcript_url;
      expectError(await call(sb, 'GET', url3, { key: null }), 404, 'LINK_EXPIRED');
      expectError(
        await call(sb, 'POST', '/__sandbox/limits', { body: { transcript_ttl_ms: -1 }, key: null }),
        422,
        'VALIDATION_FAILED',
      );
      await control(sb, 'POST', '/limits', { org_rate_limit: 2 });
      expectStatus(await call(sb, 'GET', '/contacts'), 200);
      expectStatus(await call(sb, 'GET', '/contacts', { key: sb.keys.readonly }), 200);
      expectError(await call(sb, 'GET', '/contacts', { key: sb.keys.user }), 429, 'RATE_LIMITED');
    });
  });
});

describe('access to the control endpoint', () => {
  test('needs no key and is never rate limited', async () => {
    await withSandbox({ rateLimit: 1, orgRateLimit: 1, rateWindowMs: 60_000 }, async (sb) => {
      expectStatus(await call(sb, 'GET', '/contacts'), 200);
      expectError(await call(sb, 'GET', '/contacts'), 429, 'RATE_LIMITED');
      for (let i = 0; i < 10; i++) expectStatus(await control(sb, 'GET', '/stats'), 200);
    });
  });

  test('control: false → no control endpoint', async () => {
    await withSandbox({ control: false }, async (sb) => {
      const res = await call(sb, 'GET', `${origin(sb)}/__sandbox/stats`, { key: null });
      expect(res.status).toBe(404);
      const post = await call(sb, 'POST', `${origin(sb)}/__sandbox/reset`, { key: null });
      expect(post.status).toBe(404);
      expectStatus(await call(sb, 'GET', '/contacts'), 200);
    });
  });

  test('unknown control paths → 404', async () => {
    expect((await control(ctx.sb, 'GET', '/nope')).status).toBe(404);
  });
});
