// `crm snapshot DIR --links` against a server that is not the sandbox: a parent deleted between its
// collection's read and its links' (404) is skipped and counted in the manifest; a parent's links list
// whose cursor cycles (repeating a record) stops with exit 8, every link still once in the partial file,
// and a rerun neither loops nor writes a record twice; with no rate-limit headers the plan's cost goes by
// the spec's 200 requests a minute.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCrm } from '../helpers/run-crm.js';
import { tempDir } from '../helpers/temp.js';
import { contact, errorEnvelope, json, listPage, startHostile, type Hostile } from './server.js';

let h: Hostile;
beforeAll(async () => {
  h = await startHostile();
});
afterAll(async () => h?.close());

const DEALS = ['deal_1', 'deal_2', 'deal_3'].map((id) => ({ id, name: id }));
beforeEach(() => {
  h.reset();
  h.route('GET', '/deals', (_req, res) => json(res, 200, listPage(DEALS, null, false)));
  // by default every deal has one company and no contacts
  h.route('GET', /^\/api\/v2\/deals\/[^/]+\/companies$/, (_req, res) =>
    json(res, 200, listPage([{ id: 'cmp_1', name: 'Acme' }], null, false)),
  );
  h.route('GET', /^\/api\/v2\/deals\/[^/]+\/contacts$/, (_req, res) => json(res, 200, listPage([], null, false)));
});

const lines = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { parent_id: string; record: { id: string } });
const manifest = (dir: string) => JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Record<string, any>;
const BOUND = { timeoutMs: 20_000 };

describe('crm snapshot --links (hostile server)', () => {
  it('a parent that is gone (404) is skipped and counted; the cost goes by the spec limit without rate-limit headers', async () => {
    h.route('GET', /^\/api\/v2\/deals\/deal_2\/(contacts|companies)$/, (_req, res) =>
      json(res, 404, errorEnvelope('NOT_FOUND', 'Deal deal_2 not found')),
    );
    h.route('GET', '/deals/deal_3/contacts', (req, res) => {
      const page = req.query.get('cursor') === 'p2' ? [contact(3)] : [contact(1), contact(2)];
      json(res, 200, listPage(page, req.query.get('cursor') === 'p2' ? null : 'p2', req.query.get('cursor') !== 'p2'));
    });
    const dir = tempDir('crm-hostile-snapshot-');
    const r = await runCrm(['snapshot', dir, '--resources', 'deals', '--links'], { env: h.env(), ...BOUND });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      "Links: 6 requests, one per deal (3 ×2) (one more per 100 links of a parent): under 0.1 min at 200 requests a minute (the spec's limit: no answer has said the server's own yet)",
    );
    const m = manifest(dir);
    expect(m.complete).toBe(true);
    expect(m.links['deals.contacts']).toEqual({
      file: 'links/deals.contacts.ndjson',
      parents: 2,
      records: 3,
      parents_gone: 1,
      complete: true,
    });
    expect(m.links['deals.companies']).toEqual({
      file: 'links/deals.companies.ndjson',
      parents: 2,
      records: 2,
      parents_gone: 1,
      complete: true,
    });
    expect(lines(join(dir, 'links', 'deals.contacts.ndjson'))).toEqual(
      [1, 2, 3].map((n) => ({ parent_id: 'deal_3', record: contact(n) })),
    );
    expect(lines(join(dir, 'links', 'deals.companies.ndjson')).map((l) => l.parent_id)).toEqual(['deal_1', 'deal_3']);
  });

  it("a parent's links whose cursor cycles stop with exit 8; no link is written twice, then or on a rerun", async () => {
    // no cursor → [1, 2] then A; A → [3] then B; B → [3] again then A: a cycle, one record repeated
    h.route('GET', '/deals/deal_2/contacts', (req, res) => {
      const at = req.query.get('cursor');
      const [data, next] =
        at === null ? [[contact(1), contact(2)], 'A'] : at === 'A' ? [[contact(3)], 'B'] : [[contact(3)], 'A'];
      json(res, 200, listPage(data, next, true));
    });
    const dir = tempDir('crm-hostile-snapshot-');
    for (let run = 0; run < 2; run++) {
      const r = await runCrm(['snapshot', dir, '--resources', 'deals', '--links'], { env: h.env(), ...BOUND });
      expect(r.code, r.stderr).toBe(8);
      expect(r.stderr).toMatch(/pagination loops/);
      expect(manifest(dir).complete).toBe(false);
      expect(existsSync(join(dir, 'links', 'deals.contacts.ndjson'))).toBe(false);
      const partial = lines(join(dir, 'links', '.deals.contacts.ndjson.partial'));
      expect(partial.map((l) => `${l.parent_id} ${l.record.id}`)).toEqual([
        'deal_2 con_000001',
        'deal_2 con_000002',
        'deal_2 con_000003',
      ]);
    }
  });
});
