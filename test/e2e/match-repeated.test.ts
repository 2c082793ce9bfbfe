// End to end (issue 29): a line pasted twice is not an error. With `--match`, a row that is its key's first row
// again, exactly (the same record after --map and types), is skipped and counted, never sent and never in the rejects
// file, exit 0 — as a plain import skips it; only a repeated key with other values is a duplicate (rejects file, exit
// 9). Over time: the rerun plans nothing and exits 0. Counted from the sandbox's request log and store.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logLength, requestLog } from '../helpers/bulk.js';
import { runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';

let t: TestSandbox;
const dir = tempDir('crm-match-repeated-');
beforeAll(async () => {
  t = await startTestSandbox({ rateLimit: 1_000_000, orgRateLimit: 1_000_000 });
});
afterAll(async () => t?.close());

const crm = (args: string[]) => runCrm(args, { env: t.env('admin'), cwd: dir, timeoutMs: 60_000 });
const file = (name: string, text: string): string => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const writes = async (since: number) => (await requestLog(t, since)).filter((e) => e.method !== 'GET');

describe('crm batch --match: a line pasted twice', () => {
  it('is skipped and counted (exit 0, no rejects file, one record); the rerun plans nothing and exits 0', async () => {
    // an export's usual mess: the second row pasted twice, the same column renamed by --map
    const path = file(
      'pasted.csv',
      'E-mail,First Name\r\npaste.1@example.com,Ada\r\npaste.2@example.com,Bob\r\npaste.2@example.com,Bob\r\n',
    );
    const planPath = join(dir, 'pasted.plan.csv');
    const args = ['batch', 'contacts', path, '--map', 'E-mail=email', '--match', 'email'];
    const since = await logLength(t);
    const r = await crm(['-o', 'json', ...args]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      rows: 3,
      created: 2,
      duplicate: 0,
      invalid: 0,
      failed: 0,
      skipped: 1,
      rejects_file: null,
    });
    expect(r.stderr).toContain(
      '1 row repeats an earlier row exactly and is not sent (counted as skipped): line 4 repeats line 3',
    );
    expect(r.stderr).not.toMatch(/not made to agree/);
    expect(existsSync(`${path}.rejects.csv`)).toBe(false);
    // one create of the two distinct rows
    const sent = await writes(since);
    expect(sent.map((e) => e.method)).toEqual(['POST']);
    expect(await t.countByEmail('paste')).toEqual(
      new Map([
        ['paste.1@example.com', 1],
        ['paste.2@example.com', 1],
      ]),
    );

    // the rerun: nothing to send, the repeated line has its own action in the plan file, exit 0
    const again = await crm([...args, '--plan', planPath]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/Created 0, updated 0, 2 unchanged, 1 skipped as repeating an earlier row \(3 rows/);
    const plan = parse<Record<string, string>>(readFileSync(planPath, 'utf8'), { columns: true });
    expect(plan.map((p) => [p._line, p._action])).toEqual([
      ['2', 'unchanged'],
      ['3', 'unchanged'],
      ['4', 'repeated'],
    ]);
    expect(plan[2]!._changes).toBe('repeats line 3 exactly: not sent');
    const dry = await crm(['-o', 'json', ...args, '--dry-run']);
    expect(JSON.parse(dry.stdout)).toMatchObject({ unchanged: 2, repeated: 1, duplicate: 0, requests: 0 });
    expect(await writes(since)).toHaveLength(1);
  });

  it('a repeated key with other values: no row of it is sent, the first included (never a guess); rejects file, exit 9', async () => {
    const path = file(
      'conflict.csv',
      'email,title\nclash.1@example.com,CEO\nclash.1@example.com,CTO\nclash.1@example.com,CTO\nCLASH.1@example.com,CEO\n',
    );
    const r = await crm(['-o', 'json', 'batch', 'contacts', path, '--match', 'email']);
    expect(r.code, r.stderr).toBe(9);
    // the first row was created before (issue 29's re-trial: a file that disagrees with itself wrote its first row);
    // the last is the first again with its email in other letters: the same row, skipped
    expect(JSON.parse(r.stdout)).toMatchObject({ rows: 4, created: 0, duplicate: 3, failed: 0 });
    expect(r.stderr).toMatch(/3 rows of 4 not made to agree/);
    const rejects = parse<Record<string, string>>(readFileSync(`${path}.rejects.csv`, 'utf8'), { columns: true });
    expect(rejects.map((x) => [x._line, x._error_code])).toEqual([
      ['2', 'DUPLICATE_KEY'],
      ['3', 'DUPLICATE_KEY'],
      ['4', 'DUPLICATE_KEY'],
    ]);
    expect(rejects[0]!._error_message).toBe(
      'lines 3 and 4 have the same email with other values: no row of it was sent (which one is right is not for crm to guess); keep the right one',
    );
    expect((await t.countByEmail('clash')).get('clash.1@example.com')).toBeUndefined();
  });
});
