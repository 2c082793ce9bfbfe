// Issue 29, from its trial: a --match run whose rows left are all ambiguous (two records hold the key) exited 9
// with "fix those rows in the file", which no edit of the row settles. The hint now says what does: the
// records' ids are in the ambiguous file's _candidates column; merge or delete the extra records, or send the
// rows by id. Followed (a row with one of those ids, --match id), the row is sent to that record alone.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quoteCsv } from '../../src/output/csv.js';
import { runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir('crm-ambiguous-hint-');
let t: TestSandbox;
beforeAll(async () => {
  t = await startTestSandbox({ rateLimit: 1_000_000, orgRateLimit: 1_000_000 });
});
afterAll(async () => t?.close());

const crm = (args: string[]) => runCrm(args, { env: t.env('admin'), cwd: dir, timeoutMs: 60_000 });
async function post(body: unknown): Promise<string> {
  const res = await fetch(`${t.sb.baseUrl}/contacts`, {
    method: 'POST',
    headers: { 'X-Service-Api-Key': t.sb.keys.admin, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return ((await res.json()) as { data: { id: string } }).data.id;
}
const record = async (id: string) =>
  (
    (await (
      await fetch(`${t.sb.baseUrl}/contacts/${id}`, { headers: { 'X-Service-Api-Key': t.sb.keys.admin } })
    ).json()) as { data: Record<string, unknown> }
  ).data;
const firstName = async (id: string) =>
  (
    (await (
      await fetch(`${t.sb.baseUrl}/contacts/${id}`, { headers: { 'X-Service-Api-Key': t.sb.keys.admin } })
    ).json()) as { data: { first_name: string } }
  ).data.first_name;

describe('rows left ambiguous', () => {
  it('the hint names the _candidates and --match id, not an edit of the row; followed, the row goes to that record', async () => {
    const a = await post({ email: 'twice@amb.test', first_name: 'A' });
    const b = await post({ email: 'TWICE@amb.test', first_name: 'B' });
    const file = join(dir, 'f.csv');
    writeFileSync(file, 'email,first_name\ntwice@amb.test,C\n');
    for (const _run of [1, 2]) {
      const r = await crm(['batch', 'contacts', file, '--match', 'email']);
      expect(r.code, r.stderr).toBe(9);
      const text = r.stderr.replace(/\s+/g, ' ');
      expect(text).toMatch(/1 row of 1 not made to agree: 1 ambiguous/);
      expect(text).toMatch(/the _candidates column of .*f\.csv\.ambiguous\.csv/);
      expect(text).toMatch(
        /merge or delete the extra records in the CRM, then run the same command again; or send those rows by their record's id \(an id column, --match id: by their key they stay ambiguous while two records share it\)/,
      );
      expect(text).not.toMatch(/rows that agree by then need no request/);
      expect(text).not.toMatch(/fix the failed/);
      // people read the summary: counts and time as such
      expect(r.stderr).toMatch(/│ elapsed +│ \d+\.\ds/);
    }
    const ambiguous = parse<Record<string, string>>(readFileSync(`${file}.ambiguous.csv`, 'utf8'), {
      columns: true,
      bom: true,
    });
    expect(ambiguous[0]!._candidates!.split(';').sort()).toEqual([a, b].sort());
    const byId = join(dir, 'by-id.csv');
    // the ambiguous file's row (its email as the file spelt it) with one of the ids: the email's case is not a change
    writeFileSync(byId, `id,email,first_name\n${a},TWICE@amb.test,C\n`);
    const r = await crm(['batch', 'contacts', byId, '--match', 'id']);
    expect(r.code, r.stderr).toBe(0);
    expect([await firstName(a), await firstName(b)]).toEqual(['C', 'B']);
    expect((await record(a)).email).toBe('twice@amb.test');
  });
  it("an NDJSON run's ambiguous file, given an id column as the hint says, sends the row's own fields and values exactly", async () => {
    const held = { 'ratio:number': '5', score: 1, flag: false, tags: ['z'] };
    const a = await post({ email: 'nd@amb.test', ...held });
    await post({ email: 'ND@amb.test', ...held });
    const file = join(dir, 'rows.ndjson');
    const row = { email: 'nd@amb.test', 'ratio:number': '6', score: 7, flag: true, tags: ['a', 'b'] };
    writeFileSync(file, `${JSON.stringify(row)}\n`);
    const r = await crm(['batch', 'contacts', file, '--match', 'email']);
    expect(r.code, r.stderr).toBe(9);
    const table: string[][] = parse(readFileSync(`${file}.ambiguous.csv`, 'utf8'), { bom: true });
    const [header, ...lines] = table;
    // the hint's way: an id column, --match id
    const byId = join(dir, 'rows-by-id.csv');
    writeFileSync(
      byId,
      [
        ['id', ...header!],
        [a, ...lines[0]!],
      ]
        .map((l) => l.map(quoteCsv).join(','))
        .join('\n') + '\n',
    );
    const sent = await crm(['batch', 'contacts', byId, '--match', 'id']);
    expect(sent.code, sent.stderr).toBe(0);
    const got = await record(a);
    expect({ ...got, id: undefined, created_at: undefined, updated_at: undefined, owner_id: undefined }).toEqual({
      ...{ id: undefined, created_at: undefined, updated_at: undefined, owner_id: undefined },
      ...row,
    });
  });
});
