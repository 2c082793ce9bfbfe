// End to end: `crm RESOURCE delete ID…` keeps what it deletes (issue 19): each record, as GET returned it,
// appended once to <resource>.deleted.<time>.ndjson (a file per run) in the current folder (or --backup FILE) before its DELETE;
// a backup that cannot be written stops before any DELETE; importing the file creates the records again
// with new ids, and the summary names the links that did not come back.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { getRecord, logLength, makeContacts, requestLog } from '../helpers/bulk.js';
import { runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';

let t: TestSandbox;
let dir: string;
beforeAll(async () => {
  t = await startTestSandbox({ rateLimit: 1_000_000, orgRateLimit: 1_000_000, rateWindowMs: 1000 });
  dir = mkdtempSync(join(tmpdir(), 'crm-delete-one-'));
});
afterAll(async () => {
  await t?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});
afterEach(async () => {
  await t.control('/faults', { fail_rate: 0, latency_ms: 0, faults: {}, next: [] });
});

const crm = (args: string[], cwd = dir) => runCrm(args, { env: t.env('admin'), cwd, timeoutMs: 60_000 });
const lines = (path: string) =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

async function api(method: string, path: string, body?: unknown): Promise<{ data: Record<string, unknown> }> {
  const res = await fetch(`${t.sb.baseUrl}${path}`, {
    method,
    headers: { 'X-Service-Api-Key': t.sb.keys.admin, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(res.status, `${method} ${path}`).toBeLessThan(300);
  return (await res.json()) as { data: Record<string, unknown> };
}

/** The backup files a delete left in `sub`: `<resource>.deleted.<time>.ndjson`, one per run. */
const backups = (sub: string, resource: string): string[] =>
  readdirSync(sub)
    .filter((f) => new RegExp(`^${resource}\\.deleted\\.\\d{8}T\\d{6}Z(-\\d+)?\\.ndjson$`).test(f))
    .sort();

describe('crm RESOURCE delete keeps what it deletes', () => {
  it('one id: the record goes to contacts.deleted.<time>.ndjson in the current folder, GET before DELETE; -o json as before; stderr names the file', async () => {
    const sub = mkdtempSync(join(dir, 'one-'));
    const [id] = await makeContacts(t, 'one', 1);
    const before = await getRecord(t, 'contacts', id!);
    const since = await logLength(t);
    const r = await crm(['-o', 'json', 'contacts', 'delete', id!, '--yes'], sub);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ id, deleted: true });
    const [file, ...more] = backups(sub, 'contacts');
    expect(more).toEqual([]);
    expect(lines(join(sub, file!))).toEqual([before]);
    expect(r.stderr).toContain(file);
    // another run, another file of its own: restoring one restores that run's records only
    const [other] = await makeContacts(t, 'one', 1);
    expect((await crm(['contacts', 'delete', other!, '--yes'], sub)).code).toBe(0);
    expect(backups(sub, 'contacts')).toHaveLength(2);
    const log = await requestLog(t, since);
    const get = log.findIndex((e) => e.method === 'GET' && e.path.endsWith(`/contacts/${id}`));
    const del = log.findIndex((e) => e.method === 'DELETE' && e.path.endsWith(`/contacts/${id}`));
    expect(get).toBeGreaterThanOrEqual(0);
    expect(get).toBeLessThan(del);
    expect(await getRecord(t, 'contacts', id!)).toBeUndefined();
  });

  it("runs at once, in the same second: each keeps its record in a file of its own, never in another run's (issue 27)", async () => {
    const sub = mkdtempSync(join(dir, 'same-second-'));
    const ids = await makeContacts(t, 'same', 4);
    // started together at the start of a second: the old names (to the second) were one file for all four
    await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000)));
    const runs = await Promise.all(ids.map((id) => crm(['contacts', 'delete', id, '--yes'], sub)));
    for (const r of runs) expect(r.code, r.stderr).toBe(0);
    const files = backups(sub, 'contacts');
    expect(files).toHaveLength(4);
    const held = files.map((f) => lines(join(sub, f)).map((rec) => rec.id));
    expect(held.every((h) => h.length === 1)).toBe(true);
    expect(held.flat().sort()).toEqual([...ids].sort());
    // each run names its own file
    for (const [i, r] of runs.entries()) {
      const own = files.find((f) => lines(join(sub, f))[0]!.id === ids[i]);
      expect(r.stderr).toContain(own);
    }
  });

  it('a fault after the write on DELETE (the retry finds it gone): the record is in the backup once', async () => {
    const [id, other] = await makeContacts(t, 'flt', 2);
    const before = await getRecord(t, 'contacts', id!);
    const backup = join(dir, 'flt.ndjson');
    await t.control('/faults', { next: [{ kind: '500-after-write', method: 'DELETE', path: `/contacts/${id}$` }] });
    const r = await crm(['contacts', 'delete', id!, '--yes', '--backup', backup]);
    expect(r.code, r.stderr).toBe(0);
    expect(lines(backup)).toEqual([before]);
    // deleting another into the same file appends; the first is not written again
    const before2 = await getRecord(t, 'contacts', other!);
    expect((await crm(['contacts', 'delete', other!, id!, '--yes', '--backup', backup])).code).toBe(9);
    expect(lines(backup)).toEqual([before, before2]);
    expect(await getRecord(t, 'contacts', id!)).toBeUndefined();
  });

  it('several ids: each kept once before its DELETE', async () => {
    const ids = await makeContacts(t, 'sev', 5);
    const before = await Promise.all(ids.map((id) => getRecord(t, 'contacts', id)));
    const backup = join(dir, 'sev.ndjson');
    const r = await crm(['contacts', 'delete', ...ids, '--yes', '--backup', backup, '--concurrency', '3']);
    expect(r.code, r.stderr).toBe(0);
    expect(lines(backup).sort((a, b) => String(a.id).localeCompare(String(b.id)))).toEqual(
      before.sort((a, b) => String(a!.id).localeCompare(String(b!.id))),
    );
    for (const id of ids) expect(await getRecord(t, 'contacts', id)).toBeUndefined();
  });

  it('an id not there: the read finds nothing, nothing is written, the DELETE decides (404, exit 5)', async () => {
    const backup = join(dir, 'none.ndjson');
    const r = await crm(['contacts', 'delete', 'con_nosuch', '--yes', '--backup', backup]);
    expect(r.code, r.stderr).toBe(5);
    expect(readFileSync(backup, 'utf8')).toBe('');
  });

  it('--backup that cannot be written: exit 2 naming it, no DELETE sent, the record still there', async () => {
    const [id] = await makeContacts(t, 'unw', 1);
    const backup = join(dir, 'no-such-folder', 'b.ndjson');
    const since = await logLength(t);
    const r = await crm(['contacts', 'delete', id!, '--yes', '--backup', backup]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`cannot write the backup file ${backup}`);
    expect((await requestLog(t, since)).filter((e) => e.method === 'DELETE')).toEqual([]);
    expect(await getRecord(t, 'contacts', id!)).toBeDefined();
  });

  it('--no-backup reads nothing first and writes no file', async () => {
    const sub = mkdtempSync(join(dir, 'nob-'));
    const [id] = await makeContacts(t, 'nob', 1);
    const since = await logLength(t);
    const r = await crm(['contacts', 'delete', id!, '--yes', '--no-backup'], sub);
    expect(r.code, r.stderr).toBe(0);
    expect(backups(sub, 'contacts')).toEqual([]);
    expect((await requestLog(t, since)).filter((e) => e.method === 'GET')).toEqual([]);
  });

  it('a deleted deal imported again: same fields, a new id, its own links made again; the summary names the links that did not come back', async () => {
    const sub = mkdtempSync(join(dir, 'deal-'));
    const deal = (await api('POST', '/deals', { name: 'Big deal', amount: 5000 })).data;
    const [contact] = await makeContacts(t, 'dl', 1);
    await api('POST', `/deals/${String(deal.id)}/contacts`, { contact_id: contact, type: 'CHAMPION' });
    const before = await getRecord(t, 'deals', String(deal.id));
    expect((await crm(['deals', 'delete', String(deal.id), '--yes'], sub)).code).toBe(0);
    const r = await crm(['-o', 'json', 'batch', 'deals', backups(sub, 'deals')[0]!, '--results', 'new.csv'], sub);
    expect(r.code, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(summary).toMatchObject({
      created: 1,
      // its own links were kept with it (issue 31): only the links to it are lost
      links_not_restored: ['notes/{id}/records', 'meetings/{id}/deal'],
      links: [expect.objectContaining({ resource: 'deals contacts', linked: 1 })],
    });
    expect(r.stderr).toMatch(/have new ids/);
    expect(r.stderr).toContain('new.csv maps them');
    expect(r.stderr).not.toContain('their contacts (deals/{id}/contacts)');
    expect(r.stderr).toContain('the meetings associated with them (meetings/{id}/deal)');
    const [, row] = readFileSync(join(sub, 'new.csv'), 'utf8').trim().split('\n');
    const newId = row!.split(',')[1]!;
    expect(newId).not.toBe(deal.id);
    const now = (await getRecord(t, 'deals', newId))!;
    const { id: _i, created_at: _c, updated_at: _u, owner_id: _o, ...same } = before!;
    expect(now).toMatchObject(same);
  });
});
