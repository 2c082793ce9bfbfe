// The read stage of reconcile (src/import/match/read.ts) against a client whose pages are made here:
// what is kept, what is ambiguous, a record read twice, memory bounded by the file's keys, Ctrl-C,
// the GET-per-id read and the choice between the two.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ApiRecord } from '../../../src/api/envelopes.js';
import { InterruptedError, NotFoundError } from '../../../src/http/errors.js';
import { paginatePages } from '../../../src/http/paginate.js';
import type { HttpClient, RequestOptions } from '../../../src/http/types.js';
import { matchKey } from '../../../src/import/match/key.js';
import {
  chooseRead,
  GET_ROWS_MAX,
  readByIds,
  readIndex,
  type IndexEntry,
  type RecordIndex,
} from '../../../src/import/match/read.js';
import { runs } from '../../helpers/property.js';

interface Fake {
  client: HttpClient;
  /** the query of each list request */
  queries: Array<Record<string, unknown>>;
  paths: string[];
}

/** A client listing `page(n)` for n = 0, 1, … (undefined: no page n; the one before was the last), through the real paginatePages. */
function fakeClient(page: (n: number) => ApiRecord[] | undefined, records: Map<string, ApiRecord> = new Map()): Fake {
  const queries: Array<Record<string, unknown>> = [];
  const paths: string[] = [];
  const stats = { requests: 0, retries: 0 };
  const pages: HttpClient['pages'] = (path, opts) => {
    paths.push(path);
    return paginatePages(async (query) => {
      stats.requests++;
      queries.push(query);
      const n = query.cursor === undefined ? 0 : Number(query.cursor);
      const more = page(n + 1) !== undefined;
      const body = {
        object: 'list',
        data: page(n) ?? [],
        page_info: { end_cursor: String(n + 1), has_next_page: more },
        meta: {},
      };
      return { status: 200, headers: {}, body, retries: 0 };
    }, opts);
  };
  const request = async <T>(req: RequestOptions) => {
    stats.requests++;
    paths.push(req.path);
    const record = records.get(decodeURIComponent(req.path.split('/')[2]!));
    if (record === undefined) throw new NotFoundError('not found', { status: 404 });
    return { status: 200, headers: {}, body: { data: record } as T, retries: 0 };
  };
  const client = { baseUrl: 'http://fake', stats, pages, request } as unknown as HttpClient;
  return { client, queries, paths };
}

const byEmail = (email: string) => matchKey(['email'], { email })!;
const sorted = (entry: IndexEntry | undefined) => (entry && 'ids' in entry ? { ids: [...entry.ids].sort() } : entry);
const one = (index: RecordIndex, key: string) => {
  const entry = index.get(key);
  return entry !== undefined && 'one' in entry ? entry.one : undefined;
};

describe('readIndex', () => {
  it('keeps only the records with a key of the file, each with only the kept and match fields', async () => {
    const data = [
      { id: 'c1', email: 'a@x.com', first_name: 'A', title: 'CEO', phone: '1' },
      { id: 'c2', email: 'b@x.com', first_name: 'B', title: 'CTO' },
      { id: 'c3', email: 'c@x.com', first_name: 'C', lead_score: 3 },
    ];
    const f = fakeClient((n) => (n < 3 ? [data[n]!] : undefined));
    const index = await readIndex({
      client: f.client,
      resource: 'contacts',
      fields: ['email'],
      keep: ['title'],
      wanted: new Set([byEmail('a@x.com'), byEmail('c@x.com')]),
    });
    expect(one(index, byEmail('a@x.com'))).toEqual({ id: 'c1', record: { email: 'a@x.com', title: 'CEO' } });
    expect(one(index, byEmail('c@x.com'))).toEqual({ id: 'c3', record: { email: 'c@x.com' } });
    expect(index.get(byEmail('b@x.com'))).toBeUndefined();
    expect(index).toMatchObject({ records: 3, kept: 2, requests: 3, how: 'list' });
    expect([...index.fieldsSeen].sort()).toEqual(['email', 'first_name', 'id', 'lead_score', 'phone', 'title']);
    expect(f.paths).toEqual(['/contacts']);
    expect(f.queries.map((q) => q.limit)).toEqual([100, 100, 100]);
  });

  it('two records whose emails differ only in case and spaces are ambiguous; one read twice is not', async () => {
    const pages = [
      [
        { id: 'c1', email: 'Ann@X.com' },
        { id: 'c2', email: 'bob@x.com' },
      ],
      [
        { id: 'c2', email: 'bob@x.com' },
        { id: 'c3', email: '  ann@x.COM ' },
      ], // c2 again: the collection shifted
    ];
    const f = fakeClient((n) => pages[n]);
    const index = await readIndex({
      client: f.client,
      resource: 'contacts',
      fields: ['email'],
      keep: [],
      wanted: () => true,
    });
    expect(index.get(byEmail('ann@x.com'))).toEqual({ ids: ['c1', 'c3'] });
    expect(one(index, byEmail('bob@x.com'))?.id).toBe('c2');
    expect(index).toMatchObject({ records: 3, kept: 3, requests: 2 });
  });

  it('a record read again under another key (changed between pages) is kept under its newest key only', async () => {
    const pages = [[{ id: 'c1', email: 'old@x.com', title: 'A' }], [{ id: 'c1', email: 'new@x.com', title: 'B' }]];
    const f = fakeClient((n) => pages[n]);
    const index = await readIndex({
      client: f.client,
      resource: 'contacts',
      fields: ['email'],
      keep: ['title'],
      wanted: () => true,
    });
    expect(index.get(byEmail('old@x.com'))).toBeUndefined();
    expect(one(index, byEmail('new@x.com'))).toEqual({ id: 'c1', record: { email: 'new@x.com', title: 'B' } });
    expect(index).toMatchObject({ records: 1, kept: 1 });
  });

  it('ids of any JSON type are kept as their text; a record without a usable id or key is not kept, its key reported', async () => {
    const data = [
      { email: 'a@x.com' },
      { id: 7, email: 'b@x.com' },
      { id: 'c3', email: '   ' },
      { id: 'c4' },
      { id: 'c5', email: null },
    ];
    const f = fakeClient((n) => (n === 0 ? data : undefined));
    const index = await readIndex({
      client: f.client,
      resource: 'contacts',
      fields: ['email'],
      keep: [],
      wanted: () => true,
    });
    expect(index).toMatchObject({ records: 5, kept: 1 });
    // a number id, as the server gave it (its text is what a path takes)
    expect(one(index, byEmail('b@x.com'))).toEqual({ id: '7', record: { email: 'b@x.com' } });
    // the record holding a@x.com has no id: a row with that key is never planned as a create
    expect(index.get(byEmail('a@x.com'))).toEqual({ noId: true });
  });

  it('200,000 records the file does not have leave the index at the file size', async () => {
    const wanted = new Set(Array.from({ length: 10 }, (_, i) => byEmail(`p${i * 20_000}@x.com`)));
    const f = fakeClient((n) =>
      n < 2000
        ? Array.from({ length: 100 }, (_, i) => ({
            id: `c${n * 100 + i}`,
            email: `p${n * 100 + i}@x.com`,
            note: 'x'.repeat(50),
          }))
        : undefined,
    );
    const index = await readIndex({ client: f.client, resource: 'contacts', fields: ['email'], keep: [], wanted });
    expect(index).toMatchObject({ records: 200_000, kept: 10, requests: 2000 });
    expect(one(index, byEmail('p20000@x.com'))?.id).toBe('c20000');
  });

  it('reports progress after each page and stops at Ctrl-C with InterruptedError, asking for no further page', async () => {
    const ctl = new AbortController();
    const f = fakeClient((n) => (n < 10 ? [{ id: `c${n}`, email: `p${n}@x.com` }] : undefined));
    const seen: Array<{ records: number; pages: number; requests: number }> = [];
    const run = readIndex({
      ...{
        client: f.client,
        resource: 'contacts',
        fields: ['email'],
        keep: [],
        wanted: () => true,
        signal: ctl.signal,
      },
      onProgress: (p) => {
        seen.push(p);
        if (p.pages === 3) ctl.abort();
      },
    });
    await expect(run).rejects.toBeInstanceOf(InterruptedError);
    expect(seen).toEqual([1, 2, 3].map((n) => ({ records: n, pages: n, requests: n })));
    expect(f.queries).toHaveLength(3);
  });

  it('property: the index is the last read of each id, grouped by key; ambiguous exactly when two ids share a key', () => {
    const email = fc.constantFrom('a@x.com', 'A@x.com ', 'b@x.com', ' B@X.COM', 'c@x.com', '', 'd@x.com');
    const record = fc.record({
      id: fc.constantFrom('c1', 'c2', 'c3', 'c4', 'c5', 'c6'),
      email,
      title: fc.constantFrom('T1', 'T2'),
    });
    const pages = fc.array(fc.array(record, { maxLength: 5 }), { minLength: 1, maxLength: 6 });
    const wantedKeys = fc.subarray(['a@x.com', 'b@x.com', 'c@x.com', 'd@x.com'].map(byEmail));
    return fc.assert(
      fc.asyncProperty(pages, wantedKeys, async (pages, keys) => {
        const wanted = new Set(keys);
        const f = fakeClient((n) => pages[n]);
        const index = await readIndex({
          client: f.client,
          resource: 'contacts',
          fields: ['email'],
          keep: ['title'],
          wanted,
        });
        const last = new Map<string, ApiRecord>(); // the model: each id's last read
        for (const r of pages.flat()) last.set(r.id, r);
        const kept = [...last.values()].filter((r) => wanted.has(matchKey(['email'], r) ?? ''));
        expect(index.kept).toBe(kept.length);
        // an unwanted record read twice may count twice (its id is not remembered); a kept one never does
        const reads = pages.flat();
        expect(index.records).toBeGreaterThanOrEqual(last.size);
        expect(index.records).toBeLessThanOrEqual(reads.length);
        if (reads.every((r) => wanted.has(matchKey(['email'], r) ?? ''))) expect(index.records).toBe(last.size);
        for (const key of keys) {
          const having = kept.filter((r) => matchKey(['email'], r) === key);
          const only = having[0];
          if (having.length > 1) expect(sorted(index.get(key))).toEqual({ ids: having.map((r) => r.id).sort() });
          else if (only)
            expect(index.get(key)).toEqual({ one: { id: only.id, record: { email: only.email, title: only.title } } });
          else expect(index.get(key)).toBeUndefined();
        }
        expect(index.requests).toBe(pages.length);
      }),
      runs(200),
    );
  });
});

describe('readByIds', () => {
  it('one GET per distinct id; a 404 is no record; the key is the id', async () => {
    const records = new Map<string, ApiRecord>([
      ['c1', { id: 'c1', email: 'a@x.com', title: 'T' }],
      ['c/2', { id: 'c/2', email: 'b@x.com' }],
    ]);
    const f = fakeClient(() => undefined, records);
    const index = await readByIds({
      client: f.client,
      resource: 'contacts',
      keep: ['title'],
      ids: ['c1', 'gone', 'c/2', 'c1', '..'],
    });
    expect(f.paths).toEqual(['/contacts/c1', '/contacts/gone', '/contacts/c%2F2']);
    expect(one(index, matchKey(['id'], { id: 'c1' })!)).toEqual({ id: 'c1', record: { id: 'c1', title: 'T' } });
    expect(one(index, matchKey(['id'], { id: 'c/2' })!)?.id).toBe('c/2');
    expect(index.get(matchKey(['id'], { id: 'gone' })!)).toBeUndefined();
    expect(index).toMatchObject({ records: 2, kept: 2, requests: 3, how: 'get' });
  });

  it('stops at Ctrl-C before the next GET', async () => {
    const ctl = new AbortController();
    const f = fakeClient(() => undefined, new Map([['c1', { id: 'c1' }]]));
    const run = readByIds({
      client: f.client,
      resource: 'contacts',
      keep: [],
      ids: ['c1', 'c2', 'c3'],
      signal: ctl.signal,
      onProgress: () => ctl.abort(),
    });
    await expect(run).rejects.toBeInstanceOf(InterruptedError);
    expect(f.paths).toEqual(['/contacts/c1']);
  });
});

describe('chooseRead', () => {
  it.each([
    [
      ['id'],
      1,
      'get',
      'one list page (the whole collection, when it fits), else one GET per id: at most 2 requests at any collection size.',
    ],
    [
      ['id'],
      100,
      'get',
      'one list page (the whole collection, when it fits), else one GET per id: at most 101 requests at any collection size.',
    ],
    [
      ['id'],
      101,
      'list',
      'listing the collection, 100 records a request: 101 GETs, one per id, would cost more than listing 10,000 records.',
    ],
    [
      ['email'],
      3,
      'list',
      'listing the collection, 100 records a request: only --match id can read one record per row.',
    ],
    [
      ['id', 'email'],
      3,
      'list',
      'listing the collection, 100 records a request: only --match id can read one record per row.',
    ],
  ])('%j with %i rows: %s', (fields, rows, how, why) => {
    expect(chooseRead(fields, rows)).toEqual({ how, why });
  });

  it('property: one GET per row only for --match id, never costing more requests than listing 10,000 records', () => {
    const fields = fc.oneof(
      fc.constant(['id']),
      fc.array(fc.constantFrom('id', 'email', 'name'), { minLength: 1, maxLength: 3 }),
    );
    fc.assert(
      fc.property(fields, fc.nat(1_000_000), (fields, rows) => {
        const { how, why } = chooseRead(fields, rows);
        expect(how === 'get').toBe(fields.length === 1 && fields[0] === 'id' && rows <= GET_ROWS_MAX);
        if (how === 'get') expect(rows).toBeLessThanOrEqual(10_000 / 100);
        expect(why).toMatch(/^[^\n]+\.$/);
      }),
      runs(),
    );
  });
});
