// End to end: what `crm batch` reports is what happened (issue 17): a repeated create row is skipped
// and named, a failure says its reasons and every summary ends with one plain sentence, the rejects
// file of an Excel-made input keeps its BOM and CRLF, an interrupted summary accounts for every row
// (`not_sent`), `--update --results` has one `id` column, a mistyped resource or a missing file says so.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makeContacts } from '../helpers/bulk.js';
import { CRM_BIN, cleanEnv, collect, runCrm, startCrm, type CrmResult } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';

let t: TestSandbox;
let dir: string;
beforeAll(async () => {
  t = await startTestSandbox({ rateLimit: 1_000_000, orgRateLimit: 1_000_000 });
  dir = mkdtempSync(join(tmpdir(), 'crm-batch-report-'));
});
afterAll(async () => {
  await t?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});
afterEach(async () => {
  await t.control('/faults', { fail_rate: 0, latency_ms: 0, faults: {}, next: [] });
});

const crm = (args: string[]) => runCrm(args, { env: t.env('admin'), cwd: dir, timeoutMs: 60_000 });
const file = (name: string, text: string | Buffer): string => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};
const contactsCount = async (): Promise<number> =>
  ((await t.control('/stats')) as { records: { contacts: number } }).records.contacts;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** the parts every summary is made of add up to its rows */
const parts = (s: Record<string, number>) => s.created! + s.failed! + s.invalid! + s.skipped! + s.not_sent!;

describe('crm batch reports what happened', () => {
  it('a create row repeating an earlier one is skipped, counted as skipped and named (line 4 repeats line 2); the server has one record', async () => {
    const p = file(
      'dupes.csv',
      'First Name,Email\nAda,dup.1@example.com\nBob,dup.2@example.com\nAda,dup.1@example.com\nAda,dup.1@example.com\n',
    );
    const r = await crm(['-o', 'json', 'batch', 'contacts', p]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ rows: 4, created: 2, skipped: 2, failed: 0 });
    expect(r.stderr).toMatch(/line 4 repeats line 2: skipped/);
    expect(r.stderr).toMatch(/line 5 repeats line 2: skipped/);
    expect(await t.countByEmail('dup')).toEqual(
      new Map([
        ['dup.1@example.com', 1],
        ['dup.2@example.com', 1],
      ]),
    );
  });

  it('an update row repeating an earlier one: the warning names it and the line it repeats, and the sentence says so', async () => {
    const res = await fetch(`${t.sb.baseUrl}/contacts`, {
      method: 'POST',
      headers: { 'X-Service-Api-Key': t.sb.keys.admin, 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'repeat.update@example.com', first_name: 'Old' }),
    });
    const id = ((await res.json()) as { data: { id: string } }).data.id;
    const r = await crm([
      'batch',
      'contacts',
      file('upd-repeat.csv', `id,first_name\n${id},New\n${id},New\n`),
      '--update',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      '1 row repeats an earlier row exactly and is not sent (counted as skipped): line 3 repeats line 2',
    );
    expect(r.stderr).toContain('Updated 1 of 2 contacts; 1 skipped as repeating an earlier row.');
    expect(r.stderr).not.toMatch(/done before/);
    const got = await fetch(`${t.sb.baseUrl}/contacts/${id}`, { headers: { 'X-Service-Api-Key': t.sb.keys.admin } });
    expect(((await got.json()) as { data: { first_name: string } }).data.first_name).toBe('New');
  });

  it('a failure says its top reasons with counts, and every summary ends with a plain sentence; -o json adds `reasons`', async () => {
    const rows = Array.from({ length: 30 }, (_, i) =>
      i < 25 ? `P${i},` : i < 28 ? `P${i},bad-${i}` : `P${i},ok.${i}@example.com`,
    );
    const p = file('reasons.csv', `First Name,Email\n${rows.join('\n')}\n`);
    const r = await crm(['batch', 'contacts', p]);
    expect(r.code, r.stderr).toBe(9);
    expect(r.stderr).toMatch(/25 × VALIDATION_FAILED.*email/);
    expect(r.stderr).toMatch(/3 × VALIDATION_FAILED/);
    expect(r.stderr).toMatch(/Created 2 of 30 contacts; 28 failed \(see .*reasons\.csv\.rejects\.csv\)\./);
    const j = await crm([
      '-o',
      'json',
      'batch',
      'contacts',
      file('reasons2.csv', `First Name,Email\n${rows.join('\n')}\n`),
    ]);
    const s = JSON.parse(j.stdout) as { reasons: Array<{ code: string; message: string; count: number }> };
    expect(s.reasons[0]).toMatchObject({ code: 'VALIDATION_FAILED', count: 25 });
    expect(s.reasons.reduce((n, x) => n + x.count, 0)).toBe(28);
    const ok = await crm(['batch', 'contacts', file('fine.csv', 'First Name,Email\nA,fine.1@example.com\n')]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stderr).toMatch(/^Created 1 of 1 contact\.$/m); // singular for one row
  });

  it('the rejects file of an Excel-made input (UTF-8 BOM, CRLF) keeps the BOM and CRLF', async () => {
    const p = file('excel.csv', Buffer.from('\ufeffFirst Name,Email\r\nZoë,\r\nAl,al.bom@example.com\r\n', 'utf8'));
    const r = await crm(['batch', 'contacts', p, '--results', join(dir, 'excel-ids.csv')]);
    expect(r.code, r.stderr).toBe(9);
    const rejects = readFileSync(`${p}.rejects.csv`);
    expect(rejects.subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
    expect(rejects.toString('utf8')).toContain('Zoë');
    expect(rejects.toString('utf8').replace(/\r\n/g, '')).not.toContain('\n');
    const results = readFileSync(join(dir, 'excel-ids.csv'));
    expect(results.subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
  });

  it('after Ctrl-C the summary accounts for every row (not_sent)', async () => {
    const folder = join(dir, 'ctrlc');
    mkdirSync(folder);
    const lines = Array.from({ length: 600 }, (_, i) => `P ${i},ctrlc.${i}@example.com`);
    const p = join(folder, 'people.csv');
    writeFileSync(p, `First Name,Email\n${lines.join('\n')}\n`);
    await t.control('/faults', { latency_ms: 150 });
    const base = await contactsCount();
    const child = startCrm(['-o', 'json', 'batch', 'contacts', p, '--chunk-size', '20', '--concurrency', '2'], {
      env: t.env('admin'),
      cwd: folder,
    });
    const done = collect(child, { timeoutMs: 60_000 });
    for (let i = 0; i < 500 && (await contactsCount()) === base; i++) await sleep(20);
    child.kill('SIGINT');
    const r = await done;
    expect(r.code, r.stderr).toBe(130);
    const s = JSON.parse(r.stdout) as Record<string, number>;
    expect(s.rows).toBe(600);
    expect(s.not_sent).toBeGreaterThan(0);
    expect(parts(s)).toBe(600);
    expect(r.stderr).toMatch(/Interrupted: created \d+ of 600 contacts; \d+ not sent yet\./);
  });

  it('--update --results writes one id column', async () => {
    const ids = await makeContacts(t, 'upres', 2);
    const p = file('upres.csv', `id,first_name\n${ids[0]},X\n${ids[1]},Y\n`);
    const r = await crm(['batch', 'contacts', p, '--update', '--results', join(dir, 'upres-ids.csv')]);
    expect(r.code, r.stderr).toBe(0);
    const header = readFileSync(join(dir, 'upres-ids.csv'), 'utf8').split('\r\n')[0];
    expect(header).toBe('_line,id,first_name');
    const rows: Array<Record<string, string>> = parse(readFileSync(join(dir, 'upres-ids.csv')), { columns: true });
    expect(rows.map((x) => x.id).sort()).toEqual([...ids].sort());
  });

  it('a mistyped resource suggests the right one (exit 2); a missing file says so plainly (exit 2)', async () => {
    const p = file('x.csv', 'Email\na@example.com\n');
    const r = await crm(['batch', 'contact', p]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown resource 'contact'; did you mean 'contacts'\?/);
    // the hint lists only what batch takes: no meetings, recordings, bookings (batch refuses them)
    expect(r.stderr).toMatch(/contacts, companies/);
    expect(r.stderr).not.toMatch(/meetings|recordings|bookings/);
    const u = await crm(['batch', 'contact', p, '--delete']);
    expect(u.stderr).toMatch(/did you mean 'contacts'\?/);
    expect(u.stderr).not.toMatch(/meetings|recordings|bookings|interactions/);
    const m = await crm(['batch', 'contacts', 'nofile.csv']);
    expect(m.code).toBe(2);
    expect(m.stderr).toMatch(/cannot read nofile\.csv: no such file/);
    expect(m.stderr).not.toMatch(/ENOENT|stat/);
  });

  it('a full disk while writing is its own error (exit 8) naming the file, the summary accounts for every row, and the printed command resumes', async () => {
    const folder = join(dir, 'disk');
    mkdirSync(folder);
    const full = join(folder, 'full');
    mkdirSync(full);
    // 400 rows that are created, then 2,000 the server refuses (short rows, long item errors: the journal and
    // rejects outgrow the spool)
    const good = Array.from({ length: 400 }, (_, i) => `G${i},disk.${i}@example.com`);
    const bad = Array.from({ length: 2000 }, (_, i) => `B${i},`);
    const p = join(folder, 'in.csv');
    writeFileSync(p, `First Name,Email\n${[...good, ...bad].join('\n')}\n`);
    const args = ['-o', 'json', 'batch', 'contacts', p, '--rejects', join(full, 'r.csv')];
    // a 64 KiB tmpfs for the rejects file (root); else a 100 KiB limit on the size of any file crm writes (EFBIG)
    let mounted = false;
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', full], { stdio: 'ignore' });
      mounted = true;
    } catch {
      mounted = false;
    }
    let r: CrmResult;
    try {
      const line = `${mounted ? '' : 'ulimit -f 100; '}exec "${process.execPath}" "${CRM_BIN}" "$@"`;
      r = await collect(spawn('bash', ['-c', line, 'crm', ...args], { env: cleanEnv(t.env('admin')), cwd: folder }), {
        timeoutMs: 60_000,
      });
    } finally {
      if (mounted) execFileSync('umount', [full]);
    }
    expect(r.code, r.stderr).toBe(8);
    expect(r.stderr).toMatch(/^Error: cannot write .*: (the disk is full|the file is too large for its file system)/m);
    expect(r.stderr).not.toMatch(/unexpected failure|a bug in crm/);
    const s = JSON.parse(r.stdout) as Record<string, number>;
    expect(s.rows).toBe(2400);
    expect(parts(s)).toBe(2400);
    const resume = /to resume, run: (.*)$/m.exec(r.stderr)?.[1];
    expect(resume).toContain('--rejects');
    // with room again, the printed command finishes: every row accounted for, none created twice
    const again = await collect(
      spawn('bash', ['-c', resume!.replace(/^crm /, `exec "${process.execPath}" "${CRM_BIN}" `)], {
        env: cleanEnv(t.env('admin')),
        cwd: folder,
      }),
      { timeoutMs: 60_000 },
    );
    expect(again.code, again.stderr).toBe(9);
    expect(again.stderr).toMatch(/Created \d+ of 2,400 contacts; \d+ created by an earlier run; 2,000 failed/);
    // the Error line counts as the sentence does: 2,000 and 2,400, not 2000 and 2400
    expect(again.stderr).toMatch(/^Error: 2,000 rows failed, of 2,400\b/m);
    const counts = await t.countByEmail('disk');
    expect(counts.size).toBe(400);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    const rejects: string[][] = parse(readFileSync(join(full, 'r.csv')));
    expect(rejects).toHaveLength(2001);
  });
});
