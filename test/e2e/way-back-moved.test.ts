// Issue 29's re-trial: a later run of a file moves the earlier run's undo and created files aside (each run's way
// back is its own), and said nothing; the undo command the earlier run printed then failed "no such file", naming
// nothing. The move is said, with both names, and that error names where the file is now.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir('crm-way-back-moved-');
let t: TestSandbox;
beforeAll(async () => {
  t = await startTestSandbox({ rateLimit: 1_000_000, orgRateLimit: 1_000_000 });
});
afterAll(async () => t?.close());

const crm = (args: string[]) => runCrm(args, { env: t.env('admin'), cwd: dir, timeoutMs: 60_000 });

describe('an earlier run’s way back, moved aside by a later run', () => {
  it('the move is said; the earlier printed undo command, pasted, names where the file is now', async () => {
    const path = join(dir, 'people.csv');
    writeFileSync(path, 'email,title\nmoved.1@example.com,First\n');
    const first = await crm(['batch', 'contacts', 'people.csv', '--match', 'email']);
    expect(first.code, first.stderr).toBe(0);
    writeFileSync(path, 'email,title\nmoved.1@example.com,Second\n');
    const second = await crm(['batch', 'contacts', 'people.csv', '--match', 'email']);
    expect(second.code, second.stderr).toBe(0);
    const told = second.stderr.replace(/\s+/g, ' ');
    const aside = /people\.csv\.created\.csv is now (people\.csv\.created\.\d{8}T\d{6}Z(?:-\d+)?\.csv)/.exec(told)?.[1];
    expect(aside, told).toBeDefined();

    // the first run's printed `--delete` of its created file, pasted after the second run
    const pasted = await crm(['batch', 'contacts', 'people.csv.created.csv', '--delete', '--yes']);
    expect(pasted.code, pasted.stderr).toBe(2);
    expect(pasted.stderr).toContain('cannot read people.csv.created.csv: no such file');
    expect(pasted.stderr.replace(/\s+/g, ' ')).toContain(`moved people.csv.created.csv aside`);
    expect(pasted.stderr).toContain(aside!);
  });
});
