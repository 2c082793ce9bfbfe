// Spec "Resources" table + docs/sandbox.md "Paths": driven from the RESOURCES table, every verb
// that exists works, every verb that does not is 405 METHOD_NOT_ALLOWED; unknown paths are 404.
import { describe, expect, test } from 'vitest';
import { listEnvelope, successEnvelope } from '../../../src/api/envelopes.js';
import { RESOURCES, type ResourceDef } from '../../../src/api/resources.js';
import {
  call,
  create,
  createBody,
  expectError,
  expectStatus,
  expectV2Envelope,
  listAll,
  uniqueEmail,
  useSandbox,
} from '../helpers.js';

const ctx = useSandbox();

/** An id of an existing record of the resource: created when possible, else taken from the seed. */
async function someId(r: ResourceDef): Promise<string> {
  if (r.verbs.includes('create')) return (await create(ctx.sb, r.name)).id;
  const res = await call(ctx.sb, 'GET', `/${r.name}`, { query: { limit: 1 } });
  expect(res.status).toBe(200);
  expect(res.body.data.length, `seed has no ${r.name}`).toBeGreaterThan(0);
  return res.body.data[0].id;
}

describe.each(RESOURCES.map((r) => [r.name, r] as const))('%s', (name, r) => {
  test('list: GET /{resource} → 200 list', async () => {
    const res = await call(ctx.sb, 'GET', `/${name}`);
    expectStatus(res, 200);
    expectV2Envelope(res, listEnvelope);
  });

  test('get: GET /{resource}/{id} → 200 success, id with the table prefix', async () => {
    const id = await someId(r);
    expect(id.startsWith(r.idPrefix)).toBe(true);
    const res = await call(ctx.sb, 'GET', `/${name}/${id}`);
    expectStatus(res, 200);
    expectV2Envelope(res, successEnvelope);
    expect(res.body.data.id).toBe(id);
  });

  test('get of an unknown id → 404 NOT_FOUND', async () => {
    expectError(await call(ctx.sb, 'GET', `/${name}/${r.idPrefix}nonexistent`), 404, 'NOT_FOUND');
  });

  test('PUT on the collection and on a record → 405 METHOD_NOT_ALLOWED', async () => {
    const id = await someId(r);
    expectError(await call(ctx.sb, 'PUT', `/${name}`, { body: {} }), 405, 'METHOD_NOT_ALLOWED');
    expectError(await call(ctx.sb, 'PUT', `/${name}/${id}`, { body: {} }), 405, 'METHOD_NOT_ALLOWED');
  });

  test('DELETE and PATCH on the collection → 405', async () => {
    expectError(await call(ctx.sb, 'DELETE', `/${name}`), 405, 'METHOD_NOT_ALLOWED');
    expectError(await call(ctx.sb, 'PATCH', `/${name}`, { body: {} }), 405, 'METHOD_NOT_ALLOWED');
  });

  if (r.verbs.includes('create')) {
    test('create: POST /{resource} → 201 success + Location, owner_id of the key, fields echoed', async () => {
      const body = createBody(name, { extra_field: 'kept' });
      const res = await call(ctx.sb, 'POST', `/${name}`, { body });
      expectStatus(res, 201);
      expectV2Envelope(res, successEnvelope);
      const data = res.body.data;
      expect(data.id.startsWith(r.idPrefix)).toBe(true);
      expect(data).toMatchObject(body);
      expect(data.owner_id).toBe('usr_admin');
      expect(typeof data.created_at).toBe('string');
      expect(typeof data.updated_at).toBe('string');
      const location = res.headers.get('location');
      expect(location, 'Location header').toBeTruthy();
      expect(new URL(location!, ctx.sb.baseUrl).pathname).toBe(`/api/v2/${name}/${data.id}`);
      const got = await call(ctx.sb, 'GET', `/${name}/${data.id}`);
      expect(got.body.data).toEqual(data);
    });

    test.each(r.required)('create without required field %s → 422 VALIDATION_FAILED', async (field) => {
      const body = createBody(name);
      delete body[field];
      const res = await call(ctx.sb, 'POST', `/${name}`, { body });
      expectError(res, 422, 'VALIDATION_FAILED');
      expect(res.body.error.details).toContainEqual(expect.objectContaining({ field }));
    });

    test.each(r.required)(
      'create with required field %s empty or not a string → 422 VALIDATION_FAILED',
      async (field) => {
        for (const bad of ['', 42, null]) {
          const res = await call(ctx.sb, 'POST', `/${name}`, { body: createBody(name, { [field]: bad }) });
          expectError(res, 422, 'VALIDATION_FAILED');
        }
      },
    );

    test.each(['id', 'created_at', 'updated_at', 'owner_id'])(
      'create with read-only %s → 422 VALIDATION_FAILED',
      async (field) => {
        const value = field === 'id' ? `${r.idPrefix}mine` : field === 'owner_id' ? 'usr_user' : '2020-01-01T00:00:00Z';
        const res = await call(ctx.sb, 'POST', `/${name}`, { body: createBody(name, { [field]: value }) });
        expectError(res, 422, 'VALIDATION_FAILED');
      },
    );

    test('create with a non-object body or malformed JSON → 422 INVALID_BODY', async () => {
      for (const rawBody of ['[]', '"text"', '42', 'null', '{"a": ', 'not json']) {
        expectError(await call(ctx.sb, 'POST', `/${name}`, { rawBody }), 422, 'INVALID_BODY');
      }
    });
  } else {
    test('no create: POST /{resource} → 405 METHOD_NOT_ALLOWED', async () => {
      expectError(
        await call(ctx.sb, 'POST', `/${name}`, { body: { name: 'x', title: 'x' } }),
        405,
        'METHOD_NOT_ALLOWED',
      );
    });
  }

  if (r.verbs.includes('update')) {
    test('update: PATCH /{resource}/{id} → 200, a merge of the given fields', async () => {
      const rec = await create(ctx.sb, name, { keep_me: 'yes', change_me: 'before' });
      const res = await call(ctx.sb, 'PATCH', `/${name}/${rec.id}`, { body: { change_me: 'after', added: 3 } });
      expectStatus(res, 200);
      expectV2Envelope(res, successEnvelope);
      expect(res.body.data).toMatchObject({ id: rec.id, keep_me: 'yes', change_me: 'after', added: 3 });
      for (const f of r.required) expect(res.body.data[f]).toEqual(rec[f]);
      expect(Date.parse(res.body.data.updated_at)).toBeGreaterThanOrEqual(Date.parse(rec.updated_at));
      expect(res.body.data.created_at).toBe(rec.created_at);
      const got = await call(ctx.sb, 'GET', `/${name}/${rec.id}`);
      expect(got.body.data).toEqual(res.body.data);
    });

    // owner_id may be updated (bulk-change.test.ts); the other server-set fields may not
    test.each(['id', 'created_at', 'updated_at'])('update of read-only %s → 422 VALIDATION_FAILED', async (field) => {
      const rec = await create(ctx.sb, name);
      const value = field === 'id' ? `${r.idPrefix}other` : '2020-01-01T00:00:00Z';
      const res = await call(ctx.sb, 'PATCH', `/${name}/${rec.id}`, { body: { [field]: value } });
      expectError(res, 422, 'VALIDATION_FAILED');
      const got = await call(ctx.sb, 'GET', `/${name}/${rec.id}`);
      expect(got.body.data[field]).toBe(rec[field]);
    });

    test('update with a non-object body → 422 INVALID_BODY', async () => {
      const rec = await create(ctx.sb, name);
      for (const rawBody of ['[]', '"x"', '{bad']) {
        expectError(await call(ctx.sb, 'PATCH', `/${name}/${rec.id}`, { rawBody }), 422, 'INVALID_BODY');
      }
    });

    test('update of an unknown id → 404 NOT_FOUND', async () => {
      expectError(
        await call(ctx.sb, 'PATCH', `/${name}/${r.idPrefix}nonexistent`, { body: { a: 1 } }),
        404,
        'NOT_FOUND',
      );
    });
  } else {
    test('no update: PATCH /{resource}/{id} → 405 METHOD_NOT_ALLOWED', async () => {
      const id = await someId(r);
      expectError(await call(ctx.sb, 'PATCH', `/${name}/${id}`, { body: { title: 'x' } }), 405, 'METHOD_NOT_ALLOWED');
      const got = await call(ctx.sb, 'GET', `/${name}/${id}`);
      expect(got.body.data.title).not.toBe('x');
    });
  }

  if (r.verbs.includes('delete')) {
    test('delete: DELETE /{resource}/{id} → 200 {id, deleted: true}, then 404', async () => {
      const rec = await create(ctx.sb, name);
      const res = await call(ctx.sb, 'DELETE', `/${name}/${rec.id}`);
      expectStatus(res, 200);
      expectV2Envelope(res, successEnvelope);
      expect(res.body.data).toEqual({ id: rec.id, deleted: true });
      expectError(await call(ctx.sb, 'GET', `/${name}/${rec.id}`), 404, 'NOT_FOUND');
      expectError(await call(ctx.sb, 'DELETE', `/${name}/${rec.id}`), 404, 'NOT_FOUND');
      const all = await listAll(ctx.sb, name);
      expect(all.some((x) => x.id === rec.id)).toBe(false);
    });
  } else {
    test('no delete: DELETE /{resource}/{id} → 405 METHOD_NOT_ALLOWED and the record stays', async () => {
      const id = await someId(r);
      expectError(await call(ctx.sb, 'DELETE', `/${name}/${id}`), 405, 'METHOD_NOT_ALLOWED');
      expectStatus(await call(ctx.sb, 'GET', `/${name}/${id}`), 200);
    });
  }

  if (r.batch) {
    test('batch: POST /{resource}/batch → 200 batch', async () => {
      const res = await call(ctx.sb, 'POST', `/${name}/batch`, { body: [createBody(name), createBody(name)] });
      expectStatus(res, 200);
      expect(res.body.object).toBe('batch');
      expect(res.body.data.summary.succeeded).toBe(2);
    });
  } else {
    test('no batch: POST /{resource}/batch → 405 METHOD_NOT_ALLOWED', async () => {
      expectError(await call(ctx.sb, 'POST', `/${name}/batch`, { body: [{ title: 'x' }] }), 405, 'METHOD_NOT_ALLOWED');
    });
  }

  if (!r.links) {
    test('no relationship sub-resources: GET /{resource}/{id}/contacts → 404', async () => {
      const id = await someId(r);
      expectError(await call(ctx.sb, 'GET', `/${name}/${id}/contacts`), 404, 'NOT_FOUND');
    });
  }
});

describe('the spec\'s "Resource | Operations" table matches the table driving these tests', () => {
  const FULL = ['list', 'get', 'create', 'update', 'delete'];
  const SPEC: Array<[string[], string[], boolean]> = [
    [['contacts', 'companies'], FULL, true],
    [['deals', 'pipelines', 'tasks', 'notes', 'segments'], FULL, true],
    [['interactions'], ['list', 'get', 'create'], true],
    [['meetings'], ['list', 'get'], false],
    [['recordings', 'bookings'], ['list', 'get'], false],
  ];
  test.each(SPEC.map(([names, verbs, batch]) => [names.join(', '), names, verbs, batch] as const))(
    'row %s',
    (_label, names, verbs, batch) => {
      for (const n of names) {
        const r = RESOURCES.find((x) => x.name === n)!;
        expect([...r.verbs].sort()).toEqual([...verbs].sort());
        expect(r.batch).toBe(batch);
      }
    },
  );

  test('meetings are read-only plus the deal/company association; deals, notes, segments expose links', () => {
    expect(RESOURCES.find((r) => r.name === 'meetings')!.associations!.map((a) => a.name)).toEqual(['deal', 'company']);
    expect(
      RESOURCES.filter((r) => r.links)
        .map((r) => r.name)
        .sort(),
    ).toEqual(['deals', 'notes', 'segments']);
  });
});

describe('unknown paths (docs/sandbox.md "Paths")', () => {
  test.each(['/widgets', '/widgets/1', '/contacts/con_x/y/z/w', '/'])('GET %s → 404 NOT_FOUND', async (path) => {
    expectError(await call(ctx.sb, 'GET', path), 404, 'NOT_FOUND');
  });

  test('an unknown version root → 404', async () => {
    const res = await call(ctx.sb, 'GET', '/api/v3/contacts');
    expect(res.status).toBe(404);
  });
});

describe('list filters (docs/sandbox.md "Lists and pagination")', () => {
  test('?field=value filters by exact match on a top-level field', async () => {
    const email = uniqueEmail('filter');
    const rec = await create(ctx.sb, 'contacts', { email, city: 'Lyon' });
    await create(ctx.sb, 'contacts', { email: uniqueEmail('other'), city: 'Lyon' });
    const res = await call(ctx.sb, 'GET', '/contacts', { query: { email } });
    expectStatus(res, 200);
    expect(res.body.data.map((x: any) => x.id)).toEqual([rec.id]);
    const partial = await call(ctx.sb, 'GET', '/contacts', { query: { email: email.slice(0, 10) } });
    expect(partial.body.data).toEqual([]);
  });

  test('numbers and booleans compare as their string forms', async () => {
    const rec = await create(ctx.sb, 'deals', { amount: 123457, won: true });
    const byAmount = await call(ctx.sb, 'GET', '/deals', { query: { amount: '123457' } });
    expect(byAmount.body.data.map((x: any) => x.id)).toEqual([rec.id]);
    const byBool = await call(ctx.sb, 'GET', '/deals', { query: { won: 'true', amount: '123457' } });
    expect(byBool.body.data.map((x: any) => x.id)).toEqual([rec.id]);
  });
});
