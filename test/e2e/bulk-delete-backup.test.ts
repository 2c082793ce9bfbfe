// End to end: `crm batch contacts FILE --delete` keeps what it deletes (issue 19): each record, as GET
// returned it, written once to <input>.deleted.ndjson (or --backup FILE) before its DELETE; through faults
// after the write and kill -9 then a rerun, still once; the file imported creates them again (new ids);
// a backup that cannot be written stops before any DELETE; --no-backup writes nothing.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  getRecord,
  logLength,
  makeContacts,
  prng,
  requestLog,
  rowFaults,
  sentIds,
  stopAfter,
} from '../helpers/bulk.js';
import { runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';

let t: TestSandbox;
let dir: string;
beforeAll(async () => {
  t = await startTestSandbox({ rateLimit: 1_000_000, orgRateLimit: 1_000_000, rateWindowMs: 1000 });
  dir = mkdtempSync(join(tmpdir(), 'crm-delete-backup-'));
});
afterAll(async () => {
  await t?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});
afterEach(async () => {
  await t.control('/faults', { fail_rate: 0, latency_ms: 0, faults: {}, next: [] });
});

const crm = (args: string[]) => runCrm(args, { env: t.env('admin'), cwd: dir, timeoutMs: 60_000 });

function idFile(tag: string, ids: string[]): string {
  const path = join(dir, `${tag}.txt`);
  writeFileSync(path, `${ids.join('\n')}\n`);
  return path;
}

/** The records as the API has them now (before the delete), by id. */
async function recordsNow(ids: string[]): Promise<Map<string, Record<string, unknown>>> {
  const out = new Map<string, Record<string, unknown>>();
  for (const id of ids) out.set(id, (await getRecord(t, 'contacts', id))!);
  return out;
}

const lines = (path: string) =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/** Every record deleted is in the backup exactly once, field by field as GET returned it before. */
function expectKeptOnce(path: string, before: Map<string, Record<string, unknown>>): void {
  const kept = lines(path);
  expect(kept.map((r) => r.id).sort()).toEqual([...before.keys()].sort());
  for (const r of kept) expect(r).toEqual(before.get(r.id as string));
}

async function expectGone(ids: string[]): Promise<void> {
  for (const id of ids) expect(await getRecord(t, 'contacts', id), id).toBeUndefined();
}

describe('crm batch --delete keeps what it deletes', () => {
  it('writes every record deleted once to <input>.deleted.ndjson, as GET returned it, before its DELETE; the summary names it', async () => {
    const ids = await makeContacts(t, 'bk', 6);
    const before = await recordsNow(ids);
    const path = idFile('bk', ids);
    const since = await logLength(t);
    const r = await crm(['-o', 'json', 'batch', 'contacts', path, '--delete', '--yes']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ deleted: 6, failed: 0, backup_file: `${path}.deleted.ndjson` });
    expect(r.stderr).toContain(`each kept first in ${path}.deleted.ndjson`);
    expectKeptOnce(`${path}.deleted.ndjson`, before);
    // the command it names, pasted, creates them again
    const named = /\(`crm (batch contacts \S+\.deleted\.ndjson)` creates them again, with new ids\)/.exec(r.stderr);
    expect(named, r.stderr).not.toBeNull();
    const again = await crm(['-o', 'json', ...named![1]!.split(' ')]);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ created: 6, failed: 0 });
    // each record's GET came before its DELETE
    const log = await requestLog(t, since);
    for (const id of ids) {
      const get = log.findIndex((e) => e.method === 'GET' && e.path.endsWith(`/contacts/${id}`));
      const del = log.findIndex((e) => e.method === 'DELETE' && e.path.endsWith(`/contacts/${id}`));
      expect(get, id).toBeGreaterThanOrEqual(0);
      expect(get, id).toBeLessThan(del);
    }
    await expectGone(ids);
  });

  it('faults after the write on DELETE (and before): each record once in --backup FILE', async () => {
    const ids = await makeContacts(t, 'bf', 12);
    const before = await recordsNow(ids);
    const path = idFile('bf', ids);
    const backup = join(dir, 'bf-backup.ndjson');
    await t.control('/faults', { next: rowFaults('DELETE', (i) => `/contacts/${ids[i]}$`) });
    const r = await crm([
      '-o',
      'json',
      'batch',
      'contacts',
      path,
      '--delete',
      '--yes',
      '--backup',
      backup,
      '--concurrency',
      '2',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ deleted: 12, failed: 0, backup_file: backup });
    expectKeptOnce(backup, before);
    await expectGone(ids);
  });

  for (const seed of [7, 8]) {
    it(`kill -9 at a random point (seed ${seed}), then the same command: each record deleted once in the backup`, async () => {
      const rnd = prng(seed);
      const ids = await makeContacts(t, `bk${seed}`, 15);
      const before = await recordsNow(ids);
      const path = idFile(`bk${seed}`, ids);
      const args = ['batch', 'contacts', path, '--delete', '--yes', '--concurrency', '3'];
      const since = await logLength(t);
      await t.control('/faults', { latency_ms: 10 + Math.floor(rnd() * 20) });
      const killed = await stopAfter(t, args, {
        ...{
          env: t.env('admin'),
          cwd: dir,
          method: 'DELETE',
          after: 1 + Math.floor(rnd() * 10),
          since,
          signal: 'SIGKILL',
        },
      });
      expect(killed.signal).toBe('SIGKILL');
      expect(sentIds(await requestLog(t, since), 'DELETE', 'contacts').length).toBeLessThan(15);
      await t.control('/faults', { latency_ms: 0 });
      const rerun = await crm(['-o', 'json', ...args]);
      expect(rerun.code, rerun.stderr).toBe(0);
      expectKeptOnce(`${path}.deleted.ndjson`, before);
      await expectGone(ids);
    });
  }

  it('killed after a record was written but before its DELETE: the same command writes it no second time', async () => {
    const ids = await makeContacts(t, 'bw', 3);
    const before = await recordsNow(ids);
    const path = idFile('bw', ids);
    // what a run killed between the fsync and the DELETE leaves: the first record in the file, still in the CRM
    writeFileSync(`${path}.deleted.ndjson`, `${JSON.stringify(before.get(ids[0]!))}\n`);
    const r = await crm(['-o', 'json', 'batch', 'contacts', path, '--delete', '--yes']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ deleted: 3, failed: 0 });
    expectKeptOnce(`${path}.deleted.ndjson`, before);
    await expectGone(ids);
  });

  it('importing the backup creates the records again: same emails and fields, new ids; the summary says so', async () => {
    const ids = await makeContacts(t, 'br', 4);
    const before = await recordsNow(ids);
    const path = idFile('br', ids);
    expect((await crm(['batch', 'contacts', path, '--delete', '--yes'])).code).toBe(0);
    const r = await crm([
      '-o',
      'json',
      'batch',
      'contacts',
      `${path}.deleted.ndjson`,
      '--results',
      join(dir, 'br-new.csv'),
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ created: 4, failed: 0 });
    expect(r.stderr).toMatch(/leaving out id, created_at, updated_at/);
    expect(r.stderr).toMatch(/have new ids \(the old ids are gone for good\)/);
    const results = readFileSync(join(dir, 'br-new.csv'), 'utf8').trim().split('\n').slice(1);
    expect(results).toHaveLength(4);
    const header = readFileSync(join(dir, 'br-new.csv'), 'utf8').split('\n')[0]!.split(',');
    const idAt = header.indexOf('id');
    for (const row of results) {
      const newId = row.split(',')[idAt]!;
      expect(ids).not.toContain(newId);
      const now = (await getRecord(t, 'contacts', newId))!;
      const old = [...before.values()].find((b) => b.email === now.email)!;
      expect(old, String(now.email)).toBeDefined();
      const { id: _a, created_at: _b, updated_at: _c, ...same } = old;
      expect(now).toMatchObject(same);
    }
  });

  it('a backup file that cannot be written (its folder missing): exit 2 naming it, no DELETE sent', async () => {
    const ids = await makeContacts(t, 'bu', 3);
    const path = idFile('bu', ids);
    const backup = join(dir, 'no-such-folder', 'b.ndjson');
    const since = await logLength(t);
    const r = await crm(['batch', 'contacts', path, '--delete', '--yes', '--backup', backup]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`cannot write the backup file ${backup}`);
    expect((await requestLog(t, since)).filter((e) => e.method === 'DELETE')).toEqual([]);
    for (const id of ids) expect(await getRecord(t, 'contacts', id)).toBeDefined();
  });

  it('--no-backup writes nothing and reads nothing first', async () => {
    const ids = await makeContacts(t, 'bn', 3);
    const path = idFile('bn', ids);
    const since = await logLength(t);
    const r = await crm(['-o', 'json', 'batch', 'contacts', path, '--delete', '--yes', '--no-backup']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).not.toHaveProperty('backup_file');
    expect(existsSync(`${path}.deleted.ndjson`)).toBe(false);
    expect(
      (await requestLog(t, since)).filter((e) => e.method === 'GET' && /\/contacts\/[^/?]+$/.test(e.path)),
    ).toEqual([]);
    await expectGone(ids);
  });
});
