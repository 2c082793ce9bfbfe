// Spec "Limits" rule 4 (same key + body → identical cached response, not run again, not counted;
// different body → 422), Endpoints rule 3 (batches), docs/sandbox.md "Idempotency" (per API key,
// method+path+body compared as parsed JSON, Idempotent-Replayed, in-flight twins, key syntax).
import { describe, expect, test } from 'vitest';
import {
  call,
  control,
  create,
  createBody,
  expectError,
  expectStatus,
  sleep,
  uniqueEmail,
  uniqueKey,
  useSandbox,
  withSandbox,
  type CallResult,
} from '../helpers.js';

const ctx = useSandbox();

const idem = (key: string) => ({ 'Idempotency-Key': key });

function expectReplay(first: CallResult, replay: CallResult): void {
  expect(replay.status).toBe(first.status);
  expect(replay.body).toEqual(first.body);
  expect(replay.text).toBe(first.text);
  expect(replay.body.meta?.request_id ?? replay.headers.get('x-request-id')).toBe(
    first.body.meta?.request_id ?? first.headers.get('x-request-id'),
  );
  expect(replay.headers.get('idempotent-replayed')).toBe('true');
  expect(first.headers.get('idempotent-replayed')).not.toBe('true');
  expect(replay.headers.get('location')).toBe(first.headers.get('location'));
  expect(replay.headers.get('x-request-id')).toBe(first.headers.get('x-request-id'));
  for (const h of ['content-type', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) {
    expect(replay.headers.get(h), h).toBe(first.headers.get(h));
  }
}

async function countByEmail(email: string): Promise<number> {
  const res = await call(ctx.sb, 'GET', '/contacts', { query: { email } });
  return res.body.data.length;
}

describe('POST', () => {
  test('same key + same body → the identical cached response (status, body incl. request_id, headers); one record', async () => {
    const key = uniqueKey();
    const body = createBody('contacts');
    const first = await call(ctx.sb, 'POST', '/contacts', { body, headers: idem(key) });
    expectStatus(first, 201);
    const replay = await call(ctx.sb, 'POST', '/contacts', { body, headers: idem(key) });
    expectReplay(first, replay);
    expect(await countByEmail(body.email as string)).toBe(1);
  });

  test('the body is compared as parsed JSON: whitespace and key order do not matter', async () => {
    const key = uniqueKey();
    const email = uniqueEmail();
    const first = await call(ctx.sb, 'POST', '/contacts', {
      rawBody: `{"email":"${email}","first_name":"A"}`,
      headers: idem(key),
    });
    expectStatus(first, 201);
    const replay = await call(ctx.sb, 'POST', '/contacts', {
      rawBody: `{\n  "first_name" : "A",\n  "email" : "${email}"\n}`,
      headers: idem(key),
    });
    expectReplay(first, replay);
  });

  test('same key + different body → 422 IDEMPOTENCY_KEY_REUSED and nothing is created', async () => {
    const key = uniqueKey();
    expectStatus(await call(ctx.sb, 'POST', '/contacts', { body: createBody('contacts'), headers: idem(key) }), 201);
    const other = createBody('contacts');
    expectError(
      await call(ctx.sb, 'POST', '/contacts', { body: other, headers: idem(key) }),
      422,
      'IDEMPOTENCY_KEY_REUSED',
    );
    expect(await countByEmail(other.email as string)).toBe(0);
  });

  test('same key + different path or method → 422 IDEMPOTENCY_KEY_REUSED', async () => {
    const key = uniqueKey();
    const body = { name: 'Same body' };
    expectStatus(await call(ctx.sb, 'POST', '/companies', { body, headers: idem(key) }), 201);
    expectError(await call(ctx.sb, 'POST', '/deals', { body, headers: idem(key) }), 422, 'IDEMPOTENCY_KEY_REUSED');
    const rec = await create(ctx.sb, 'companies');
    expectError(
      await call(ctx.sb, 'PATCH', `/companies/${rec.id}`, { body, headers: idem(key) }),
      422,
      'IDEMPOTENCY_KEY_REUSED',
    );
  });

  test('without a key, the same POST twice creates two records', async () => {
    const body = createBody('contacts');
    expectStatus(await call(ctx.sb, 'POST', '/contacts', { body }), 201);
    expectStatus(await call(ctx.sb, 'POST', '/contacts', { body }), 201);
    expect(await countByEmail(body.email as string)).toBe(2);
  });

  test('keys are remembered per API key: another key with the same Idempotency-Key runs for real', async () => {
    const key = uniqueKey();
    const body = createBody('notes');
    const a = await call(ctx.sb, 'POST', '/notes', { body, headers: idem(key) });
    const b = await call(ctx.sb, 'POST', '/notes', { key: ctx.sb.keys.user, body, headers: idem(key) });
    expectStatus(a, 201);
    expectStatus(b, 201);
    expect(b.body.data.id).not.toBe(a.body.data.id);
    expect(b.headers.get('idempotent-replayed')).not.toBe('true');
  });

  test('a 422 answer that ran is cached and replayed too', async () => {
    const key = uniqueKey();
    const first = await call(ctx.sb, 'POST', '/contacts', { body: { first_name: 'no email' }, headers: idem(key) });
    expectError(first, 422, 'VALIDATION_FAILED');
    const replay = await call(ctx.sb, 'POST', '/contacts', { body: { first_name: 'no email' }, headers: idem(key) });
    expectReplay(first, replay);
  });

  test('a 404 and a 403 from the handler are cached and replayed', async () => {
    const k404 = uniqueKey();
    const first = await call(ctx.sb, 'POST', '/deals/deal_missing/contacts', {
      body: { contact_id: 'con_x' },
      headers: idem(k404),
    });
    expectError(first, 404, 'NOT_FOUND');
    expectReplay(
      first,
      await call(ctx.sb, 'POST', '/deals/deal_missing/contacts', {
        body: { contact_id: 'con_x' },
        headers: idem(k404),
      }),
    );
    const rec = await create(ctx.sb, 'contacts');
    const k403 = uniqueKey();
    const f403 = await call(ctx.sb, 'PATCH', `/contacts/${rec.id}`, {
      key: ctx.sb.keys.user,
      body: { first_name: 'x' },
      headers: idem(k403),
    });
    expectError(f403, 403, 'FORBIDDEN_RECORD');
    expectReplay(
      f403,
      await call(ctx.sb, 'PATCH', `/contacts/${rec.id}`, {
        key: ctx.sb.keys.user,
        body: { first_name: 'x' },
        headers: idem(k403),
      }),
    );
  });

  test('a 401 is not cached: the same key later runs for real', async () => {
    const key = uniqueKey();
    const body = createBody('contacts');
    expectError(await call(ctx.sb, 'POST', '/contacts', { key: null, body, headers: idem(key) }), 401);
    const res = await call(ctx.sb, 'POST', '/contacts', { body, headers: idem(key) });
    expectStatus(res, 201);
    expect(res.headers.get('idempotent-replayed')).not.toBe('true');
  });

  test.each([
    ['256 characters', 'k'.repeat(256)],
    ['non-ASCII', 'clé-é'],
  ])('an Idempotency-Key of %s → 422 INVALID_IDEMPOTENCY_KEY', async (_label, key) => {
    const body = createBody('contacts');
    const res = await call(ctx.sb, 'POST', '/contacts', { body, headers: { 'Idempotency-Key': encodeLatin1(key) } });
    expectError(res, 422, 'INVALID_IDEMPOTENCY_KEY');
    expect(await countByEmail(body.email as string)).toBe(0);
  });

  test('an Idempotency-Key of 255 printable characters is accepted', async () => {
    const res = await call(ctx.sb, 'POST', '/contacts', {
      body: createBody('contacts'),
      headers: idem(`${uniqueKey()}-`.padEnd(255, 'x')),
    });
    expectStatus(res, 201);
  });
});

/** fetch only takes ByteString header values; send the UTF-8 bytes as latin1 characters. */
function encodeLatin1(s: string): string {
  return Buffer.from(s, 'utf8').toString('latin1');
}

describe('PATCH and batch', () => {
  test('PATCH: same key + body → cached response, not run again', async () => {
    const rec = await create(ctx.sb, 'deals', { counter: 0 });
    const key = uniqueKey();
    const first = await call(ctx.sb, 'PATCH', `/deals/${rec.id}`, { body: { stage: 'won' }, headers: idem(key) });
    expectStatus(first, 200);
    // an unkeyed change in between: a replay must not re-run (it would bump updated_at / undo it)
    const between = await call(ctx.sb, 'PATCH', `/deals/${rec.id}`, { body: { stage: 'lost' } });
    expectStatus(between, 200);
    const replay = await call(ctx.sb, 'PATCH', `/deals/${rec.id}`, { body: { stage: 'won' }, headers: idem(key) });
    expectReplay(first, replay);
    const got = await call(ctx.sb, 'GET', `/deals/${rec.id}`);
    expect(got.body.data.stage).toBe('lost');
  });

  test('PATCH: same key + different body → 422 IDEMPOTENCY_KEY_REUSED', async () => {
    const rec = await create(ctx.sb, 'deals');
    const key = uniqueKey();
    expectStatus(await call(ctx.sb, 'PATCH', `/deals/${rec.id}`, { body: { stage: 'a' }, headers: idem(key) }), 200);
    expectError(
      await call(ctx.sb, 'PATCH', `/deals/${rec.id}`, { body: { stage: 'b' }, headers: idem(key) }),
      422,
      'IDEMPOTENCY_KEY_REUSED',
    );
    expect((await call(ctx.sb, 'GET', `/deals/${rec.id}`)).body.data.stage).toBe('a');
  });

  test('batch: same key + body → cached; different body → 422', async () => {
    const key = uniqueKey();
    const body = [createBody('contacts'), createBody('contacts')];
    const first = await call(ctx.sb, 'POST', '/contacts/batch', { body, headers: idem(key) });
    expectStatus(first, 200);
    expectReplay(first, await call(ctx.sb, 'POST', '/contacts/batch', { body, headers: idem(key) }));
    expect(await countByEmail(body[0]!.email as string)).toBe(1);
    expectError(
      await call(ctx.sb, 'POST', '/contacts/batch', { body: [createBody('contacts')], headers: idem(key) }),
      422,
      'IDEMPOTENCY_KEY_REUSED',
    );
  });

  test('link POST honours the key too', async () => {
    const d = await create(ctx.sb, 'deals');
    const c = await create(ctx.sb, 'contacts');
    const key = uniqueKey();
    const first = await call(ctx.sb, 'POST', `/deals/${d.id}/contacts`, {
      body: { contact_id: c.id },
      headers: idem(key),
    });
    expectStatus(first, 201);
    expectReplay(
      first,
      await call(ctx.sb, 'POST', `/deals/${d.id}/contacts`, { body: { contact_id: c.id }, headers: idem(key) }),
    );
  });

  test('v1 PATCH: same key + body → cached; different body → 422', async () => {
    const cmp = await create(ctx.sb, 'companies');
    const key = uniqueKey();
    const path = `/api/v1/companies/${cmp.id}`;
    const first = await call(ctx.sb, 'PATCH', path, {
      key: ctx.sb.keys.v1,
      body: { city: 'Oslo' },
      headers: idem(key),
    });
    expectStatus(first, 200);
    const replay = await call(ctx.sb, 'PATCH', path, {
      key: ctx.sb.keys.v1,
      body: { city: 'Oslo' },
      headers: idem(key),
    });
    expect(replay.status).toBe(200);
    expect(replay.text).toBe(first.text);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    const other = await call(ctx.sb, 'PATCH', path, {
      key: ctx.sb.keys.v1,
      body: { city: 'Bergen' },
      headers: idem(key),
    });
    expect(other.status).toBe(422);
    expect(other.body.success).toBe(false);
    expect(other.body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  test('v1 POST query honours the key', async () => {
    const key = uniqueKey();
    const first = await call(ctx.sb, 'POST', '/api/v1/people/query', {
      key: ctx.sb.keys.v1,
      body: { limit: 2 },
      headers: idem(key),
    });
    expectStatus(first, 200);
    const replay = await call(ctx.sb, 'POST', '/api/v1/people/query', {
      key: ctx.sb.keys.v1,
      body: { limit: 2 },
      headers: idem(key),
    });
    expect(replay.text).toBe(first.text);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
  });
});

describe('not counted against the limit (Limits rule 4)', () => {
  test('replays leave X-RateLimit-Remaining unchanged and a replay succeeds even at the limit', async () => {
    await withSandbox({ rateLimit: 5, orgRateLimit: 1000, rateWindowMs: 60_000 }, async (sb) => {
      const key = uniqueKey();
      const body = createBody('contacts');
      const first = await call(sb, 'POST', '/contacts', { body, headers: idem(key) }); // 1
      expectStatus(first, 201);
      for (let i = 0; i < 6; i++) {
        const replay = await call(sb, 'POST', '/contacts', { body, headers: idem(key) });
        expectReplay(first, replay);
      }
      const probe = await call(sb, 'GET', '/contacts', { query: { limit: 1 } }); // 2
      expect(probe.headers.get('x-ratelimit-remaining')).toBe('3');
      for (let i = 0; i < 3; i++) expectStatus(await call(sb, 'GET', '/contacts', { query: { limit: 1 } }), 200); // 3..5
      expectError(await call(sb, 'GET', '/contacts', { query: { limit: 1 } }), 429, 'RATE_LIMITED');
      expectReplay(first, await call(sb, 'POST', '/contacts', { body, headers: idem(key) }));
      const stats = await control(sb, 'GET', '/stats');
      expect(stats.body.idempotent_replays).toBe(7);
    });
  });

  test('a 429 is not cached: after the window the same key runs for real', async () => {
    await withSandbox({ rateLimit: 1, orgRateLimit: 1000, rateWindowMs: 200 }, async (sb) => {
      let checked = false;
      for (let attempt = 0; attempt < 5 && !checked; attempt++) {
        await sleep(210); // a fresh window
        const key = uniqueKey();
        const body = createBody('contacts');
        expectStatus(await call(sb, 'GET', '/contacts', { query: { limit: 1 } }), 200);
        const res = await call(sb, 'POST', '/contacts', { body, headers: idem(key) });
        if (res.status !== 429) continue; // the window turned over between the two requests
        await sleep(Number(res.headers.get('retry-after')) * 1000 + 20);
        const retry = await call(sb, 'POST', '/contacts', { body, headers: idem(key) });
        expectStatus(retry, 201);
        expect(retry.headers.get('idempotent-replayed')).not.toBe('true');
        checked = true;
      }
      expect(checked).toBe(true);
    });
  });
});

describe('in-flight twins', () => {
  test('concurrent requests with the same key get the same response; one record', async () => {
    await withSandbox({ latencyMs: 100 }, async (sb) => {
      const key = uniqueKey();
      const body = createBody('contacts');
      const all = await Promise.all(
        Array.from({ length: 10 }, () => call(sb, 'POST', '/contacts', { body, headers: idem(key) })),
      );
      for (const r of all) {
        expectStatus(r, 201);
        expect(r.body).toEqual(all[0]!.body);
      }
      const list = await call(sb, 'GET', '/contacts', { query: { email: body.email as string } });
      expect(list.body.data).toHaveLength(1);
    });
  });

  test('a twin with a different body while the first is in flight → 422 (or waits and then 422)', async () => {
    await withSandbox({ latencyMs: 100 }, async (sb) => {
      const key = uniqueKey();
      const a = createBody('contacts');
      const b = createBody('contacts');
      const [ra, rb] = await Promise.all([
        call(sb, 'POST', '/contacts', { body: a, headers: idem(key) }),
        new Promise((r) => setTimeout(r, 20)).then(() =>
          call(sb, 'POST', '/contacts', { body: b, headers: idem(key) }),
        ),
      ]);
      expectStatus(ra, 201);
      expectError(rb, 422, 'IDEMPOTENCY_KEY_REUSED');
    });
  });
});
