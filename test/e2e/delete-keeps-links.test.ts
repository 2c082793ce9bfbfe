// End to end: a delete keeps a parent's links (CONTRACT §10, issue 31). Deleting deals keeps each deal's own links
// (its contacts, with their type and supervisor, and its companies) in its backup line under `_links`, read before
// its DELETE and counted in the cost; importing the backup creates the deals again and links each new one to the
// records still there — exactly once: a second import, a week later, after someone else unlinked one, sends no
// record and only the link that is missing. A child deleted since is the links run's not found, named.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applied, logLength, makeContacts, requestLog } from '../helpers/bulk.js';
import { runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';

let t: TestSandbox;
let dir: string;
beforeAll(async () => {
  t = await startTestSandbox({ rateLimit: 1_000_000, orgRateLimit: 1_000_000, rateWindowMs: 1000 });
  dir = mkdtempSync(join(tmpdir(), 'crm-delete-links-'));
});
afterAll(async () => {
  await t?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const crm = (args: string[], cwd = dir) => runCrm(args, { env: t.env('admin'), cwd, timeoutMs: 60_000 });

async function api(method: string, path: string, body?: unknown): Promise<{ data: unknown }> {
  const res = await fetch(`${t.sb.baseUrl}${path}`, {
    method,
    headers: { 'X-Service-Api-Key': t.sb.keys.admin, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(res.status, `${method} ${path}`).toBeLessThan(300);
  return (await res.json()) as { data: unknown };
}
const created = async (path: string, body: unknown) => ((await api('POST', path, body)).data as { id: string }).id;

/** A deal's links in the server's store: `child_id:type` of each, sorted. */
async function linksOf(deal: string, relation: string): Promise<string[]> {
  const { data } = await api('GET', `/deals/${deal}/${relation}?limit=100`);
  return (data as Array<{ id: string; link: { type?: string } }>).map((r) => `${r.id}:${r.link.type ?? ''}`).sort();
}

/** Every deal named `name` in the server's store. */
async function dealsNamed(name: string): Promise<string[]> {
  const { data } = await api('GET', `/deals?limit=100`);
  return (data as Array<{ id: string; name: string }>).filter((d) => d.name === name).map((d) => d.id);
}

describe('a delete keeps a parent’s links, and importing its backup links the records again', () => {
  it('deals: the backup holds each deal’s links; the import re-links to the children still there, once, over time', async () => {
    const sub = mkdtempSync(join(dir, 'deals-'));
    const [c1, c2, c3] = await makeContacts(t, 'dkl', 3);
    const company = await created('/companies', { name: 'Keeplinks Ltd' });
    const d1 = await created('/deals', { name: 'dkl-one', amount: 100 });
    const d2 = await created('/deals', { name: 'dkl-two' });
    await api('POST', `/deals/${d1}/contacts`, { contact_id: c1, type: 'DECISION_MAKER' });
    await api('POST', `/deals/${d1}/contacts`, { contact_id: c2 });
    await api('POST', `/deals/${d1}/companies`, { company_id: company });
    await api('POST', `/deals/${d2}/contacts`, { contact_id: c3 });
    const before = { d1: await linksOf(d1, 'contacts'), company: await linksOf(d1, 'companies') };
    writeFileSync(join(sub, 'ids.csv'), `id\n${d1}\n${d2}\n`);

    const del = await crm(['batch', 'deals', 'ids.csv', '--delete', '--yes'], sub);
    expect(del.code, del.stderr).toBe(0);
    // counted in the cost: a GET of each relation per deal
    expect(del.stderr).toMatch(/4 GETs of their links/);
    expect(del.stderr).toMatch(/Their own links \(contacts, companies\) are kept with them/);
    const backup = join(sub, 'ids.csv.deleted.ndjson');
    const kept = readFileSync(backup, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { id: string; _links: Record<string, Array<Record<string, string>>> });
    const one = kept.find((r) => r.id === d1)!;
    expect(one._links.contacts!.map((l) => `${l.id}:${l.type ?? ''}`).sort()).toEqual(before.d1);
    expect(one._links.companies).toEqual([{ id: company }]);
    expect(kept.find((r) => r.id === d2)!._links).toEqual({ contacts: [{ id: c3 }], companies: [] });

    // a child deleted since: its link cannot come back, and says so
    await api('DELETE', `/contacts/${c3}`);
    const since = await logLength(t);
    const imp = await crm(['-o', 'json', 'batch', 'deals', 'ids.csv.deleted.ndjson'], sub);
    expect(imp.code, imp.stderr).toBe(9);
    // the deals this run created have no links yet: none of theirs is read, a POST per link
    const reads = (await requestLog(t, since)).filter((e) => e.method === 'GET' && /\/deals\/[^/]+\//.test(e.path));
    expect(reads.map((e) => e.path)).toEqual([]);
    const summary = JSON.parse(imp.stdout) as Record<string, unknown> & { links: Array<Record<string, unknown>> };
    expect(summary).toMatchObject({ created: 2, links_not_restored: ['notes/{id}/records', 'meetings/{id}/deal'] });
    const [n1] = await dealsNamed('dkl-one');
    const [n2] = await dealsNamed('dkl-two');
    expect(await linksOf(n1!, 'contacts')).toEqual(before.d1);
    expect(await linksOf(n1!, 'companies')).toEqual(before.company);
    expect(await linksOf(n2!, 'contacts')).toEqual([]);
    const contacts = summary.links.find((l) => l.relation === 'contacts' || l.resource === 'deals contacts')!;
    expect(JSON.stringify(summary.links)).toMatch(/"linked":2/);
    expect(contacts).toBeDefined();
    // the server's 404 for the contact gone: not found, not "failed" with "run the same command again" (the trial)
    expect(contacts).toMatchObject({ rows: 3, linked: 2, already_linked: 0, not_found: 1, failed: 0 });
    expect(imp.stderr).toMatch(/1 row of 3 not linked \(deals contacts\): 1 not found/);
    expect(imp.stderr).toMatch(/did not find when linking \(deleted since the input was written\)/);
    expect(imp.stderr).not.toMatch(/run the same command again/);
    // the link to the contact deleted since: in the links run's rejects file, the server's NOT_FOUND naming it
    const rejects = readFileSync(join(sub, 'ids.csv.deleted.ndjson.contacts.link-deals-contacts.rejects.csv'), 'utf8');
    expect(rejects).toMatch(new RegExp(`${n2},${c3},.*NOT_FOUND.*${c3}`));
    const firstLog = await requestLog(t, since);
    expect(
      firstLog.filter((e) => applied(e) && e.method === 'POST' && /\/deals\/[^/]+\/contacts$/.test(e.path)),
    ).toHaveLength(2);

    // a week later someone unlinked one; the same import again: no deal made twice, only the missing link sent
    await api('DELETE', `/deals/${n1}/contacts/${c2}`);
    const again = await logLength(t);
    const imp2 = await crm(['-o', 'json', 'batch', 'deals', 'ids.csv.deleted.ndjson'], sub);
    expect(imp2.code, imp2.stderr).toBe(9);
    // this run's own counts: one made again, one there, the contact still gone (the trial's rerun: "Linked 7 of 8 rows;
    // 0 already linked" where all were there)
    const links2 = (JSON.parse(imp2.stdout) as { links: Array<Record<string, unknown>> }).links;
    expect(links2.find((l) => l.resource === 'deals contacts')).toMatchObject({
      ...{ rows: 3, linked: 1, already_linked: 1, not_found: 1, failed: 0 },
    });
    expect(links2.find((l) => l.resource === 'deals companies')).toMatchObject({ linked: 0, already_linked: 1 });
    expect(await dealsNamed('dkl-one')).toEqual([n1]);
    expect(await dealsNamed('dkl-two')).toEqual([n2]);
    expect(await linksOf(n1!, 'contacts')).toEqual(before.d1);
    const log = await requestLog(t, again);
    const writes = log.filter((e) => applied(e) && e.method !== 'GET');
    expect(writes.map((e) => `${e.method} ${e.path.replace(/^\/api\/v2/, '')}`)).toEqual([
      `POST /deals/${n1}/contacts`,
    ]);
  });

  it('crm deals delete ID keeps the deal’s links too, and says how they come back', async () => {
    const sub = mkdtempSync(join(dir, 'one-'));
    const [c] = await makeContacts(t, 'dkl1', 1);
    const d = await created('/deals', { name: 'dkl-single' });
    await api('POST', `/deals/${d}/contacts`, { contact_id: c, type: 'CHAMPION' });
    const r = await crm(['deals', 'delete', d, '--yes', '--backup', 'one.deleted.ndjson'], sub);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/links it again to the records it was linked to/);
    const line = JSON.parse(readFileSync(join(sub, 'one.deleted.ndjson'), 'utf8')) as Record<string, unknown>;
    expect(line._links).toEqual({ contacts: [{ id: c, type: 'CHAMPION' }], companies: [] });
    const imp = await crm(['batch', 'deals', 'one.deleted.ndjson'], sub);
    expect(imp.code, imp.stderr).toBe(0);
    const [n] = await dealsNamed('dkl-single');
    expect(await linksOf(n!, 'contacts')).toEqual([`${c}:CHAMPION`]);
    // the field was never sent: the new deal has no `_links`
    const { data } = await api('GET', `/deals/${n}`);
    expect(data).not.toHaveProperty('_links');
  });
});
