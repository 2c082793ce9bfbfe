// Spec "Authentication" rules 1–8 and docs/sandbox.md "Authentication, scopes, access":
// exactly one of the two headers; 401 codes; v1/v2 keys not interchangeable; 403 on a missing
// scope with details.required_scope; user-bound keys limited to their own records.
import { describe, expect, test } from 'vitest';
import { allScopes, readScopes, RESOURCES } from '../../../src/api/resources.js';
import {
  call,
  create,
  createBody,
  expectError,
  expectStatus,
  expectV1Error,
  listAll,
  rawRequest,
  startSandbox,
  useSandbox,
  writeKeysFile,
} from '../helpers.js';

const EXTRA = {
  contactsReadOnly: 'service_live_conformance_contacts_read_only_0001',
  contactsNoDelete: 'service_live_conformance_contacts_no_delete_0002',
  otherUser: 'service_live_conformance_other_user_bound_000003',
  noScopes: 'service_live_conformance_no_scopes_at_all_00004',
  extraV1: 'service_pk_conformance_extra_v1',
};
const keysFile = writeKeysFile([
  { key: EXTRA.contactsReadOnly, version: 2, scopes: ['contacts:read'], access: 'organization', user: 'usr_reader' },
  {
    key: EXTRA.contactsNoDelete,
    version: 2,
    scopes: ['contacts:read', 'contacts:write'],
    access: 'organization',
    user: 'usr_writer',
  },
  { key: EXTRA.otherUser, version: 2, scopes: allScopes(), access: 'user', user: 'usr_other' },
  { key: EXTRA.noScopes, version: 2, scopes: [], access: 'organization', user: 'usr_none' },
  { key: EXTRA.extraV1, version: 1 },
]);
const ctx = useSandbox({ keysFile });

describe('key forms (spec Authentication rules 2–3)', () => {
  test('v2 keys are service_live_…, the v1 key is service_pk_…', () => {
    for (const k of [ctx.sb.keys.admin, ctx.sb.keys.readonly, ctx.sb.keys.user]) expect(k).toMatch(/^service_live_.+/);
    expect(ctx.sb.keys.v1).toMatch(/^service_pk_.+/);
    expect(new Set(Object.values(ctx.sb.keys)).size).toBe(4);
  });
});

describe('headers (spec Authentication rule 1)', () => {
  test('X-Service-Api-Key works', async () => {
    expectStatus(await call(ctx.sb, 'GET', '/contacts', { auth: 'x-api-key' }), 200);
  });

  test('Authorization: Bearer works', async () => {
    expectStatus(await call(ctx.sb, 'GET', '/contacts', { auth: 'bearer' }), 200);
  });

  test('both headers → 401 AMBIGUOUS_CREDENTIALS (even with the same key)', async () => {
    const k = ctx.sb.keys.admin;
    const res = await call(ctx.sb, 'GET', '/contacts', {
      key: null,
      headers: { 'X-Service-Api-Key': k, Authorization: `Bearer ${k}` },
    });
    expectError(res, 401, 'AMBIGUOUS_CREDENTIALS');
  });

  test('both headers on a write → 401 and nothing is created', async () => {
    const k = ctx.sb.keys.admin;
    const body = createBody('contacts');
    const res = await call(ctx.sb, 'POST', '/contacts', {
      key: null,
      body,
      headers: { 'X-Service-Api-Key': k, Authorization: `Bearer ${k}` },
    });
    expectError(res, 401, 'AMBIGUOUS_CREDENTIALS');
    expect((await call(ctx.sb, 'GET', '/contacts', { query: { email: body.email as string } })).body.data).toEqual([]);
  });

  test('no key → 401 UNAUTHENTICATED', async () => {
    expectError(await call(ctx.sb, 'GET', '/contacts', { key: null }), 401, 'UNAUTHENTICATED');
  });

  test.each([
    ['an unknown v2 key (X-Service-Api-Key)', { 'X-Service-Api-Key': 'service_live_unknownunknownunknown' }],
    ['an unknown v2 key (Bearer)', { Authorization: 'Bearer service_live_unknownunknownunknown' }],
    ['a key of no known form', { 'X-Service-Api-Key': 'hello' }],
    ['an empty X-Service-Api-Key', { 'X-Service-Api-Key': '' }],
    ['Bearer without a key', { Authorization: 'Bearer' }],
    ['Bearer with an empty key', { Authorization: 'Bearer ' }],
    ['another auth scheme', { Authorization: 'Basic dXNlcjpwYXNz' }],
  ])('%s → 401 UNAUTHENTICATED', async (_label, headers) => {
    expectError(await call(ctx.sb, 'GET', '/contacts', { key: null, headers }), 401, 'UNAUTHENTICATED');
  });

  test('the same header sent twice → 401 (exactly one key per request)', async () => {
    const k = ctx.sb.keys.admin;
    const url = `${ctx.sb.baseUrl}/contacts`;
    const twice = await rawRequest(url, 'GET', { 'X-Service-Api-Key': [k, k] });
    expect(twice.status).toBe(401);
    expect(JSON.parse(twice.text!).object).toBe('error');
    const twiceBearer = await rawRequest(url, 'GET', { Authorization: [`Bearer ${k}`, `Bearer ${k}`] });
    expect(twiceBearer.status).toBe(401);
  });

  test('Basic with a valid key value is not accepted (only Bearer)', async () => {
    const res = await call(ctx.sb, 'GET', '/contacts', {
      key: null,
      headers: { Authorization: `Basic ${ctx.sb.keys.admin}` },
    });
    expectError(res, 401);
  });
});

describe('versions are not interchangeable (spec Authentication rule 3)', () => {
  test('the v1 key on /api/v2 → 401 WRONG_API_VERSION', async () => {
    expectError(await call(ctx.sb, 'GET', '/contacts', { key: ctx.sb.keys.v1 }), 401, 'WRONG_API_VERSION');
    expectError(
      await call(ctx.sb, 'GET', '/contacts', { key: ctx.sb.keys.v1, auth: 'bearer' }),
      401,
      'WRONG_API_VERSION',
    );
    expectError(await call(ctx.sb, 'GET', '/contacts', { key: EXTRA.extraV1 }), 401, 'WRONG_API_VERSION');
  });

  test('a v2 key on /api/v1 → 401 WRONG_API_VERSION', async () => {
    for (const key of [ctx.sb.keys.admin, ctx.sb.keys.readonly, ctx.sb.keys.user]) {
      const res = await call(ctx.sb, 'POST', '/api/v1/people/query', { key, body: {} });
      expectV1Error(res, 401, 'WRONG_API_VERSION');
    }
  });

  test('the v1 key works on /api/v1 in X-Service-Api-Key', async () => {
    expectStatus(await call(ctx.sb, 'POST', '/api/v1/people/query', { key: ctx.sb.keys.v1, body: {} }), 200);
    expectStatus(await call(ctx.sb, 'POST', '/api/v1/people/query', { key: EXTRA.extraV1, body: {} }), 200);
  });

  test('spec "Version 1 headers": Authorization: Bearer on /api/v1 → 401 naming X-Service-Api-Key', async () => {
    for (const [method, path, body] of [
      ['POST', '/api/v1/people/query', {}],
      ['POST', '/api/v1/interactions/query', {}],
      ['PATCH', '/api/v1/companies/cmp_x', { name: 'x' }],
    ] as const) {
      const res = await call(ctx.sb, method, path, { key: ctx.sb.keys.v1, auth: 'bearer', body });
      expectV1Error(res, 401, 'UNAUTHENTICATED');
      expect(res.body.error.message).toMatch(/X-Service-Api-Key/);
      expect(res.body.error.message).toMatch(/Bearer/);
    }
    // a version 2 key in Bearer on v1 is refused the same way (the header, not the key, is wrong)
    expectV1Error(
      await call(ctx.sb, 'POST', '/api/v1/people/query', { auth: 'bearer', key: ctx.sb.keys.admin, body: {} }),
      401,
    );
    // and Bearer stays fine on version 2
    expectStatus(await call(ctx.sb, 'GET', '/contacts', { auth: 'bearer' }), 200);
  });

  test('v1: no key, unknown key, both headers → 401', async () => {
    expectV1Error(await call(ctx.sb, 'POST', '/api/v1/people/query', { key: null, body: {} }), 401, 'UNAUTHENTICATED');
    expectV1Error(
      await call(ctx.sb, 'POST', '/api/v1/people/query', { key: 'service_pk_unknown', body: {} }),
      401,
      'UNAUTHENTICATED',
    );
    const k = ctx.sb.keys.v1;
    const both = await call(ctx.sb, 'POST', '/api/v1/people/query', {
      key: null,
      body: {},
      headers: { 'X-Service-Api-Key': k, Authorization: `Bearer ${k}` },
    });
    expectV1Error(both, 401, 'AMBIGUOUS_CREDENTIALS');
  });
});

describe('scopes (spec Authentication rules 5, 6, 8)', () => {
  test('the readonly key reads every resource', async () => {
    for (const r of RESOURCES)
      expectStatus(await call(ctx.sb, 'GET', `/${r.name}`, { key: ctx.sb.keys.readonly }), 200);
  });

  test('the readonly key writing → 403 INSUFFICIENT_SCOPE with details [{required_scope}]', async () => {
    const rec = await create(ctx.sb, 'contacts');
    const ro = ctx.sb.keys.readonly;
    const post = await call(ctx.sb, 'POST', '/contacts', { key: ro, body: createBody('contacts') });
    expectError(post, 403, 'INSUFFICIENT_SCOPE');
    expect(post.body.error.details).toEqual([{ required_scope: 'contacts:write' }]);
    const patch = await call(ctx.sb, 'PATCH', `/contacts/${rec.id}`, { key: ro, body: { first_name: 'x' } });
    expectError(patch, 403, 'INSUFFICIENT_SCOPE');
    expect(patch.body.error.details).toEqual([{ required_scope: 'contacts:write' }]);
    const del = await call(ctx.sb, 'DELETE', `/contacts/${rec.id}`, { key: ro });
    expectError(del, 403, 'INSUFFICIENT_SCOPE');
    expect(del.body.error.details).toEqual([{ required_scope: 'contacts:delete' }]);
    const batch = await call(ctx.sb, 'POST', '/contacts/batch', { key: ro, body: [createBody('contacts')] });
    expectError(batch, 403, 'INSUFFICIENT_SCOPE');
    expect(batch.body.error.details).toEqual([{ required_scope: 'contacts:write' }]);
    // nothing changed
    const got = await call(ctx.sb, 'GET', `/contacts/${rec.id}`);
    expect(got.body.data).toEqual(rec);
  });

  test.each(RESOURCES.filter((r) => r.verbs.includes('create')).map((r) => r.name))(
    "readonly key POST /%s → 403 with the resource's write scope",
    async (name) => {
      const res = await call(ctx.sb, 'POST', `/${name}`, { key: ctx.sb.keys.readonly, body: createBody(name) });
      expectError(res, 403, 'INSUFFICIENT_SCOPE');
      expect(res.body.error.details).toEqual([{ required_scope: `${name}:write` }]);
    },
  );

  test("a key with only contacts:read gets 403 on other resources' reads", async () => {
    expectStatus(await call(ctx.sb, 'GET', '/contacts', { key: EXTRA.contactsReadOnly }), 200);
    const res = await call(ctx.sb, 'GET', '/deals', { key: EXTRA.contactsReadOnly });
    expectError(res, 403, 'INSUFFICIENT_SCOPE');
    expect(res.body.error.details).toEqual([{ required_scope: 'deals:read' }]);
  });

  test('write does not imply delete: a key with contacts:write but not contacts:delete', async () => {
    const created = await call(ctx.sb, 'POST', '/contacts', {
      key: EXTRA.contactsNoDelete,
      body: createBody('contacts'),
    });
    expectStatus(created, 201);
    expect(created.body.data.owner_id).toBe('usr_writer');
    const del = await call(ctx.sb, 'DELETE', `/contacts/${created.body.data.id}`, { key: EXTRA.contactsNoDelete });
    expectError(del, 403, 'INSUFFICIENT_SCOPE');
    expect(del.body.error.details).toEqual([{ required_scope: 'contacts:delete' }]);
  });

  test('no implicit full access (rule 5): a v2 key with no scopes gets 403 everywhere', async () => {
    for (const r of RESOURCES) {
      const res = await call(ctx.sb, 'GET', `/${r.name}`, { key: EXTRA.noScopes });
      expectError(res, 403, 'INSUFFICIENT_SCOPE');
      expect(res.body.error.details).toEqual([{ required_scope: `${r.name}:read` }]);
    }
  });

  test('admin holds every scope of allScopes(); readonly every read scope', () => {
    expect(readScopes().every((s) => allScopes().includes(s))).toBe(true);
  });

  test('scope is checked before the record exists: readonly DELETE of an unknown id → 403', async () => {
    expectError(
      await call(ctx.sb, 'DELETE', '/contacts/con_unknown', { key: ctx.sb.keys.readonly }),
      403,
      'INSUFFICIENT_SCOPE',
    );
  });
});

test('there is no ALL scope (rule 5): a key file claiming scope "ALL" is refused, or the key gets 403', async () => {
  const file = writeKeysFile([
    {
      key: 'service_live_conformance_all_scope_key_0005',
      version: 2,
      scopes: ['ALL'],
      access: 'organization',
      user: 'usr_all',
    },
  ]);
  let sb: Awaited<ReturnType<typeof startSandbox>> | undefined;
  try {
    sb = await startSandbox({ keysFile: file, seed: 1 });
  } catch {
    return; // refused at start: fine
  }
  try {
    const res = await call(sb, 'GET', '/contacts', { key: 'service_live_conformance_all_scope_key_0005' });
    expectError(res, 403, 'INSUFFICIENT_SCOPE');
  } finally {
    await sb.close();
  }
});

describe('access levels (spec Authentication rule 7)', () => {
  test('a user-bound key lists only its own records', async () => {
    await create(ctx.sb, 'contacts', {}, ctx.sb.keys.user);
    const adminRec = await create(ctx.sb, 'contacts');
    for (const r of RESOURCES) {
      const mine = await listAll(ctx.sb, r.name, { key: ctx.sb.keys.user });
      for (const rec of mine) expect(rec.owner_id, `${r.name} ${rec.id}`).toBe('usr_user');
    }
    const mine = await listAll(ctx.sb, 'contacts', { key: ctx.sb.keys.user });
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.some((x) => x.id === adminRec.id)).toBe(false);
    const all = await listAll(ctx.sb, 'contacts');
    expect(all.length).toBeGreaterThan(mine.length);
  });

  test('records created by the user-bound key are owned by its user', async () => {
    const rec = await create(ctx.sb, 'deals', {}, ctx.sb.keys.user);
    expect(rec.owner_id).toBe('usr_user');
    expectStatus(await call(ctx.sb, 'GET', `/deals/${rec.id}`, { key: ctx.sb.keys.user }), 200);
    // the organization-wide key sees it too
    expectStatus(await call(ctx.sb, 'GET', `/deals/${rec.id}`), 200);
  });

  test("get/update/delete of another user's record → 403 FORBIDDEN_RECORD, and nothing changes", async () => {
    const rec = await create(ctx.sb, 'contacts');
    const u = ctx.sb.keys.user;
    expectError(await call(ctx.sb, 'GET', `/contacts/${rec.id}`, { key: u }), 403, 'FORBIDDEN_RECORD');
    expectError(
      await call(ctx.sb, 'PATCH', `/contacts/${rec.id}`, { key: u, body: { first_name: 'hacked' } }),
      403,
      'FORBIDDEN_RECORD',
    );
    expectError(await call(ctx.sb, 'DELETE', `/contacts/${rec.id}`, { key: u }), 403, 'FORBIDDEN_RECORD');
    const got = await call(ctx.sb, 'GET', `/contacts/${rec.id}`);
    expect(got.body.data).toEqual(rec);
  });

  test("two user-bound keys of different users do not see each other's records", async () => {
    const mine = await create(ctx.sb, 'tasks', {}, EXTRA.otherUser);
    expect(mine.owner_id).toBe('usr_other');
    expectError(await call(ctx.sb, 'GET', `/tasks/${mine.id}`, { key: ctx.sb.keys.user }), 403, 'FORBIDDEN_RECORD');
    const theirs = await create(ctx.sb, 'tasks', {}, ctx.sb.keys.user);
    expectError(await call(ctx.sb, 'GET', `/tasks/${theirs.id}`, { key: EXTRA.otherUser }), 403, 'FORBIDDEN_RECORD');
  });

  test('a user-bound key cannot take over a record by sending owner_id', async () => {
    const res = await call(ctx.sb, 'POST', '/contacts', {
      key: ctx.sb.keys.user,
      body: createBody('contacts', { owner_id: 'usr_admin' }),
    });
    expectError(res, 422, 'VALIDATION_FAILED');
  });

  test('the v1 key has full access (organization)', async () => {
    const userRec = await create(ctx.sb, 'contacts', {}, ctx.sb.keys.user);
    const res = await call(ctx.sb, 'POST', '/api/v1/people/query', {
      key: ctx.sb.keys.v1,
      body: { filter: { email: userRec.email } },
    });
    expectStatus(res, 200);
    expect(res.body.data.people.map((p: any) => p.id)).toEqual([userRec.id]);
  });
});
