// What bulk update, delete and link (issue 12) need of the sandbox, per the spec: "Limits" rule 4
// (PATCH and Idempotency-Key: replay, not counted, 422 on another body), "Errors" (404 NOT_FOUND in the
// error envelope, 403 forbidden operation), the relink no-op of "Endpoints"; and docs/sandbox.md:
// "Idempotency" (a key on DELETE/PUT is ignored), "Faults" (after-write kinds on every writing method),
// "Paths" (a missing parent or child is 404; an update may set owner_id).
import { describe, expect, test } from 'vitest';
import { findResource } from '../../../src/api/resources.js';
import { call, control, create, expectError, expectStatus, listAll, queueFaults, rawApi as raw } from '../helpers.js';
import { uniqueKey, useSandbox, withSandbox, type SandboxHandle } from '../helpers.js';

const ctx = useSandbox();
const idem = (key: string) => ({ 'Idempotency-Key': key });

const replays = async (sb: SandboxHandle): Promise<number> =>
  (await control(sb, 'GET', '/stats')).body.idempotent_replays;

/** A seeded meeting of usr_admin (each test sets the association it needs). */
async function meetingId(): Promise<string> {
  const mine = (await listAll(ctx.sb, 'meetings')).filter((m) => m.owner_id === 'usr_admin');
  return mine[0]!.id;
}

describe('PATCH with Idempotency-Key', () => {
  test('a replay after the record was deleted still returns the cached 200, and changes nothing', async () => {
    const rec = await create(ctx.sb, 'deals');
    const key = uniqueKey();
    const first = await call(ctx.sb, 'PATCH', `/deals/${rec.id}`, { body: { stage: 'won' }, headers: idem(key) });
    expectStatus(first, 200);
    expectStatus(await call(ctx.sb, 'DELETE', `/deals/${rec.id}`), 200);
    const replay = await call(ctx.sb, 'PATCH', `/deals/${rec.id}`, { body: { stage: 'won' }, headers: idem(key) });
    expectStatus(replay, 200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(first.text);
    expectError(await call(ctx.sb, 'GET', `/deals/${rec.id}`), 404, 'NOT_FOUND');
  });

  test('replays are not counted against the rate limit and succeed at the limit', async () => {
    await withSandbox({ rateLimit: 3, orgRateLimit: 1000, rateWindowMs: 60_000 }, async (sb) => {
      const rec = await create(sb, 'deals'); // 1
      const key = uniqueKey();
      const first = await call(sb, 'PATCH', `/deals/${rec.id}`, { body: { stage: 'won' }, headers: idem(key) }); // 2
      expect(first.headers.get('x-ratelimit-remaining')).toBe('1');
      for (let i = 0; i < 4; i++) {
        const again = await call(sb, 'PATCH', `/deals/${rec.id}`, { body: { stage: 'won' }, headers: idem(key) });
        expect(again.headers.get('idempotent-replayed')).toBe('true');
      }
      expectStatus(await call(sb, 'GET', `/deals/${rec.id}`), 200); // 3
      expectError(await call(sb, 'GET', `/deals/${rec.id}`), 429, 'RATE_LIMITED');
      const atLimit = await call(sb, 'PATCH', `/deals/${rec.id}`, { body: { stage: 'won' }, headers: idem(key) });
      expect(atLimit.text).toBe(first.text);
      expect(await replays(sb)).toBe(5);
    });
  });
});

describe('DELETE', () => {
  test('a second DELETE → 404 NOT_FOUND in the error envelope', async () => {
    const rec = await create(ctx.sb, 'contacts');
    expectStatus(await call(ctx.sb, 'DELETE', `/contacts/${rec.id}`), 200);
    const again = await call(ctx.sb, 'DELETE', `/contacts/${rec.id}`);
    expectError(again, 404, 'NOT_FOUND');
    expect(again.body.error.message).toContain(rec.id);
  });

  test('an Idempotency-Key on DELETE is accepted and ignored: not replayed, not validated', async () => {
    const rec = await create(ctx.sb, 'contacts');
    const key = uniqueKey();
    const before = await replays(ctx.sb);
    const first = await call(ctx.sb, 'DELETE', `/contacts/${rec.id}`, { headers: idem(key) });
    expectStatus(first, 200);
    expect(first.body.data).toEqual({ id: rec.id, deleted: true });
    const again = await call(ctx.sb, 'DELETE', `/contacts/${rec.id}`, { headers: idem(key) });
    expectError(again, 404, 'NOT_FOUND');
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    const other = await create(ctx.sb, 'contacts');
    expectStatus(await call(ctx.sb, 'DELETE', `/contacts/${other.id}`, { headers: idem('x'.repeat(300)) }), 200);
    expect(await replays(ctx.sb)).toBe(before);
  });
});

describe('faults on each writing method (after-write kinds apply the write)', () => {
  test('PATCH 500-after-write: 500, the change is applied, a retry with the key replays the 200', async () => {
    const rec = await create(ctx.sb, 'deals');
    const key = uniqueKey();
    await queueFaults(ctx.sb, [{ kind: '500-after-write', method: 'PATCH' }]);
    expectError(
      await call(ctx.sb, 'PATCH', `/deals/${rec.id}`, { body: { stage: 'x' }, headers: idem(key) }),
      500,
      'INTERNAL_ERROR',
    );
    expect((await call(ctx.sb, 'GET', `/deals/${rec.id}`)).body.data.stage).toBe('x');
    const retry = await call(ctx.sb, 'PATCH', `/deals/${rec.id}`, { body: { stage: 'x' }, headers: idem(key) });
    expectStatus(retry, 200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
  });

  test('DELETE 500 (before the write) keeps the record; 500-after-write and drop-after-write delete it, the retry is 404', async () => {
    const rec = await create(ctx.sb, 'contacts');
    await queueFaults(ctx.sb, [{ kind: '500', method: 'DELETE' }]);
    expectError(await call(ctx.sb, 'DELETE', `/contacts/${rec.id}`), 500, 'INTERNAL_ERROR');
    expectStatus(await call(ctx.sb, 'GET', `/contacts/${rec.id}`), 200);
    await queueFaults(ctx.sb, [{ kind: '500-after-write', method: 'DELETE' }]);
    expectError(await call(ctx.sb, 'DELETE', `/contacts/${rec.id}`), 500, 'INTERNAL_ERROR');
    expectError(await call(ctx.sb, 'GET', `/contacts/${rec.id}`), 404, 'NOT_FOUND');
    expectError(await call(ctx.sb, 'DELETE', `/contacts/${rec.id}`), 404, 'NOT_FOUND');
    const dropped = await create(ctx.sb, 'contacts');
    await queueFaults(ctx.sb, [{ kind: 'drop-after-write', method: 'DELETE' }]);
    const res = await raw(ctx.sb, 'DELETE', `/contacts/${dropped.id}`);
    expect(res.error, `expected a dropped connection, got ${res.status}`).toBeDefined();
    expectError(await call(ctx.sb, 'DELETE', `/contacts/${dropped.id}`), 404, 'NOT_FOUND');
  });

  test('link POST drop-after-write: the link exists, a retry with the key replays the 201', async () => {
    const d = await create(ctx.sb, 'deals');
    const c = await create(ctx.sb, 'contacts');
    const key = uniqueKey();
    const body = { contact_id: c.id, type: 'CHAMPION' };
    await queueFaults(ctx.sb, [{ kind: 'drop-after-write', method: 'POST', path: '/contacts$' }]);
    const res = await raw(ctx.sb, 'POST', `/deals/${d.id}/contacts`, body, { 'idempotency-key': key });
    expect(res.error, `expected a dropped connection, got ${res.status}`).toBeDefined();
    const list = await call(ctx.sb, 'GET', `/deals/${d.id}/contacts`);
    expect(list.body.data.map((x: any) => [x.id, x.link.type])).toEqual([[c.id, 'CHAMPION']]);
    const retry = await call(ctx.sb, 'POST', `/deals/${d.id}/contacts`, { body, headers: idem(key) });
    expectStatus(retry, 201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
  });

  test('meeting PUT 500-after-write: the association is set; the PUT again is 200', async () => {
    const id = await meetingId();
    const deal = await create(ctx.sb, 'deals');
    await queueFaults(ctx.sb, [{ kind: '500-after-write', method: 'PUT' }]);
    expectError(
      await call(ctx.sb, 'PUT', `/meetings/${id}/deal`, { body: { deal_id: deal.id } }),
      500,
      'INTERNAL_ERROR',
    );
    expect((await call(ctx.sb, 'GET', `/meetings/${id}/deal`)).body.data.id).toBe(deal.id);
    const again = await call(ctx.sb, 'PUT', `/meetings/${id}/deal`, { body: { deal_id: deal.id } });
    expectStatus(again, 200);
    expect(again.body.data.id).toBe(deal.id);
  });
});

describe('relinks and missing records', () => {
  test.each(findResource('meetings')!.associations!.map((a) => [a.name, a] as const))(
    'PUT /meetings/{id}/%s twice with the same target: 200 both, same data; a key on PUT is ignored',
    async (name, assoc) => {
      const id = await meetingId();
      const target = await create(ctx.sb, assoc.target);
      const body = { [assoc.bodyKey]: target.id };
      const key = uniqueKey();
      const first = await call(ctx.sb, 'PUT', `/meetings/${id}/${name}`, { body, headers: idem(key) });
      const again = await call(ctx.sb, 'PUT', `/meetings/${id}/${name}`, { body, headers: idem(key) });
      expectStatus(first, 200);
      expectStatus(again, 200);
      expect(again.headers.get('idempotent-replayed')).toBeNull();
      expect(again.body.data).toEqual(first.body.data);
    },
  );

  test('a missing child is 404 NOT_FOUND naming the body field; a missing parent is 404 without details', async () => {
    const d = await create(ctx.sb, 'deals');
    const child = await call(ctx.sb, 'POST', `/deals/${d.id}/contacts`, { body: { contact_id: 'cnt_missing' } });
    expectError(child, 404, 'NOT_FOUND');
    expect(child.body.error.details).toEqual([{ field: 'contact_id', issue: 'not_found', id: 'cnt_missing' }]);
    const parent = await call(ctx.sb, 'POST', '/deals/deal_missing/contacts', { body: { contact_id: 'cnt_missing' } });
    expectError(parent, 404, 'NOT_FOUND');
    expect(parent.body.error.details).toEqual([]);
    const put = await call(ctx.sb, 'PUT', `/meetings/${await meetingId()}/company`, {
      body: { company_id: 'cmp_missing' },
    });
    expectError(put, 404, 'NOT_FOUND');
    expect(put.body.error.details).toEqual([{ field: 'company_id', issue: 'not_found', id: 'cmp_missing' }]);
  });
});

describe('owner_id on PATCH (docs/sandbox.md "Paths", "Authentication, scopes, access")', () => {
  test('an organization key sets owner_id; the new owner sees the record', async () => {
    const rec = await create(ctx.sb, 'deals');
    expectError(await call(ctx.sb, 'GET', `/deals/${rec.id}`, { key: ctx.sb.keys.user }), 403, 'FORBIDDEN_RECORD');
    const res = await call(ctx.sb, 'PATCH', `/deals/${rec.id}`, { body: { owner_id: 'usr_user' } });
    expectStatus(res, 200);
    expect(res.body.data).toMatchObject({ id: rec.id, owner_id: 'usr_user', name: rec.name });
    expect((await call(ctx.sb, 'GET', `/deals/${rec.id}`, { key: ctx.sb.keys.user })).body.data.owner_id).toBe(
      'usr_user',
    );
  });

  test.each([[''], ['  '], [null], [7]])('owner_id %j → 422 VALIDATION_FAILED, nothing changes', async (value) => {
    const rec = await create(ctx.sb, 'contacts');
    const res = await call(ctx.sb, 'PATCH', `/contacts/${rec.id}`, {
      body: { owner_id: value, first_name: 'Changed' },
    });
    expectError(res, 422, 'VALIDATION_FAILED');
    expect(res.body.error.details[0].field).toBe('owner_id');
    expect((await call(ctx.sb, 'GET', `/contacts/${rec.id}`)).body.data).toEqual(rec);
  });

  test("a user-bound key setting another user's owner_id → 403 FORBIDDEN_OWNER; its own user is fine", async () => {
    const rec = await create(ctx.sb, 'tasks', {}, ctx.sb.keys.user);
    const res = await call(ctx.sb, 'PATCH', `/tasks/${rec.id}`, {
      key: ctx.sb.keys.user,
      body: { owner_id: 'usr_admin', title: 'x' },
    });
    expectError(res, 403, 'FORBIDDEN_OWNER');
    expect(res.body.error.details).toEqual([{ field: 'owner_id', issue: 'other_user' }]);
    expect((await call(ctx.sb, 'GET', `/tasks/${rec.id}`)).body.data).toEqual(rec);
    const own = await call(ctx.sb, 'PATCH', `/tasks/${rec.id}`, {
      key: ctx.sb.keys.user,
      body: { owner_id: 'usr_user', title: 'y' },
    });
    expectStatus(own, 200);
    expect(own.body.data).toMatchObject({ owner_id: 'usr_user', title: 'y' });
  });

  test('create still refuses owner_id (POST and batch)', async () => {
    expectError(
      await call(ctx.sb, 'POST', '/deals', { body: { name: 'D', owner_id: 'usr_user' } }),
      422,
      'VALIDATION_FAILED',
    );
    const batch = await call(ctx.sb, 'POST', '/deals/batch', { body: [{ name: 'D', owner_id: 'usr_user' }] });
    expect(batch.body.data.items[0]).toMatchObject({ status: 'error', error: { code: 'VALIDATION_FAILED' } });
  });
});
