// Spec "Endpoints": GET/PUT/DELETE /meetings/{id}/deal and /company (data null when unset);
// rule 4 (a meeting has at most one deal and one company); docs/sandbox.md "Paths"; CONTRACT §6.
import { describe, expect, test } from 'vitest';
import { successEnvelope } from '../../../src/api/envelopes.js';
import { findResource } from '../../../src/api/resources.js';
import { call, create, expectError, expectStatus, expectV2Envelope, listAll, useSandbox } from '../helpers.js';

const ctx = useSandbox();
const ASSOCIATIONS = findResource('meetings')!.associations!;

let meetingIndex = 0;
/** The seeded meetings owned by usr_admin, in turn (each test sets up the state it needs). */
async function meetingId(): Promise<string> {
  const all = (await listAll(ctx.sb, 'meetings')).filter((m) => m.owner_id === 'usr_admin');
  expect(all.length).toBeGreaterThan(0);
  return all[meetingIndex++ % all.length]!.id;
}

describe.each(ASSOCIATIONS.map((a) => [a.name, a] as const))('/meetings/{id}/%s', (name, assoc) => {
  test('unset → 200 success with data null', async () => {
    const id = await meetingId();
    expectStatus(await call(ctx.sb, 'DELETE', `/meetings/${id}/${name}`), 200);
    const res = await call(ctx.sb, 'GET', `/meetings/${id}/${name}`);
    expectStatus(res, 200);
    expectV2Envelope(res, successEnvelope);
    expect('data' in res.body).toBe(true);
    expect(res.body.data).toBeNull();
  });

  test('PUT sets it → 200 with the target; GET returns it', async () => {
    const id = await meetingId();
    const target = await create(ctx.sb, assoc.target);
    const put = await call(ctx.sb, 'PUT', `/meetings/${id}/${name}`, { body: { [assoc.bodyKey]: target.id } });
    expectStatus(put, 200);
    expectV2Envelope(put, successEnvelope);
    expect(put.body.data.id).toBe(target.id);
    const got = await call(ctx.sb, 'GET', `/meetings/${id}/${name}`);
    expectStatus(got, 200);
    expect(got.body.data.id).toBe(target.id);
  });

  test('at most one: a second PUT replaces the first', async () => {
    const id = await meetingId();
    const a = await create(ctx.sb, assoc.target);
    const b = await create(ctx.sb, assoc.target);
    expectStatus(await call(ctx.sb, 'PUT', `/meetings/${id}/${name}`, { body: { [assoc.bodyKey]: a.id } }), 200);
    expectStatus(await call(ctx.sb, 'PUT', `/meetings/${id}/${name}`, { body: { [assoc.bodyKey]: b.id } }), 200);
    const got = await call(ctx.sb, 'GET', `/meetings/${id}/${name}`);
    expect(got.body.data.id).toBe(b.id);
    expect(Array.isArray(got.body.data)).toBe(false);
  });

  test('DELETE clears it → 200 data null; GET is null again', async () => {
    const id = await meetingId();
    const t = await create(ctx.sb, assoc.target);
    expectStatus(await call(ctx.sb, 'PUT', `/meetings/${id}/${name}`, { body: { [assoc.bodyKey]: t.id } }), 200);
    const del = await call(ctx.sb, 'DELETE', `/meetings/${id}/${name}`);
    expectStatus(del, 200);
    expectV2Envelope(del, successEnvelope);
    expect(del.body.data).toBeNull();
    expect((await call(ctx.sb, 'GET', `/meetings/${id}/${name}`)).body.data).toBeNull();
    // the target itself is untouched
    expectStatus(await call(ctx.sb, 'GET', `/${assoc.target}/${t.id}`), 200);
  });

  test('an unknown meeting → 404 on GET, PUT, DELETE', async () => {
    const t = await create(ctx.sb, assoc.target);
    expectError(await call(ctx.sb, 'GET', `/meetings/mtg_unknown/${name}`), 404, 'NOT_FOUND');
    expectError(
      await call(ctx.sb, 'PUT', `/meetings/mtg_unknown/${name}`, { body: { [assoc.bodyKey]: t.id } }),
      404,
      'NOT_FOUND',
    );
    expectError(await call(ctx.sb, 'DELETE', `/meetings/mtg_unknown/${name}`), 404, 'NOT_FOUND');
  });

  test('PUT of an unknown target → 404 and the association is unchanged', async () => {
    const id = await meetingId();
    const t = await create(ctx.sb, assoc.target);
    expectStatus(await call(ctx.sb, 'PUT', `/meetings/${id}/${name}`, { body: { [assoc.bodyKey]: t.id } }), 200);
    const res = await call(ctx.sb, 'PUT', `/meetings/${id}/${name}`, {
      body: { [assoc.bodyKey]: `${assoc.target.slice(0, 3)}_unknown` },
    });
    expectError(res, 404, 'NOT_FOUND');
    expect((await call(ctx.sb, 'GET', `/meetings/${id}/${name}`)).body.data.id).toBe(t.id);
  });

  test('PUT without the body field → 422 VALIDATION_FAILED', async () => {
    const id = await meetingId();
    expectError(await call(ctx.sb, 'PUT', `/meetings/${id}/${name}`, { body: {} }), 422, 'VALIDATION_FAILED');
  });

  test('POST and PATCH → 405 METHOD_NOT_ALLOWED', async () => {
    const id = (await listAll(ctx.sb, 'meetings'))[0]!.id;
    expectError(await call(ctx.sb, 'POST', `/meetings/${id}/${name}`, { body: {} }), 405, 'METHOD_NOT_ALLOWED');
    expectError(await call(ctx.sb, 'PATCH', `/meetings/${id}/${name}`, { body: {} }), 405, 'METHOD_NOT_ALLOWED');
  });

  test('the readonly key reads it but PUT/DELETE → 403 INSUFFICIENT_SCOPE meetings:write', async () => {
    const id = (await listAll(ctx.sb, 'meetings'))[0]!.id;
    const t = await create(ctx.sb, assoc.target);
    expectStatus(await call(ctx.sb, 'GET', `/meetings/${id}/${name}`, { key: ctx.sb.keys.readonly }), 200);
    const put = await call(ctx.sb, 'PUT', `/meetings/${id}/${name}`, {
      key: ctx.sb.keys.readonly,
      body: { [assoc.bodyKey]: t.id },
    });
    expectError(put, 403, 'INSUFFICIENT_SCOPE');
    expect(put.body.error.details).toContainEqual({ required_scope: 'meetings:write' });
    expectError(
      await call(ctx.sb, 'DELETE', `/meetings/${id}/${name}`, { key: ctx.sb.keys.readonly }),
      403,
      'INSUFFICIENT_SCOPE',
    );
  });
});

test('deal and company are independent: setting one leaves the other', async () => {
  const id = await meetingId();
  const d = await create(ctx.sb, 'deals');
  const c = await create(ctx.sb, 'companies');
  expectStatus(await call(ctx.sb, 'PUT', `/meetings/${id}/deal`, { body: { deal_id: d.id } }), 200);
  expectStatus(await call(ctx.sb, 'PUT', `/meetings/${id}/company`, { body: { company_id: c.id } }), 200);
  expectStatus(await call(ctx.sb, 'DELETE', `/meetings/${id}/deal`), 200);
  expect((await call(ctx.sb, 'GET', `/meetings/${id}/deal`)).body.data).toBeNull();
  expect((await call(ctx.sb, 'GET', `/meetings/${id}/company`)).body.data.id).toBe(c.id);
});

test('meetings stay read-only: POST /meetings → 405', async () => {
  expectError(await call(ctx.sb, 'POST', '/meetings', { body: { title: 'x' } }), 405, 'METHOD_NOT_ALLOWED');
});

test("a user-bound key cannot read or set the association of another user's meeting (403 FORBIDDEN_RECORD)", async () => {
  const id = await meetingId(); // owned by usr_admin
  const d = await create(ctx.sb, 'deals', {}, ctx.sb.keys.user);
  expectError(await call(ctx.sb, 'GET', `/meetings/${id}/deal`, { key: ctx.sb.keys.user }), 403, 'FORBIDDEN_RECORD');
  expectError(
    await call(ctx.sb, 'PUT', `/meetings/${id}/deal`, { key: ctx.sb.keys.user, body: { deal_id: d.id } }),
    403,
    'FORBIDDEN_RECORD',
  );
  expectError(await call(ctx.sb, 'DELETE', `/meetings/${id}/deal`, { key: ctx.sb.keys.user }), 403, 'FORBIDDEN_RECORD');
});

describe('a user-bound key on its own meeting whose deal or company belongs to another user', () => {
  async function userMeeting(): Promise<string> {
    const mine = await listAll(ctx.sb, 'meetings', { key: ctx.sb.keys.user });
    expect(mine.length, 'a seeded meeting owned by usr_user').toBeGreaterThan(0);
    return mine[0]!.id;
  }

  test.each(ASSOCIATIONS.map((a) => [a.name, a] as const))(
    "GET /meetings/{id}/%s → 403 FORBIDDEN_RECORD (set, but not the key's to see), never data null",
    async (name, assoc) => {
      const id = await userMeeting();
      const other = await create(ctx.sb, assoc.target); // owned by usr_admin
      expectStatus(await call(ctx.sb, 'PUT', `/meetings/${id}/${name}`, { body: { [assoc.bodyKey]: other.id } }), 200);
      const res = await call(ctx.sb, 'GET', `/meetings/${id}/${name}`, { key: ctx.sb.keys.user });
      expectError(res, 403, 'FORBIDDEN_RECORD');
      expect(res.text).not.toContain('"data"');
      // the organization key still reads it; once the key's own record is set, the user key reads it
      expect((await call(ctx.sb, 'GET', `/meetings/${id}/${name}`)).body.data.id).toBe(other.id);
      const own = await create(ctx.sb, assoc.target, {}, ctx.sb.keys.user);
      expectStatus(
        await call(ctx.sb, 'PUT', `/meetings/${id}/${name}`, {
          key: ctx.sb.keys.user,
          body: { [assoc.bodyKey]: own.id },
        }),
        200,
      );
      expect((await call(ctx.sb, 'GET', `/meetings/${id}/${name}`, { key: ctx.sb.keys.user })).body.data.id).toBe(
        own.id,
      );
      // and unset is still data null
      expectStatus(await call(ctx.sb, 'DELETE', `/meetings/${id}/${name}`, { key: ctx.sb.keys.user }), 200);
      expect((await call(ctx.sb, 'GET', `/meetings/${id}/${name}`, { key: ctx.sb.keys.user })).body.data).toBeNull();
    },
  );

  test('the meeting record itself shows the association id to its owner (the id is not hidden)', async () => {
    const id = await userMeeting();
    const other = await create(ctx.sb, 'deals');
    expectStatus(await call(ctx.sb, 'PUT', `/meetings/${id}/deal`, { body: { deal_id: other.id } }), 200);
    const res = await call(ctx.sb, 'GET', `/meetings/${id}`, { key: ctx.sb.keys.user });
    expectStatus(res, 200);
    expect(res.body.data.deal_id).toBe(other.id);
    expectError(await call(ctx.sb, 'GET', `/deals/${other.id}`, { key: ctx.sb.keys.user }), 403, 'FORBIDDEN_RECORD');
    expectStatus(await call(ctx.sb, 'DELETE', `/meetings/${id}/deal`), 200);
  });
});
