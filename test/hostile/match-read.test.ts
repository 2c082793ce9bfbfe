// The read stage of reconcile (src/import/match/read.ts) against a collection that changes while it is
// read (issue 18): records added before and after the cursor and removed between pages, on a server
// paging by position. A record served twice is one record, never an ambiguous key; a record never
// served is never in the index; cursors that cycle still stop with PAGINATION_STUCK.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createClient, type CrmHttpClient } from '../../src/http/client.js';
import { InterruptedError, ServerError } from '../../src/http/errors.js';
import { matchKey } from '../../src/import/match/key.js';
import { readIndex } from '../../src/import/match/read.js';
import { contact, HOSTILE_KEY, shiftingList, startHostile, type Hostile } from './server.js';

let h: Hostile;
let client: CrmHttpClient;
beforeAll(async () => {
  h = await startHostile();
});
afterAll(async () => {
  await h?.close();
});
beforeEach(() => {
  h.reset();
  client = createClient({ baseUrl: h.baseUrl, apiKey: HOSTILE_KEY, authHeader: 'x-api-key' });
});
afterEach(async () => {
  await client.close();
});

const key = (r: Record<string, unknown>) => matchKey(['email'], r)!;
const read = () =>
  readIndex({ client, resource: 'contacts', fields: ['email'], keep: ['first_name'], wanted: () => true });

describe('readIndex on a collection that changes between pages', () => {
  it('records shifted onto the next page count once and are never ambiguous; removed ones are not invented', async () => {
    const all = new Map<string, Record<string, unknown>>();
    const made = (n: number) => {
      const r = contact(n);
      all.set(String(r.id), r);
      return r;
    };
    const removedUnread: string[] = [];
    let fresh = 100_000;
    const list = shiftingList(
      Array.from({ length: 1000 }, (_, i) => made(i)),
      {
        between(page, records) {
          // before the cursor: 30 records added push 30 served ones onto the next page (read again), or
          // every third page 20 removed pull 20 unread ones behind it (never read)
          if (page % 3 === 0) records.splice(0, 20);
          else records.unshift(...Array.from({ length: 30 }, () => made(fresh++)));
          records.push(...Array.from({ length: 10 }, () => made(fresh++))); // after it: read later
          removedUnread.push(...records.splice(page * 100 + 50, 5).map((r) => String(r.id))); // ahead of it, not yet read
        },
      },
    );
    h.route('GET', '/contacts', list.handler);
    const index = await read();

    const served = new Set(list.served);
    expect(list.served.length).toBeGreaterThan(served.size); // the collection did shift: some ids came twice
    expect(index.records).toBe(served.size);
    expect(index.kept).toBe(served.size);
    for (const id of served)
      expect(index.get(key(all.get(id)!))).toEqual({
        one: { id, record: { email: all.get(id)!.email, first_name: all.get(id)!.first_name } },
      });
    expect(removedUnread.length).toBeGreaterThan(0);
    for (const id of removedUnread) expect(index.get(key(all.get(id)!))).toBeUndefined();
    for (const [id, r] of all) if (!served.has(id)) expect(index.get(key(r))).toBeUndefined();
    expect(h.log.every((r) => r.query.get('limit') === '100')).toBe(true);
    expect(index.requests).toBe(h.log.length);
    expect(index.requests).toBe(list.pages);
  });

  it('cursors that come back round while records shift still stop with PAGINATION_STUCK', async () => {
    let fresh = 100_000;
    const list = shiftingList(
      Array.from({ length: 1000 }, (_, i) => contact(i)),
      { cycleFrom: 3, between: (_page, records) => void records.unshift(contact(fresh++)) },
    );
    h.route('GET', '/contacts', list.handler);
    const err = (await read().catch((e: unknown) => e)) as ServerError;
    expect(err).toBeInstanceOf(ServerError);
    expect(err.code).toBe('PAGINATION_STUCK');
    expect(err.message).toMatch(/pagination loops: page 3 points back to cursor "at_100" of page 1/);
    expect(h.log).toHaveLength(3);
  });

  it('Ctrl-C while a page is on its way ends the read with InterruptedError', async () => {
    const list = shiftingList(Array.from({ length: 300 }, (_, i) => contact(i)));
    const ctl = new AbortController();
    h.route('GET', '/contacts', (req, res, ctx) => {
      if (ctx.count === 0) return list.handler(req, res, ctx);
      ctl.abort(); // the second page never comes
    });
    const run = readIndex({
      client,
      resource: 'contacts',
      fields: ['email'],
      keep: [],
      wanted: () => true,
      signal: ctl.signal,
    });
    await expect(run).rejects.toBeInstanceOf(InterruptedError);
    expect(h.log).toHaveLength(2);
  });
});
