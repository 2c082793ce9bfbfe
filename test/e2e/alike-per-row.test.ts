// Issue 29, from its trial: a run that sends a request per row (--update, --match) had no first-chunk stop:
// when every row fails alike (a column mapped to the wrong field, a value the server refuses) it sent all of
// them. Now the first 10 rows answered, all failing with one same error, stop the run (exit 9) with the way
// on, as a create's first chunk does; a run where a row goes through does not stop.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir('crm-alike-rows-');
let t: TestSandbox;
const ids: string[] = [];
beforeAll(async () => {
  t = await startTestSandbox({ rateLimit: 1_000_000, orgRateLimit: 1_000_000 });
  for (let i = 0; i < 60; i++) {
    const res = await fetch(`${t.sb.baseUrl}/contacts`, {
      method: 'POST',
      headers: { 'X-Service-Api-Key': t.sb.keys.admin, 'content-type': 'application/json' },
      body: JSON.stringify({ email: `alike.${i}@example.com`, first_name: `A${i}` }),
    });
    ids.push(((await res.json()) as { data: { id: string } }).data.id);
  }
});
afterAll(async () => t?.close());

const crm = (args: string[]) => runCrm(args, { env: t.env('admin'), cwd: dir, timeoutMs: 60_000 });
const writes = async (since: number) =>
  ((await t.control('/requests')) as Array<{ method: string }>).slice(since).filter((r) => r.method === 'PATCH').length;
const logLength = async () => ((await t.control('/requests')) as unknown[]).length;
const file = (name: string, rows: string[]) => {
  const path = join(dir, name);
  writeFileSync(path, `id,email\n${rows.join('\n')}\n`);
  return path;
};

describe('rows sent a request each, all failing alike', () => {
  it.each([
    ['--update', ['--update']],
    ['--match id', ['--match', 'id', '--yes']],
  ])('%s: stops after the first 10 answered, the rest not sent, exit 9 and the way on', async (_name, flags) => {
    const p = file(
      `bad-${flags[0]}.csv`,
      ids.slice(0, 50).map((id) => `${id},not-an-address`),
    );
    const before = await logLength();
    const r = await crm(['-o', 'json', 'batch', 'contacts', p, ...flags]);
    expect(r.code, r.stderr).toBe(9);
    // the first 10, and those already in flight (4 at a time): never the 50
    expect(await writes(before)).toBeLessThan(15);
    expect(r.stderr.replace(/\s+/g, ' ')).toMatch(
      /stopped after the first 10 rows answered: they all failed with the same error \(VALIDATION_FAILED/,
    );
    expect(r.stderr).toMatch(/the rest of the file was not sent \(it would fail alike\)/);
  });

  it('one row of the first 10 going through: no stop, every row sent', async () => {
    const rows = ids
      .slice(0, 30)
      .map((id, i) => `${id},${i === 3 ? `alike.fixed.${i}@example.com` : 'not-an-address'}`);
    const before = await logLength();
    const r = await crm(['-o', 'json', 'batch', 'contacts', file('mixed.csv', rows), '--update']);
    expect(r.code, r.stderr).toBe(9);
    expect(await writes(before)).toBe(30);
    expect(r.stderr).not.toMatch(/stopped after the first/);
  });
});
