// End to end: reruns of `crm batch` after a first attempt that went wrong (issue 9 trial): a key
// without the write scope, rows sent without an answer. The promise: what crm tells the user to do
// next is always true, and following it creates every row exactly once.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { logLength, requestLog } from '../helpers/bulk.js';
import { runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';

let t: TestSandbox;
let dir: string;
beforeAll(async () => {
  t = await startTestSandbox({ rateLimit: 1_000_000, orgRateLimit: 1_000_000 });
  dir = tempDir('crm-batch-rerun-');
});
afterAll(async () => t?.close());
afterEach(async () => {
  await t.control('/faults', { fail_rate: 0, latency_ms: 0, faults: {}, next: [] });
});

/** A CSV of `n` contacts tagged `tag`; the rows at `bad` (1-based) have a score that is not a number. */
function makeCsv(tag: string, n: number, bad: number[] = []): string {
  const lines = ['Email,Score:number'];
  for (let i = 1; i <= n; i++) lines.push(`${tag}.${i}@example.com,${bad.includes(i) ? 'x' : i}`);
  const path = join(dir, `${tag}.csv`);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

const countByEmail = (tag: string) => t.countByEmail(tag);

const crm = (args: string[], key: 'admin' | 'readonly' | 'user' = 'admin') =>
  runCrm(args, { env: t.env(key), timeoutMs: 120_000 });

describe('crm batch reruns', () => {
  it('a first attempt whose chunks were all refused (403, read-only key) does not block the right key', async () => {
    const path = makeCsv('wrongkey', 250);
    const first = await crm(['batch', 'contacts', path, '--chunk-size', '50'], 'readonly');
    expect(first.code, first.stderr).toBe(4);
    expect((await countByEmail('wrongkey')).size).toBe(0);
    const right = await crm(['-o', 'json', 'batch', 'contacts', path, '--chunk-size', '50']);
    expect(right.code, right.stderr).toBe(0);
    expect(JSON.parse(right.stdout)).toMatchObject({ created: 250 });
    const counts = await countByEmail('wrongkey');
    expect(counts.size).toBe(250);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
  });

  it('rows in doubt + invalid rows: the error names them in doubt and says rerun first; the rerun hands out the rejects file', async () => {
    const path = makeCsv('doubt', 500, [7, 300]);
    await t.control('/faults', { next: [{ kind: '500-after-write', path: '/contacts/batch', count: 4 }] });
    const first = await crm([
      '--max-retries',
      '0',
      'batch',
      'contacts',
      path,
      '--chunk-size',
      '100',
      '--concurrency',
      '1',
    ]);
    expect(first.code, first.stderr).toBe(9);
    expect(first.stderr).toMatch(/Error: 400 rows sent without an answer \(rerun to settle\), 2 invalid, of 500/);
    expect(first.stderr).toMatch(/first rerun this same command/);
    expect(first.stderr).not.toMatch(/run `crm batch/);
    const rerun = await crm(['batch', 'contacts', path, '--chunk-size', '100', '--concurrency', '1']);
    expect(rerun.code, rerun.stderr).toBe(9);
    expect(rerun.stderr).not.toMatch(/rerun to settle/);
    expect(rerun.stderr).toMatch(/2 rows were not created and are in .*doubt\.csv\.rejects\.csv/);
    const counts = await countByEmail('doubt');
    expect(counts.size).toBe(498);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
  });

  it('a rerun sends 50 rows the server rejected in 20 chunks in one request (issue 29), not one per chunk', async () => {
    // rows 7, 47, 87, … have an email the server refuses (no @): two or three in each chunk of 100
    const lines = ['Email,Score:number'];
    for (let i = 1; i <= 2000; i++) lines.push(`scattered.${i}${i % 40 === 7 ? '.example.com' : '@example.com'},${i}`);
    const path = join(dir, 'scattered.csv');
    writeFileSync(path, `${lines.join('\n')}\n`);
    const first = await crm(['-o', 'json', 'batch', 'contacts', path]);
    expect(first.code, first.stderr).toBe(9);
    expect(JSON.parse(first.stdout)).toMatchObject({ created: 1950, failed: 50, requests: 20 });
    const since = await logLength(t);
    const rerun = await crm(['-o', 'json', 'batch', 'contacts', path]);
    expect(rerun.code, rerun.stderr).toBe(9); // still refused: sent again, refused again
    expect(JSON.parse(rerun.stdout)).toMatchObject({ created: 0, skipped: 1950, failed: 50, requests: 1 });
    const posts = (await requestLog(t, since)).filter((e) => e.method === 'POST');
    expect(posts.map((e) => e.path)).toEqual(['/api/v2/contacts/batch']);
    const counts = await countByEmail('scattered');
    expect(counts.size).toBe(1950);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
  });

  it('another key that may have created rows is still refused, naming that key masked (never whole)', async () => {
    const path = makeCsv('namedkey', 30);
    expect((await crm(['batch', 'contacts', path], 'user')).code).toBe(0);
    const other = await crm(['batch', 'contacts', path]);
    expect(other.code, other.stderr).toBe(2);
    const user = t.sb.keys.user;
    const masked = `${user.slice(0, user.lastIndexOf('_') + 1)}…${user.slice(-4)}`;
    expect(other.stderr).toContain(`with another API key (${masked}, `);
    expect(other.stderr).not.toContain(user);
  });
});
