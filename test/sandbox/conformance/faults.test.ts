// docs/sandbox.md "Faults": --fail-rate, --latency-ms, --faults kinds, the control endpoint's `next`
// queue (method/path/count), faults apply to /api/* only, and their interplay with idempotency.
import { describe, expect, test } from 'vitest';
import {
  call,
  clearFaults,
  control,
  createBody,
  expectError,
  expectStatus,
  queueFaults,
  rawApi as raw,
  uniqueKey,
  useSandbox,
  withSandbox,
  type SandboxHandle,
} from '../helpers.js';

const ctx = useSandbox();

async function contactsCount(sb: SandboxHandle): Promise<number> {
  return (await control(sb, 'GET', '/stats')).body.records.contacts;
}

async function findByEmail(sb: SandboxHandle, email: string): Promise<Array<Record<string, any>>> {
  const res = await call(sb, 'GET', '/contacts', { query: { email } });
  expectStatus(res, 200);
  return res.body.data;
}

describe('startup options', () => {
  test('failRate 1: every API request is 500 INTERNAL_ERROR before it runs; the control endpoint is untouched', async () => {
    await withSandbox({ failRate: 1 }, async (sb) => {
      const before = await contactsCount(sb);
      expectError(await call(sb, 'GET', '/contacts'), 500, 'INTERNAL_ERROR');
      expectError(await call(sb, 'POST', '/contacts', { body: createBody('contacts') }), 500, 'INTERNAL_ERROR');
      const v1 = await call(sb, 'POST', '/api/v1/people/query', { key: sb.keys.v1, body: {} });
      expect(v1.status).toBe(500);
      expect(await contactsCount(sb)).toBe(before);
      expectStatus(await control(sb, 'GET', '/stats'), 200);
    });
  });

  test('failRate 0.5: roughly half fail, and only with 500', async () => {
    await withSandbox({ failRate: 0.5 }, async (sb) => {
      const statuses = await Promise.all(
        Array.from({ length: 200 }, () => call(sb, 'GET', '/contacts', { query: { limit: 1 } }).then((r) => r.status)),
      );
      const failed = statuses.filter((s) => s === 500).length;
      expect(statuses.every((s) => s === 200 || s === 500)).toBe(true);
      expect(failed).toBeGreaterThan(50);
      expect(failed).toBeLessThan(150);
    });
  });

  test('latencyMs: every response waits that long', async () => {
    await withSandbox({ latencyMs: 120 }, async (sb) => {
      const t0 = performance.now();
      expectStatus(await call(sb, 'GET', '/contacts', { query: { limit: 1 } }), 200);
      expect(performance.now() - t0).toBeGreaterThanOrEqual(110);
      const t1 = performance.now();
      expectError(await call(sb, 'GET', '/contacts', { key: null }), 401);
      expect(performance.now() - t1).toBeGreaterThanOrEqual(110);
    });
  });

  test('faults {drop: 1}: the connection is destroyed without an answer', async () => {
    await withSandbox({ faults: { drop: 1 } }, async (sb) => {
      const res = await raw(sb, 'GET', '/contacts');
      expect(res.error, `expected a dropped connection, got ${res.status}`).toBeDefined();
      expect(res.text ?? '').toBe('');
    });
  });

  test('faults {html-502: 1}: every API answer is an HTML 502', async () => {
    await withSandbox({ faults: { 'html-502': 1 } }, async (sb) => {
      const res = await call(sb, 'GET', '/contacts');
      expect(res.status).toBe(502);
      expect(res.headers.get('content-type') ?? '').toMatch(/text\/html/);
    });
  });
});

describe('each fault kind via the `next` queue', () => {
  test('500: 500 INTERNAL_ERROR before the request runs; nothing is written', async () => {
    const before = await contactsCount(ctx.sb);
    await queueFaults(ctx.sb, [{ kind: '500', method: 'POST', path: '/contacts' }]);
    const body = createBody('contacts');
    expectError(await call(ctx.sb, 'POST', '/contacts', { body }), 500, 'INTERNAL_ERROR');
    expect(await contactsCount(ctx.sb)).toBe(before);
    expectStatus(await call(ctx.sb, 'POST', '/contacts', { body }), 201);
  });

  test('500 is not cached: a retry with the same Idempotency-Key runs for real', async () => {
    await queueFaults(ctx.sb, [{ kind: '500', method: 'POST', path: '/contacts' }]);
    const body = createBody('contacts');
    const h = { 'Idempotency-Key': uniqueKey() };
    expectError(await call(ctx.sb, 'POST', '/contacts', { body, headers: h }), 500, 'INTERNAL_ERROR');
    const retry = await call(ctx.sb, 'POST', '/contacts', { body, headers: h });
    expectStatus(retry, 201);
    expect(retry.headers.get('idempotent-replayed')).not.toBe('true');
    expect(await findByEmail(ctx.sb, body.email as string)).toHaveLength(1);
  });

  test('500-after-write: the client gets 500, the record exists, and a retry with the same key returns the real response', async () => {
    await queueFaults(ctx.sb, [{ kind: '500-after-write', method: 'POST', path: '/contacts' }]);
    const body = createBody('contacts');
    const h = { 'Idempotency-Key': uniqueKey() };
    expectError(await call(ctx.sb, 'POST', '/contacts', { body, headers: h }), 500, 'INTERNAL_ERROR');
    const found = await findByEmail(ctx.sb, body.email as string);
    expect(found).toHaveLength(1);
    const retry = await call(ctx.sb, 'POST', '/contacts', { body, headers: h });
    expectStatus(retry, 201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body.data).toEqual(found[0]);
    expect(await findByEmail(ctx.sb, body.email as string)).toHaveLength(1);
  });

  test('500-after-write on a batch: the items exist and the retry returns the batch answer', async () => {
    await queueFaults(ctx.sb, [{ kind: '500-after-write', method: 'POST', path: '/contacts/batch' }]);
    const body = [createBody('contacts'), createBody('contacts')];
    const h = { 'Idempotency-Key': uniqueKey() };
    expectError(await call(ctx.sb, 'POST', '/contacts/batch', { body, headers: h }), 500, 'INTERNAL_ERROR');
    expect(await findByEmail(ctx.sb, body[1]!.email as string)).toHaveLength(1);
    const retry = await call(ctx.sb, 'POST', '/contacts/batch', { body, headers: h });
    expectStatus(retry, 200);
    expect(retry.body.data.summary.succeeded).toBe(2);
    expect(await findByEmail(ctx.sb, body[1]!.email as string)).toHaveLength(1);
  });

  test('drop: the connection is destroyed before the request runs', async () => {
    await queueFaults(ctx.sb, [{ kind: 'drop', method: 'POST', path: '/contacts' }]);
    const body = createBody('contacts');
    const res = await raw(ctx.sb, 'POST', '/contacts', body);
    expect(res.error, `expected a dropped connection, got ${res.status}`).toBeDefined();
    expect(res.status).toBeUndefined();
    expect(await findByEmail(ctx.sb, body.email as string)).toHaveLength(0);
  });

  test('drop-after-write: no answer, the record exists, a retry with the same key returns the real response', async () => {
    await queueFaults(ctx.sb, [{ kind: 'drop-after-write', method: 'POST', path: '/contacts' }]);
    const body = createBody('contacts');
    const key = uniqueKey();
    const res = await raw(ctx.sb, 'POST', '/contacts', body, { 'idempotency-key': key });
    expect(res.error, `expected a dropped connection, got ${res.status}`).toBeDefined();
    expect(res.status).toBeUndefined();
    const found = await findByEmail(ctx.sb, body.email as string);
    expect(found).toHaveLength(1);
    const retry = await call(ctx.sb, 'POST', '/contacts', { body, headers: { 'Idempotency-Key': key } });
    expectStatus(retry, 201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body.data).toEqual(found[0]);
  });

  test('drop-after-write on a PATCH: the change happened', async () => {
    const rec = (await call(ctx.sb, 'POST', '/deals', { body: createBody('deals') })).body.data;
    await queueFaults(ctx.sb, [{ kind: 'drop-after-write', method: 'PATCH' }]);
    const res = await raw(
      ctx.sb,
      'PATCH',
      `/deals/${rec.id}`,
      { stage: 'dropped-but-done' },
      { 'idempotency-key': uniqueKey() },
    );
    expect(res.error).toBeDefined();
    expect((await call(ctx.sb, 'GET', `/deals/${rec.id}`)).body.data.stage).toBe('dropped-but-done');
  });

  test('html-502: status 502 with an HTML body, as a proxy would answer', async () => {
    await queueFaults(ctx.sb, [{ kind: 'html-502', method: 'GET', path: '/contacts' }]);
    const res = await call(ctx.sb, 'GET', '/contacts');
    expect(res.status).toBe(502);
    expect(res.headers.get('content-type') ?? '').toMatch(/text\/html/);
    expect(res.text.trimStart().startsWith('<')).toBe(true);
    expect(res.text).toMatch(/502|Bad Gateway/i);
    expect(res.body).toBeUndefined(); // not JSON
  });

  test('429: 429 RATE_LIMITED with Retry-After: 0.05', async () => {
    await queueFaults(ctx.sb, [{ kind: '429', method: 'GET', path: '/contacts' }]);
    const res = await call(ctx.sb, 'GET', '/contacts');
    expectError(res, 429, 'RATE_LIMITED');
    expect(res.headers.get('retry-after')).toBe('0.05');
    expectStatus(await call(ctx.sb, 'GET', '/contacts'), 200);
  });

  test('429 fault on a write: nothing is written, a retry with the same key runs for real', async () => {
    await queueFaults(ctx.sb, [{ kind: '429', method: 'POST', path: '/contacts' }]);
    const body = createBody('contacts');
    const h = { 'Idempotency-Key': uniqueKey() };
    expectError(await call(ctx.sb, 'POST', '/contacts', { body, headers: h }), 429, 'RATE_LIMITED');
    expect(await findByEmail(ctx.sb, body.email as string)).toHaveLength(0);
    const retry = await call(ctx.sb, 'POST', '/contacts', { body, headers: h });
    expectStatus(retry, 201);
    expect(retry.headers.get('idempotent-replayed')).not.toBe('true');
  });

  test('truncated: a 200 whose JSON body is cut in half', async () => {
    const full = await call(ctx.sb, 'GET', '/contacts', { query: { limit: 10 } });
    await queueFaults(ctx.sb, [{ kind: 'truncated', method: 'GET', path: '/contacts' }]);
    const res = await call(ctx.sb, 'GET', '/contacts', { query: { limit: 10 } });
    expect(res.status).toBe(200);
    expect(() => JSON.parse(res.text)).toThrow();
    expect(res.text.length).toBeGreaterThan(0);
    expect(res.text.length).toBeLessThan(full.text.length * 0.75);
    expect(res.text.startsWith('{')).toBe(true);
  });
});

describe('the `next` queue', () => {
  test('path and method select which requests get the fault', async () => {
    await queueFaults(ctx.sb, [{ kind: '500', method: 'GET', path: '/deals' }]);
    expectStatus(await call(ctx.sb, 'GET', '/contacts'), 200);
    expectStatus(await call(ctx.sb, 'POST', '/deals', { body: createBody('deals') }), 201);
    expectError(await call(ctx.sb, 'GET', '/deals'), 500, 'INTERNAL_ERROR');
    expectStatus(await call(ctx.sb, 'GET', '/deals'), 200);
  });

  test('count: the fault applies to that many matching requests, then stops', async () => {
    await queueFaults(ctx.sb, [{ kind: '500', path: '/tasks', count: 3 }]);
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await call(ctx.sb, 'GET', '/tasks')).status);
    expect(statuses).toEqual([500, 500, 500, 200, 200]);
  });

  test('entries apply in order', async () => {
    await queueFaults(ctx.sb, [
      { kind: '429', path: '/pipelines' },
      { kind: 'html-502', path: '/pipelines' },
    ]);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await call(ctx.sb, 'GET', '/pipelines')).status);
    expect(statuses).toEqual([429, 502, 200]);
  });

  test('faults do not apply to the control endpoint (and control requests do not use up the queue)', async () => {
    await queueFaults(ctx.sb, [{ kind: '500', path: '.', count: 3 }]);
    for (let i = 0; i < 3; i++) expectStatus(await control(ctx.sb, 'GET', '/stats'), 200);
    for (let i = 0; i < 3; i++) expectError(await call(ctx.sb, 'GET', '/contacts'), 500, 'INTERNAL_ERROR');
    expectStatus(await call(ctx.sb, 'GET', '/contacts'), 200);
  });

  test('faults apply to /api/v1 too', async () => {
    await queueFaults(ctx.sb, [{ kind: '500', path: '/api/v1/' }]);
    const res = await call(ctx.sb, 'POST', '/api/v1/people/query', { key: ctx.sb.keys.v1, body: {} });
    expect(res.status).toBe(500);
    expect(res.body.success).toBe(false);
    expectStatus(await call(ctx.sb, 'POST', '/api/v1/people/query', { key: ctx.sb.keys.v1, body: {} }), 200);
  });

  test('the request log marks injected faults', async () => {
    const since = (await control(ctx.sb, 'GET', '/requests')).body.length;
    await queueFaults(ctx.sb, [{ kind: '500', path: '/segments' }]);
    await call(ctx.sb, 'GET', '/segments');
    const log = (await control(ctx.sb, 'GET', `/requests?since=${since}`)).body;
    const entry = log.find((e: any) => String(e.path).includes('/segments'));
    expect(entry).toBeTruthy();
    expect(entry.status).toBe(500);
    expect(entry.fault).toBe('500');
  });
});

describe('random faults via the control endpoint', () => {
  test('POST /__sandbox/faults {faults: {kind: 1}} replaces the random faults; {} clears them', async () => {
    const set = await control(ctx.sb, 'POST', '/faults', { faults: { 'html-502': 1 } });
    expect(set.status).toBeLessThan(300);
    expect((await call(ctx.sb, 'GET', '/contacts')).status).toBe(502);
    expect((await call(ctx.sb, 'GET', '/deals')).status).toBe(502);
    await control(ctx.sb, 'POST', '/faults', { faults: { truncated: 1 } });
    const t = await call(ctx.sb, 'GET', '/deals');
    expect(t.status).toBe(200);
    expect(t.body).toBeUndefined();
    await clearFaults(ctx.sb);
    expectStatus(await call(ctx.sb, 'GET', '/contacts'), 200);
  });

  test('paths narrows the random faults', async () => {
    await control(ctx.sb, 'POST', '/faults', { fail_rate: 1, paths: '/bookings' });
    expectError(await call(ctx.sb, 'GET', '/bookings'), 500, 'INTERNAL_ERROR');
    expectStatus(await call(ctx.sb, 'GET', '/contacts'), 200);
    await clearFaults(ctx.sb);
    expectStatus(await call(ctx.sb, 'GET', '/bookings'), 200);
  });

  test('latency_ms via the control endpoint', async () => {
    await control(ctx.sb, 'POST', '/faults', { latency_ms: 120 });
    const t0 = performance.now();
    expectStatus(await call(ctx.sb, 'GET', '/contacts', { query: { limit: 1 } }), 200);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(110);
    await clearFaults(ctx.sb);
  });
});
