// Spec "Version 1 shapes" (Person, Interaction, company update fields), "Version 1 (deprecated)"
// endpoints table, Versioning rules 2–3 (people = contacts); docs/sandbox.md "Version 1".
import { describe, expect, test } from 'vitest';
import { v1SuccessEnvelope } from '../../../src/api/envelopes.js';
import { V1_COMPANY_FIELDS, V1_INTERACTION_FIELDS, V1_PERSON_FIELDS } from '../../../src/api/v1.js';
import {
  call,
  create,
  expectStatus,
  expectV1Error,
  listAll,
  useSandbox,
  type CallResult,
  type SandboxHandle,
} from '../helpers.js';

const ctx = useSandbox();
const withCursor = useSandbox({ v1InteractionsCursor: true });

const PERSON_FIELDS = Object.values(V1_PERSON_FIELDS);
const INTERACTION_FIELDS = Object.values(V1_INTERACTION_FIELDS);
const DATE_FIELDS = new Set(['creationTime', 'lastInteraction', 'interactionDate']);

const v1 = (sb: SandboxHandle, method: string, path: string, body?: unknown): Promise<CallResult> =>
  call(sb, method, `/api/v1${path}`, { key: sb.keys.v1, body });

function expectV1Success(res: CallResult): void {
  expectStatus(res, 200);
  const parsed = v1SuccessEnvelope.safeParse(res.body);
  expect(parsed.success, res.text.slice(0, 300)).toBe(true);
  expect(res.headers.get('content-type') ?? '').toMatch(/^application\/json/);
}

function expectShape(obj: Record<string, unknown>, fields: string[], arrays: string[] = []): void {
  for (const k of Object.keys(obj)) expect(fields, `unexpected field ${k}`).toContain(k);
  expect(typeof obj.id).toBe('string');
  for (const [k, v] of Object.entries(obj)) {
    if (v === null || v === undefined) continue;
    if (arrays.includes(k)) {
      expect(Array.isArray(v), k).toBe(true);
      for (const x of v as unknown[]) expect(typeof x).toBe('string');
    } else {
      expect(typeof v, k).toBe('string');
      if (DATE_FIELDS.has(k)) expect(Number.isNaN(Date.parse(v as string)), k).toBe(false);
    }
  }
}

describe('POST /people/query', () => {
  test("→ {success: true, nextCursor, data: {people}} with exactly the spec's Person fields (camelCase)", async () => {
    const res = await v1(ctx.sb, 'POST', '/people/query', { limit: 10 });
    expectV1Success(res);
    expect(res.body.success).toBe(true);
    expect('nextCursor' in res.body).toBe(true);
    expect(typeof res.body.nextCursor).toBe('string');
    expect(Object.keys(res.body.data)).toEqual(['people']);
    expect(res.body.data.people).toHaveLength(10);
    for (const p of res.body.data.people) {
      expectShape(p, PERSON_FIELDS);
      for (const k of ['id', 'email', 'owner', 'creationTime']) expect(p, k).toHaveProperty(k);
    }
  });

  test('a person is the v2 contact, field for field', async () => {
    const cmp = await create(ctx.sb, 'companies');
    const c = await create(ctx.sb, 'contacts', {
      first_name: 'Grace',
      last_name: 'Hopper',
      phone: '+1 555 0199',
      title: 'Rear Admiral',
      source: 'import',
      linkedin: 'https://linkedin.example/grace',
      company_id: cmp.id,
      created_by: 'usr_creator',
      last_interaction_at: '2026-03-04T05:06:07.000Z',
      nickname: 'not a v1 field',
    });
    const res = await v1(ctx.sb, 'POST', '/people/query', { filter: { email: c.email } });
    expectV1Success(res);
    expect(res.body.data.people).toHaveLength(1);
    const p = res.body.data.people[0];
    expectShape(p, PERSON_FIELDS);
    expect(p).toMatchObject({
      id: c.id,
      email: c.email,
      firstName: 'Grace',
      lastName: 'Hopper',
      phone: '+1 555 0199',
      title: 'Rear Admiral',
      source: 'import',
      linkedin: 'https://linkedin.example/grace',
      owner: 'usr_admin',
      companyId: cmp.id,
      createdBy: 'usr_creator',
    });
    expect(Object.keys(p).sort()).toEqual([...PERSON_FIELDS].sort()); // exactly the spec's Person fields
    expect(Date.parse(p.creationTime)).toBe(Date.parse(c.created_at));
    expect(Date.parse(p.lastInteraction)).toBe(Date.parse('2026-03-04T05:06:07.000Z'));
    for (const k of Object.keys(p)) expect(k).not.toMatch(/_/);
  });

  test('nextCursor pages across several pages: every contact once, null on the last page', async () => {
    const all = await listAll(ctx.sb, 'contacts');
    const seen: string[] = [];
    let cursor: string | null | undefined;
    let pages = 0;
    do {
      const body: Record<string, unknown> = { limit: 7 };
      if (cursor) body.cursor = cursor;
      const res = await v1(ctx.sb, 'POST', '/people/query', body);
      expectV1Success(res);
      pages++;
      seen.push(...res.body.data.people.map((p: any) => p.id));
      cursor = res.body.nextCursor;
      expect(cursor === null || typeof cursor === 'string').toBe(true);
    } while (cursor && pages < 100);
    expect(cursor).toBeNull();
    expect(pages).toBeGreaterThan(3);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.sort()).toEqual(all.map((c) => c.id).sort());
  });

  test('filters: email, companyId, owner, phone (exact matches)', async () => {
    const cmp = await create(ctx.sb, 'companies');
    const a = await create(ctx.sb, 'contacts', { company_id: cmp.id, phone: '+47 1234' });
    const b = await create(ctx.sb, 'contacts', { company_id: cmp.id });
    const byCompany = await v1(ctx.sb, 'POST', '/people/query', { filter: { companyId: cmp.id } });
    expect(byCompany.body.data.people.map((p: any) => p.id).sort()).toEqual([a.id, b.id].sort());
    const byPhone = await v1(ctx.sb, 'POST', '/people/query', { filter: { phone: '+47 1234' } });
    expect(byPhone.body.data.people.map((p: any) => p.id)).toEqual([a.id]);
    const byOwner = await v1(ctx.sb, 'POST', '/people/query', { filter: { owner: 'usr_user' }, limit: 100 });
    expect(byOwner.body.data.people.length).toBeGreaterThan(0);
    for (const p of byOwner.body.data.people) expect(p.owner).toBe('usr_user');
    const none = await v1(ctx.sb, 'POST', '/people/query', { filter: { email: 'nobody@nowhere.invalid' } });
    expect(none.body.data.people).toEqual([]);
    expect(none.body.nextCursor).toBeNull();
  });

  test('default limit 25; limit outside 1–100 → 422', async () => {
    const res = await v1(ctx.sb, 'POST', '/people/query', {});
    expect(res.body.data.people).toHaveLength(25);
    for (const limit of [0, 101, 'ten', 2.5]) {
      const bad = await v1(ctx.sb, 'POST', '/people/query', { limit });
      expectV1Error(bad, 422);
    }
  });

  test('an undecodable cursor → 422', async () => {
    expectV1Error(await v1(ctx.sb, 'POST', '/people/query', { cursor: '!!!' }), 422);
  });

  test('an empty body is allowed; a non-object body → 422', async () => {
    expectV1Success(await call(ctx.sb, 'POST', '/api/v1/people/query', { key: ctx.sb.keys.v1, rawBody: '{}' }));
    expectV1Error(await call(ctx.sb, 'POST', '/api/v1/people/query', { key: ctx.sb.keys.v1, rawBody: '[1]' }), 422);
  });
});

describe('POST /interactions/query', () => {
  test("→ {success: true, data: {interactions}} with no nextCursor; exactly the spec's Interaction fields", async () => {
    const res = await v1(ctx.sb, 'POST', '/interactions/query', { limit: 10 });
    expectV1Success(res);
    expect('nextCursor' in res.body).toBe(false);
    expect(Object.keys(res.body.data)).toEqual(['interactions']);
    expect(res.body.data.interactions).toHaveLength(10);
    for (const i of res.body.data.interactions) {
      expectShape(i, INTERACTION_FIELDS, ['companies', 'contacts']);
      for (const k of ['id', 'type', 'creationTime']) expect(i, k).toHaveProperty(k);
    }
  });

  test('an interaction is the v2 interaction in camelCase', async () => {
    const cmp = await create(ctx.sb, 'companies');
    const con = await create(ctx.sb, 'contacts');
    const it = await create(ctx.sb, 'interactions', {
      type: 'email',
      direction: 'inbound',
      title: 'Hello',
      summary: 'A greeting',
      company_ids: [cmp.id],
      contact_ids: [con.id],
      interaction_date: '2026-01-02T03:04:05.000Z',
      sentiment: 'positive',
      source: 'gmail',
      created_by: 'usr_creator',
      internal_note: 'not a v1 field',
    });
    const res = await v1(ctx.sb, 'POST', '/interactions/query', { filter: { contactId: con.id } });
    expectV1Success(res);
    expect(res.body.data.interactions).toHaveLength(1);
    const i = res.body.data.interactions[0];
    expectShape(i, INTERACTION_FIELDS, ['companies', 'contacts']);
    expect(i).toMatchObject({
      id: it.id,
      type: 'email',
      direction: 'inbound',
      title: 'Hello',
      summary: 'A greeting',
      companies: [cmp.id],
      contacts: [con.id],
      sentiment: 'positive',
      source: 'gmail',
      createdBy: 'usr_creator',
    });
    expect(Object.keys(i).sort()).toEqual([...INTERACTION_FIELDS].sort()); // exactly the spec's Interaction fields
    expect(Date.parse(i.creationTime)).toBe(Date.parse(it.created_at));
    expect(Date.parse(i.interactionDate)).toBe(Date.parse('2026-01-02T03:04:05.000Z'));
    const byCompany = await v1(ctx.sb, 'POST', '/interactions/query', { filter: { companyId: cmp.id } });
    expect(byCompany.body.data.interactions.map((x: any) => x.id)).toEqual([it.id]);
  });

  test('with v1InteractionsCursor a top-level nextCursor pages across several pages', async () => {
    const all = await listAll(withCursor.sb, 'interactions');
    const seen: string[] = [];
    let cursor: string | null | undefined;
    let pages = 0;
    do {
      const body: Record<string, unknown> = { limit: 8 };
      if (cursor) body.cursor = cursor;
      const res = await v1(withCursor.sb, 'POST', '/interactions/query', body);
      expectV1Success(res);
      expect('nextCursor' in res.body).toBe(true);
      pages++;
      seen.push(...res.body.data.interactions.map((x: any) => x.id));
      cursor = res.body.nextCursor;
    } while (cursor && pages < 100);
    expect(cursor).toBeNull();
    expect(pages).toBe(Math.ceil(all.length / 8));
    expect(seen.sort()).toEqual(all.map((x) => x.id).sort());
  });

  test('limit outside 1–100 → 422', async () => {
    expectV1Error(await v1(ctx.sb, 'POST', '/interactions/query', { limit: 101 }), 422);
  });
});

describe('PATCH /companies/{companyId}', () => {
  test('→ 200 {success: true, data: {id}} and updates the v2 company (camelCase → snake_case)', async () => {
    const cmp = await create(ctx.sb, 'companies');
    const body = {
      name: 'Renamed Inc',
      domain: 'renamed.example',
      foundedYear: 1999,
      altIndustries: ['software', 'consulting'],
      tags: ['a', 'b'],
      city: 'Oslo',
      remarks: 'via v1',
    };
    const res = await v1(ctx.sb, 'PATCH', `/companies/${cmp.id}`, body);
    expectV1Success(res);
    expect(res.body).toMatchObject({ success: true, data: { id: cmp.id } });
    expect(Object.keys(res.body.data)).toEqual(['id']);
    const got = await call(ctx.sb, 'GET', `/companies/${cmp.id}`);
    expect(got.body.data).toMatchObject({
      name: 'Renamed Inc',
      domain: 'renamed.example',
      founded_year: 1999,
      alt_industries: ['software', 'consulting'],
      tags: ['a', 'b'],
      city: 'Oslo',
      remarks: 'via v1',
    });
    expect(got.body.data).not.toHaveProperty('foundedYear');
    expect(got.body.data).not.toHaveProperty('altIndustries');
  });

  test.each(Object.entries(V1_COMPANY_FIELDS))('field %s (%s) is accepted', async (field, type) => {
    const cmp = await create(ctx.sb, 'companies');
    const value = type === 'integer' ? 2001 : type === 'string[]' ? ['x', 'y'] : 'value';
    expectV1Success(await v1(ctx.sb, 'PATCH', `/companies/${cmp.id}`, { [field]: value }));
  });

  const invalid: Array<[string, Record<string, unknown>, string]> = [
    ['an unknown field', { industry: 'x' }, 'industry'],
    ['a snake_case field', { founded_year: 1999 }, 'founded_year'],
    ['foundedYear non-integer (2.5)', { foundedYear: 1999.5 }, 'foundedYear'],
    ['foundedYear a string', { foundedYear: '1999' }, 'foundedYear'],
    ['tags not an array', { tags: 'a,b' }, 'tags'],
    ['tags an array of numbers', { tags: [1, 2] }, 'tags'],
    ['altIndustries not an array', { altIndustries: 'software' }, 'altIndustries'],
    ['name not a string', { name: 42 }, 'name'],
    ['city an object', { city: { a: 1 } }, 'city'],
  ];
  test.each(invalid)('%s → 422 VALIDATION_FAILED naming the field; nothing changes', async (_label, body, field) => {
    const cmp = await create(ctx.sb, 'companies', { city: 'Unchanged' });
    const res = await v1(ctx.sb, 'PATCH', `/companies/${cmp.id}`, { city: 'Changed', ...body });
    expectV1Error(res, 422, 'VALIDATION_FAILED');
    expect(JSON.stringify(res.body.error)).toContain(field);
    const got = await call(ctx.sb, 'GET', `/companies/${cmp.id}`);
    expect(got.body.data.city).toBe('Unchanged');
  });

  test('an unknown company → 404', async () => {
    expectV1Error(await v1(ctx.sb, 'PATCH', '/companies/cmp_nonexistent', { name: 'x' }), 404, 'NOT_FOUND');
  });

  test('a non-object body → 422', async () => {
    const cmp = await create(ctx.sb, 'companies');
    expectV1Error(
      await call(ctx.sb, 'PATCH', `/api/v1/companies/${cmp.id}`, { key: ctx.sb.keys.v1, rawBody: '["x"]' }),
      422,
    );
  });
});

describe('only the three operations exist', () => {
  test('other v1 paths → 404; other methods on the three → 405', async () => {
    expectV1Error(await v1(ctx.sb, 'GET', '/people'), 404);
    expectV1Error(await v1(ctx.sb, 'POST', '/contacts/query', {}), 404);
    expectV1Error(await v1(ctx.sb, 'POST', '/deals/query', {}), 404);
    expectV1Error(await v1(ctx.sb, 'GET', '/people/query'), 405, 'METHOD_NOT_ALLOWED');
    expectV1Error(await v1(ctx.sb, 'GET', '/interactions/query'), 405, 'METHOD_NOT_ALLOWED');
    const cmp = await create(ctx.sb, 'companies');
    expectV1Error(await v1(ctx.sb, 'GET', `/companies/${cmp.id}`), 405, 'METHOD_NOT_ALLOWED');
    expectV1Error(await v1(ctx.sb, 'DELETE', `/companies/${cmp.id}`), 405, 'METHOD_NOT_ALLOWED');
  });
});
