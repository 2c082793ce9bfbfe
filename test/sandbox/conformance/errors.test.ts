// Spec "Errors" rules 1–2 (error envelope on every 4xx/5xx; the documented statuses) and
// docs/sandbox.md "Errors" (codes per status, details items, meta, X-Request-Id).
import { describe, expect, test } from 'vitest';
import { errorEnvelope } from '../../../src/api/envelopes.js';
import {
  call,
  create,
  createBody,
  expectError,
  expectV2Envelope,
  queueFaults,
  useSandbox,
  type CallResult,
} from '../helpers.js';

const ctx = useSandbox();
const limited = useSandbox({ rateLimit: 1, orgRateLimit: 1000, rateWindowMs: 60_000 });

function expectFullError(res: CallResult, status: number, code: string): void {
  expectError(res, status, code);
  const env = expectV2Envelope(res, errorEnvelope);
  expect(env.error.message.length).toBeGreaterThan(0);
  expect(Array.isArray(env.error.details)).toBe(true);
  expect(env.meta.api_version).toBe('2');
  expect(env.meta.request_id).toMatch(/^req_/);
  expect(res.headers.get('x-request-id')).toBe(env.meta.request_id);
  expect(res.headers.get('content-type') ?? '').toMatch(/^application\/json/);
}

describe('every documented status uses the error envelope', () => {
  test('401 UNAUTHENTICATED', async () => {
    expectFullError(await call(ctx.sb, 'GET', '/contacts', { key: null }), 401, 'UNAUTHENTICATED');
  });

  test('401 AMBIGUOUS_CREDENTIALS', async () => {
    const k = ctx.sb.keys.admin;
    expectFullError(
      await call(ctx.sb, 'GET', '/contacts', {
        key: null,
        headers: { 'X-Service-Api-Key': k, Authorization: `Bearer ${k}` },
      }),
      401,
      'AMBIGUOUS_CREDENTIALS',
    );
  });

  test('401 WRONG_API_VERSION', async () => {
    expectFullError(await call(ctx.sb, 'GET', '/contacts', { key: ctx.sb.keys.v1 }), 401, 'WRONG_API_VERSION');
  });

  test('403 INSUFFICIENT_SCOPE with details [{required_scope}]', async () => {
    const res = await call(ctx.sb, 'POST', '/deals', { key: ctx.sb.keys.readonly, body: createBody('deals') });
    expectFullError(res, 403, 'INSUFFICIENT_SCOPE');
    expect(res.body.error.details).toEqual([{ required_scope: 'deals:write' }]);
  });

  test('403 FORBIDDEN_RECORD', async () => {
    const rec = await create(ctx.sb, 'contacts');
    expectFullError(
      await call(ctx.sb, 'GET', `/contacts/${rec.id}`, { key: ctx.sb.keys.user }),
      403,
      'FORBIDDEN_RECORD',
    );
  });

  test('404 NOT_FOUND: unknown record and unknown path', async () => {
    expectFullError(await call(ctx.sb, 'GET', '/deals/deal_missing'), 404, 'NOT_FOUND');
    expectFullError(await call(ctx.sb, 'GET', '/no-such-collection'), 404, 'NOT_FOUND');
    expectFullError(await call(ctx.sb, 'POST', '/no-such-collection', { body: {} }), 404, 'NOT_FOUND');
  });

  test('404 LINK_EXPIRED', async () => {
    expectFullError(
      await call(ctx.sb, 'GET', '/transcripts/download/bm90LWEtdG9rZW4', { key: null }),
      404,
      'LINK_EXPIRED',
    );
  });

  test('405 METHOD_NOT_ALLOWED', async () => {
    expectFullError(await call(ctx.sb, 'POST', '/recordings', { body: {} }), 405, 'METHOD_NOT_ALLOWED');
  });

  test('422 VALIDATION_FAILED with details [{field, issue}]', async () => {
    const res = await call(ctx.sb, 'POST', '/contacts', { body: { first_name: 'x' } });
    expectFullError(res, 422, 'VALIDATION_FAILED');
    expect(res.body.error.details).toContainEqual({ field: 'email', issue: 'required' });
  });

  test('422 INVALID_BODY', async () => {
    expectFullError(await call(ctx.sb, 'POST', '/contacts', { rawBody: '{oops' }), 422, 'INVALID_BODY');
  });

  test('422 INVALID_PARAMETER, details naming the parameter as `field` (like validation details)', async () => {
    const res = await call(ctx.sb, 'GET', '/contacts', { query: { limit: 500 } });
    expectFullError(res, 422, 'INVALID_PARAMETER');
    expect(res.body.error.details).toEqual([{ field: 'limit', issue: 'invalid' }]);
    const twice = await call(ctx.sb, 'GET', '/contacts?cursor=a&cursor=b');
    expectFullError(twice, 422, 'INVALID_PARAMETER');
    expect(twice.body.error.details).toEqual([{ field: 'cursor', issue: 'invalid' }]);
  });

  test('422 INVALID_CURSOR, details {field: "cursor", issue}', async () => {
    const res = await call(ctx.sb, 'GET', '/contacts', { query: { cursor: '***' } });
    expectFullError(res, 422, 'INVALID_CURSOR');
    expect(res.body.error.details).toEqual([{ field: 'cursor', issue: 'invalid' }]);
  });

  test('version 1: INVALID_CURSOR and INVALID_PARAMETER name the field too', async () => {
    for (const [body, code, field] of [
      [{ cursor: '!!!' }, 'INVALID_CURSOR', 'cursor'],
      [{ cursor: 5 }, 'INVALID_CURSOR', 'cursor'],
      [{ limit: 0 }, 'INVALID_PARAMETER', 'limit'],
    ] as const) {
      const res = await call(ctx.sb, 'POST', '/api/v1/people/query', { key: ctx.sb.keys.v1, body });
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe(code);
      expect(res.body.error.details).toHaveLength(1);
      expect(res.body.error.details[0]).toMatchObject({ field });
      expect(typeof res.body.error.details[0].issue).toBe('string');
    }
  });

  test('422 BATCH_TOO_LARGE', async () => {
    const body = Array.from({ length: 101 }, () => createBody('tasks'));
    expectFullError(await call(ctx.sb, 'POST', '/tasks/batch', { body }), 422, 'BATCH_TOO_LARGE');
  });

  test('422 IDEMPOTENCY_KEY_REUSED', async () => {
    const h = { 'Idempotency-Key': `errors-${Date.now()}` };
    await call(ctx.sb, 'POST', '/tasks', { body: createBody('tasks'), headers: h });
    expectFullError(
      await call(ctx.sb, 'POST', '/tasks', { body: createBody('tasks'), headers: h }),
      422,
      'IDEMPOTENCY_KEY_REUSED',
    );
  });

  test('422 INVALID_IDEMPOTENCY_KEY', async () => {
    const h = { 'Idempotency-Key': 'x'.repeat(300) };
    expectFullError(
      await call(ctx.sb, 'POST', '/tasks', { body: createBody('tasks'), headers: h }),
      422,
      'INVALID_IDEMPOTENCY_KEY',
    );
  });

  test('429 RATE_LIMITED with Retry-After', async () => {
    await call(limited.sb, 'GET', '/contacts');
    const res = await call(limited.sb, 'GET', '/contacts');
    expectFullError(res, 429, 'RATE_LIMITED');
    expect(res.headers.get('retry-after')).toBeTruthy();
  });

  test('500 INTERNAL_ERROR (an injected fault)', async () => {
    await queueFaults(ctx.sb, [{ kind: '500', method: 'GET', path: '/contacts' }]);
    expectFullError(await call(ctx.sb, 'GET', '/contacts'), 500, 'INTERNAL_ERROR');
  });
});

describe('version 1 errors', () => {
  test('v1 4xx use {success: false, error{code, message, details}, meta(api_version "1")}', async () => {
    const cases: CallResult[] = [
      await call(ctx.sb, 'POST', '/api/v1/people/query', { key: null, body: {} }),
      await call(ctx.sb, 'PATCH', '/api/v1/companies/cmp_missing', { key: ctx.sb.keys.v1, body: { city: 'x' } }),
      await call(ctx.sb, 'POST', '/api/v1/people/query', { key: ctx.sb.keys.v1, body: { limit: 1000 } }),
      await call(ctx.sb, 'GET', '/api/v1/people/query', { key: ctx.sb.keys.v1 }),
    ];
    expect(cases.map((c) => c.status)).toEqual([401, 404, 422, 405]);
    for (const res of cases) {
      expect(res.body.success).toBe(false);
      expect(typeof res.body.error.code).toBe('string');
      expect(typeof res.body.error.message).toBe('string');
      expect(Array.isArray(res.body.error.details)).toBe(true);
      expect(res.body.meta.api_version).toBe('1');
      expect(res.headers.get('x-request-id')).toBe(res.body.meta.request_id);
    }
  });
});
