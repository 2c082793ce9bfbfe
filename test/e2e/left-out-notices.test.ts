// Issue 28, from its trial: a CSV column `__proto__` (any `_` column the records do not have) was left out of a
// create without a word, and an NDJSON reconcile said "leaving out owner_id" while its plan updated owner_id.
// Now the `_` column is named, with the --map that sends it (run here: the record then has the field); and a
// reconcile that keeps owner_id for its updates does not say it is left out.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiRecord } from '../../src/api/envelopes.js';
import { stringifyJson } from '../../src/json/exact-json.js';
import { apiData } from '../helpers/api-data.js';
import { runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir('crm-left-out-');
let t: TestSandbox;
beforeAll(async () => {
  t = await startTestSandbox({ rateLimit: 1_000_000, orgRateLimit: 1_000_000 });
});
afterAll(async () => t?.close());

const crm = (args: string[]) => runCrm(args, { env: t.env('admin'), cwd: dir, timeoutMs: 60_000 });

const api = (method: string, path: string, body?: unknown) => apiData(t, method, path, body);

/** The contacts whose email ends with `suffix`. */
const held = async (suffix: string) =>
  ((await api('GET', '/contacts?limit=100')) as ApiRecord[]).filter((r) => String(r.email).endsWith(suffix));

describe('what a run leaves out, it says', () => {
  it('a `_` column the records lack: named, with the --map that sends it; the pasted --map sends it', async () => {
    const file = join(dir, 'proto.csv');
    writeFileSync(file, 'email,__proto__,_line\nproto1@left.test,p1,2\n');
    const first = await crm(['batch', 'contacts', file]);
    expect(first.code, first.stderr).toBe(0);
    const said =
      /leaving out "__proto__": a column whose name begins with _ .*?(--map "__proto__=__proto__") sends it/.exec(
        first.stderr.replace(/\s+/g, ' '),
      );
    expect(said, first.stderr).not.toBeNull();
    // crm's own `_line` is not named: crm's files add it
    expect(first.stderr).not.toMatch(/"_line"/);
    const [created] = await held('proto1@left.test');
    expect(Object.hasOwn(created!, '__proto__')).toBe(false);

    const again = join(dir, 'proto2.csv');
    writeFileSync(again, 'email,__proto__\nproto2@left.test,p2\n');
    const mapped = await crm(['batch', 'contacts', again, '--map', '__proto__=__proto__']);
    expect(mapped.code, mapped.stderr).toBe(0);
    expect(mapped.stderr).not.toMatch(/leaving out "__proto__"/);
    const [sent] = await held('proto2@left.test');
    expect(Object.getOwnPropertyDescriptor(sent!, '__proto__')?.value).toBe('p2');
  });

  it('an NDJSON reconcile that updates owner_id does not say it leaves it out', async () => {
    await api('POST', '/contacts', { email: 'owner@left.test', first_name: 'O' });
    const file = join(dir, 'owner.ndjson');
    writeFileSync(file, `${stringifyJson({ email: 'owner@left.test', owner_id: 'usr_other' })}\n`);
    const run = await crm(['batch', 'contacts', file, '--match', 'email', '--dry-run', '-o', 'json']);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ update: 1, changes: { owner_id: 1 } });
    expect(run.stderr).not.toMatch(/leaving out owner_id/);
  });
});
