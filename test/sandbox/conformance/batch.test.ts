// Spec: "POST /{resource}/batch: up to 100 items, always 200, batch envelope"; Endpoints rules 2
// (not atomic) and 3 (honors Idempotency-Key); Errors rule 3 (VALIDATION_FAILED items, status 200);
// Limits table (100 items). docs/sandbox.md "Batches".
import { describe, expect, test } from 'vitest';
import { batchEnvelope } from '../../../src/api/envelopes.js';
import { BATCH_MAX, RESOURCES } from '../../../src/api/resources.js';
import {
  call,
  control,
  createBody,
  expectError,
  expectStatus,
  expectV2Envelope,
  uniqueEmail,
  uniqueKey,
  useSandbox,
} from '../helpers.js';

const ctx = useSandbox();

async function countOf(resource: string): Promise<number> {
  const res = await control(ctx.sb, 'GET', '/stats');
  return res.body.records[resource];
}

describe('batch size', () => {
  test(`${BATCH_MAX} items → 200, every item created, summary totals`, async () => {
    const body = Array.from({ length: BATCH_MAX }, () => createBody('contacts'));
    const res = await call(ctx.sb, 'POST', '/contacts/batch', { body });
    expectStatus(res, 200);
    const env = expectV2Envelope(res, batchEnvelope);
    expect(env.data.summary).toEqual({ total: 100, succeeded: 100, failed: 0 });
    expect(env.data.items.map((i) => i.index)).toEqual([...Array(100).keys()]);
    for (const item of env.data.items) {
      expect(item.status).toBe('created');
      expect(item.data!.email).toBe(body[item.index]!.email);
      expect(item.data!.id).toMatch(/^con_/);
    }
    const one = await call(ctx.sb, 'GET', `/contacts/${String(env.data.items[57]!.data!.id)}`);
    expect(one.body.data.email).toBe(body[57]!.email);
  });

  test(`${BATCH_MAX + 1} items → 422 BATCH_TOO_LARGE and nothing is created`, async () => {
    const before = await countOf('companies');
    const body = Array.from({ length: BATCH_MAX + 1 }, () => createBody('companies'));
    expectError(await call(ctx.sb, 'POST', '/companies/batch', { body }), 422, 'BATCH_TOO_LARGE');
    expect(await countOf('companies')).toBe(before);
  });

  test('an empty array → 422 INVALID_BODY', async () => {
    expectError(await call(ctx.sb, 'POST', '/contacts/batch', { body: [] }), 422, 'INVALID_BODY');
  });

  test.each(['{"email": "a@b.c"}', '"x"', '7', 'null', '[{"email": "a@b.c"},', 'garbage'])(
    'a non-array or malformed body %s → 422 INVALID_BODY',
    async (rawBody) => {
      expectError(await call(ctx.sb, 'POST', '/contacts/batch', { rawBody }), 422, 'INVALID_BODY');
    },
  );
});

describe('non-atomic items (spec rule 2, Errors rule 3)', () => {
  test('failing items get status error + VALIDATION_FAILED; the others are created; status 200', async () => {
    const good1 = createBody('contacts');
    const good2 = createBody('contacts');
    const body = [good1, { first_name: 'no email' }, good2, { email: 'no-at-sign' }, { email: '' }];
    const res = await call(ctx.sb, 'POST', '/contacts/batch', { body });
    expectStatus(res, 200);
    const env = expectV2Envelope(res, batchEnvelope);
    expect(env.data.summary).toEqual({ total: 5, succeeded: 2, failed: 3 });
    const items = env.data.items;
    expect(items.map((i) => [i.index, i.status])).toEqual([
      [0, 'created'],
      [1, 'error'],
      [2, 'created'],
      [3, 'error'],
      [4, 'error'],
    ]);
    for (const i of [1, 3, 4]) {
      expect(items[i]!.error!.code).toBe('VALIDATION_FAILED');
      expect(typeof items[i]!.error!.message).toBe('string');
      expect(items[i]!.data).toBeUndefined();
    }
    for (const i of [0, 2]) expect(items[i]!.error).toBeUndefined();
    for (const good of [good1, good2]) {
      const found = await call(ctx.sb, 'GET', '/contacts', { query: { email: good.email as string } });
      expect(found.body.data).toHaveLength(1);
    }
  });

  test('a batch where every item fails is still 200', async () => {
    const res = await call(ctx.sb, 'POST', '/deals/batch', { body: [{}, { amount: 5 }, { name: '' }] });
    expectStatus(res, 200);
    const env = expectV2Envelope(res, batchEnvelope);
    expect(env.data.summary).toEqual({ total: 3, succeeded: 0, failed: 3 });
    for (const item of env.data.items) expect(item.error!.code).toBe('VALIDATION_FAILED');
  });

  test('read-only fields and non-object items fail only their own entry', async () => {
    const res = await call(ctx.sb, 'POST', '/tasks/batch', {
      body: [
        createBody('tasks', { id: 'task_mine' }),
        'a string',
        createBody('tasks'),
        createBody('tasks', { owner_id: 'usr_user' }),
      ],
    });
    expectStatus(res, 200);
    const env = expectV2Envelope(res, batchEnvelope);
    expect(env.data.items.map((i) => i.status)).toEqual(['error', 'error', 'created', 'error']);
    expect(env.data.items[0]!.error!.code).toBe('VALIDATION_FAILED');
    expect(env.data.items[3]!.error!.code).toBe('VALIDATION_FAILED');
  });

  test("items created by a batch are owned by the key's user", async () => {
    const res = await call(ctx.sb, 'POST', '/notes/batch', { key: ctx.sb.keys.user, body: [createBody('notes')] });
    expectStatus(res, 200);
    expect(res.body.data.items[0].data.owner_id).toBe('usr_user');
  });

  test.each(RESOURCES.filter((r) => r.batch).map((r) => r.name))(
    '%s: batch-create works (every resource with create)',
    async (name) => {
      const res = await call(ctx.sb, 'POST', `/${name}/batch`, {
        body: [createBody(name), createBody(name), createBody(name)],
      });
      expectStatus(res, 200);
      const env = expectV2Envelope(res, batchEnvelope);
      expect(env.data.summary.succeeded).toBe(3);
    },
  );

  test('resources with create all have batch (spec: resources that support creation also support batch-create)', () => {
    for (const r of RESOURCES) expect(r.batch).toBe(r.verbs.includes('create'));
  });
});

describe('idempotency of batches (spec rule 3)', () => {
  test('a replay with the same key and body returns the identical response and creates nothing more', async () => {
    const key = uniqueKey('batch');
    const email = uniqueEmail('batch-idem');
    const body = [{ email }, { first_name: 'missing email' }];
    const first = await call(ctx.sb, 'POST', '/contacts/batch', { body, headers: { 'Idempotency-Key': key } });
    expectStatus(first, 200);
    const second = await call(ctx.sb, 'POST', '/contacts/batch', { body, headers: { 'Idempotency-Key': key } });
    expectStatus(second, 200);
    expect(second.body).toEqual(first.body);
    expect(second.body.meta.request_id).toBe(first.body.meta.request_id);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    const found = await call(ctx.sb, 'GET', '/contacts', { query: { email } });
    expect(found.body.data).toHaveLength(1);
  });

  test('the same key with a different batch body → 422 IDEMPOTENCY_KEY_REUSED', async () => {
    const key = uniqueKey('batch');
    expectStatus(
      await call(ctx.sb, 'POST', '/companies/batch', {
        body: [createBody('companies')],
        headers: { 'Idempotency-Key': key },
      }),
      200,
    );
    expectError(
      await call(ctx.sb, 'POST', '/companies/batch', {
        body: [createBody('companies')],
        headers: { 'Idempotency-Key': key },
      }),
      422,
      'IDEMPOTENCY_KEY_REUSED',
    );
  });
});

describe('rate limits (docs/sandbox.md: one batch counts as one request)', () => {
  test('a 50-item batch uses one unit of the limit', async () => {
    const a = await call(ctx.sb, 'GET', '/contacts', { query: { limit: 1 } });
    const b = await call(ctx.sb, 'POST', '/interactions/batch', {
      body: Array.from({ length: 50 }, () => createBody('interactions')),
    });
    expectStatus(b, 200);
    const c = await call(ctx.sb, 'GET', '/contacts', { query: { limit: 1 } });
    const ra = Number(a.headers.get('x-ratelimit-remaining'));
    const rb = Number(b.headers.get('x-ratelimit-remaining'));
    const rc = Number(c.headers.get('x-ratelimit-remaining'));
    expect(ra - rb).toBe(1);
    expect(rb - rc).toBe(1);
  });
});
