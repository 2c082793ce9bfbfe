// Issue 29, from its trial: `--match email` on a file with no column for email was refused only after the
// whole file was checked row by row (a 200,000-row file, minutes), and its hint offered `--match mail` (a
// field no record has: every row a create) or `--map "COLUMN=email"` without naming the column. Now the header alone decides, before any row is read: a file
// whose rows would be refused for something else (bytes that are not text) is refused for its columns,
// exit 2, nothing sent, the hint naming the column as email's.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir('crm-match-column-');
let t: TestSandbox;
beforeAll(async () => {
  t = await startTestSandbox({ rateLimit: 1_000_000, orgRateLimit: 1_000_000, seedRecords: { contacts: 5 } });
});
afterAll(async () => t?.close());

describe('--match names a field no column holds', () => {
  it('is refused from the header, before the rows are read (rows of NUL bytes are not what it says)', async () => {
    const file = join(dir, 'no-email.csv');
    writeFileSync(file, `Name,Mail\n${'\0\0,\0\0\n'.repeat(1000)}`);
    const r = await runCrm(['batch', 'contacts', file, '--match', 'email'], { env: t.env('admin'), cwd: dir });
    expect(r.code, r.stderr).toBe(2);
    const text = r.stderr.replace(/\s+/g, ' ');
    expect(text).not.toMatch(/not a text file/);
    expect(text).toMatch(/has no column for "email", which --match names; nothing was sent/);
    // the records have email and no `mail`: the column is offered as email's, never --match mail (every row a create)
    expect(text).toMatch(/the records have email: if that column holds it, add --map "Mail=email"/);
    expect(text).not.toMatch(/--match mail/);
  });

  it('a --map of a column of names to an id field is warned of, in the plan and in a create', async () => {
    const file = join(dir, 'company.csv');
    writeFileSync(file, 'Email Address,Company\nids.from.names@example.com,"Acme, Inc."\n');
    const env = { env: t.env('admin'), cwd: dir };
    const args = ['--map', 'Email Address=email', '--map', 'Company=company_id'];
    for (const run of [
      ['batch', 'contacts', file, '--match', 'email', '--dry-run', ...args],
      // a create reads the records' fields when it runs (a dry run reads nothing)
      ['batch', 'contacts', file, ...args],
    ]) {
      const r = await runCrm(run, env);
      expect(r.stderr.replace(/\s+/g, ' ')).toMatch(
        /"Company" fills company_id, a field of ids: each cell is sent as an id/,
      );
    }
  });
});
