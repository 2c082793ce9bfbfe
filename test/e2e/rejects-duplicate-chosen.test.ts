// Issue 29's re-trial: a --match run rejects a row whose key an earlier row has with other values (DUPLICATE_KEY);
// importing the rejects file, as --help says ("fix it and import it"), sent that row and overwrote the first row's
// values, a choice nobody made. Such a row, fed back still marked DUPLICATE_KEY, is refused again with the way to
// choose it (empty its _error_code cell); chosen, it is sent. Since the trial after it, no row of a key whose rows
// disagree is sent, the first included: all of them are in the rejects file, to choose from.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir('crm-rejects-dup-');
let t: TestSandbox;
beforeAll(async () => {
  t = await startTestSandbox({ rateLimit: 1_000_000, orgRateLimit: 1_000_000 });
});
afterAll(async () => t?.close());

const crm = (args: string[]) => runCrm(args, { env: t.env('admin'), cwd: dir, timeoutMs: 60_000 });
const names = async () =>
  (
    (await (
      await fetch(`${t.sb.baseUrl}/contacts?limit=100`, { headers: { 'X-Service-Api-Key': t.sb.keys.admin } })
    ).json()) as { data: Array<{ email: string; first_name: string }> }
  ).data
    .filter((r) => r.email === 'r.one@dup.test')
    .map((r) => r.first_name);

describe('a rejected duplicate fed back', () => {
  it('is refused again until chosen (its _error_code emptied); chosen, it is sent', async () => {
    const file = join(dir, 'small.csv');
    writeFileSync(file, 'email,first_name\nr.one@dup.test,R\nr.one@dup.test,Other\n');
    const first = await crm(['batch', 'contacts', file, '--match', 'email']);
    expect(first.code, first.stderr).toBe(9);
    expect(await names()).toEqual([]);
    const rejects = `${file}.rejects.csv`;
    expect(readFileSync(rejects, 'utf8').match(/DUPLICATE_KEY/g)).toHaveLength(2);

    const again = await crm(['batch', 'contacts', rejects, '--match', 'email']);
    expect(again.code, again.stderr).toBe(9);
    expect(again.stderr.replace(/\s+/g, ' ')).toMatch(
      /a rejected duplicate .*empty this row's _error_code cell to send it/,
    );
    expect(await names()).toEqual([]);

    // chosen: the line not wanted deleted, the other's _error_code cell emptied
    const chosen = join(dir, 'chosen.csv');
    const kept = readFileSync(rejects, 'utf8')
      .split('\n')
      .filter((l) => !l.startsWith('r.one@dup.test,R,'));
    writeFileSync(chosen, kept.join('\n').replace('DUPLICATE_KEY', ''));
    const sent = await crm(['batch', 'contacts', chosen, '--match', 'email']);
    expect(sent.code, sent.stderr).toBe(0);
    expect(await names()).toEqual(['Other']);
  });
});
