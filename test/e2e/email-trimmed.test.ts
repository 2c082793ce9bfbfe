// Issue 29's re-trial: a plain import stored `"  LOU.CLARK@X.TEST "` with its spaces, and every later
// `--match email` counted that record unchanged (keys compare trimmed), so the spaces stayed for good. An email
// field's untyped cell is an address: sent trimmed by a plain create and `--update`, as --match sends a key. A
// record that already holds spaces is left as it is by a reconcile of its own export (round trips stay exact).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiRecord } from '../../src/api/envelopes.js';
import { apiData } from '../helpers/api-data.js';
import { runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir('crm-email-trim-');
let t: TestSandbox;
beforeAll(async () => {
  t = await startTestSandbox({ rateLimit: 1_000_000, orgRateLimit: 1_000_000 });
});
afterAll(async () => t?.close());

const crm = (args: string[]) => runCrm(['-o', 'json', ...args], { env: t.env('admin'), cwd: dir, timeoutMs: 60_000 });
const all = async () => (await apiData(t, 'GET', '/contacts?limit=100')) as ApiRecord[];
const file = (name: string, text: string) => (writeFileSync(join(dir, name), text), join(dir, name));

describe('an email cell with spaces around', () => {
  it('a plain create and an --update send it trimmed; the same file reconciled then plans nothing', async () => {
    const path = file('padded.csv', 'email,first_name,title\n"  Lou.Clark@Trim.test ",Lou," CEO "\n');
    const made = await crm(['batch', 'contacts', path]);
    expect(made.code, made.stderr).toBe(0);
    const [lou] = (await all()).filter((r) => /lou\.clark@trim\.test/i.test(String(r.email)));
    // the address trimmed, its case kept; any other text cell as it was
    expect(lou).toMatchObject({ email: 'Lou.Clark@Trim.test', title: ' CEO ' });

    const again = await crm(['batch', 'contacts', path, '--match', 'email', '--dry-run']);
    expect(JSON.parse(again.stdout)).toMatchObject({ create: 0, update: 0, unchanged: 1 });

    const update = file('update.csv', `id,email\n${String(lou!.id)}, lou.clark@trim.test \n`);
    expect((await crm(['batch', 'contacts', update, '--update'])).code).toBe(0);
    expect((await apiData(t, 'GET', `/contacts/${String(lou!.id)}`)) as ApiRecord).toMatchObject({
      email: 'lou.clark@trim.test',
    });
  });

  it('a record holding spaces around its email: its own export reconciled back plans nothing', async () => {
    await apiData(t, 'POST', '/contacts', { email: ' held@trim.test ', first_name: 'Held' });
    const listed = await runCrm(['contacts', 'list', '--all', '-o', 'csv'], { env: t.env('admin'), cwd: dir });
    const exported = file('export.csv', listed.stdout);
    const plan = await crm(['batch', 'contacts', exported, '--match', 'email', '--dry-run']);
    expect(plan.code, plan.stderr).toBe(0);
    expect(JSON.parse(plan.stdout)).toMatchObject({ create: 0, update: 0 });
  });
});
