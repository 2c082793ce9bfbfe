// docs/sandbox.md "Seed and data file" and "Paths": what a real CRM holds and reconcile (issue 18) must
// meet: records sharing an email (in case, spaces, or exactly), fields of several JSON types kept as
// sent, and "Faults" → the request log telling a write applied from one replayed or refused.
import { describe, expect, test } from 'vitest';
import {
  call,
  control,
  create,
  createBody,
  listAll,
  queueFaults,
  uniqueEmail,
  uniqueKey,
  useSandbox,
} from '../helpers.js';

const ctx = useSandbox();

const norm = (email: unknown) => String(email).trim().toLowerCase();

describe('records sharing an email', () => {
  test('the seed holds a few contacts whose emails differ only in case, in surrounding spaces, or not at all', async () => {
    const contacts = await listAll(ctx.sb, 'contacts');
    const byNorm = new Map<string, Array<Record<string, any>>>();
    for (const c of contacts) byNorm.set(norm(c.email), [...(byNorm.get(norm(c.email)) ?? []), c]);
    const shared = [...byNorm.values()].filter((group) => group.length > 1);
    expect(shared).toHaveLength(3);
    for (const group of shared) expect(group).toHaveLength(2);
    const kinds = shared.map(([a, b]) =>
      a!.email === b!.email
        ? 'exact'
        : a!.email.trim() === b!.email.trim()
          ? 'spaces'
          : a!.email.toLowerCase() === b!.email.toLowerCase()
            ? 'case'
            : '?',
    );
    expect([...kinds].sort()).toEqual(['case', 'exact', 'spaces']);
    // the exact pair is also found by the list's email filter
    const exact = shared[kinds.indexOf('exact')]![0]!.email as string;
    expect((await call(ctx.sb, 'GET', '/contacts', { query: { email: exact } })).body.data).toHaveLength(2);
  });

  test('the sandbox does not enforce unique emails: a create, a batch and a PATCH may repeat one', async () => {
    const email = uniqueEmail('dup');
    const a = await create(ctx.sb, 'contacts', { email });
    const b = await create(ctx.sb, 'contacts', { email });
    expect(b.id).not.toBe(a.id);
    const batch = await call(ctx.sb, 'POST', '/contacts/batch', {
      body: [{ email }, { email: ` ${email.toUpperCase()} ` }],
    });
    expect(batch.status).toBe(200);
    expect(batch.body.data.items.map((i: { status: string }) => i.status)).toEqual(['created', 'created']);
    const c = await create(ctx.sb, 'contacts');
    expect((await call(ctx.sb, 'PATCH', `/contacts/${c.id}`, { body: { email } })).status).toBe(200);
    expect((await call(ctx.sb, 'GET', '/contacts', { query: { email } })).body.data).toHaveLength(4);
  });
});

describe('fields of several JSON types', () => {
  test('seeded contacts have a number (score) and a boolean (vip); companies a number (founded_year)', async () => {
    // the seeded ones (the other tests create theirs at example.test)
    const contacts = (await listAll(ctx.sb, 'contacts')).filter((c) =>
      c.email.trim().toLowerCase().endsWith('@example.com'),
    );
    expect(contacts).toHaveLength(40);
    for (const c of contacts) {
      expect(typeof c.score, c.id).toBe('number');
      expect(typeof c.vip, c.id).toBe('boolean');
    }
    expect(new Set(contacts.map((c) => c.vip))).toEqual(new Set([true, false]));
    for (const c of await listAll(ctx.sb, 'companies')) expect(Number.isInteger(c.founded_year), c.id).toBe(true);
  });

  test('create, batch and PATCH keep the JSON type given: "42" stays a string, 42 a number', async () => {
    const c = await create(ctx.sb, 'contacts', { score: 7, vip: false, tags: ['a'], extra: { n: 1 } });
    expect(c).toMatchObject({ score: 7, vip: false, tags: ['a'], extra: { n: 1 } });
    const steps: Array<[unknown, unknown]> = [
      ['42', 42],
      [42, '42'],
      ['true', true],
      [true, 'true'],
      [null, 0],
      ['', 1.5],
    ];
    for (const [score, vip] of steps) {
      const res = await call(ctx.sb, 'PATCH', `/contacts/${c.id}`, { body: { score, vip } });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ score, vip });
      const got = (await call(ctx.sb, 'GET', `/contacts/${c.id}`)).body.data;
      expect([got.score, got.vip]).toStrictEqual([score, vip]);
    }
    const batch = await call(ctx.sb, 'POST', '/contacts/batch', {
      body: [createBody('contacts', { score: '9' }), createBody('contacts', { score: 9 })],
    });
    const ids = batch.body.data.items.map((i: { data: { id: string } }) => i.data.id);
    const scores = await Promise.all(
      ids.map(async (id: string) => (await call(ctx.sb, 'GET', `/contacts/${id}`)).body.data.score),
    );
    expect(scores).toStrictEqual(['9', 9]);
  });
});

describe('the request log tells a write applied from one replayed or refused', () => {
  async function logFrom(since: number): Promise<Array<Record<string, any>>> {
    return ((await control(ctx.sb, 'GET', `/requests?since=${since}`)).body as Array<Record<string, any>>).filter((e) =>
      String(e.path).startsWith('/api/'),
    );
  }
  const logLength = async () => (await control(ctx.sb, 'GET', '/requests')).body.length as number;

  test('POST /contacts/batch and PATCH /contacts/{id}: applied once, replays and faults before the write not applied', async () => {
    const c = await create(ctx.sb, 'contacts');
    const since = await logLength();
    const patchKey = uniqueKey('p');
    const batchKey = uniqueKey('b');
    const batchBody = [createBody('contacts'), createBody('contacts')];
    const patch = (key: string, body: unknown) =>
      call(ctx.sb, 'PATCH', `/contacts/${c.id}`, { body, headers: { 'Idempotency-Key': key } });
    const batch = () =>
      call(ctx.sb, 'POST', '/contacts/batch', { body: batchBody, headers: { 'Idempotency-Key': batchKey } });
    await queueFaults(ctx.sb, [
      { kind: '500', method: 'PATCH' },
      { kind: '500-after-write', method: 'PATCH' },
      { kind: 'drop-after-write', method: 'POST', path: '/contacts/batch$' },
    ]);
    expect((await patch(patchKey, { title: 'A' })).status).toBe(500); // fault before the write
    expect((await patch(patchKey, { title: 'A' })).status).toBe(500); // written, then 500
    expect((await patch(patchKey, { title: 'A' })).headers.get('idempotent-replayed')).toBe('true');
    await batch().catch(() => undefined); // written, then dropped
    expect((await batch()).headers.get('idempotent-replayed')).toBe('true');
    // an after-write fault on a request the handler refused: nothing was written
    await queueFaults(ctx.sb, [{ kind: '500-after-write', method: 'PATCH' }]);
    expect((await patch(uniqueKey('p'), { id: 'con_x' })).status).toBe(500);
    expect((await patch(uniqueKey('p'), { title: 'B' })).status).toBe(200);
    const log = await logFrom(since);
    const rows = log.map((e) => [e.method, e.fault, e.replayed, e.applied]);
    expect(rows).toEqual([
      ['PATCH', '500', false, false],
      ['PATCH', '500-after-write', false, true],
      ['PATCH', null, true, false],
      ['POST', 'drop-after-write', false, true],
      ['POST', null, true, false],
      ['PATCH', '500-after-write', false, false],
      ['PATCH', null, false, true],
    ]);
    expect((await call(ctx.sb, 'GET', `/contacts/${c.id}`)).body.data.title).toBe('B');
  });
});
