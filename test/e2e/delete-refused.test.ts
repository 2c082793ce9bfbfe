// A DELETE the server refuses is not offered back as deleted (issue 27, CONTRACT §7c "only what happened"): with a
// key that may not delete (403), the summary said how to create the records again, and following it duplicated
// records that were never deleted, and the backup kept them as if they were. And a backup line is whole before its DELETE, or nothing more is deleted (exit 8).
// Judged by the sandbox's store and the backup file.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getRecord, makeContacts } from '../helpers/bulk.js';
import { CRM_BIN, cleanEnv, collect, runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';

let t: TestSandbox;
let dir: string;
beforeAll(async () => {
  t = await startTestSandbox({ rateLimit: 1_000_000, orgRateLimit: 1_000_000 });
  dir = tempDir('crm-delete-refused-');
});
afterAll(async () => {
  await t?.close();
});

const crm = (args: string[], key: 'admin' | 'readonly' = 'admin') =>
  runCrm(args, { env: t.env(key), cwd: dir, timeoutMs: 60_000 });
/** the ids a backup file holds (none when there is no file) */
const held = (path: string): string[] =>
  existsSync(path)
    ? readFileSync(path, 'utf8')
        .split('\n')
        .flatMap((l) => {
          try {
            return [(JSON.parse(l) as { id: string }).id];
          } catch {
            return []; // a torn line (cut short) holds no record
          }
        })
    : [];

describe("a delete's backup holds and offers only what happened", () => {
  it('crm batch --delete with a key that may not delete: no hint re-creates records that were never deleted', async () => {
    const ids = await makeContacts(t, 'refused', 3);
    const list = join(dir, 'refused.txt');
    writeFileSync(list, `id\n${ids.join('\n')}\n`);
    const r = await crm(['batch', 'contacts', list, '--delete', '--yes'], 'readonly');
    expect(r.code, r.stderr).not.toBe(0);
    for (const id of ids) expect(await getRecord(t, 'contacts', id), id).toBeDefined();
    expect(r.stderr).not.toMatch(/create them again/);
    // nothing kept as deleted: importing the backup cannot make a second copy of a record still there
    expect(held(`${list}.deleted.ndjson`)).toEqual([]);
    // with a key that may: each deleted, each kept once
    const ok = await crm(['batch', 'contacts', list, '--delete', '--yes']);
    expect(ok.code, ok.stderr).toBe(0);
    for (const id of ids) expect(await getRecord(t, 'contacts', id), id).toBeUndefined();
    expect(held(`${list}.deleted.ndjson`).sort()).toEqual([...ids].sort());
  });

  it('crm contacts delete ID with a key that may not delete: nothing said about re-creating it', async () => {
    const [id] = await makeContacts(t, 'refused1', 1);
    const backup = join(dir, 'one.ndjson');
    const r = await crm(['contacts', 'delete', id!, '--yes', '--backup', backup], 'readonly');
    expect(r.code, r.stderr).not.toBe(0);
    expect(await getRecord(t, 'contacts', id!)).toBeDefined();
    expect(r.stderr).not.toMatch(/creates? (it|them) again/);
    expect(held(backup)).toEqual([]);
    // imported again (as a user might, to be safe): nothing is created, so no second copy
    const before = (await fetch(`${t.sb.baseUrl}/contacts?limit=100`, {
      headers: { 'X-Service-Api-Key': t.sb.keys.admin },
    }).then((x) => x.json())) as { data: unknown[] };
    const restore = await crm(['batch', 'contacts', backup, '--input-format', 'ndjson']);
    expect(restore.stderr).not.toMatch(/Created [1-9]/);
    const after = (await fetch(`${t.sb.baseUrl}/contacts?limit=100`, {
      headers: { 'X-Service-Api-Key': t.sb.keys.admin },
    }).then((x) => x.json())) as { data: unknown[] };
    expect(after.data.length).toBe(before.data.length);
  });

  it('a backup line that cannot be written whole: exit 8 naming the backup, the DELETE not sent, no torn record read as one', async () => {
    const [a, b] = await makeContacts(t, 'fullbk', 2);
    const backup = join(dir, 'full.ndjson');
    // a file near a 1 KiB limit on the size of any file crm writes (ulimit -f): the next line is cut short (EFBIG)
    writeFileSync(backup, `${JSON.stringify({ id: 'con_before', pad: 'x'.repeat(900) })}\n`);
    const line = `ulimit -f 1; exec "${process.execPath}" "${CRM_BIN}" "$@"`;
    const args = ['contacts', 'delete', a!, b!, '--yes', '--backup', backup, '--concurrency', '1'];
    const r = await collect(spawn('bash', ['-c', line, 'crm', ...args], { env: cleanEnv(t.env('admin')), cwd: dir }), {
      timeoutMs: 60_000,
    });
    expect(r.code, r.stderr).toBe(8);
    expect(r.stderr).toContain(`cannot write the backup file ${backup}`);
    expect(r.stderr).not.toMatch(/unexpected failure|a bug in crm/);
    for (const id of [a!, b!]) expect(await getRecord(t, 'contacts', id), id).toBeDefined();
    expect(held(backup)).toEqual(['con_before']);
    // with room again, the same command keeps each whole, then deletes it
    const again = await crm(args);
    expect(again.code, again.stderr).toBe(0);
    expect(held(backup).sort()).toEqual(['con_before', a!, b!].sort());
    for (const id of [a!, b!]) expect(await getRecord(t, 'contacts', id), id).toBeUndefined();
  });

  it('crm batch --delete whose backup cannot be written: exit 8 naming it, before any DELETE', async () => {
    const ids = await makeContacts(t, 'fullbatch', 3);
    const list = join(dir, 'fullbatch.txt');
    writeFileSync(list, `id\n${ids.join('\n')}\n`);
    const backup = join(dir, 'fullbatch.ndjson');
    writeFileSync(backup, `${JSON.stringify({ id: 'con_before', pad: 'x'.repeat(900) })}\n`);
    const line = `ulimit -f 1; exec "${process.execPath}" "${CRM_BIN}" "$@"`;
    const args = ['batch', 'contacts', list, '--delete', '--yes', '--backup', backup, '--concurrency', '1'];
    const r = await collect(spawn('bash', ['-c', line, 'crm', ...args], { env: cleanEnv(t.env('admin')), cwd: dir }), {
      timeoutMs: 60_000,
    });
    expect(r.code, r.stderr).toBe(8);
    expect(r.stderr).toContain(`cannot write the backup file ${backup}`);
    for (const id of ids) expect(await getRecord(t, 'contacts', id), id).toBeDefined();
    expect(held(backup)).toEqual(['con_before']);
  });
});
