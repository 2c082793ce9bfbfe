// Spec "Endpoints" (the four relationship sub-resources: GET list, POST link, DELETE unlink),
// "Deal-contact link (request)" (type enum), rule 4 (a deal or note links to many records);
// docs/sandbox.md "Paths" (201 + Location for a new link and for a no-op relink, which returns the
// existing link unchanged; 404 when not linked);
// CONTRACT §6 bodies.
import { describe, expect, test } from 'vitest';
import { listEnvelope, successEnvelope } from '../../../src/api/envelopes.js';
import { DEAL_CONTACT_TYPES } from '../../../src/api/resources.js';
import { linkPairs } from '../../../src/api/links.js';
import {
  call,
  create,
  expectError,
  expectStatus,
  expectV2Envelope,
  queueFaults,
  sleep,
  useSandbox,
} from '../helpers.js';

const ctx = useSandbox();

const SINGULAR: Record<string, string> = { contacts: 'contact', companies: 'company', deals: 'deal' };

function linkBody(childKey: string, childResource: string, childId: string): Record<string, unknown> {
  const body: Record<string, unknown> = { [childKey]: childId };
  if (childKey === 'record_id') body.record_type = SINGULAR[childResource];
  return body;
}

const PAIRS = linkPairs().flatMap(({ parent, link }) =>
  link.childResources.map((child) => ({
    label: `${parent.name}/${link.relation} → ${child}`,
    parent: parent.name,
    link,
    child,
  })),
);

test('the four sub-resources of the spec are in the table', () => {
  expect(
    linkPairs()
      .map(({ parent, link }) => `${parent.name}/${link.relation}`)
      .sort(),
  ).toEqual(['deals/companies', 'deals/contacts', 'notes/records', 'segments/members'].sort());
});

describe.each(PAIRS.map((p) => [p.label, p] as const))('%s', (_label, { parent, link, child }) => {
  test('POST links → 201 success + Location; GET lists the child with a link object', async () => {
    const p = await create(ctx.sb, parent);
    const c = await create(ctx.sb, child);
    const res = await call(ctx.sb, 'POST', `/${parent}/${p.id}/${link.relation}`, {
      body: linkBody(link.childKey, child, c.id),
    });
    expectStatus(res, 201);
    expectV2Envelope(res, successEnvelope);
    expect(res.headers.get('location'), 'Location header').toBeTruthy();
    const list = await call(ctx.sb, 'GET', `/${parent}/${p.id}/${link.relation}`);
    expectStatus(list, 200);
    expectV2Envelope(list, listEnvelope);
    expect(list.body.data.map((x: any) => x.id)).toEqual([c.id]);
    expect(typeof list.body.data[0].link).toBe('object');
    expect(list.body.data[0].link).not.toBeNull();
  });

  test('relinking an already-linked child is a no-op → 201 + Location with the existing link unchanged', async () => {
    const p = await create(ctx.sb, parent);
    const c = await create(ctx.sb, child);
    const path = `/${parent}/${p.id}/${link.relation}`;
    const first = await call(ctx.sb, 'POST', path, { body: linkBody(link.childKey, child, c.id) });
    expectStatus(first, 201);
    await sleep(15);
    const again = await call(ctx.sb, 'POST', path, { body: linkBody(link.childKey, child, c.id) });
    expectStatus(again, 201);
    expectV2Envelope(again, successEnvelope);
    expect(again.headers.get('location')).toBe(first.headers.get('location'));
    expect(again.body.data).toEqual(first.body.data);
    // the existing link: created before this response's server time (a new one is created at it)
    expect(Date.parse(first.body.data.created_at)).toBeLessThanOrEqual(Date.parse(first.body.meta.timestamp));
    expect(Date.parse(again.body.data.created_at)).toBeLessThan(Date.parse(again.body.meta.timestamp));
    expect(Date.parse(again.body.meta.timestamp)).toBeGreaterThan(Date.parse(first.body.meta.timestamp));
    const list = await call(ctx.sb, 'GET', path);
    expect(list.body.data).toHaveLength(1);
  });

  test('DELETE …/{child_id} unlinks (200); a second DELETE → 404', async () => {
    const p = await create(ctx.sb, parent);
    const c = await create(ctx.sb, child);
    const path = `/${parent}/${p.id}/${link.relation}`;
    expectStatus(await call(ctx.sb, 'POST', path, { body: linkBody(link.childKey, child, c.id) }), 201);
    const del = await call(ctx.sb, 'DELETE', `${path}/${c.id}`);
    expectStatus(del, 200);
    expectV2Envelope(del, successEnvelope);
    const list = await call(ctx.sb, 'GET', path);
    expect(list.body.data).toEqual([]);
    expectError(await call(ctx.sb, 'DELETE', `${path}/${c.id}`), 404, 'NOT_FOUND');
    // the child itself is untouched
    expectStatus(await call(ctx.sb, 'GET', `/${child}/${c.id}`), 200);
  });

  test('an unknown parent → 404 on GET, POST and DELETE', async () => {
    const c = await create(ctx.sb, child);
    const path = `/${parent}/nope_unknown/${link.relation}`;
    expectError(await call(ctx.sb, 'GET', path), 404, 'NOT_FOUND');
    expectError(await call(ctx.sb, 'POST', path, { body: linkBody(link.childKey, child, c.id) }), 404, 'NOT_FOUND');
    expectError(await call(ctx.sb, 'DELETE', `${path}/${c.id}`), 404, 'NOT_FOUND');
  });

  test('an unknown child → 404 and nothing is linked', async () => {
    const p = await create(ctx.sb, parent);
    const path = `/${parent}/${p.id}/${link.relation}`;
    const res = await call(ctx.sb, 'POST', path, {
      body: linkBody(link.childKey, child, `${child.slice(0, 3)}_unknown`),
    });
    expectError(res, 404, 'NOT_FOUND');
    expect((await call(ctx.sb, 'GET', path)).body.data).toEqual([]);
  });

  test('a body without the child field → 422 VALIDATION_FAILED', async () => {
    const p = await create(ctx.sb, parent);
    expectError(
      await call(ctx.sb, 'POST', `/${parent}/${p.id}/${link.relation}`, { body: {} }),
      422,
      'VALIDATION_FAILED',
    );
  });

  test('a parent links to many records (spec rule 4)', async () => {
    const p = await create(ctx.sb, parent);
    const path = `/${parent}/${p.id}/${link.relation}`;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const c = await create(ctx.sb, child);
      ids.push(c.id);
      expectStatus(await call(ctx.sb, 'POST', path, { body: linkBody(link.childKey, child, c.id) }), 201);
    }
    const list = await call(ctx.sb, 'GET', path);
    expect(list.body.data.map((x: any) => x.id).sort()).toEqual(ids.sort());
  });

  test('the readonly key can list links but not link (403 INSUFFICIENT_SCOPE)', async () => {
    const p = await create(ctx.sb, parent);
    const c = await create(ctx.sb, child);
    const path = `/${parent}/${p.id}/${link.relation}`;
    expectStatus(await call(ctx.sb, 'GET', path, { key: ctx.sb.keys.readonly }), 200);
    const res = await call(ctx.sb, 'POST', path, {
      key: ctx.sb.keys.readonly,
      body: linkBody(link.childKey, child, c.id),
    });
    expectError(res, 403, 'INSUFFICIENT_SCOPE');
    expect(res.body.error.details).toContainEqual({ required_scope: `${parent}:write` });
  });

  test('PUT and PATCH on a link path → 405', async () => {
    const p = await create(ctx.sb, parent);
    const path = `/${parent}/${p.id}/${link.relation}`;
    expectError(await call(ctx.sb, 'PUT', path, { body: {} }), 405, 'METHOD_NOT_ALLOWED');
    expectError(await call(ctx.sb, 'PATCH', path, { body: {} }), 405, 'METHOD_NOT_ALLOWED');
  });
});

describe('link lists paginate like every list (spec Endpoints rule 1)', () => {
  test('30 members: default page of 25 with has_next_page, the cursor gives the other 5', async () => {
    const seg = await create(ctx.sb, 'segments');
    const res = await call(ctx.sb, 'POST', '/contacts/batch', {
      body: Array.from({ length: 30 }, (_, i) => ({ email: `member${i}-${seg.id}@example.test` })),
    });
    expectStatus(res, 200);
    const ids: string[] = res.body.data.items.map((i: any) => i.data.id);
    for (const id of ids)
      expectStatus(await call(ctx.sb, 'POST', `/segments/${seg.id}/members`, { body: { contact_id: id } }), 201);
    const first = await call(ctx.sb, 'GET', `/segments/${seg.id}/members`);
    expectV2Envelope(first, listEnvelope);
    expect(first.body.data).toHaveLength(25);
    expect(first.body.page_info.has_next_page).toBe(true);
    const second = await call(ctx.sb, 'GET', `/segments/${seg.id}/members`, {
      query: { cursor: first.body.page_info.end_cursor },
    });
    expectStatus(second, 200);
    expect(second.body.data).toHaveLength(5);
    expect(second.body.page_info.has_next_page).toBe(false);
    expect([...first.body.data, ...second.body.data].map((x: any) => x.id).sort()).toEqual([...ids].sort());
    expectError(
      await call(ctx.sb, 'GET', `/segments/${seg.id}/members`, { query: { limit: 101 } }),
      422,
      'INVALID_PARAMETER',
    );
  });
});

describe('deal-contact link body (spec: Deal-contact link (request))', () => {
  test.each([...DEAL_CONTACT_TYPES])('type %s is accepted', async (type) => {
    const d = await create(ctx.sb, 'deals');
    const c = await create(ctx.sb, 'contacts');
    const res = await call(ctx.sb, 'POST', `/deals/${d.id}/contacts`, { body: { contact_id: c.id, type } });
    expectStatus(res, 201);
  });

  test.each(['BOSS', 'primary', '', 'Champion', 7])(
    'type %s outside the enum → 422 VALIDATION_FAILED',
    async (type) => {
      const d = await create(ctx.sb, 'deals');
      const c = await create(ctx.sb, 'contacts');
      const res = await call(ctx.sb, 'POST', `/deals/${d.id}/contacts`, { body: { contact_id: c.id, type } });
      expectError(res, 422, 'VALIDATION_FAILED');
      expect((await call(ctx.sb, 'GET', `/deals/${d.id}/contacts`)).body.data).toEqual([]);
    },
  );

  test('supervisor (a string) is accepted with a type', async () => {
    const d = await create(ctx.sb, 'deals');
    const c = await create(ctx.sb, 'contacts');
    const res = await call(ctx.sb, 'POST', `/deals/${d.id}/contacts`, {
      body: { contact_id: c.id, type: 'CHAMPION', supervisor: 'usr_boss' },
    });
    expectStatus(res, 201);
    const list = await call(ctx.sb, 'GET', `/deals/${d.id}/contacts`);
    expect(list.body.data[0].link).toMatchObject({ type: 'CHAMPION', supervisor: 'usr_boss' });
  });

  test('relinking with another type is still a no-op: 201 and the existing link unchanged', async () => {
    const d = await create(ctx.sb, 'deals');
    const c = await create(ctx.sb, 'contacts');
    const path = `/deals/${d.id}/contacts`;
    const first = await call(ctx.sb, 'POST', path, { body: { contact_id: c.id, type: 'CHAMPION' } });
    expectStatus(first, 201);
    const again = await call(ctx.sb, 'POST', path, { body: { contact_id: c.id, type: 'BLOCKER' } });
    expectStatus(again, 201);
    expect(again.headers.get('location')).toBe(first.headers.get('location'));
    expect(again.body.data).toEqual(first.body.data);
    const list = await call(ctx.sb, 'GET', path);
    expect(list.body.data).toHaveLength(1);
    expect(list.body.data[0].link.type).toBe('CHAMPION');
  });

  test('a non-string supervisor → 422', async () => {
    const d = await create(ctx.sb, 'deals');
    const c = await create(ctx.sb, 'contacts');
    expectError(
      await call(ctx.sb, 'POST', `/deals/${d.id}/contacts`, { body: { contact_id: c.id, supervisor: 5 } }),
      422,
    );
  });

  test('a non-object body → 422 INVALID_BODY', async () => {
    const d = await create(ctx.sb, 'deals');
    expectError(await call(ctx.sb, 'POST', `/deals/${d.id}/contacts`, { rawBody: '["x"]' }), 422, 'INVALID_BODY');
  });
});

describe('POST /deals/{id}/contacts documented errors: 401, 403, 404, 422, 429, 500', () => {
  test('401 without a key', async () => {
    const d = await create(ctx.sb, 'deals');
    const c = await create(ctx.sb, 'contacts');
    expectError(
      await call(ctx.sb, 'POST', `/deals/${d.id}/contacts`, { key: null, body: { contact_id: c.id } }),
      401,
      'UNAUTHENTICATED',
    );
  });

  test('429 and 500 (injected) use the error envelope and link nothing', async () => {
    const d = await create(ctx.sb, 'deals');
    const c = await create(ctx.sb, 'contacts');
    await queueFaults(ctx.sb, [
      { kind: '429', method: 'POST', path: '/contacts$' },
      { kind: '500', method: 'POST', path: '/contacts$' },
    ]);
    const path = `/deals/${d.id}/contacts`;
    expectError(await call(ctx.sb, 'POST', path, { body: { contact_id: c.id } }), 429, 'RATE_LIMITED');
    expectError(await call(ctx.sb, 'POST', path, { body: { contact_id: c.id } }), 500, 'INTERNAL_ERROR');
    expect((await call(ctx.sb, 'GET', path)).body.data).toEqual([]);
    expectStatus(await call(ctx.sb, 'POST', path, { body: { contact_id: c.id } }), 201);
  });

  test('a link to a child of the wrong kind is refused (a company id as contact_id)', async () => {
    const d = await create(ctx.sb, 'deals');
    const cmp = await create(ctx.sb, 'companies');
    const res = await call(ctx.sb, 'POST', `/deals/${d.id}/contacts`, { body: { contact_id: cmp.id } });
    expect([404, 422]).toContain(res.status);
    expectError(res, res.status);
  });
});

describe("access (docs/sandbox.md: link of another user's record is 403 FORBIDDEN_RECORD)", () => {
  test("the user-bound key cannot link to or from the admin's records", async () => {
    const adminDeal = await create(ctx.sb, 'deals');
    const userContact = await create(ctx.sb, 'contacts', {}, ctx.sb.keys.user);
    const res = await call(ctx.sb, 'POST', `/deals/${adminDeal.id}/contacts`, {
      key: ctx.sb.keys.user,
      body: { contact_id: userContact.id },
    });
    expectError(res, 403, 'FORBIDDEN_RECORD');
    expectError(
      await call(ctx.sb, 'GET', `/deals/${adminDeal.id}/contacts`, { key: ctx.sb.keys.user }),
      403,
      'FORBIDDEN_RECORD',
    );
  });

  test('the user-bound key links its own records', async () => {
    const d = await create(ctx.sb, 'deals', {}, ctx.sb.keys.user);
    const c = await create(ctx.sb, 'contacts', {}, ctx.sb.keys.user);
    expectStatus(
      await call(ctx.sb, 'POST', `/deals/${d.id}/contacts`, { key: ctx.sb.keys.user, body: { contact_id: c.id } }),
      201,
    );
  });
});
