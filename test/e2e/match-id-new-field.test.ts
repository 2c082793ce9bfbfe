// Issue 29's re-trial: `--match id` on a small file reads one record per row, and the column check used those
// records' fields alone: a column of a field thousands of other records hold was called new ("no contacts record
// has it yet"). The check also reads the collection's page, as a create's does.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiRecord } from '../../src/api/envelopes.js';
import { apiData } from '../helpers/api-data.js';
import { runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir('crm-match-id-field-');
let t: TestSandbox;
beforeAll(async () => {
  t = await startTestSandbox({ rateLimit: 1_000_000, orgRateLimit: 1_000_000 });
});
afterAll(async () => t?.close());

describe('--match id of a record lacking a field other records hold', () => {
  it('the field is not called new; a field no record holds still is', async () => {
    // more than a page: a small file is then read one GET per id (after one list page)
    for (const start of [0, 100]) {
      const items = Array.from({ length: 100 }, (_, i) => ({ email: `held.${start + i}@x.test`, zip: '00501' }));
      await apiData(t, 'POST', '/contacts/batch', items);
    }
    const bare = (await apiData(t, 'POST', '/contacts', { email: 'bare@x.test' })) as ApiRecord;
    const path = join(dir, 'fix.csv');
    writeFileSync(path, `id,zip,shoe_size\n${String(bare.id)},02134,44\n`);
    const r = await runCrm(['-o', 'json', 'batch', 'contacts', path, '--match', 'id'], {
      env: t.env('admin'),
      cwd: dir,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ updated: 1, read_requests: 2 });
    const told = r.stderr.replace(/\s+/g, ' ');
    expect(told).toMatch(/"shoe_size" \(field shoe_size\): no contacts record has it yet/);
    expect(told).not.toMatch(/"zip" \(field zip\)/);
    expect((await apiData(t, 'GET', `/contacts/${String(bare.id)}`)) as ApiRecord).toMatchObject({ zip: '02134' });
  });
});
