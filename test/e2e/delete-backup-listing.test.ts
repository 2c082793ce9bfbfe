// End to end: how `crm batch RESOURCE FILE --delete` reads the records it keeps (issue 19). A file covering
// most of the collection is read by listing it (100 a request), one covering few by a GET per id; the
// requests the sandbox saw are within the figure the notice printed. A kill -9 during the listing, then the
// same command: every deleted record once in the backup, all gone.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { logLength, makeContacts, requestLog, stopAfter, type LogEntry } from '../helpers/bulk.js';
import { runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';

let t: TestSandbox;
let dir: string;
// a sandbox of its own for each test: the collection is what the test made
beforeEach(async () => {
  t = await startTestSandbox({ rateLimit: 1_000_000, orgRateLimit: 1_000_000, rateWindowMs: 1000 });
  dir = mkdtempSync(join(tmpdir(), 'crm-delete-listing-'));
});
afterEach(async () => {
  await t?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});
afterAll(() => undefined);

const crm = (args: string[]) => runCrm(args, { env: t.env('admin'), cwd: dir, timeoutMs: 120_000 });

/** Every contact the sandbox holds now, by id (listed straight through the API). */
async function allContacts(): Promise<Map<string, Record<string, unknown>>> {
  const out = new Map<string, Record<string, unknown>>();
  let cursor: string | null = null;
  for (;;) {
    const res = await fetch(`${t.sb.baseUrl}/contacts?limit=100${cursor ? `&cursor=${cursor}` : ''}`, {
      headers: { 'X-Service-Api-Key': t.sb.keys.admin },
    });
    const body = (await res.json()) as {
      data: Array<Record<string, unknown>>;
      page_info: { end_cursor: string | null; has_next_page: boolean };
    };
    for (const r of body.data) out.set(r.id as string, r);
    if (!body.page_info.has_next_page) return out;
    cursor = body.page_info.end_cursor;
  }
}

const isList = (e: LogEntry) => e.method === 'GET' && /\/contacts(\?|$)/.test(e.path);
const isGetById = (e: LogEntry) => e.method === 'GET' && /\/contacts\/[^/?]+$/.test(e.path);

function idFile(ids: string[]): string {
  const path = join(dir, 'ids.txt');
  writeFileSync(path, `${ids.join('\n')}\n`);
  return path;
}

const kept = (path: string) =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

function expectKeptOnce(path: string, ids: string[], before: Map<string, Record<string, unknown>>): void {
  const records = kept(path);
  expect(records.map((r) => r.id).sort()).toEqual([...ids].sort());
  for (const r of records) expect(r).toEqual(before.get(r.id as string));
}

/** The notice's `from N requests … to M requests`, or `one GET each: N requests`. */
function statedRange(stderr: string): { least: number; most: number } {
  const list = /from ([\d,]+) requests? to ([\d,]+) requests?/.exec(stderr);
  if (list) return { least: Number(list[1]!.replace(/,/g, '')), most: Number(list[2]!.replace(/,/g, '')) };
  const get = /one GET each: ([\d,]+) requests?/.exec(stderr);
  expect(get, stderr).not.toBeNull();
  const n = Number(get![1]!.replace(/,/g, ''));
  return { least: n, most: n };
}

describe('a bulk delete reads what it keeps at the cheapest cost', () => {
  it('a file covering most of the collection: listed 100 a request, within the figure stated, no GET per id', async () => {
    await makeContacts(t, 'most', 250);
    const before = await allContacts();
    const ids = [...before.keys()].slice(5, 245);
    const path = idFile(ids);
    const since = await logLength(t);
    const r = await crm(['-o', 'json', 'batch', 'contacts', path, '--delete', '--yes']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/read by listing contacts, 100 a page/);
    expect(r.stderr).toMatch(/min at 200 requests a minute/);
    const { least, most } = statedRange(r.stderr);
    expect([least, most]).toEqual([3, 241]);
    const log = await requestLog(t, since);
    const [lists, gets] = [log.filter(isList).length, log.filter(isGetById).length];
    expect(lists).toBe(3);
    expect(gets).toBe(0);
    // the summary's requests: the 3 pages and the 240 DELETEs
    expect(JSON.parse(r.stdout)).toMatchObject({ deleted: 240, requests: 243 });
    expect(lists + gets).toBeGreaterThanOrEqual(least);
    expect(lists + gets).toBeLessThanOrEqual(most);
    // every listing came before the first DELETE
    const firstDelete = log.findIndex((e) => e.method === 'DELETE');
    expect(log.findLastIndex(isList)).toBeLessThan(firstDelete);
    expectKeptOnce(`${path}.deleted.ndjson`, ids, before);
    const now = await allContacts();
    for (const id of ids) expect(now.has(id), id).toBe(false);
    expect(now.size).toBe(before.size - ids.length);
  });

  it('a file covering few of a large collection: one GET per id, no listing', async () => {
    await makeContacts(t, 'few', 300);
    const before = await allContacts();
    const ids = [...before.keys()].slice(100, 105);
    const path = idFile(ids);
    const since = await logLength(t);
    const r = await crm(['batch', 'contacts', path, '--delete', '--yes']);
    expect(r.code, r.stderr).toBe(0);
    expect(statedRange(r.stderr)).toEqual({ least: 5, most: 5 });
    const log = await requestLog(t, since);
    expect(log.filter(isList)).toEqual([]);
    expect(log.filter(isGetById)).toHaveLength(5);
    expectKeptOnce(`${path}.deleted.ndjson`, ids, before);
  });

  it('many ids scattered thinly: the listing stops once its pages stop paying, the rest by GET, within the figure stated', async () => {
    await makeContacts(t, 'thin', 1000);
    const before = await allContacts();
    // 104 ids: 4 scattered over the first 900 records (one page in four finds one), then the last 100
    const all = [...before.keys()];
    const ids = [...all.filter((_, i) => i < 900 && i % 250 === 0), ...all.slice(900)];
    const path = idFile(ids);
    const since = await logLength(t);
    const r = await crm(['batch', 'contacts', path, '--delete', '--yes']);
    expect(r.code, r.stderr).toBe(0);
    const { least, most } = statedRange(r.stderr);
    const log = await requestLog(t, since);
    const [lists, gets] = [log.filter(isList).length, log.filter(isGetById).length];
    // page 1 found one (paid), page 2 none (1 found < 2 pages): stopped there
    expect(lists).toBe(2);
    expect(gets).toBe(ids.length - 1);
    expect(lists + gets).toBeGreaterThanOrEqual(least);
    expect(lists + gets).toBeLessThanOrEqual(most);
    expect(lists + gets).toBeLessThanOrEqual(ids.length + 1);
    expectKeptOnce(`${path}.deleted.ndjson`, ids, before);
  });

  for (const after of [2, 4]) {
    it(`kill -9 during the listing (after ${after} pages), then the same command: every deleted record once in the backup`, async () => {
      await makeContacts(t, 'kill', 700);
      const before = await allContacts();
      const ids = [...before.keys()].slice(0, 650);
      const path = idFile(ids);
      const args = ['batch', 'contacts', path, '--delete', '--yes'];
      const since = await logLength(t);
      await t.control('/faults', { latency_ms: 60 });
      const killed = await stopAfter(t, args, {
        env: t.env('admin'),
        cwd: dir,
        method: 'GET',
        after,
        since,
        signal: 'SIGKILL',
      });
      expect(killed.signal).toBe('SIGKILL');
      await t.control('/faults', { latency_ms: 0 });
      // a request the killed run had in flight is logged once its latency is over
      await new Promise((r) => setTimeout(r, 300));
      const first = await requestLog(t, since);
      expect(first.filter((e) => e.method === 'DELETE')).toEqual([]);
      // nothing was deleted, so the backup holds nothing: what the listing found waited beside it
      expect(kept(`${path}.deleted.ndjson`)).toEqual([]);
      const again = await logLength(t);
      const rerun = await crm(['-o', 'json', ...args]);
      expect(rerun.code, rerun.stderr).toBe(0);
      expect(JSON.parse(rerun.stdout)).toMatchObject({ deleted: 650, failed: 0 });
      // the rerun lists again only as far as it must (7 pages hold the 650), and reads none by GET
      const log = await requestLog(t, again);
      expect(log.filter(isList).length).toBeLessThanOrEqual(7);
      expect(log.filter(isGetById)).toEqual([]);
      expectKeptOnce(`${path}.deleted.ndjson`, ids, before);
      const now = await allContacts();
      for (const id of ids) expect(now.has(id), id).toBe(false);
    });
  }

  it('Ctrl-C during the listing: exit 130 naming the command to resume, nothing deleted; that command finishes', async () => {
    await makeContacts(t, 'int', 500);
    const before = await allContacts();
    const ids = [...before.keys()].slice(0, 450);
    const path = idFile(ids);
    const args = ['batch', 'contacts', path, '--delete', '--yes'];
    const since = await logLength(t);
    await t.control('/faults', { latency_ms: 60 });
    const stopped = await stopAfter(t, args, {
      env: t.env('admin'),
      cwd: dir,
      method: 'GET',
      after: 2,
      since,
      signal: 'SIGINT',
    });
    await t.control('/faults', { latency_ms: 0 });
    expect(stopped.code, stopped.stderr).toBe(130);
    // (the listing's own words, or the page request's when Ctrl-C lands while one is in flight)
    expect(stopped.stderr).toMatch(/Error: interrupted/);
    expect(kept(`${path}.deleted.ndjson`)).toEqual([]);
    expect(stopped.stderr).toContain('to resume, run: crm batch contacts');
    await new Promise((r) => setTimeout(r, 300));
    expect((await requestLog(t, since)).filter((e) => e.method === 'DELETE')).toEqual([]);
    const rerun = await crm(['-o', 'json', ...args]);
    expect(rerun.code, rerun.stderr).toBe(0);
    expectKeptOnce(`${path}.deleted.ndjson`, ids, before);
  });

  it('killed after its listing, a few DELETEs in: the backup holds only records that were deleted (a re-import duplicates nothing)', async () => {
    await makeContacts(t, 'half', 300);
    const before = await allContacts();
    const ids = [...before.keys()].slice(0, 260);
    const path = idFile(ids);
    const args = ['batch', 'contacts', path, '--delete', '--yes'];
    const since = await logLength(t);
    await t.control('/faults', { latency_ms: 40 });
    const stopped = await stopAfter(t, args, {
      env: t.env('admin'),
      cwd: dir,
      method: 'DELETE',
      after: 3,
      since,
      signal: 'SIGKILL',
    });
    await t.control('/faults', { latency_ms: 0 });
    expect(stopped.code).not.toBe(0);
    await new Promise((r) => setTimeout(r, 300));
    const inBackup = kept(`${path}.deleted.ndjson`).map((r) => r.id as string);
    expect(inBackup.length).toBeLessThan(ids.length);
    // every record in the backup had its DELETE sent, but those a kill -9 caught between the line's
    // fsync and the send: at most one per request in flight (the same command deletes them)
    const deletesSent = new Set(
      (await requestLog(t, since)).filter((e) => e.method === 'DELETE').map((e) => e.path.split('/').pop()),
    );
    const notSent = inBackup.filter((id) => !deletesSent.has(id));
    expect(notSent.length, notSent.join(', ')).toBeLessThanOrEqual(4);
    // the same command finishes: each record once in the backup
    const rerun = await crm(['-o', 'json', ...args]);
    expect(rerun.code, rerun.stderr).toBe(0);
    expectKeptOnce(`${path}.deleted.ndjson`, ids, before);
    expect(readdirSync(dir).filter((f) => f.includes('.listed'))).toEqual([]);
  });

  it('Ctrl-C while DELETEs wait for the rate limit: the backup holds only records whose DELETE went out', async () => {
    await makeContacts(t, 'paced', 40);
    const before = await allContacts();
    const ids = [...before.keys()].slice(0, 30);
    const path = idFile(ids);
    const args = ['batch', 'contacts', path, '--delete', '--yes'];
    const since = await logLength(t);
    // a few requests a window: rows wait in the pacer with their records read
    await t.control('/limits', { rate_limit: 6, rate_window_ms: 1000 });
    const stopped = await stopAfter(t, args, {
      env: t.env('admin'),
      cwd: dir,
      method: 'DELETE',
      after: 4,
      since,
      signal: 'SIGINT',
    });
    await t.control('/limits', { rate_limit: 1_000_000 });
    expect(stopped.code, stopped.stderr).toBe(130);
    await new Promise((r) => setTimeout(r, 300));
    const deletesSent = new Set(
      (await requestLog(t, since)).filter((e) => e.method === 'DELETE').map((e) => e.path.split('/').pop()),
    );
    const inBackup = kept(`${path}.deleted.ndjson`).map((r) => r.id as string);
    expect(inBackup.length).toBeGreaterThan(0);
    for (const id of inBackup) expect(deletesSent.has(id), id).toBe(true);
    const rerun = await crm(['-o', 'json', ...args]);
    expect(rerun.code, rerun.stderr).toBe(0);
    expectKeptOnce(`${path}.deleted.ndjson`, ids, before);
  });

  it('the backup imported again restores them: the same fields, new ids', async () => {
    await makeContacts(t, 'back', 150);
    const before = await allContacts();
    const ids = [...before.keys()].slice(0, 140);
    const path = idFile(ids);
    expect((await crm(['batch', 'contacts', path, '--delete', '--yes'])).code).toBe(0);
    const r = await crm(['-o', 'json', 'batch', 'contacts', `${path}.deleted.ndjson`]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      created: 140,
      links_not_restored: ['deals/{id}/contacts', 'notes/{id}/records', 'segments/{id}/members'],
    });
    expect(r.stderr).toContain('the segments that linked them (segments/{id}/members)');
    const now = await allContacts();
    const byEmail = new Map([...now.values()].map((c) => [c.email, c]));
    for (const id of ids) {
      const { id: _i, created_at: _c, updated_at: _u, ...same } = before.get(id)!;
      const back = byEmail.get(same.email)!;
      expect(back, String(same.email)).toBeDefined();
      expect(back.id).not.toBe(id);
      expect(back).toMatchObject(same);
    }
  });
});
