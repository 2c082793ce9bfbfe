// docs/sandbox.md "Concurrency": concurrent requests never lose a write or double a record;
// "Idempotency": in-flight twins get one response.
import { describe, expect, test } from 'vitest';
import { call, control, create, createBody, expectStatus, uniqueKey, useSandbox } from '../helpers.js';

const ctx = useSandbox();

async function count(resource: string): Promise<number> {
  return (await control(ctx.sb, 'GET', '/stats')).body.records[resource];
}

describe('concurrency', () => {
  test('200 concurrent creates → exactly 200 new records with distinct ids', async () => {
    const before = await count('contacts');
    const bodies = Array.from({ length: 200 }, () => createBody('contacts'));
    const results = await Promise.all(bodies.map((body) => call(ctx.sb, 'POST', '/contacts', { body })));
    for (const r of results) expectStatus(r, 201);
    const ids = results.map((r) => r.body.data.id);
    expect(new Set(ids).size).toBe(200);
    expect(await count('contacts')).toBe(before + 200);
    const emails = new Set(results.map((r) => r.body.data.email));
    expect(emails).toEqual(new Set(bodies.map((b) => b.email)));
  });

  test('200 concurrent PATCHes of different fields to one record lose none', async () => {
    const rec = await create(ctx.sb, 'deals');
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) => call(ctx.sb, 'PATCH', `/deals/${rec.id}`, { body: { [`field_${i}`]: i } })),
    );
    for (const r of results) expectStatus(r, 200);
    const got = await call(ctx.sb, 'GET', `/deals/${rec.id}`);
    for (let i = 0; i < 200; i++) expect(got.body.data[`field_${i}`], `field_${i}`).toBe(i);
    expect(got.body.data.name).toBe(rec.name);
  });

  test('50 concurrent creates with the same Idempotency-Key → one record, one response', async () => {
    const before = await count('companies');
    const key = uniqueKey('conc');
    const body = createBody('companies');
    const results = await Promise.all(
      Array.from({ length: 50 }, () =>
        call(ctx.sb, 'POST', '/companies', { body, headers: { 'Idempotency-Key': key } }),
      ),
    );
    for (const r of results) expectStatus(r, 201);
    expect(new Set(results.map((r) => r.body.data.id)).size).toBe(1);
    expect(new Set(results.map((r) => r.body.meta.request_id)).size).toBe(1);
    expect(await count('companies')).toBe(before + 1);
  });

  test('20 concurrent batches of 10 → 200 records', async () => {
    const before = await count('tasks');
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        call(ctx.sb, 'POST', '/tasks/batch', { body: Array.from({ length: 10 }, () => createBody('tasks')) }),
      ),
    );
    for (const r of results) {
      expectStatus(r, 200);
      expect(r.body.data.summary.succeeded).toBe(10);
    }
    const ids = results.flatMap((r) => r.body.data.items.map((i: any) => i.data.id));
    expect(new Set(ids).size).toBe(200);
    expect(await count('tasks')).toBe(before + 200);
  });

  test('concurrent link POSTs of the same child → one link (every answer 201 with that same link)', async () => {
    const d = await create(ctx.sb, 'deals');
    const c = await create(ctx.sb, 'contacts');
    const results = await Promise.all(
      Array.from({ length: 20 }, () => call(ctx.sb, 'POST', `/deals/${d.id}/contacts`, { body: { contact_id: c.id } })),
    );
    for (const r of results) expectStatus(r, 201);
    expect(new Set(results.map((r) => r.body.data.id)).size).toBe(1);
    expect(new Set(results.map((r) => r.body.data.created_at)).size).toBe(1);
    const list = await call(ctx.sb, 'GET', `/deals/${d.id}/contacts`);
    expect(list.body.data).toHaveLength(1);
  });

  test('concurrent deletes of one record: one 200, the rest 404', async () => {
    const rec = await create(ctx.sb, 'notes');
    const results = await Promise.all(Array.from({ length: 20 }, () => call(ctx.sb, 'DELETE', `/notes/${rec.id}`)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 404)).toHaveLength(19);
  });
});
