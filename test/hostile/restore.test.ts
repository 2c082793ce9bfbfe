// `crm restore DIR` (issue 31) against a server that is not the sandbox: a target collection that shifts while it is
// read (a record comes twice), ids beyond a double, a batch create written and then answered 500, created records
// given an owner crm never saw, and a listing whose cursor cycles. Judged by the server's own store: each missing
// record created once, each snapshot id mapped once and exactly, and a cycle stops the run before anything is sent.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseJson } from '../../src/json/exact-json.js';
import { runCrm } from '../helpers/run-crm.js';
import { tempDir } from '../helpers/temp.js';
import type { ServerResponse } from 'node:http';
import {
  batchCreated,
  contact,
  json,
  listPage,
  meta,
  startHostile,
  type Hostile,
  type HostileRequest,
} from './server.js';

let h: Hostile;
beforeAll(async () => {
  h = await startHostile();
});
afterAll(async () => h?.close());

/** The organization: its contacts (listed by position, offset cursors), creates kept by key. */
interface Org {
  records: Array<Record<string, unknown>>;
  pages: number;
  /** after the first page, a record is inserted at the front: the record at the page's end comes twice */
  shift: boolean;
  /** from the second page on, the end cursor is the first page's again */
  cycle: boolean;
  /** email → how many times a POST created it */
  created: Map<string, number>;
  /** Idempotency-Key → the answer first given */
  cache: Map<string, unknown>;
  /** the first batch request is written, then answered 500 (the answer lost) */
  loseFirst: boolean;
  patches: Array<{ id: string; body: Record<string, unknown> }>;
}
let org: Org;
let nextId = 0;

/** An id no double holds: sent as its digits (JSON.stringify could not), marked by this text in the records. */
const [BIG, BIG_DIGITS] = ['__big_id__', '9007199254740993'];
/** 250 contacts, every fifth owned by usr_a (the others by usr_key, the key's user); one id beyond a double. */
const ORIGINAL = Array.from({ length: 250 }, (_, i) =>
  contact(i, { owner_id: i % 5 === 0 ? 'usr_a' : 'usr_key', ...(i === 7 ? { id: BIG } : {}) }),
);

beforeEach(() => {
  h.reset();
  org = {
    ...{ records: ORIGINAL.map((r) => ({ ...r })), pages: 0, shift: false, cycle: false },
    ...{ created: new Map(), cache: new Map(), loseFirst: false, patches: [] },
  };
  h.route('GET', '/contacts', (req, res) => {
    const limit = Number(req.query.get('limit') ?? 25);
    const at = Number(req.query.get('cursor')?.replace(/^at_/, '') ?? 0);
    const data = org.records.slice(at, at + limit);
    const page = ++org.pages;
    const end = org.cycle && page >= 2 ? limit : at + data.length;
    const body = JSON.stringify(listPage(data, `at_${end}`, at + data.length < org.records.length));
    json(res, 200, body.replaceAll(`"${BIG}"`, BIG_DIGITS));
    if (page === 1 && org.shift) org.records.unshift(contact(5000 + org.records.length, { owner_id: 'usr_key' }));
  });
  h.route('POST', '/contacts/batch', (req, res) => {
    const key = String(req.headers['idempotency-key'] ?? '');
    const cached = org.cache.get(key);
    if (cached) return json(res, 200, cached, { 'idempotent-replayed': 'true' });
    const records = JSON.parse(req.body) as Array<Record<string, unknown>>;
    const items = records.map((r, index) => {
      org.created.set(String(r.email), (org.created.get(String(r.email)) ?? 0) + 1);
      const made = { ...r, id: `con_new${++nextId}`, owner_id: 'usr_key' };
      org.records.push(made);
      return { index, status: 'created', data: made };
    });
    const answer = batchCreated(items);
    org.cache.set(key, answer);
    if (org.loseFirst) {
      org.loseFirst = false;
      return json(res, 500, {
        object: 'error',
        error: { code: 'INTERNAL', message: 'lost', details: [] },
        meta: meta(),
      });
    }
    return json(res, 200, answer);
  });
  h.route('PATCH', /\/contacts\/[^/]+$/, patchRoute);
  h.route('GET', /\/contacts\/[^/]+$/, (req, res) => {
    const id = decodeURIComponent(req.path.split('/').pop()!);
    const record = org.records.find((r) => String(r.id) === id);
    if (!record)
      return json(res, 404, { object: 'error', error: { code: 'NOT_FOUND', message: id, details: [] }, meta: meta() });
    json(res, 200, { object: 'success', data: record, meta: meta() });
  });
});

/** A PATCH of a contact: kept in `org.patches`, the record changed. */
function patchRoute(req: HostileRequest, res: ServerResponse): void {
  const id = decodeURIComponent(req.path.split('/').pop()!);
  const body = JSON.parse(req.body) as Record<string, unknown>;
  org.patches.push({ id, body });
  const record = org.records.find((r) => String(r.id) === id);
  if (record) Object.assign(record, body);
  json(res, 200, { object: 'success', data: record ?? { id, ...body }, meta: meta() });
}

const crm = (args: string[]) => runCrm(args, { env: h.env(), timeoutMs: 60_000 });

/** A snapshot of the organization as it is now (crm snapshot against this server: its base URL in the manifest). */
async function snapshotOf(): Promise<string> {
  const dir = join(tempDir('crm-hostile-restore-'), 'snap');
  const r = await crm(['snapshot', dir, '--resources', 'contacts']);
  expect(r.code, r.stderr).toBe(0);
  org.pages = 0;
  return dir;
}

/** The id map's lines (`resource,snapshot_id,target_id,how`) for this server. */
function idMapLines(dir: string): string[][] {
  const file = readdirSync(join(dir, 'restore')).find((f) => f.endsWith('.ids.csv'));
  if (!file) return [];
  return readFileSync(join(dir, 'restore', file), 'utf8')
    .trim()
    .split(/\r?\n/)
    .slice(1)
    .filter(Boolean)
    .map((l) => l.split(','));
}

describe('crm restore against a server that is not the sandbox', () => {
  it('a bad delete brought back while the collection shifts and the first create’s answer is lost: each record once', async () => {
    const dir = await snapshotOf();
    const snapIds = readFileSync(join(dir, 'contacts.ndjson'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => String((parseJson(l) as { id: unknown }).id));
    expect(snapIds).toContain(BIG_DIGITS);
    // 50 deleted (ids 100..149); after the first page one is inserted at the front: a record comes twice
    org.records.splice(100, 50);
    org.shift = true;
    org.loseFirst = true;

    const r = await crm(['restore', dir, '-o', 'json']);
    expect(r.code, r.stderr).toBe(0);
    const gone = ORIGINAL.slice(100, 150).map((c) => String(c.email));
    expect([...org.created.keys()].sort()).toEqual([...gone].sort());
    expect([...org.created.values()].every((n) => n === 1)).toBe(true);
    // every snapshot id mapped once, exactly (the id beyond a double as its digits), the found ones to themselves
    const lines = idMapLines(dir);
    expect(lines.map((l) => l[1]).sort()).toEqual([...snapIds].sort());
    expect(lines.find((l) => l[1] === '9007199254740993')).toEqual([
      'contacts',
      '9007199254740993',
      '9007199254740993',
      'found',
    ]);
    // owners: a PATCH only for a created record whose owner was not the key's user (the creates named usr_key)
    const owned = ORIGINAL.slice(100, 150).filter((c) => c.owner_id === 'usr_a').length;
    expect(org.patches, r.stdout + r.stderr).toHaveLength(owned);
    expect(org.patches.every((p) => p.body.owner_id === 'usr_a')).toBe(true);
    expect(r.stdout + r.stderr).not.toContain('h0st1leK3y');

    // the same command again: reads only
    const before = h.log.length;
    const again = await crm(['restore', dir, '-o', 'json']);
    expect(again.code, again.stderr).toBe(0);
    expect(h.log.slice(before).filter((q) => q.method !== 'GET')).toEqual([]);
  });

  it('owners a PATCH could not set: exit 9, and the command it prints sets them, nothing else changed', async () => {
    const dir = await snapshotOf();
    org.records.splice(100, 50);
    let refusing = true;
    h.route('PATCH', /\/contacts\/[^/]+$/, (req, res) => {
      if (!refusing) return patchRoute(req, res);
      json(res, 422, {
        object: 'error',
        error: { code: 'VALIDATION_FAILED', message: 'no', details: [] },
        meta: meta(),
      });
    });
    const r = await crm(['restore', dir]);
    expect(r.code, r.stderr).toBe(9);
    expect(r.stderr).toMatch(/10 created records not given their owner/);
    // the owners file's command, as printed (its path quoted for the shell), pasted
    // it names the organization it was aimed at (here by CRM_BASE_URL): pasted in another shell, it goes there
    expect(r.stderr).toContain(`crm --base-url ${h.baseUrl} batch contacts '`);
    const file = /crm --base-url \S+ batch contacts '([^']+owners[^']+\.csv)' --match id/.exec(r.stderr)?.[1];
    expect(file, r.stderr).toBeDefined();
    refusing = false;
    const paste = await crm(['batch', 'contacts', file!, '--match', 'id']);
    expect(paste.code, paste.stderr).toBe(0);
    expect(org.patches.map((p) => p.body)).toEqual(Array.from({ length: 10 }, () => ({ owner_id: 'usr_a' })));
    expect([...org.created.values()].every((n) => n === 1)).toBe(true);
  });

  it('a target listing whose cursor cycles stops the run before anything is sent, the id map untouched', async () => {
    const dir = await snapshotOf();
    org.records.splice(0, 30);
    org.cycle = true;
    const r = await crm(['restore', dir]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/pagination loops/);
    expect(h.log.filter((q) => q.method !== 'GET')).toEqual([]);
    expect(idMapLines(dir)).toEqual([]);
  });
});
