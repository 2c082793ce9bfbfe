// A delete keeps a parent's links, and importing its backup links again (CONTRACT §10, issue 31), against a server that
// is not the sandbox: a deal's links come one a page, another deal's links cursor cycles, and a contact is deleted
// before the backup is imported (the link POST answered 404). Judged by the server's own store: a deal whose links
// could not be read is not deleted (its links would be lost), the others come back once with their links and types,
// and importing the backup again creates nothing.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCrm } from '../helpers/run-crm.js';
import { tempDir } from '../helpers/temp.js';
import { batchCreated, errorEnvelope, json, listPage, startHostile, success, type Hostile } from './server.js';

let h: Hostile;
beforeAll(async () => {
  h = await startHostile();
});
afterAll(async () => h?.close());

interface Store {
  deals: Map<string, Record<string, unknown>>;
  /** deal id → its contact links (child id, the link's own fields) */
  links: Map<string, Array<{ id: string; type?: string }>>;
  contacts: Set<string>;
  /** Idempotency-Key → the answer first given */
  cache: Map<string, unknown>;
  /** the deal whose links' end cursor is always the first page's */
  cycling: string;
}
let s: Store;
let next = 0;

beforeEach(() => {
  h.reset();
  s = {
    deals: new Map(
      ['deal_a', 'deal_b', 'deal_c'].map((id) => [id, { id, name: `hk-${id}`, amount: 10, owner_id: 'usr_key' }]),
    ),
    links: new Map([
      ['deal_a', [{ id: 'con_1', type: 'CHAMPION' }, { id: 'con_2' }, { id: 'con_4', type: 'COACH' }]],
      ['deal_b', [{ id: 'con_1' }, { id: 'con_2' }]],
      ['deal_c', [{ id: 'con_3', type: 'BLOCKER' }]],
    ]),
    contacts: new Set(['con_1', 'con_2', 'con_3', 'con_4']),
    cache: new Map(),
    cycling: 'deal_b',
  };
  h.route('GET', /^\/api\/v2\/deals\/[^/]+$/, (req, res) => {
    const deal = s.deals.get(req.path.split('/').at(-1)!);
    if (!deal) return json(res, 404, errorEnvelope('NOT_FOUND', 'no such deal'));
    json(res, 200, success(deal));
  });
  // one link a page, whatever the limit asked; the cycling deal's second page points back at its first
  h.route('GET', /^\/api\/v2\/deals\/[^/]+\/contacts$/, (req, res) => {
    const id = req.path.split('/')[4]!;
    if (!s.deals.has(id)) return json(res, 404, errorEnvelope('NOT_FOUND', 'no such deal'));
    const all = s.links.get(id) ?? [];
    const at = Number(req.query.get('cursor')?.replace(/^p/, '') ?? 0);
    const data = all.slice(at, at + 1).map((l) => ({
      ...{ id: l.id, email: `${l.id}@hk.test` },
      link: { id: `lnk_${id}_${l.id}`, child_id: l.id, child_type: 'contacts', ...(l.type ? { type: l.type } : {}) },
    }));
    const cycling = id === s.cycling;
    json(res, 200, listPage(data, `p${cycling ? 1 : at + 1}`, cycling || at + 1 < all.length));
  });
  h.route('GET', /^\/api\/v2\/deals\/[^/]+\/companies$/, (_req, res) => json(res, 200, listPage([], null, false)));
  h.route('DELETE', /^\/api\/v2\/deals\/[^/]+$/, (req, res) => {
    const id = req.path.split('/').at(-1)!;
    if (!s.deals.delete(id)) return json(res, 404, errorEnvelope('NOT_FOUND', 'no such deal'));
    s.links.delete(id);
    json(res, 200, success({ id, deleted: true }));
  });
  h.route('POST', '/deals/batch', (req, res) => {
    const key = String(req.headers['idempotency-key'] ?? '');
    const cached = s.cache.get(key);
    if (cached) return json(res, 200, cached, { 'idempotent-replayed': 'true' });
    const items = (JSON.parse(req.body) as Array<Record<string, unknown>>).map((r, index) => {
      const made = { ...r, id: `deal_new${++next}`, owner_id: 'usr_key' };
      s.deals.set(made.id, made);
      return { index, status: 'created', data: made };
    });
    const answer = batchCreated(items);
    s.cache.set(key, answer);
    json(res, 200, answer);
  });
  h.route('POST', /^\/api\/v2\/deals\/[^/]+\/contacts$/, (req, res) => {
    const id = req.path.split('/')[4]!;
    const body = JSON.parse(req.body) as { contact_id: string; type?: string };
    if (!s.deals.has(id) || !s.contacts.has(body.contact_id))
      return json(res, 404, errorEnvelope('NOT_FOUND', `no contact ${body.contact_id}`));
    const list = s.links.get(id) ?? [];
    if (!list.some((l) => l.id === body.contact_id))
      list.push({ id: body.contact_id, ...(body.type ? { type: body.type } : {}) });
    s.links.set(id, list);
    json(res, 201, success({ deal_id: id, contact_id: body.contact_id }));
  });
});

const linksOf = (id: string) => (s.links.get(id) ?? []).map((l) => `${l.id}:${l.type ?? ''}`).sort();
const byName = (name: string) => [...s.deals.values()].filter((d) => d.name === name).map((d) => String(d.id));
const writes = (from: number) =>
  h.log
    .slice(from)
    .filter((r) => r.method !== 'GET')
    .map((r) => `${r.method} ${r.path.replace(/^\/api\/v2/, '')}`);

describe('a delete keeps its links, against a hostile server', () => {
  it('links one a page are kept whole; a deal whose links cycle is not deleted; the backup brings the rest back once', async () => {
    const dir = mkdtempSync(join(tempDir('crm-hostile-dkl-'), 'run-'));
    writeFileSync(join(dir, 'ids.csv'), 'id\ndeal_a\ndeal_b\ndeal_c\n');
    const env = h.env();
    const del = await runCrm(['batch', 'deals', 'ids.csv', '--delete', '--yes'], { env, cwd: dir });
    // deal_b's links could not be read (a cursor that cycles): it is not deleted, and its row says why
    expect(del.code, del.stderr).toBe(9);
    // never sent: a failed row saying so, not one "sent without an answer (may have been deleted)"
    expect(del.stderr).toMatch(/PAGINATION_STUCK +not deleted: reading it and its links for the backup failed/);
    expect(del.stderr).toMatch(/Deleted 2 of 3 deals/);
    expect(del.stderr).not.toMatch(/without an answer|in doubt|may have been deleted/);
    expect([...s.deals.keys()]).toEqual(['deal_b']);
    expect(linksOf('deal_b')).toEqual(['con_1:', 'con_2:']);
    const backup = readFileSync(join(dir, 'ids.csv.deleted.ndjson'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { id: string; _links: { contacts: Array<Record<string, string>> } });
    expect(backup.map((r) => r.id).sort()).toEqual(['deal_a', 'deal_c']);
    // every page of deal_a's links, each with its own fields
    expect(backup.find((r) => r.id === 'deal_a')!._links.contacts).toEqual([
      { id: 'con_1', type: 'CHAMPION' },
      { id: 'con_2' },
      { id: 'con_4', type: 'COACH' },
    ]);

    // someone deletes con_3 before the backup is imported: its link is not found (404), not "failed"
    s.contacts.delete('con_3');
    const since = h.log.length;
    const imp = await runCrm(['-o', 'json', 'batch', 'deals', 'ids.csv.deleted.ndjson'], { env, cwd: dir });
    expect(imp.code, imp.stderr).toBe(9);
    const [a] = byName('hk-deal_a');
    const [c] = byName('hk-deal_c');
    expect(linksOf(a!)).toEqual(['con_1:CHAMPION', 'con_2:', 'con_4:COACH']);
    expect(linksOf(c!)).toEqual([]);
    const links = (JSON.parse(imp.stdout) as { links: Array<Record<string, unknown>> }).links;
    expect(links.find((l) => l.resource === 'deals contacts')).toMatchObject({
      ...{ rows: 4, linked: 3, not_found: 1, failed: 0 },
    });
    expect(imp.stderr).not.toMatch(/run the same command again/);
    // the deals this run created are not read for links: one batch, a POST per link
    expect(writes(since).sort()).toEqual(
      ['POST /deals/batch', ...[1, 2, 3].map(() => `POST /deals/${a}/contacts`), `POST /deals/${c}/contacts`].sort(),
    );
    expect(h.log.slice(since).filter((r) => r.method === 'GET' && r.path.includes(`/${a}/`))).toEqual([]);

    // the same import again: no deal created, deal_a's links read and there, only con_3's link tried (still gone)
    const again = h.log.length;
    const imp2 = await runCrm(['-o', 'json', 'batch', 'deals', 'ids.csv.deleted.ndjson'], { env, cwd: dir });
    expect(imp2.code, imp2.stderr).toBe(9);
    expect(writes(again)).toEqual([`POST /deals/${c}/contacts`]);
    // nothing made, nothing to take back (the third trial was told "To remove the links this job made")
    expect(imp2.stderr).not.toMatch(/To remove the links this job made/);
    expect(byName('hk-deal_a')).toEqual([a]);
    const links2 = (JSON.parse(imp2.stdout) as { links: Array<Record<string, unknown>> }).links;
    expect(links2.find((l) => l.resource === 'deals contacts')).toMatchObject({
      ...{ linked: 0, already_linked: 3, not_found: 1, failed: 0 },
    });
  });
});
