// Spec "Response envelope (version 2)": every response is {object, …}; meta fields; snake_case.
// docs/sandbox.md "Errors": meta.api_version "2", request_id "req_…", X-Request-Id repeats it.
import { describe, expect, test } from 'vitest';
import {
  batchEnvelope,
  errorEnvelope,
  listEnvelope,
  successEnvelope,
  v1SuccessEnvelope,
} from '../../../src/api/envelopes.js';
import { call, create, createBody, expectError, expectV2Envelope, useSandbox, SPEC_RESOURCES } from '../helpers.js';

const ctx = useSandbox();
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

function expectMeta(res: { body: any; headers: Headers }, version = '2'): void {
  const meta = res.body.meta;
  expect(meta.api_version).toBe(version);
  expect(typeof meta.api_version).toBe('string');
  expect(meta.request_id).toMatch(/^req_/);
  expect(meta.timestamp).toMatch(ISO);
  expect(Number.isNaN(Date.parse(meta.timestamp))).toBe(false);
  expect(res.headers.get('x-request-id')).toBe(meta.request_id);
}

function expectSnakeCaseKeys(value: unknown, path = '$'): void {
  if (Array.isArray(value)) {
    value.forEach((v, i) => expectSnakeCaseKeys(v, `${path}[${i}]`));
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      expect(k, `key ${path}.${k} is not snake_case`).toMatch(/^[a-z][a-z0-9_]*$/);
      expectSnakeCaseKeys(v, `${path}.${k}`);
    }
  }
}

describe('version 2 envelopes (spec: Response envelope)', () => {
  test('get → success envelope {object: "success", data, meta}', async () => {
    const rec = await create(ctx.sb, 'contacts');
    const res = await call(ctx.sb, 'GET', `/contacts/${rec.id}`);
    expect(res.status).toBe(200);
    const env = expectV2Envelope(res, successEnvelope);
    expect(env.object).toBe('success');
    expect((env.data as any).id).toBe(rec.id);
    expectMeta(res);
  });

  test('create → success envelope', async () => {
    const res = await call(ctx.sb, 'POST', '/companies', { body: createBody('companies') });
    expect(res.status).toBe(201);
    expectV2Envelope(res, successEnvelope);
    expectMeta(res);
  });

  test('update → success envelope', async () => {
    const rec = await create(ctx.sb, 'deals');
    const res = await call(ctx.sb, 'PATCH', `/deals/${rec.id}`, { body: { stage: 'won' } });
    expect(res.status).toBe(200);
    expectV2Envelope(res, successEnvelope);
    expectMeta(res);
  });

  test('delete → success envelope with {id, deleted: true}', async () => {
    const rec = await create(ctx.sb, 'tasks');
    const res = await call(ctx.sb, 'DELETE', `/tasks/${rec.id}`);
    expect(res.status).toBe(200);
    const env = expectV2Envelope(res, successEnvelope);
    expect(env.data).toEqual({ id: rec.id, deleted: true });
    expectMeta(res);
  });

  test('list → list envelope {object: "list", data[], page_info{end_cursor, has_next_page}, meta}', async () => {
    const res = await call(ctx.sb, 'GET', '/contacts');
    expect(res.status).toBe(200);
    const env = expectV2Envelope(res, listEnvelope);
    expect(Array.isArray(env.data)).toBe(true);
    expect(typeof env.page_info.has_next_page).toBe('boolean');
    expect('end_cursor' in res.body.page_info).toBe(true);
    expectMeta(res);
  });

  test('batch-create → batch envelope {object: "batch", data: {items, summary}, meta}', async () => {
    const res = await call(ctx.sb, 'POST', '/notes/batch', { body: [createBody('notes'), createBody('notes')] });
    expect(res.status).toBe(200);
    const env = expectV2Envelope(res, batchEnvelope);
    expect(env.data.summary).toEqual({ total: 2, succeeded: 2, failed: 0 });
    expectMeta(res);
  });

  test('4xx → error envelope {object: "error", error{code, message, details[]}, meta}', async () => {
    const res = await call(ctx.sb, 'GET', '/contacts/con_doesnotexist');
    expectError(res, 404, 'NOT_FOUND');
    expectV2Envelope(res, errorEnvelope);
    expectMeta(res);
  });

  test('every response is JSON with a string `object` field and application/json', async () => {
    const rec = await create(ctx.sb, 'contacts');
    const responses = await Promise.all([
      call(ctx.sb, 'GET', '/contacts'),
      call(ctx.sb, 'GET', `/contacts/${rec.id}`),
      call(ctx.sb, 'GET', '/nope'),
      call(ctx.sb, 'PUT', '/contacts'),
      call(ctx.sb, 'POST', '/contacts', { body: {} }),
      call(ctx.sb, 'GET', '/contacts', { key: null }),
    ]);
    for (const res of responses) {
      expect(res.headers.get('content-type') ?? '').toMatch(/^application\/json/);
      expect(typeof res.body.object).toBe('string');
      expectV2Envelope(res);
      expectMeta(res);
    }
  });

  test('request ids are unique per response', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 10; i++) {
      const res = await call(ctx.sb, 'GET', '/contacts', { query: { limit: 1 } });
      ids.add(res.body.meta.request_id);
    }
    expect(ids.size).toBe(10);
  });

  test('meta.timestamp is close to now', async () => {
    const res = await call(ctx.sb, 'GET', '/contacts', { query: { limit: 1 } });
    expect(Math.abs(Date.parse(res.body.meta.timestamp) - Date.now())).toBeLessThan(60_000);
  });
});

describe('records (docs/sandbox.md "Paths")', () => {
  test('version 2 JSON field names are snake_case, in every resource', async () => {
    for (const r of SPEC_RESOURCES) {
      const res = await call(ctx.sb, 'GET', `/${r}`);
      expect(res.status).toBe(200);
      expectSnakeCaseKeys(res.body, r);
    }
  });

  test('a created record carries id, created_at, updated_at (ISO 8601), owner_id and the fields sent', async () => {
    const body = createBody('contacts', { last_name: 'Lovelace', phone: '+1 555 0100' });
    const res = await call(ctx.sb, 'POST', '/contacts', { body });
    expect(res.status).toBe(201);
    const data = res.body.data;
    expect(data.id).toMatch(/^con_/);
    expect(data.created_at).toMatch(ISO);
    expect(data.updated_at).toMatch(ISO);
    expect(data.owner_id).toBe('usr_admin');
    expect(data).toMatchObject(body);
  });
});

describe('version 1 envelope (spec: Version 1 shapes)', () => {
  test('v1 success is {success: true, data}', async () => {
    const res = await call(ctx.sb, 'POST', '/api/v1/people/query', { key: ctx.sb.keys.v1, body: { limit: 2 } });
    expect(res.status).toBe(200);
    const parsed = v1SuccessEnvelope.safeParse(res.body);
    expect(parsed.success, res.text.slice(0, 300)).toBe(true);
    expect(res.body.success).toBe(true);
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
  });

  test('v1 error is {success: false, error{code, message, details}, meta} with api_version "1"', async () => {
    const res = await call(ctx.sb, 'PATCH', '/api/v1/companies/cmp_nope', { key: ctx.sb.keys.v1, body: { name: 'x' } });
    expect(res.status).toBe(404);
    expect(res.body.success).toBe(false);
    expect(typeof res.body.error.code).toBe('string');
    expect(typeof res.body.error.message).toBe('string');
    expect(Array.isArray(res.body.error.details)).toBe(true);
    expect(res.body.meta.api_version).toBe('1');
    expect(res.body.meta.request_id).toMatch(/^req_/);
  });
});
