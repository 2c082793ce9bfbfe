// Issue 29's re-trials: a later run of a file moved the earlier run's undo and created files aside and took their
// names, so the earlier run's printed commands, pasted after it, acted on the later run's files: its undo put back
// only part, its `--delete` deleted the later run's records. A later run now takes names of its own; the commands
// a run printed reach its own files for good. A file of an older crm that a run did move aside is still named by
// the error of a command that finds no such file.
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiRecord } from '../../src/api/envelopes.js';
import { apiData } from '../helpers/api-data.js';
import { crmOnPath, paste, printedAfter, runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir('crm-way-back-own-');
let t: TestSandbox;
beforeAll(async () => {
  t = await startTestSandbox({ rateLimit: 1_000_000, orgRateLimit: 1_000_000 });
});
afterAll(async () => t?.close());

const crm = (args: string[]) => runCrm(args, { env: t.env('admin'), cwd: dir, timeoutMs: 60_000 });
const sh = (command: string) =>
  paste(command, { cwd: dir, env: { ...t.env('admin'), PATH: `${crmOnPath(dir)}:${process.env.PATH ?? ''}` } });
const byEmail = async (email: string) =>
  ((await apiData(t, 'GET', '/contacts?limit=100')) as ApiRecord[]).filter((r) => r.email === email);

describe('the commands an earlier run printed, pasted after a later run of the same file', () => {
  it('act on the earlier run’s own files: its undo puts back its values, its --delete removes its records only', async () => {
    await apiData(t, 'POST', '/contacts', { email: 'own.ann@example.com', phone: '+1000' });
    await apiData(t, 'POST', '/contacts', { email: 'own.ben@example.com', last_name: 'Beta' });
    const path = join(dir, 'people.csv');
    writeFileSync(
      path,
      'email,phone,last_name\nown.ann@example.com,+1001,\nown.ben@example.com,,Betamax\nown.ivy@example.com,+3,Ivy\n',
    );
    const first = await crm(['batch', 'contacts', 'people.csv', '--match', 'email']);
    expect(first.code, first.stderr).toBe(0);
    const undo1 = printedAfter(first.stderr, 'To put back the values this run changed:')!;
    const delete1 = printedAfter(first.stderr, 'To remove the records this run created:')!;
    expect(undo1).toBe('crm batch contacts people.csv.undo.csv --match id');

    writeFileSync(path, 'email,phone,last_name\nown.ann@example.com,+1999,\nown.jo@example.com,+4,Jo\n');
    const second = await crm(['batch', 'contacts', 'people.csv', '--match', 'email']);
    expect(second.code, second.stderr).toBe(0);
    const undo2 = printedAfter(second.stderr, 'To put back the values this run changed:')!;
    expect(undo2).toMatch(/^crm batch contacts people\.csv\.undo\.\d{8}T\d{6}Z(-\d+)?\.csv --match id$/);

    // newest first, as the way back goes: the second run's undo, then the first's
    expect((await sh(undo2)).code).toBe(0);
    expect((await byEmail('own.ann@example.com'))[0]).toMatchObject({ phone: '+1001' });
    expect((await sh(undo1)).code).toBe(0);
    expect((await byEmail('own.ann@example.com'))[0]).toMatchObject({ phone: '+1000' });
    expect((await byEmail('own.ben@example.com'))[0]).toMatchObject({ last_name: 'Beta' });
    // the first run's --delete removes Ivy, its own record, and leaves Jo, the second run's
    expect((await sh(`${delete1} --yes`)).code).toBe(0);
    expect(await byEmail('own.ivy@example.com')).toEqual([]);
    expect(await byEmail('own.jo@example.com')).toHaveLength(1);
  });

  it('a file an older crm moved aside: the command that finds no such file names where it is now', async () => {
    const path = join(dir, 'older.csv');
    writeFileSync(path, 'email,title\nolder.1@example.com,First\n');
    expect((await crm(['batch', 'contacts', 'older.csv', '--match', 'email'])).code).toBe(0);
    renameSync(join(dir, 'older.csv.created.csv'), join(dir, 'older.csv.created.20261128T120000Z.csv'));
    const pasted = await crm(['batch', 'contacts', 'older.csv.created.csv', '--delete', '--yes']);
    expect(pasted.code, pasted.stderr).toBe(2);
    expect(pasted.stderr).toContain('cannot read older.csv.created.csv: no such file');
    expect(pasted.stderr.replace(/\s+/g, ' ')).toContain('moved older.csv.created.csv aside');
    expect(pasted.stderr).toContain('older.csv.created.20261128T120000Z.csv');
  });
});
