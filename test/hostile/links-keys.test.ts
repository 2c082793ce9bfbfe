// `crm links import deals contacts FILE` by natural key (CONTRACT §7d, issue 30) against a server that is not the
// sandbox: a deal's contacts list that repeats a child on its next page (the child is linked once, never posted)
// or whose cursor cycles (exit 8 naming the loop, nothing sent, no endless reading); a contacts collection that
// changes between pages (a record served twice, or again under another key, is one record: no key is ambiguous by
// it alone); a POST that writes and then answers 500 (the rerun reads the link as there and posts nothing; a retry
// reuses its Idempotency-Key); an error echoing the API key (never shown whole, in output or in crm's files). What
// the server received (its log) is checked, not only what crm says.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCrm, type CrmResult } from '../helpers/run-crm.js';
import { tempDir } from '../helpers/temp.js';
import {
  contact,
  errorEnvelope,
  HOSTILE_KEY,
  json,
  listPage,
  shiftingList,
  startHostile,
  success,
  type Hostile,
  type HostileRequest,
} from './server.js';

let h: Hostile;
beforeAll(async () => {
  h = await startHostile();
});
afterAll(async () => h?.close());

/** deal id → its linked contacts' ids (what the server holds) */
let links: Map<string, Set<string>>;
const DEALS = [
  { id: 'deal_1', name: 'Acme renewal' },
  { id: 'deal_2', name: 'Pilot' },
];
const CONTACTS = Array.from({ length: 6 }, (_, i) => contact(i + 1));
const RELATION = /^\/api\/v2\/deals\/([^/]+)\/contacts$/;
const dealOf = (req: HostileRequest) => RELATION.exec(req.path)![1]!;

beforeEach(() => {
  h.reset();
  links = new Map(DEALS.map((d) => [d.id, new Set<string>()]));
  h.route('GET', '/deals', (_req, res) => json(res, 200, listPage(DEALS, null, false)));
  h.route('GET', '/contacts', (_req, res) => json(res, 200, listPage(CONTACTS, null, false)));
  h.route('GET', RELATION, (req, res) => {
    const held = [...(links.get(dealOf(req)) ?? [])].map((id) => ({ id, link: { type: 'PRIMARY' } }));
    json(res, 200, listPage(held, null, false));
  });
  h.route('POST', RELATION, (req, res) => {
    const { contact_id } = JSON.parse(req.body) as { contact_id: string };
    links.get(dealOf(req))!.add(contact_id);
    json(res, 201, success({ id: contact_id, link: {} }));
  });
});

const BOUND = { timeoutMs: 30_000 };
const crm = (dir: string, args: string[], extra: string[] = []): Promise<CrmResult> =>
  runCrm(['-o', 'json', ...extra, 'links', 'import', 'deals', 'contacts', ...args], {
    env: h.env(),
    cwd: dir,
    ...BOUND,
  });
const fileIn = (dir: string, rows: string[]): string => {
  writeFileSync(join(dir, 'pairs.csv'), `deal.name,contact.email\n${rows.join('\n')}\n`);
  return 'pairs.csv';
};
const posts = () => h.log.filter((r) => r.method !== 'GET');
const gets = (path: string) => h.log.filter((r) => r.method === 'GET' && r.path === `/api/v2${path}`);
const postedIds = () =>
  posts().map((r) => `${r.path.split('/')[4]} ${(JSON.parse(r.body) as { contact_id: string }).contact_id}`);
const summary = (r: CrmResult) => JSON.parse(r.stdout) as Record<string, unknown>;
const csv = (path: string) => parse<Record<string, string>>(readFileSync(path, 'utf8'), { columns: true, bom: true });

describe("a deal's contacts list that changes while it is read", () => {
  it('a child repeated on the next page is linked once: no POST for it, one for the child not there', async () => {
    // no cursor → [1, 2] then A; A → [2, 3] (2 again: pushed by an insert before the cursor), the end
    h.route('GET', '/deals/deal_1/contacts', (req, res) => {
      const first = req.query.get('cursor') === null;
      const page = (first ? [1, 2] : [2, 3]).map((n) => ({ ...contact(n), link: {} }));
      json(res, 200, listPage(page, first ? 'A' : null, first));
    });
    const dir = tempDir('crm-hostile-links-keys-');
    const rows = [1, 2, 3, 4].map((n) => `Acme renewal,c${n}@example.com`);
    const r = await crm(dir, [fileIn(dir, rows)]);
    expect(r.code, r.stderr).toBe(0);
    expect(summary(r)).toMatchObject({ linked: 1, already_linked: 3, ambiguous: 0, duplicate: 0, failed: 0 });
    expect(postedIds()).toEqual(['deal_1 con_000004']);
    // the deal's links read once: each page once, at the largest page size
    expect(gets('/deals/deal_1/contacts').map((g) => g.query.get('cursor'))).toEqual([null, 'A']);
    expect(gets('/deals/deal_1/contacts').every((g) => g.query.get('limit') === '100')).toBe(true);
    expect(csv(join(dir, 'pairs.csv.linked.csv')).map((l) => `${l.parent_id} ${l.child_id}`)).toEqual([
      'deal_1 con_000004',
    ]);
  });

  it('a cursor that cycles stops the run with exit 8 naming the loop, before anything is sent; a rerun does the same', async () => {
    // no cursor → [1] then A; A → [2] then B; B → [2] then A again: a cycle
    h.route('GET', '/deals/deal_1/contacts', (req, res) => {
      const at = req.query.get('cursor');
      const [n, next] = at === null ? [1, 'A'] : at === 'A' ? [2, 'B'] : [2, 'A'];
      json(res, 200, listPage([{ ...contact(n), link: {} }], next, true));
    });
    const dir = tempDir('crm-hostile-links-keys-');
    const file = fileIn(dir, ['Pilot,c5@example.com', 'Acme renewal,c3@example.com', 'Pilot,c6@example.com']);
    for (let run = 0; run < 2; run++) {
      h.log.length = 0;
      const r = await crm(dir, [file]);
      expect(r.code, r.stderr).toBe(8);
      expect(r.stderr).toMatch(/pagination loops: page 3 points back to cursor "A" of page 1/);
      const err = JSON.parse(r.stderr.trim().split('\n').at(-1)!) as { error: { code: string } };
      expect(err.error.code).toBe('PAGINATION_STUCK');
      // the loop was left at once: three pages read, and no link sent for any row (deal_2's were planned, not sent)
      expect(gets('/deals/deal_1/contacts')).toHaveLength(3);
      expect(posts()).toEqual([]);
      expect(existsSync(join(dir, 'pairs.csv.linked.csv'))).toBe(false);
    }
    expect(links.get('deal_2')!.size).toBe(0);
  });
});

describe('a contacts collection that changes between pages', () => {
  it('a record served twice, or again under another key, never makes a key ambiguous by itself', async () => {
    const records = Array.from({ length: 150 }, (_, i) => contact(i + 1));
    let fresh = 1000;
    const list = shiftingList(records, {
      between(page, all) {
        if (page !== 1) return;
        // before the cursor: 7 new records (less con_10 and con_5, taken out below) push 96..100 onto page 2 (served twice)
        all.unshift(...Array.from({ length: 7 }, () => contact(fresh++)));
        // con_10, already served as c10@, is edited and moved past the cursor: served again as moved@
        const at = all.findIndex((r) => r.id === 'con_000010');
        const [moved] = all.splice(at, 1);
        all.push({ ...moved, email: 'Moved@Example.com' });
        // con_5, already served, comes again with its email in another case (the same key)
        const five = all.findIndex((r) => r.id === 'con_000005');
        all.push({ ...all.splice(five, 1)[0], email: 'C5@EXAMPLE.COM' });
      },
    });
    h.route('GET', '/contacts', list.handler);
    const dir = tempDir('crm-hostile-links-keys-');
    const rows = [
      ...[96, 97, 98, 99, 100].map((n) => `Pilot,c${n}@example.com`),
      'Pilot,moved@example.com', // con_10 under its key now
      'Pilot,c10@example.com', // its key before the edit: no record has it now
      'Pilot,c5@example.com',
      'Pilot,c140@example.com',
    ];
    const r = await crm(dir, [fileIn(dir, rows)]);
    expect(r.code, r.stderr).toBe(9); // the one not found
    expect(new Set(list.served).size).toBeLessThan(list.served.length); // records were served twice
    expect(summary(r)).toMatchObject({ linked: 8, ambiguous: 0, not_found: 1, duplicate: 0, failed: 0 });
    expect(postedIds().sort()).toEqual(
      ['con_000096', 'con_000097', 'con_000098', 'con_000099', 'con_000100', 'con_000010', 'con_000005', 'con_000140']
        .map((id) => `deal_2 ${id}`)
        .sort(),
    );
    // the collection read once, two pages of 100, and no ambiguous file
    expect(gets('/contacts').map((g) => [g.query.get('limit'), g.query.get('cursor')])).toEqual([
      ['100', null],
      ['100', 'at_100'],
    ]);
    expect(readdirSync(dir).some((f) => f.includes('ambiguous'))).toBe(false);
    const rejects = csv(join(dir, String(summary(r).rejects_file)));
    expect(rejects.map((l) => [l._line, l._error_code])).toEqual([['8', 'NOT_FOUND']]);
  });
});

describe('a POST that writes and then answers 500', () => {
  /** POSTs are written, then answered 500; the first run (no retry) fails its row */
  const firstRun = async () => {
    h.route('POST', RELATION, (req, res) => {
      links.get(dealOf(req))!.add((JSON.parse(req.body) as { contact_id: string }).contact_id);
      json(res, 500, errorEnvelope('INTERNAL_ERROR', 'written, but the answer was lost'));
    });
    const dir = tempDir('crm-hostile-links-keys-');
    const file = fileIn(dir, ['Acme renewal,c2@example.com']);
    const first = await crm(dir, [file], ['--max-retries', '0']);
    expect(first.code, first.stderr).toBe(9);
    expect(summary(first)).toMatchObject({ linked: 0, failed: 1, linked_file: 'pairs.csv.linked.csv' });
    expect(postedIds()).toEqual(['deal_1 con_000002']);
    expect(links.get('deal_1')).toEqual(new Set(['con_000002']));
    // the way back was written before the POST: it holds the link the server made
    expect(csv(join(dir, 'pairs.csv.linked.csv')).map((l) => `${l.parent_id} ${l.child_id}`)).toEqual([
      'deal_1 con_000002',
    ]);
    h.log.length = 0;
    return { dir, file, again: await crm(dir, [file], ['--max-retries', '0']) };
  };

  it('the run fails the row; the rerun reads the link as there and sends no second POST', async () => {
    const { dir, again } = await firstRun();
    expect(again.code, again.stderr).toBe(0);
    // the job's link (its first run's POST made it, as its linked file says): counted linked, not "already linked"
    expect(summary(again)).toMatchObject({ linked: 1, already_linked: 0, failed: 0 });
    expect(posts()).toEqual([]);
    expect(gets('/deals/deal_1/contacts')).toHaveLength(1);
    expect(csv(join(dir, 'pairs.csv.linked.csv'))).toHaveLength(1);
  });

  it('the rerun that finishes the job names the linked file holding the link its first run made (§7c)', async () => {
    // the rerun resumes the unfinished job (its plan says so) and ends it: the printed command must still name the
    // job's way back, since the first run's link was made (the server wrote it before its 500)
    const { again } = await firstRun();
    expect(again.code, again.stderr).toBe(0);
    expect(summary(again).linked_file).toBe('pairs.csv.linked.csv');
    expect(again.stderr).toContain('crm links import deals contacts pairs.csv.linked.csv --remove');
  });

  it('retried, the POST carries the same Idempotency-Key, and the link is counted once', async () => {
    h.route('POST', RELATION, (req, res, ctx) => {
      links.get(dealOf(req))!.add((JSON.parse(req.body) as { contact_id: string }).contact_id);
      if (ctx.count === 0) return json(res, 500, errorEnvelope('INTERNAL_ERROR', 'written, but the answer was lost'));
      json(res, 201, success({ id: 'con_000003', link: {} }));
    });
    const dir = tempDir('crm-hostile-links-keys-');
    const r = await crm(dir, [fileIn(dir, ['Pilot,c3@example.com'])], ['--max-retries', '2']);
    expect(r.code, r.stderr).toBe(0);
    expect(summary(r)).toMatchObject({ linked: 1, failed: 0 });
    const sent = posts();
    expect(sent).toHaveLength(2);
    const keys = sent.map((p) => p.headers['idempotency-key']);
    expect(typeof keys[0]).toBe('string');
    expect(keys[1]).toBe(keys[0]);
    expect(sent[1]!.body).toBe(sent[0]!.body);
  });
});

describe('an error that echoes the API key', () => {
  /** the key without its public prefix and the 4 characters a mask shows */
  const SECRET = HOSTILE_KEY.slice('service_live_'.length, -4);
  const escaped = HOSTILE_KEY.replace(/_/g, '\\u005f');
  /** undoes JSON and URL escapes, as a reader of the output could */
  const decoded = (s: string): string => {
    let [prev, cur] = ['', s];
    while (cur !== prev) {
      prev = cur;
      cur = cur
        .replace(/\\\\/g, '\\')
        .replace(/\\u([0-9a-fA-F]{4})/g, (_m, x: string) => String.fromCharCode(parseInt(x, 16)))
        .replace(/%([0-9a-fA-F]{2})/g, (_m, x: string) => String.fromCharCode(parseInt(x, 16)));
    }
    return cur;
  };
  const expectNoKey = (where: string, text: string) => {
    expect(text, where).not.toContain(SECRET);
    expect(decoded(text), `${where}, escapes undone`).not.toContain(SECRET);
  };
  /** every file crm left in `dir` besides the input */
  const filesOf = (dir: string) => readdirSync(dir).filter((f) => f !== 'pairs.csv');
  /** the key went out only in the one auth header: never in a URL or a body */
  const expectSentOnlyAsHeader = () => {
    expect(h.log.length).toBeGreaterThan(0);
    for (const req of h.log) {
      expect(req.headers['x-service-api-key']).toBe(HOSTILE_KEY);
      expect(req.url + req.body).not.toContain(SECRET);
    }
  };
  const echo = (status: number, code: string) => (_req: HostileRequest, res: import('node:http').ServerResponse) => {
    const body = JSON.stringify(
      errorEnvelope(code, `key ${HOSTILE_KEY} may not do this (${'\u0000'}ESC)`, [{ field: 'contact_id', key: 'ESC' }]),
    ).replace(/ESC/g, escaped);
    res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': `req_${HOSTILE_KEY}` });
    res.end(body);
  };

  it('a refused POST: not in the output, the rejects file or the linked file (-v too)', async () => {
    h.route('POST', RELATION, echo(422, 'VALIDATION_ERROR'));
    const dir = tempDir('crm-hostile-links-keys-');
    const file = fileIn(dir, ['Pilot,c1@example.com', 'Pilot,c2@example.com']);
    for (const extra of [[], ['-v']]) {
      h.log.length = 0;
      const r = await crm(dir, [file, '--plan', 'plan.csv'], extra);
      expect(r.code, r.stderr).toBe(9);
      expect(summary(r)).toMatchObject({ linked: 0, failed: 2 });
      expect(posts()).toHaveLength(2); // a 422 is not retried
      expectNoKey('stdout', r.stdout);
      expectNoKey('stderr', r.stderr);
      const rejects = String(summary(r).rejects_file);
      expect(csv(join(dir, rejects)).map((l) => l._error_code)).toEqual(['VALIDATION_ERROR', 'VALIDATION_ERROR']);
      expectSentOnlyAsHeader();
    }
    expect(filesOf(dir).length).toBeGreaterThanOrEqual(3); // rejects, linked and plan files at least
    for (const f of filesOf(dir)) expectNoKey(f, readFileSync(join(dir, f), 'utf8'));
  });

  it("a refused read (the collection, a deal's links): exit 4 or 8, the key masked", async () => {
    const dir = tempDir('crm-hostile-links-keys-');
    const file = fileIn(dir, ['Pilot,c1@example.com']);
    h.route('GET', '/contacts', echo(403, 'FORBIDDEN'));
    const denied = await crm(dir, [file]);
    expect(denied.code, denied.stderr).toBe(4);
    expect(denied.stderr).toContain('service_live_…');
    expectNoKey('stdout', denied.stdout);
    expectNoKey('stderr', denied.stderr);
    expect(posts()).toEqual([]);
    expectSentOnlyAsHeader();

    h.reset();
    h.route('GET', '/deals', (_req, res) => json(res, 200, listPage(DEALS, null, false)));
    h.route('GET', '/contacts', (_req, res) => json(res, 200, listPage(CONTACTS, null, false)));
    h.route('GET', RELATION, echo(503, 'UNAVAILABLE'));
    const down = await crm(dir, [file], ['--max-retries', '1', '-v']);
    expect(down.code, down.stderr).toBe(8);
    expectNoKey('stdout', down.stdout);
    expectNoKey('stderr', down.stderr);
    expect(gets('/deals/deal_2/contacts')).toHaveLength(2); // one retry, then the end
    expect(posts()).toEqual([]);
    expectSentOnlyAsHeader();
    for (const f of filesOf(dir)) expectNoKey(f, readFileSync(join(dir, f), 'utf8'));
  });
});
