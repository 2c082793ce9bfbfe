// `crm batch contacts FILE --match email` (issue 18) against a server unlike the sandbox: a collection paged by
// position that shifts while crm reads it (records pushed onto the next page, so served twice), and a server that
// caches answers by Idempotency-Key without ever saying Idempotent-Replayed. A record served twice is one record:
// its row is unchanged or updated, never ambiguous, and never created again; each run's writes carry keys of their own.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { runCrm } from '../helpers/run-crm.js';
import { tempDir } from '../helpers/temp.js';
import { contact, json, shiftingList, startHostile, success, type Hostile } from './server.js';

let h: Hostile;
let dir: string;
beforeAll(async () => {
  h = await startHostile();
  dir = tempDir('crm-hostile-reconcile-');
});
afterAll(async () => h?.close());
beforeEach(() => h.reset());

const crm = (args: string[]) => runCrm(['-o', 'json', ...args], { env: h.env(), cwd: dir });

it('a collection that shifts between pages: rows of records served twice are matched once, none created again', async () => {
  const records = Array.from({ length: 250 }, (_, i) => contact(i + 1, { title: 'Old' }));
  let fresh = 10_000;
  // after each page, 30 records are added at the front: 30 already served come again on the next page
  const list = shiftingList(records, {
    between: (_page, all) => void all.unshift(...Array.from({ length: 30 }, () => contact(fresh++))),
  });
  h.route('GET', '/contacts', list.handler);
  const patched: string[] = [];
  h.route('PATCH', /\/contacts\/con_\d+$/, (req, res) => {
    const id = req.url.split('/').pop()!.split('?')[0]!;
    patched.push(id);
    json(res, 200, success({ id, ...(JSON.parse(req.body) as object) }));
  });
  const created: unknown[] = [];
  h.route('POST', '/contacts/batch', (req, res) => {
    const items = (JSON.parse(req.body) as object[]).map((r, index) => {
      created.push(r);
      return { index, status: 'created', data: { id: `con_new${created.length}`, ...r } };
    });
    json(res, 200, {
      ...(success({ items, summary: { total: items.length, succeeded: items.length, failed: 0 } }) as object),
      object: 'batch',
    });
  });
  // every record the file names is in the collection from the start; two of them change, and one is new
  const rows = records.map((r, i) => `${String(r.email)},${i < 2 ? 'New' : 'Old'}`);
  const path = join(dir, 'shift.csv');
  writeFileSync(path, `email,title\n${rows.join('\n')}\nbrand.new@example.com,Made\n`);
  const r = await crm(['batch', 'contacts', path, '--match', 'email']);
  expect(r.code, r.stderr).toBe(0);
  expect(new Set(list.served).size).toBeLessThan(list.served.length); // the collection did shift under the read
  expect(JSON.parse(r.stdout)).toMatchObject({
    rows: 251,
    created: 1,
    updated: 2,
    unchanged: 248,
    ambiguous: 0,
    duplicate: 0,
  });
  expect(patched.sort()).toEqual(['con_000001', 'con_000002']);
  expect(created).toEqual([{ email: 'brand.new@example.com', title: 'Made' }]);
});

it('a server caching answers by key (no Idempotent-Replayed): the same change next run, after a colleague undid it, is applied again', async () => {
  const store = new Map([['con_1', { id: 'con_1', email: 'ann@example.com', title: 'Old' }]]);
  h.route('GET', '/contacts', (_req, res) =>
    json(res, 200, {
      ...(success([...store.values()]) as object),
      object: 'list',
      page_info: { end_cursor: null, has_next_page: false },
    }),
  );
  const cache = new Map<string, unknown>();
  const keys: string[] = [];
  h.route('PATCH', /\/contacts\/con_1$/, (req, res) => {
    const key = req.headers['idempotency-key'] as string;
    keys.push(key);
    if (!cache.has(key)) {
      cache.set(key, { ...store.get('con_1')!, ...(JSON.parse(req.body) as object) });
      store.set('con_1', cache.get(key) as never);
    }
    json(res, 200, success(cache.get(key)));
  });
  const path = join(dir, 'cache.csv');
  writeFileSync(path, 'email,title\nann@example.com,New\n');
  expect(JSON.parse((await crm(['batch', 'contacts', path, '--match', 'email'])).stdout)).toMatchObject({ updated: 1 });
  store.set('con_1', { ...store.get('con_1')!, title: 'Old' }); // a colleague puts it back
  const again = await crm(['batch', 'contacts', path, '--match', 'email']);
  expect(JSON.parse(again.stdout)).toMatchObject({ updated: 1, unchanged: 0 });
  expect(store.get('con_1')!.title).toBe('New');
  expect(new Set(keys).size).toBe(2);
});
