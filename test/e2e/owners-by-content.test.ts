// End to end, issue 28 (finding 3 of a new-user trial): the owners file follows from what the file holds, not its
// name. A delete's `--backup mine.ndjson` imported again with the command the delete printed, and a `list -o csv`
// export imported into the CRM again, re-created the records under the key's user (the server sets owner_id on
// create) and wrote no owners file: every owner was lost. Now each writes `<input>.owners.csv` and prints the
// command that gives the owners back, run here as printed (twice: the second changes nothing).
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logLength, requestLog, stopAfter } from '../helpers/bulk.js';
import { crmOnPath, paste, runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type KeyName, type TestSandbox } from '../helpers/sandbox.js';

let t: TestSandbox;
let dir: string;
let path: string;
beforeAll(async () => {
  t = await startTestSandbox({ rateLimit: 1_000_000, orgRateLimit: 1_000_000, rateWindowMs: 1000 });
  dir = mkdtempSync(join(tmpdir(), 'crm-owners-content-'));
  path = `${crmOnPath(dir)}:${process.env.PATH ?? ''}`;
});
afterAll(async () => {
  await t?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const crm = (args: string[], key: KeyName = 'admin') => runCrm(args, { env: t.env(key), cwd: dir, timeoutMs: 60_000 });

/** A command crm printed, run as a user pastes it (the `crm` on PATH is the built one). */
const run = (command: string) => paste(command, { cwd: dir, env: { ...t.env('admin'), PATH: path } });

/** The API answered as `key`: its `data`. */
async function api(key: KeyName, method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${t.sb.baseUrl}${path}`, {
    method,
    headers: { 'X-Service-Api-Key': t.sb.keys[key], 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  expect(res.ok, text).toBe(true);
  return (JSON.parse(text) as { data: unknown }).data;
}

/** Contacts `tag.N@example.com` of three owners: two by the user-bound key, one by the admin's, one given to another user; their ids. */
async function ownedContacts(tag: string): Promise<string[]> {
  const make = async (n: number, key: KeyName) =>
    ((await api(key, 'POST', '/contacts', { email: `${tag}.${n}@example.com` })) as { id: string }).id;
  const ids = [await make(1, 'user'), await make(2, 'user'), await make(3, 'admin'), await make(4, 'admin')];
  await api('admin', 'PATCH', `/contacts/${ids[3]}`, { owner_id: 'usr_other' });
  const owners = await ownersNow(tag);
  expect([...owners.values()].sort()).toEqual(['usr_admin', 'usr_other', 'usr_user', 'usr_user']);
  return ids;
}

/** Each `tag.` contact's owner, by email, as the sandbox holds them now. */
async function ownersNow(tag: string): Promise<Map<string, string>> {
  const owners = new Map<string, string>();
  for (let cursor = ''; ;) {
    const res = await fetch(`${t.sb.baseUrl}/contacts?limit=100${cursor ? `&cursor=${cursor}` : ''}`, {
      headers: { 'X-Service-Api-Key': t.sb.keys.admin },
    });
    const body = (await res.json()) as {
      data: Array<{ email: string; owner_id: string }>;
      page_info: { end_cursor: string | null; has_next_page: boolean };
    };
    for (const c of body.data) if (c.email.startsWith(`${tag}.`)) owners.set(c.email, c.owner_id);
    if (!body.page_info.has_next_page) return owners;
    cursor = body.page_info.end_cursor!;
  }
}

/** The owners command a create printed, run as printed twice: the owners come back, and the second sends nothing. */
async function giveOwnersBack(stderr: string, owners: string, tag: string, before: Map<string, string>): Promise<void> {
  const command = `crm batch contacts ${owners} --match id`;
  expect(stderr.replace(/\s+/g, ' ')).toContain(command);
  expect(statSync(join(dir, owners)).mode & 0o777).toBe(0o600);
  // the records were created under the key's user
  expect([...(await ownersNow(tag)).values()]).toEqual(['usr_admin', 'usr_admin', 'usr_admin', 'usr_admin']);
  const back = await run(command);
  expect(back.code, back.stderr).toBe(0);
  expect(await ownersNow(tag)).toEqual(before);
  const since = await logLength(t);
  const again = await run(command);
  expect(again.code, again.stderr).toBe(0);
  expect(again.stderr).toMatch(/unchanged/);
  expect((await requestLog(t, since)).filter((e) => e.method !== 'GET')).toEqual([]);
  expect(await ownersNow(tag)).toEqual(before);
}

describe('the owners file follows from what the file holds, not its name', () => {
  // a backup named otherwise is restored as NDJSON (the printed command says --input-format ndjson)
  it.each([
    ['mine', 'mine.ndjson'],
    ['bak', 'kept.bak'],
  ])(
    'a delete of %s contacts with --backup %s, then the restore it printed: its owners file gives every owner back',
    async (tag, backup) => {
      const ids = await ownedContacts(tag);
      const before = await ownersNow(tag);
      writeFileSync(join(dir, `${tag}-ids.csv`), `id\n${ids.join('\n')}\n`);
      const deleted = await crm(['batch', 'contacts', `${tag}-ids.csv`, '--delete', '--backup', backup, '--yes']);
      expect(deleted.code, deleted.stderr).toBe(0);
      const restore = /`(crm batch contacts [^`]*)`/.exec(deleted.stderr.replace(/\s+/g, ' '))?.[1];
      expect(restore, deleted.stderr).toMatch(new RegExp(`^crm batch contacts ${backup.replace('.', '\\.')}( |$)`));
      expect(await ownersNow(tag)).toEqual(new Map());

      const restored = await run(restore!);
      expect(restored.code, restored.stderr).toBe(0);
      expect(readFileSync(join(dir, `${backup}.owners.csv`), 'utf8').split('\r\n')[0]).toBe('id,owner_id');
      await giveOwnersBack(restored.stderr, `${backup}.owners.csv`, tag, before);
    },
  );

  it('a `list -o csv` export, its records deleted, imported into the CRM again: export.csv.owners.csv', async () => {
    await ownedContacts('csv');
    const before = await ownersNow('csv');
    const listed = await crm(['contacts', 'list', '--all', '-o', 'csv']);
    expect(listed.code, listed.stderr).toBe(0);
    const [header, ...rows] = listed.stdout.trimEnd().split(/\r?\n/);
    expect(header).toMatch(/owner_id/);
    writeFileSync(join(dir, 'export.csv'), [header, ...rows.filter((l) => l.includes(',csv.'))].join('\r\n') + '\r\n');
    const deleted = await crm(['batch', 'contacts', 'export.csv', '--delete', '--yes']);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(await ownersNow('csv')).toEqual(new Map());

    const created = await crm(['-o', 'json', 'batch', 'contacts', 'export.csv']);
    expect(created.code, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ created: 4, owners_file: 'export.csv.owners.csv' });
    // not a delete's backup: no word of links
    expect(JSON.parse(created.stdout)).not.toHaveProperty('links_not_restored');
    await giveOwnersBack(created.stderr, 'export.csv.owners.csv', 'csv', before);
  });

  it("a create stopped by Ctrl-C leaves no results file of crm's own; the rerun that finishes it maps every owner", async () => {
    const ids = await ownedContacts('int');
    const before = await ownersNow('int');
    const listed = await crm(['contacts', 'list', '--all', '-o', 'ndjson']);
    expect(listed.code, listed.stderr).toBe(0);
    const lines = listed.stdout.split('\n').filter((l) => l.includes('"int.'));
    writeFileSync(join(dir, 'int.ndjson'), lines.map((l) => `${l}\n`).join(''));
    for (const id of ids) await api('admin', 'DELETE', `/contacts/${id}`);

    const args = ['batch', 'contacts', 'int.ndjson', '--chunk-size', '1', '--concurrency', '1'];
    const since = await logLength(t);
    await t.control('/faults', { latency_ms: 150 });
    const stopped = await stopAfter(t, args, {
      ...{ env: t.env('admin'), cwd: dir, method: 'POST', after: 2, since, signal: 'SIGINT' },
    }).finally(() => t.control('/faults', { latency_ms: 0 }));
    expect(stopped.code, stopped.stderr).toBe(130);
    expect(readdirSync(dir).filter((n) => n.startsWith('int.ndjson.results-'))).toEqual([]);

    const rerun = await crm(args);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(readFileSync(join(dir, 'int.ndjson.owners.csv'), 'utf8').trim().split('\r\n')).toHaveLength(5);
    await giveOwnersBack(rerun.stderr, 'int.ndjson.owners.csv', 'int', before);
  });

  it('a create whose rows carry no owner_id, or that sends it as another field, writes no owners file', async () => {
    writeFileSync(join(dir, 'plain.csv'), 'email,first_name\nplain.1@example.com,A\n');
    const plain = await crm(['-o', 'json', 'batch', 'contacts', 'plain.csv']);
    expect(plain.code, plain.stderr).toBe(0);
    expect(JSON.parse(plain.stdout)).not.toHaveProperty('owners_file');
    writeFileSync(join(dir, 'mapped.ndjson'), '{"email":"mapped.1@example.com","owner_id":"usr_other"}\n');
    const mapped = await crm(['-o', 'json', 'batch', 'contacts', 'mapped.ndjson', '--map', 'owner_id=previous_owner']);
    expect(mapped.code, mapped.stderr).toBe(0);
    expect(JSON.parse(mapped.stdout)).not.toHaveProperty('owners_file');
    expect(() => statSync(join(dir, 'mapped.ndjson.owners.csv'))).toThrow();
  });
});
