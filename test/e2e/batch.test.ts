// End to end: `crm batch` against the sandbox with faults, kill -9, Ctrl-C and a server that forgot
// its idempotency keys. The promise under test: every valid row created exactly once, every other
// row in the rejects file, whatever happens to the process.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { journalFiles, sentUnanswered } from '../helpers/journal.js';
import { collect, runCrm, startCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';

let t: TestSandbox;
let dir: string;
beforeAll(async () => {
  // limits high enough that the many small runs here never meet them; pacing has its own tests
  t = await startTestSandbox({ rateLimit: 1_000_000, orgRateLimit: 1_000_000 });
  dir = tempDir('crm-batch-e2e-');
});
afterAll(async () => t?.close());
afterEach(async () => {
  await t.control('/faults', { fail_rate: 0, latency_ms: 0, faults: {}, next: [] });
});

let fileNo = 0;
/** A CSV of `n` contacts with unique emails (tagged so each test counts its own); every `badEvery`th row is invalid. */
function makeCsv(
  n: number,
  opts: { badEvery?: number; tag?: string } = {},
): { path: string; valid: Set<string>; invalidLines: number[] } {
  const tag = opts.tag ?? `t${++fileNo}`;
  const lines = ['First Name,Email,Score:number,Tags:list'];
  const valid = new Set<string>();
  const invalidLines: number[] = [];
  for (let i = 1; i <= n; i++) {
    const email = `${tag}.${i}@example.com`;
    if (opts.badEvery && i % opts.badEvery === 0) {
      lines.push(`Bad ${i},${email},not-a-number,x`);
      invalidLines.push(i + 1);
    } else {
      lines.push(`"Person, ${i}",${email},${i},a;b`);
      valid.add(email);
    }
  }
  const path = join(dir, `${tag}.csv`);
  writeFileSync(path, `${lines.join('\r\n')}\r\n`);
  return { path, valid, invalidLines };
}

/** How many contacts exist per email of this test's tag. */
const countByEmail = (tag: string) => t.countByEmail(tag);
/** the requests that could write (a run may read the fields the records have, one page, before it refuses) */
const writes = async () =>
  ((await t.control('/requests')) as Array<{ method: string }>).filter((e) => e.method !== 'GET').length;

function expectExactlyOnce(counts: Map<string, number>, valid: Set<string>): void {
  const dupes = [...counts].filter(([, n]) => n > 1);
  expect(dupes, 'duplicated rows').toEqual([]);
  const missing = [...valid].filter((e) => !counts.has(e));
  expect(missing, 'lost rows').toEqual([]);
  expect(counts.size).toBe(valid.size);
}

const crm = (args: string[], extra: Record<string, string> = {}) =>
  runCrm(args, { env: t.env('admin', extra), timeoutMs: 120_000 });

describe('crm batch end to end', () => {
  it('2,000 rows through 500s before and after the write, dropped connections and 429s: each valid row exactly once', async () => {
    const { path, valid, invalidLines } = makeCsv(2000, { badEvery: 97, tag: 'faults' });
    await t.control('/faults', {
      paths: '/contacts/batch',
      faults: {
        '500': 0.08,
        '500-after-write': 0.08,
        drop: 0.05,
        'drop-after-write': 0.05,
        '429': 0.05,
        'html-502': 0.03,
      },
    });
    const rejects = join(dir, 'faults.rejects.csv');
    const r = await crm(['-o', 'json', '--max-retries', '12', 'batch', 'contacts', path, '--rejects', rejects]);
    expect(r.code, r.stderr).toBe(9);
    const summary = JSON.parse(r.stdout);
    expect(summary).toMatchObject({
      resource: 'contacts',
      rows: 2000,
      created: valid.size,
      failed: 0,
      invalid: invalidLines.length,
    });
    expect(summary.retries).toBeGreaterThan(0);
    expectExactlyOnce(await countByEmail('faults'), valid);
    const rows = parse<Record<string, string>>(readFileSync(rejects), { columns: true });
    expect(rows.map((x) => Number(x._line))).toEqual(invalidLines);
    expect(rows[0]).toMatchObject({ _error_code: 'INVALID_VALUE', 'Score:number': 'not-a-number' });
  });

  it('kill -9 at random moments, then rerun: no duplicate, no lost row', async () => {
    const { path, valid } = makeCsv(1500, { tag: 'kill9' });
    await t.control('/faults', { latency_ms: 15 });
    let seed = 42;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let round = 0; round < 4; round++) {
      const child = startCrm(['--quiet', 'batch', 'contacts', path, '--concurrency', '3', '--chunk-size', '50'], {
        env: t.env('admin'),
      });
      const done = collect(child, { timeoutMs: 60_000 });
      await new Promise((r) => setTimeout(r, 150 + rand() * 500));
      child.kill('SIGKILL');
      await done;
    }
    const last = await crm(['-o', 'json', 'batch', 'contacts', path, '--chunk-size', '50']);
    expect(last.code, last.stderr).toBe(0);
    expectExactlyOnce(await countByEmail('kill9'), valid);
  });

  it('Ctrl-C stops cleanly with exit 130; after the server forgets its idempotency keys the rerun still creates nothing twice', async () => {
    const { path, valid } = makeCsv(1200, { tag: 'sigint' });
    await t.control('/faults', { latency_ms: 100 });
    const contacts = async () => ((await t.control('/stats')) as { records: { contacts: number } }).records.contacts;
    const base = await contacts();
    const child = startCrm(['batch', 'contacts', path, '--concurrency', '2', '--chunk-size', '40'], {
      env: t.env('admin'),
    });
    const done = collect(child, { timeoutMs: 60_000 });
    // interrupt once the first rows are in, while most are still to be sent (30 chunks, 2 at a time, 100 ms each)
    for (let i = 0; i < 400 && (await contacts()) === base; i++) await new Promise((r) => setTimeout(r, 20));
    child.kill('SIGINT');
    await t.control('/faults', { latency_ms: 0 });
    const stopped = await done;
    expect(stopped.code, stopped.stderr).toBe(130);
    expect(stopped.stderr).toMatch(/Hint: to resume, run: crm batch contacts /);
    const partial = await countByEmail('sigint');
    expect(partial.size).toBeGreaterThan(0);
    expect(partial.size).toBeLessThan(valid.size);

    await t.control('/forget-idempotency', {});
    const rerun = await crm(['-o', 'json', 'batch', 'contacts', path, '--chunk-size', '40']);
    expect(rerun.code, rerun.stderr).toBe(0);
    const summary = JSON.parse(rerun.stdout);
    expect(summary.skipped).toBe(partial.size);
    expectExactlyOnce(await countByEmail('sigint'), valid);
  });

  it('a finished import rerun after the server forgot its keys sends nothing', async () => {
    const { path, valid } = makeCsv(300, { tag: 'forgot' });
    expect((await crm(['batch', 'contacts', path])).code).toBe(0);
    await t.control('/forget-idempotency', {});
    const before = ((await t.control('/requests')) as unknown[]).length;
    const again = await crm(['-o', 'json', 'batch', 'contacts', path]);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ created: 0, skipped: 300, requests: 0 });
    expect(((await t.control('/requests')) as unknown[]).length).toBe(before);
    expectExactlyOnce(await countByEmail('forgot'), valid);
  });

  it('--no-resume ignores the journal and is a new run: keys of its own, so every row is created again (not replayed from the first run)', async () => {
    const { path, valid } = makeCsv(250, { tag: 'noresume' });
    expect((await crm(['batch', 'contacts', path])).code).toBe(0);
    const again = await crm(['-o', 'json', 'batch', 'contacts', path, '--no-resume']);
    expect(again.code, again.stderr).toBe(0);
    // issue 17: a replay of the first run's keys would report rows created though they may have been deleted since
    expect(JSON.parse(again.stdout)).toMatchObject({ created: 250, skipped: 0 });
    const counts = await countByEmail('noresume');
    expect(counts.size).toBe(valid.size);
    expect([...counts.values()].every((n) => n === 2)).toBe(true);
  });

  it('--strict sends nothing when a row is invalid (exit 2); --dry-run prints the plan and sends nothing', async () => {
    const { path } = makeCsv(120, { badEvery: 50, tag: 'strict' });
    const before = await writes();
    const strict = await crm(['batch', 'contacts', path, '--strict']);
    expect(strict.code).toBe(2);
    expect(strict.stderr).toMatch(/line 51/);
    expect(strict.stderr.match(/line 51/g)).toHaveLength(1); // not repeated as details
    const dry = await crm(['-o', 'json', 'batch', 'contacts', path, '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({ dry_run: true, rows: 120, valid: 118, invalid: 2, chunks: 2 });
    expect(await writes()).toBe(before);
    expect((await countByEmail('strict')).size).toBe(0);
  });

  it('server-side item errors go to the rejects file; fixed, it feeds straight back', async () => {
    const path = join(dir, 'items.csv');
    writeFileSync(path, 'Email,Last Name\nok1@items.example.com,A\n,NoEmail\nok2@items.example.com,B\n');
    const rejects = join(dir, 'items.rejects.csv');
    const results = join(dir, 'items.results.csv');
    const r = await crm(['-o', 'json', 'batch', 'contacts', path, '--rejects', rejects, '--results', results]);
    expect(r.code).toBe(9);
    expect(JSON.parse(r.stdout)).toMatchObject({ created: 2, failed: 1 });
    const rej = parse<Record<string, string>>(readFileSync(rejects), { columns: true });
    expect(rej).toEqual([
      {
        Email: '',
        'Last Name': 'NoEmail',
        _line: '3',
        _error_code: 'VALIDATION_FAILED',
        _error_message: expect.stringMatching(/email/),
      },
    ]);
    const created = parse<Record<string, string>>(readFileSync(results), { columns: true });
    expect(created.map((c) => [c._line, c.Email])).toEqual([
      ['2', 'ok1@items.example.com'],
      ['4', 'ok2@items.example.com'],
    ]);
    expect(created.every((c) => /^con_/.test(c.id!))).toBe(true);

    writeFileSync(rejects, readFileSync(rejects, 'utf8').replace(/^,NoEmail/m, 'fixed@items.example.com,NoEmail'));
    const refed = await crm(['-o', 'json', 'batch', 'contacts', rejects]);
    expect(refed.code, refed.stderr).toBe(0);
    expect(JSON.parse(refed.stdout)).toMatchObject({ created: 1, failed: 0 });
  });

  it('reads standard input and NDJSON', async () => {
    const csv = 'email,first_name\nstdin1@ex.example.com,A\nstdin2@ex.example.com,B\n';
    const r = await runCrm(['-o', 'json', 'batch', 'contacts', '-'], { env: t.env('admin'), input: csv, cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ created: 2 });
    const nd = join(dir, 'rows.ndjson');
    writeFileSync(nd, '{"name":"Nd One"}\n{"name":"Nd Two","tags":["x"]}\n');
    const n = await crm(['-o', 'json', 'batch', 'companies', nd]);
    expect(n.code, n.stderr).toBe(0);
    expect(JSON.parse(n.stdout)).toMatchObject({ created: 2 });
  });

  it('a missing file or one without a header is exit 2', async () => {
    expect((await crm(['batch', 'contacts', join(dir, 'nope.csv')])).code).toBe(2);
    const empty = join(dir, 'empty.csv');
    writeFileSync(empty, '');
    const r = await crm(['batch', 'contacts', empty]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/empty\.csv/);
    expect(existsSync(`${empty}.rejects.csv`)).toBe(false);
    expect((await crm(['batch', 'meetings', empty])).code).toBe(2);
  });

  it('a file fixed in place after a partial import is refused (exit 2, nothing sent); the rejects file is the safe path', async () => {
    const { path, valid } = makeCsv(1000, { tag: 'fixinplace' });
    const text = readFileSync(path, 'utf8');
    writeFileSync(path, text.replace('fixinplace.500@example.com,500,', 'fixinplace.500@example.com,five hundred,'));
    const first = await crm(['-o', 'json', 'batch', 'contacts', path]);
    expect(first.code, first.stderr).toBe(9);
    expect(JSON.parse(first.stdout)).toMatchObject({ created: 999, invalid: 1 });
    writeFileSync(path, text); // the cell fixed in place (sed -i)
    const before = await writes();
    const rerun = await crm(['batch', 'contacts', path]);
    expect(rerun.code, rerun.stderr).toBe(2);
    expect(rerun.stderr).toMatch(/has changed since it was imported into contacts/);
    expect(rerun.stderr).toMatch(/--no-resume/);
    expect(await writes()).toBe(before);
    expect((await countByEmail('fixinplace')).size).toBe(999);
    const rejects = `${path}.rejects.csv`;
    writeFileSync(rejects, readFileSync(rejects, 'utf8').replace(',five hundred,', ',500,'));
    const fed = await crm(['-o', 'json', 'batch', 'contacts', rejects]);
    expect(fed.code, fed.stderr).toBe(0);
    expect(JSON.parse(fed.stdout)).toMatchObject({ created: 1 });
    expectExactlyOnce(await countByEmail('fixinplace'), valid);
  });

  it('another API key: refused (exit 2, its rows would be created again); --no-resume imports it knowingly; no key is stored', async () => {
    const { path } = makeCsv(20, { tag: 'otherkey' });
    expect((await crm(['batch', 'contacts', path])).code).toBe(0);
    const other = await runCrm(['-o', 'json', 'batch', 'contacts', path], { env: t.env('user'), timeoutMs: 60_000 });
    expect(other.code, other.stderr).toBe(2);
    expect(other.stderr).toMatch(/with another API key/);
    const knowingly = await runCrm(['-o', 'json', 'batch', 'contacts', path, '--no-resume'], {
      env: t.env('user'),
      timeoutMs: 60_000,
    });
    expect(knowingly.code, knowingly.stderr).toBe(0);
    expect(knowingly.stderr).not.toMatch(/already imported/);
    const configDir = t.env('admin').CRM_CONFIG_DIR!;
    for (const f of readdirSync(join(configDir, 'imports'))) {
      expect(readFileSync(join(configDir, 'imports', f), 'utf8')).not.toContain(t.sb.keys.user);
      expect(readFileSync(join(configDir, 'imports', f), 'utf8')).not.toContain(t.sb.keys.admin);
    }
  });

  it('kill -9 with chunks in flight: the rerun warns that they are re-sent under the same keys (safe while the server remembers them)', async () => {
    const { path, valid } = makeCsv(600, { tag: 'inflight' });
    await t.control('/faults', { latency_ms: 400 });
    const contacts = async () => ((await t.control('/stats')) as { records: { contacts: number } }).records.contacts;
    const base = await contacts();
    const configDir = t.env('admin').CRM_CONFIG_DIR!;
    const journals = journalFiles(configDir);
    const child = startCrm(['--quiet', 'batch', 'contacts', path, '--concurrency', '2', '--chunk-size', '50'], {
      env: t.env('admin'),
    });
    const done = collect(child, { timeoutMs: 60_000 });
    for (let i = 0; i < 400 && (await contacts()) === base; i++) await new Promise((r) => setTimeout(r, 20));
    // the first chunks were answered; kill once the journal says the next ones are sent (each then waits
    // 400 ms at the server), not after a fixed time, which a loaded machine can spend between two chunks
    for (let i = 0; i < 2000 && !sentUnanswered(configDir, journals); i++) await new Promise((r) => setTimeout(r, 5));
    child.kill('SIGKILL');
    await done;
    await t.control('/faults', { latency_ms: 0 });
    const rerun = await crm(['batch', 'contacts', path, '--chunk-size', '50']);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(rerun.stderr).toMatch(/sent by an earlier run without an answer.*same Idempotency-Keys.*24 h/s);
    expectExactlyOnce(await countByEmail('inflight'), valid);
  });

  it('an unwritable config folder fails fast (exit 2) naming it', async () => {
    const { path } = makeCsv(5, { tag: 'procfs' });
    const t0 = Date.now();
    const r = await runCrm(['batch', 'contacts', path], {
      env: t.env('admin', { CRM_CONFIG_DIR: '/proc/nope' }),
      timeoutMs: 20_000,
    });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/\/proc\/nope/);
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect((await countByEmail('procfs')).size).toBe(0);
  });

  it('removes leftovers of killed runs: buffered stdin and half-written rejects files', async () => {
    const configDir = t.env('admin').CRM_CONFIG_DIR!;
    mkdirSync(join(configDir, 'imports'), { recursive: true });
    const dead = 2 ** 22 + 999;
    const buf = join(configDir, 'imports', `stdin-${dead}-0a1b2c3d4e5f.buf`);
    writeFileSync(buf, 'email\nsecret@example.com\n');
    const { path } = makeCsv(5, { tag: 'leftover' });
    const tmp = `${path}.rejects.csv.tmp-${dead}-0badc0de`;
    writeFileSync(tmp, 'email\nsecret@example.com\n');
    const r = await crm(['batch', 'contacts', path]);
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(buf)).toBe(false);
    expect(existsSync(tmp)).toBe(false);
  });

  it('ragged rows keep the rejects file rectangular, in line order; --results of NDJSON input is a CSV', async () => {
    const path = join(dir, 'ragged.csv');
    writeFileSync(
      path,
      'Email,Last Name\nr1@ragged.example.com,A,extra1,"x,y"\n,NoEmail\nr3@ragged.example.com,C\nshort\n',
    );
    const r = await crm(['-o', 'json', 'batch', 'contacts', path]);
    expect(r.code).toBe(9);
    const rows = parse(readFileSync(`${path}.rejects.csv`));
    expect(rows.every((row) => row.length === 5)).toBe(true);
    expect(rows.slice(1).map((row) => row[2])).toEqual(['2', '3', '5']);
    expect(rows[1]![4]).toContain('"extra1", "x,y"');

    const nd = join(dir, 'res.ndjson');
    writeFileSync(nd, '{"name":"Res One","tags":["a","b"]}\n{"name":"Res Two","domain":"two.example.com"}\n');
    const out = join(dir, 'res.results.csv');
    const n = await crm(['-o', 'json', 'batch', 'companies', nd, '--results', out]);
    expect(n.code, n.stderr).toBe(0);
    const res = parse<Record<string, string>>(readFileSync(out), { columns: true });
    expect(Object.keys(res[0]!)).toEqual(['_line', 'id', 'name', 'tags', 'domain']);
    expect(res.map((x) => [x._line, x.name, x.tags, x.domain]).sort()).toEqual([
      ['1', 'Res One', '["a","b"]', ''],
      ['2', 'Res Two', '', 'two.example.com'],
    ]);
  });
});
