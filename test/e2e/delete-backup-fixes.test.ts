// End to end, what a new user found in the delete backups (issue 19, the follow-up): a restore changed
// every record's owner silently (now `<input>.owners.csv` and the command that gives them back), the
// confirmation said nothing of links nor the DELETEs' cost, backup files were 0644, a 404 to a first
// DELETE sent its row to a rejects file to run again forever, a backup imported again pointed at
// --no-resume (every record created twice), "1 of 1 contacts".
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linksTo } from '../../src/api/resources.js';
import { getRecord, logLength, makeContacts, requestLog, sentIds, stopAfter } from '../helpers/bulk.js';
import { runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';

let t: TestSandbox;
let dir: string;
beforeAll(async () => {
  t = await startTestSandbox({ rateLimit: 1_000_000, orgRateLimit: 1_000_000, rateWindowMs: 1000 });
  dir = mkdtempSync(join(tmpdir(), 'crm-delete-fixes-'));
});
afterAll(async () => {
  await t?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const crm = (args: string[], key: 'admin' | 'user' = 'admin') =>
  runCrm(args, { env: t.env(key), cwd: dir, timeoutMs: 60_000 });

function idFile(tag: string, ids: string[]): string {
  const path = join(dir, `${tag}.txt`);
  writeFileSync(path, `${ids.join('\n')}\n`);
  return path;
}

/** `crm args` killed -9 once 2 DELETEs reached the server (each slowed, so it is mid-run); the log's length before. */
async function killAfterTwoDeletes(args: string[]): Promise<number> {
  const since = await logLength(t);
  await t.control('/faults', { latency_ms: 150 });
  const killed = await stopAfter(t, args, {
    ...{ env: t.env('admin'), cwd: dir },
    ...{ method: 'DELETE', after: 2, since, signal: 'SIGKILL' as const },
  });
  await t.control('/faults', { latency_ms: 0 });
  expect(killed.signal).toBe('SIGKILL');
  return since;
}

/** A contact created with the user-bound key: its owner is that key's user, not the admin's. */
async function userContact(tag: string): Promise<string> {
  const r = await crm(
    ['-o', 'json', 'contacts', 'create', '--set', `email=${tag}@example.com`, '--set', 'first_name=Owned'],
    'user',
  );
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { id: string }).id;
}

describe('delete backups: what a new user found', () => {
  it('backup files are created 0600, like every other file crm writes', async () => {
    const [a, b] = await makeContacts(t, 'mode', 2);
    const path = idFile('mode', [a!]);
    expect((await crm(['batch', 'contacts', path, '--delete', '--yes'])).code).toBe(0);
    expect(statSync(`${path}.deleted.ndjson`).mode & 0o777).toBe(0o600);
    const single = join(dir, 'single.deleted.ndjson');
    expect((await crm(['contacts', 'delete', b!, '--yes', '--backup', single])).code).toBe(0);
    expect(statSync(single).mode & 0o777).toBe(0o600);
  });

  it('"Deleted 1 of 1 contact": singular for one row', async () => {
    const [a] = await makeContacts(t, 'one', 1);
    const r = await crm(['batch', 'contacts', idFile('one', [a!]), '--delete', '--yes']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/Deleted 1 of 1 contact;/);
  });

  it('the --yes notice names the links not kept and the whole cost: reads and one DELETE per row; a rerun, the rows left', async () => {
    const ids = await makeContacts(t, 'cost', 5);
    const path = idFile('cost', ids);
    // the dry run says the same cost (issue 29's re-trial: it said 5 requests, no time, no backup)
    const dry = await crm(['-o', 'table', 'batch', 'contacts', path, '--delete', '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout.replace(/\s+/g, ' ')).toContain(
      `It would cost 10 requests in all (5 GETs and 5 DELETEs): under 0.1 min at 200 requests a minute`,
    );
    expect(dry.stdout.replace(/\s+/g, ' ')).toContain(`each record is first copied to ${path}.deleted.ndjson`);
    const r = await crm(['batch', 'contacts', path, '--delete', '--yes']);
    expect(r.code, r.stderr).toBe(0);
    const notice = r.stderr.replace(/\s+/g, ' ');
    expect(notice).toContain('10 requests in all (5 GETs and 5 DELETEs)');
    expect(notice).toMatch(/under 0\.1 min at 200 requests a minute/);
    expect(notice).toMatch(/links to and from them are not kept and do not come back/i);
    for (const l of linksTo('contacts')) expect(notice).toContain(l.words);

    // killed after 2 DELETEs, then the same command: the cost of the rows left
    const more = await makeContacts(t, 'cost2', 5);
    const path2 = idFile('cost2', more);
    const args = ['batch', 'contacts', path2, '--delete', '--yes', '--concurrency', '1'];
    const since = await killAfterTwoDeletes(args);
    const sent = sentIds(await requestLog(t, since), 'DELETE', 'contacts').length;
    const rerun = await crm(args);
    expect(rerun.code, rerun.stderr).toBe(0);
    // the rows the journal has not finished: those not sent, and one sent whose answer it had not recorded
    const left = Number(
      /(\d+) DELETEs?, for the rows an earlier run did not finish \(it did (\d+) of 5\)/.exec(
        rerun.stderr.replace(/\s+/g, ' '),
      )?.[1],
    );
    expect(left, rerun.stderr).toBeGreaterThanOrEqual(5 - sent);
    expect(left).toBeLessThanOrEqual(5 - sent + 1);
    expect(left).toBeLessThan(5);
  });

  it('a DELETE answered 404 the first time: the hint says the record was not there and does not send it to be run again', async () => {
    const [a] = await makeContacts(t, 'gone', 1);
    const path = idFile('gone', [a!, 'ct_doesnotexist01']);
    const r = await crm(['batch', 'contacts', path, '--delete', '--yes']);
    expect(r.code).toBe(9);
    expect(r.stderr).not.toMatch(/fix (it|them) there and run/);
    expect(r.stderr.replace(/\s+/g, ' ')).toMatch(
      /1 row was not found \(404\): already deleted, or never there; running it again fails the same way/,
    );
  });

  it('restoring writes <input>.owners.csv and the command that gives the records back their owners; that command restores them', async () => {
    const owned = [await userContact('own1'), await userContact('own2')];
    const [mine] = await makeContacts(t, 'own3', 1);
    const path = idFile('own', [...owned, mine!]);
    expect((await crm(['batch', 'contacts', path, '--delete', '--yes'])).code).toBe(0);
    const backup = `${path}.deleted.ndjson`;
    const r = await crm(['-o', 'json', 'batch', 'contacts', backup]);
    expect(r.code, r.stderr).toBe(0);
    const owners = `${backup}.owners.csv`;
    expect(JSON.parse(r.stdout)).toMatchObject({ created: 3, owners_file: owners });
    expect(statSync(owners).mode & 0o777).toBe(0o600);
    const rows = readFileSync(owners, 'utf8').trim().split(/\r?\n/);
    expect(rows[0]).toBe('id,owner_id');
    const byNew = new Map(rows.slice(1).map((l) => l.split(',') as [string, string]));
    expect([...byNew.values()].sort()).toEqual(['usr_admin', 'usr_user', 'usr_user']);
    for (const id of byNew.keys()) expect((await getRecord(t, 'contacts', id))?.owner_id).toBe('usr_admin');
    const told = r.stderr.replace(/\s+/g, ' ');
    expect(told).toContain("now belong to the key's user");
    const command = `crm batch contacts ${backup}.owners.csv --match id`;
    expect(told).toContain(command);
    // after the summary
    expect(r.stderr.indexOf('owners.csv --match id')).toBeGreaterThan(r.stderr.indexOf('Created 3 of 3'));

    const back = await crm(command.split(' ').slice(1));
    expect(back.code, back.stderr).toBe(0);
    for (const [id, owner] of byNew) expect((await getRecord(t, 'contacts', id))?.owner_id).toBe(owner);
    // the same command again, the owners already right: read, nothing sent (issue 27: it sent a PATCH per record)
    const since = await logLength(t);
    const twice = await crm(command.split(' ').slice(1));
    expect(twice.code, twice.stderr).toBe(0);
    expect((await requestLog(t, since)).filter((e) => e.method !== 'GET')).toEqual([]);

    // the same backup imported again: nothing sent, and no advice to import it a second time
    const again = await crm(['batch', 'contacts', backup]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).not.toContain('--no-resume to import it again');
    expect(again.stderr.replace(/\s+/g, ' ')).toMatch(
      /already created again .*--no-resume would create every one of them a second time/,
    );
  });
});

describe('a rerun of a delete keeps to the backup its job began (issue 28: it named <input>.deleted.ndjson, never written)', () => {
  it('--backup FILE, killed, then the same delete without --backup: the rest go to FILE, and every summary names it', async () => {
    const ids = await makeContacts(t, 'ownbackup', 5);
    const path = idFile('ownbackup', ids);
    const mine = join(dir, 'mine.ndjson');
    const args = ['batch', 'contacts', path, '--delete', '--yes', '--concurrency', '1'];
    await killAfterTwoDeletes([...args, '--backup', mine]);

    // another --backup for the same job: refused before anything is sent
    const before = await logLength(t);
    const other = await crm([...args, '--backup', join(dir, 'other.ndjson')]);
    expect(other.code, other.stderr).toBe(2);
    // named as typed here (crm runs in dir)
    expect(other.stderr).toContain('kept its records in mine.ndjson, not');
    expect(other.stderr).toContain('rerun with --backup mine.ndjson (or without --backup)');
    expect((await requestLog(t, before)).filter((e) => e.method === 'DELETE')).toEqual([]);
    expect(existsSync(join(dir, 'other.ndjson'))).toBe(false);

    const rerun = await crm(['-o', 'json', ...args]);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(JSON.parse(rerun.stdout)).toMatchObject({ backup_file: 'mine.ndjson' });
    expect(rerun.stderr).toContain('`crm batch contacts mine.ndjson`');
    expect(existsSync(`${path}.deleted.ndjson`)).toBe(false);
    const kept = readFileSync(mine, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => (JSON.parse(l) as { id: string }).id);
    expect(kept.sort()).toEqual([...ids].sort());
    for (const id of ids) expect(await getRecord(t, 'contacts', id)).toBeUndefined();

    // the finished job again: nothing sent, and the backup named is the one that holds the records
    const again = await crm(args);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain('each kept first in mine.ndjson');
  });
});

describe('minutes at the rate limit: the real window, not the limit a minute', () => {
  it('`crm snapshot --links` against 10 requests per 2 s: the cost line says so, and its minutes are the least that allows', async () => {
    const slow = await startTestSandbox({
      seed: 5,
      seedRecords: { deals: 12 },
      rateLimit: 10,
      orgRateLimit: 10,
      rateWindowMs: 2000,
    });
    try {
      const out = join(dir, 'snap-window');
      const r = await runCrm(['snapshot', out, '--resources', 'deals', '--links'], {
        env: slow.env('admin'),
        cwd: dir,
        timeoutMs: 60_000,
      });
      expect(r.code, r.stderr).toBe(0);
      const line = r.stderr.replace(/\s+/g, ' ');
      // 24 requests at 10 per 2 s: at least 4 s (two more windows), "under 0.1 min"; at "10 a minute" it said 2.4 min
      expect(line).toMatch(
        /Links: 24 requests, one per deal \(12 ×2\) .*: under 0\.1 min at 10 requests per 2 s \(the server's rate limit\)/,
      );
    } finally {
      await slow.close();
    }
  }, 60_000);
});
