// Spec "Endpoints" rule 1 (cursor = previous end_cursor, stop when has_next_page is false) and
// docs/sandbox.md "Lists and pagination": limit 1–100 default 25, opaque base64url cursors,
// INVALID_PARAMETER / INVALID_CURSOR, creation order stable under inserts and deletes.
import { describe, expect, test } from 'vitest';
import { listEnvelope } from '../../../src/api/envelopes.js';
import { PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX } from '../../../src/api/resources.js';
import {
  ROOMY,
  call,
  create,
  createBody,
  expectError,
  expectStatus,
  expectV2Envelope,
  listAll,
  startSandbox,
  useSandbox,
} from '../helpers.js';

const ctx = useSandbox();

async function page(resource: string, query: Record<string, string | number>) {
  const res = await call(ctx.sb, 'GET', `/${resource}`, { query });
  expectStatus(res, 200);
  expectV2Envelope(res, listEnvelope);
  return res.body as {
    data: Array<Record<string, any>>;
    page_info: { end_cursor: string | null; has_next_page: boolean };
  };
}

describe('page size', () => {
  test('default page size is 25 (seed: 40 contacts)', async () => {
    const p = await page('contacts', {});
    expect(p.data).toHaveLength(PAGE_SIZE_DEFAULT);
    expect(p.page_info.has_next_page).toBe(true);
    expect(typeof p.page_info.end_cursor).toBe('string');
  });

  test('limit=100 (the maximum) is accepted and returns 100 when more exist', async () => {
    const batch = await call(ctx.sb, 'POST', '/companies/batch', {
      body: Array.from({ length: 100 }, () => createBody('companies')),
    });
    expectStatus(batch, 200);
    const p = await page('companies', { limit: PAGE_SIZE_MAX });
    expect(p.data).toHaveLength(PAGE_SIZE_MAX);
    expect(p.page_info.has_next_page).toBe(true);
    const rest = await page('companies', { limit: PAGE_SIZE_MAX, cursor: p.page_info.end_cursor! });
    expect(rest.data).toHaveLength(12); // 12 seeded + 100
    expect(rest.page_info.has_next_page).toBe(false);
  });

  test('limit=1 is accepted', async () => {
    const p = await page('contacts', { limit: 1 });
    expect(p.data).toHaveLength(1);
    expect(p.page_info.has_next_page).toBe(true);
  });

  test.each(['101', '1000', '0', '-1', 'abc', '2.5'])('limit=%s → 422 INVALID_PARAMETER', async (limit) => {
    const res = await call(ctx.sb, 'GET', '/contacts', { query: { limit } });
    expectError(res, 422, 'INVALID_PARAMETER');
    expect(res.body.error.details).toEqual([{ field: 'limit', issue: 'invalid' }]);
  });
});

describe('cursors', () => {
  test('following end_cursor walks every record once, in creation order, ending with has_next_page false', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    for (;;) {
      const query: Record<string, string | number> = { limit: 7 };
      if (cursor) query.cursor = cursor;
      const p = await page('contacts', query);
      pages++;
      seen.push(...p.data.map((x) => x.id));
      if (!p.page_info.has_next_page) break;
      expect(p.data).toHaveLength(7);
      cursor = p.page_info.end_cursor;
      expect(cursor).toBeTruthy();
    }
    expect(new Set(seen).size).toBe(seen.length);
    const all = await page('contacts', { limit: 100 });
    expect(seen).toEqual(all.data.map((x) => x.id));
    expect(pages).toBe(Math.ceil(all.data.length / 7));
    // creation order
    const created = all.data.map((x) => Date.parse(x.created_at));
    for (let i = 1; i < created.length; i++) expect(created[i]!).toBeGreaterThanOrEqual(created[i - 1]!);
  });

  test('cursors are opaque base64url strings, not ids or offsets', async () => {
    const p = await page('contacts', { limit: 5 });
    const cursor = p.page_info.end_cursor!;
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(cursor).not.toBe(p.data[4]!.id);
    expect(cursor).not.toBe('5');
  });

  test('a cursor does not reveal its position or list when decoded', async () => {
    const p = await page('contacts', { limit: 5 });
    const decoded = Buffer.from(p.page_info.end_cursor!, 'base64url').toString('latin1');
    expect(decoded).not.toContain('contacts');
    expect(decoded).not.toMatch(/"s"|"p"/);
  });

  test.each([
    ['the old plain form {"s":14,"p":"contacts"}', Buffer.from('{"s":14,"p":"contacts"}').toString('base64url')],
    ['a plain form with a later position', Buffer.from('{"s":999999,"p":"contacts"}').toString('base64url')],
    ["random bytes of a real cursor's length", Buffer.alloc(30, 7).toString('base64url')],
  ])('a self-built cursor (%s) → 422 INVALID_CURSOR naming the field', async (_label, cursor) => {
    const res = await call(ctx.sb, 'GET', '/contacts', { query: { cursor } });
    expectError(res, 422, 'INVALID_CURSOR');
    expect(res.body.error.details).toEqual([{ field: 'cursor', issue: 'invalid' }]);
  });

  test('an altered cursor (any one byte changed, or cut) → 422 INVALID_CURSOR; the original still works', async () => {
    const p = await page('contacts', { limit: 3 });
    const cursor = p.page_info.end_cursor!;
    const bytes = Buffer.from(cursor, 'base64url');
    for (const i of [0, 8, 16, bytes.length - 1]) {
      const altered = Buffer.from(bytes);
      altered[i] = altered[i]! ^ 0x01;
      expectError(
        await call(ctx.sb, 'GET', '/contacts', { query: { cursor: altered.toString('base64url') } }),
        422,
        'INVALID_CURSOR',
      );
    }
    expectError(
      await call(ctx.sb, 'GET', '/contacts', { query: { cursor: cursor.slice(0, -2) } }),
      422,
      'INVALID_CURSOR',
    );
    expectStatus(await call(ctx.sb, 'GET', '/contacts', { query: { cursor, limit: 3 } }), 200);
  });

  test('a cursor of another list, or of another sandbox, → 422 INVALID_CURSOR', async () => {
    const deals = await page('deals', { limit: 2 });
    expectError(
      await call(ctx.sb, 'GET', '/contacts', { query: { cursor: deals.page_info.end_cursor! } }),
      422,
      'INVALID_CURSOR',
    );
    const other = await startSandbox({ ...ROOMY });
    try {
      await call(other, 'POST', '/contacts', { body: createBody('contacts') });
      await call(other, 'POST', '/contacts', { body: createBody('contacts') });
      const res = await call(other, 'GET', '/contacts', { query: { limit: 1 } });
      const foreign = res.body.page_info.end_cursor;
      expect(typeof foreign).toBe('string');
      expectError(await call(ctx.sb, 'GET', '/contacts', { query: { cursor: foreign } }), 422, 'INVALID_CURSOR');
    } finally {
      await other.close();
    }
  });

  test('seeded sandboxes issue the same cursors (deterministic)', async () => {
    const a = await startSandbox({ seed: 42, ...ROOMY });
    try {
      const mine = await page('contacts', { limit: 7 });
      const theirs = (await call(a, 'GET', '/contacts', { query: { limit: 7 } })).body;
      expect(theirs.page_info.end_cursor).toBe(mine.page_info.end_cursor);
    } finally {
      await a.close();
    }
  });

  test.each(['!!!', 'not a cursor', '%%%', '@@@@'])('an undecodable cursor %s → 422 INVALID_CURSOR', async (cursor) => {
    expectError(await call(ctx.sb, 'GET', '/contacts', { query: { cursor } }), 422, 'INVALID_CURSOR');
  });

  test.each([
    ['base64url of plain text', Buffer.from('hello world').toString('base64url')],
    ['base64url of a JSON array', Buffer.from('[1,2,3]').toString('base64url')],
    ['base64url of an object with a wrong position', Buffer.from('{"s":"x"}').toString('base64url')],
  ])('a cursor that decodes to nonsense (%s) → 422 INVALID_CURSOR', async (_label, cursor) => {
    expectError(await call(ctx.sb, 'GET', '/contacts', { query: { cursor } }), 422, 'INVALID_CURSOR');
  });

  test('end_cursor is null and has_next_page false on an empty page', async () => {
    const p = await page('contacts', { email: 'nobody-at-all@nowhere.invalid' });
    expect(p.data).toEqual([]);
    expect(p.page_info.end_cursor).toBeNull();
    expect(p.page_info.has_next_page).toBe(false);
  });

  test('the last page has has_next_page false even when it is exactly full', async () => {
    const all = await listAll(ctx.sb, 'pipelines');
    const p = await page('pipelines', { limit: all.length });
    expect(p.data).toHaveLength(all.length);
    expect(p.page_info.has_next_page).toBe(false);
  });

  test('a cursor keeps working with another limit', async () => {
    const first = await page('contacts', { limit: 3 });
    const next = await page('contacts', { limit: 10, cursor: first.page_info.end_cursor! });
    const all = await page('contacts', { limit: 13 });
    expect([...first.data, ...next.data].map((x) => x.id)).toEqual(all.data.map((x) => x.id));
  });

  test('filters combine with cursors', async () => {
    for (let i = 0; i < 5; i++) await create(ctx.sb, 'tasks', { status: 'pager-filter' });
    const first = await page('tasks', { status: 'pager-filter', limit: 2 });
    expect(first.data).toHaveLength(2);
    const second = await page('tasks', { status: 'pager-filter', limit: 2, cursor: first.page_info.end_cursor! });
    const third = await page('tasks', { status: 'pager-filter', limit: 2, cursor: second.page_info.end_cursor! });
    expect(third.data).toHaveLength(1);
    expect(third.page_info.has_next_page).toBe(false);
    const ids = [...first.data, ...second.data, ...third.data].map((x) => x.id);
    expect(new Set(ids).size).toBe(5);
    for (const x of [...first.data, ...second.data, ...third.data]) expect(x.status).toBe('pager-filter');
  });
});

describe('stability (docs/sandbox.md: order is creation order, stable under inserts and deletes)', () => {
  test('records inserted while paging appear after the existing ones; none is skipped or repeated', async () => {
    const before = (await listAll(ctx.sb, 'segments')).map((x) => x.id);
    const first = await page('segments', { limit: 2 });
    const inserted: string[] = [];
    for (let i = 0; i < 3; i++) inserted.push((await create(ctx.sb, 'segments')).id);
    const rest: string[] = [];
    let cursor = first.page_info.end_cursor;
    let more = first.page_info.has_next_page;
    while (more) {
      const p = await page('segments', { limit: 2, cursor: cursor! });
      rest.push(...p.data.map((x) => x.id));
      cursor = p.page_info.end_cursor;
      more = p.page_info.has_next_page;
    }
    expect([...first.data.map((x) => x.id), ...rest]).toEqual([...before, ...inserted]);
  });

  test('deleting a record already returned does not make the next page skip one', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push((await create(ctx.sb, 'notes', { tag: 'stable-delete' })).id);
    const first = await page('notes', { tag: 'stable-delete', limit: 3 });
    expect(first.data.map((x) => x.id)).toEqual(ids.slice(0, 3));
    expectStatus(await call(ctx.sb, 'DELETE', `/notes/${ids[0]}`), 200);
    expectStatus(await call(ctx.sb, 'DELETE', `/notes/${ids[2]}`), 200);
    const second = await page('notes', { tag: 'stable-delete', limit: 3, cursor: first.page_info.end_cursor! });
    expect(second.data.map((x) => x.id)).toEqual(ids.slice(3, 6));
    expect(second.page_info.has_next_page).toBe(false);
  });

  test('deleting the record the cursor points at does not break the cursor', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await create(ctx.sb, 'notes', { tag: 'cursor-anchor' })).id);
    const first = await page('notes', { tag: 'cursor-anchor', limit: 2 });
    expectStatus(await call(ctx.sb, 'DELETE', `/notes/${ids[1]}`), 200);
    const second = await page('notes', { tag: 'cursor-anchor', limit: 2, cursor: first.page_info.end_cursor! });
    expect(second.data.map((x) => x.id)).toEqual(ids.slice(2));
  });
});
