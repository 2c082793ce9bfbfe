// `crm snapshot DIR` against a server paging by position (offset cursors, test/hostile/server.ts
// `shiftingList`) whose collection changes while it is read (issue 28): a record inserted before the
// cursor pushes one already read onto the next page, so it comes twice; each record is written once
// (its first read: the file stays append-only), the manifest counts the file's lines, and
// `crm sandbox --from` serves the folder. The same across a resumed run, with numeric ids and with
// records whose fields are `__proto__`, `constructor` and numbers beyond a double.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseJson, stringifyJson } from '../../src/json/exact-json.js';
import { loadSnapshotDir } from '../../src/sandbox/snapshot-dir.js';
import { runCrm } from '../helpers/run-crm.js';
import { startSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';
import { contact, errorEnvelope, json, shiftingList, startHostile, type Hostile } from './server.js';

let h: Hostile;
beforeAll(async () => {
  h = await startHostile();
});
afterAll(async () => h?.close());
beforeEach(() => h.reset());

const lineTexts = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean);
const records = (file: string) => lineTexts(file).map((l) => parseJson(l) as Record<string, unknown>);
const manifest = (dir: string) => JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Record<string, any>;
const snapshot = (dir: string, extra: string[] = []) =>
  runCrm(['snapshot', dir, '--resources', 'contacts', ...extra], { env: h.env(), timeoutMs: 20_000 });

/** The ids of a file, each with how many lines hold it (by its JSON text). */
const idCounts = (file: string) => {
  const counts = new Map<string, number>();
  for (const r of records(file)) counts.set(stringifyJson(r.id)!, (counts.get(stringifyJson(r.id)!) ?? 0) + 1);
  return counts;
};

describe('crm snapshot of a collection that shifts while it is read (offset cursors)', () => {
  it('a record read twice is written once (its first read); one deleted meanwhile may be missing; sandbox --from serves it', async () => {
    let fresh = 1000;
    const list = shiftingList(
      Array.from({ length: 250 }, (_, i) => contact(i)),
      {
        between(page, rs) {
          // after page 1: one inserted at the front pushes contact 99 onto page 2 (read again), edited meanwhile
          if (page === 1) {
            rs.unshift(contact(fresh++));
            rs[100] = { ...rs[100]!, first_name: 'edited after its first read' };
          }
          // after page 2: one deleted before the cursor pulls an unread one behind it (never read)
          if (page === 2) rs.splice(5, 1);
        },
      },
    );
    h.route('GET', '/contacts', list.handler);
    const dir = tempDir('crm-hostile-snapshot-');
    const r = await snapshot(dir);
    expect(r.code, r.stderr).toBe(0);

    const served = new Set(list.served);
    expect(list.served.length).toBe(served.size + 1); // the collection did shift: one id came twice
    const file = join(dir, 'contacts.ndjson');
    const counts = idCounts(file);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    expect(new Set([...counts.keys()].map((k) => JSON.parse(k) as string))).toEqual(served);
    expect(manifest(dir)).toMatchObject({ complete: true, collections: { contacts: { records: served.size } } });
    // the first read is kept
    expect(records(file).find((c) => c.id === contact(99).id)).toEqual(contact(99));

    const loaded = loadSnapshotDir(dir);
    expect(loaded.counts.contacts).toBe(served.size);
    expect(loaded.warnings).toEqual([]);
  });

  it('across a resumed run: the records the first run wrote are never written again', async () => {
    let fresh = 1000;
    const list = shiftingList(Array.from({ length: 450 }, (_, i) => contact(i)));
    let failing = true;
    h.route('GET', '/contacts', (req, res, ctx) => {
      // the third page fails once (the run stops, exit 8), and 30 records are added before the cursor meanwhile
      if (req.query.get('cursor') === 'at_200' && failing) {
        failing = false;
        list.records.unshift(...Array.from({ length: 30 }, () => contact(fresh++)));
        return json(res, 500, errorEnvelope('INTERNAL', 'hostile: down for a moment'));
      }
      return list.handler(req, res, ctx);
    });
    const dir = tempDir('crm-hostile-snapshot-');
    const first = await snapshot(dir, ['--max-retries', '0']);
    expect(first.code, first.stderr).toBe(8);
    const again = await snapshot(dir);
    expect(again.code, again.stderr).toBe(0);

    const served = new Set(list.served);
    expect(list.served.length).toBe(served.size + 30);
    const counts = idCounts(join(dir, 'contacts.ndjson'));
    expect(counts.size).toBe(served.size);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    expect(manifest(dir).collections.contacts.records).toBe(served.size);
    expect(loadSnapshotDir(dir).counts.contacts).toBe(served.size);
  });

  it('numeric ids, `__proto__` and `constructor` fields, numbers beyond a double: each record once, kept exact and served', async () => {
    // the bodies are written as text: JSON.stringify could not send these numbers or keep `__proto__` as a field
    const big = (n: number) => `1234567890123456789${n}`; // no double holds these, and they round alike
    const line = (n: number) =>
      n % 3 === 0
        ? `{"id":${big(n % 10)}${n},"__proto__":{"admin":true},"constructor":"c${n}","amount":98765432109876543210}`
        : `{"id":${n},"name":"R${n}","constructor":{"prototype":1}}`;
    let at = 0; // where the list is (offsets), the rows shifted by one after the first page
    const rows = Array.from({ length: 230 }, (_, i) => i + 1);
    const served: string[] = [];
    h.route('GET', '/contacts', (req, res) => {
      const from = Number(req.query.get('cursor')?.replace(/^at_/, '') ?? 0);
      const data = rows.slice(from, from + 100);
      at = from + data.length;
      served.push(...data.map(line));
      const body = `{"object":"list","data":[${data.map(line).join(',')}],"page_info":{"end_cursor":"at_${at}","has_next_page":${at < rows.length}},"meta":{"api_version":"2","request_id":"req_1","timestamp":"2024-01-01T00:00:00Z"}}`;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
      if (from === 0) rows.unshift(9999); // record 100 comes again on page 2 (9999 is never read)
    });
    const dir = tempDir('crm-hostile-snapshot-');
    const r = await snapshot(dir);
    expect(r.code, r.stderr).toBe(0);
    const file = join(dir, 'contacts.ndjson');
    const texts = lineTexts(file);
    // every row once, written exactly as the server sent it
    expect(served.length).toBe(231); // record 100 twice
    expect([...texts].sort()).toEqual([...new Set(served)].sort());
    expect(manifest(dir).collections.contacts.records).toBe(230);

    const loaded = loadSnapshotDir(dir);
    expect(loaded.counts.contacts).toBe(230);
    const sb = await startSandbox({ from: dir });
    try {
      const res = await fetch(`${sb.baseUrl}/contacts/${big(3)}3`, { headers: { 'X-Service-Api-Key': sb.keys.admin } });
      expect(res.status).toBe(200);
      const got = await res.text();
      expect(got).toContain(`"id":${big(3)}3`);
      expect(got).toContain('"__proto__":{"admin":true}');
      expect(got).toContain('"amount":98765432109876543210');
    } finally {
      await sb.close();
    }
  });
});

describe('crm snapshot --links with ids that are numbers', () => {
  it("a parent's id beyond a double is asked for exactly; a link's number and string ids are two, a repeat one; sandbox --from serves them", async () => {
    const BIG = '12345678901234567891'; // a double would make it …7000: another deal
    const list = (rows: string[], more: string | null) =>
      `{"object":"list","data":[${rows.join(',')}],"page_info":{"end_cursor":${more ? `"${more}"` : 'null'},"has_next_page":${more !== null}},"meta":{"api_version":"2","request_id":"req_1","timestamp":"2024-01-01T00:00:00Z"}}`;
    const send = (res: import('node:http').ServerResponse, body: string) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    };
    h.route('GET', '/contacts', (_req, res) => send(res, list(['{"id":101,"email":"a@example.com"}'], null)));
    h.route('GET', '/deals', (_req, res) =>
      send(res, list([`{"id":${BIG},"name":"Big"}`, '{"id":7,"name":"Seven"}'], null)),
    );
    h.route('GET', /^\/api\/v2\/deals\/[^/]+\/(contacts|companies)$/, (_req, res) => send(res, list([], null)));
    // by position: the second page starts with the first page's last link again
    h.route('GET', `/deals/${BIG}/contacts`, (req, res) =>
      send(
        res,
        req.query.get('cursor') === 'at_2'
          ? list(['{"id":"101","email":"b@example.com"}'], null)
          : list(['{"id":101,"email":"a@example.com"}', '{"id":"101","email":"b@example.com"}'], 'at_2'),
      ),
    );
    const dir = tempDir('crm-hostile-snapshot-');
    const r = await runCrm(['snapshot', dir, '--resources', 'contacts,deals', '--links'], {
      env: h.env(),
      timeoutMs: 20_000,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(lineTexts(join(dir, 'links', 'deals.contacts.ndjson'))).toEqual([
      `{"parent_id":"${BIG}","record":{"id":101,"email":"a@example.com"}}`,
      `{"parent_id":"${BIG}","record":{"id":"101","email":"b@example.com"}}`,
    ]);
    expect(manifest(dir).links['deals.contacts']).toMatchObject({ parents: 2, parents_gone: 0, records: 2 });
    const loaded = loadSnapshotDir(dir);
    expect(loaded.counts).toEqual({ contacts: 1, deals: 2 });
    expect(loaded.store.links.map((l) => [l.parent_id, l.child_id])).toContainEqual([BIG, '101']);
  });
});
