// Issue 28, finding 7 of the new-user trial: `crm contacts list --all -o csv` took its columns from the first record,
// so fields only later records of the page hold were not exported. Against the sandbox: every field of every
// record is a column with the record's value, nothing is said, and the export reconciled back plans nothing.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unguardFormula } from '../../src/output/formula-guard.js';
import { runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';
import { unescapeTsv } from '../helpers/tsv.js';

// the first contact lacks fields the later ones hold: a command's column (last_name) and others (phone, zip)
const MADE = [
  { email: 'first@x.test', first_name: 'Ada' },
  { email: 'second@x.test', first_name: 'Bob', last_name: 'Stone', phone: '+1 555 0100' },
  { email: 'third@x.test', zip: '00501' },
];

const dir = tempDir('crm-csv-fields-');
let t: TestSandbox;
let records: Array<Record<string, string>>; // the sandbox's contacts here: text fields only
beforeAll(async () => {
  t = await startTestSandbox();
  for (const c of MADE) {
    const res = await fetch(`${t.sb.baseUrl}/contacts`, {
      method: 'POST',
      headers: { 'X-Service-Api-Key': t.sb.keys.admin, 'content-type': 'application/json' },
      body: JSON.stringify(c),
    });
    expect(res.status).toBe(201);
  }
  const res = await fetch(`${t.sb.baseUrl}/contacts?limit=100`, { headers: { 'X-Service-Api-Key': t.sb.keys.admin } });
  records = ((await res.json()) as { data: Array<Record<string, string>> }).data;
});
afterAll(async () => {
  await t?.close();
});

/** The cells of a csv/tsv export as records: header → cell (the formula guard undone, as `crm batch` reads it). */
function rowsOf(text: string, format: 'csv' | 'tsv'): Array<Record<string, string>> {
  const [header, ...rows]: string[][] =
    format === 'csv'
      ? parse(text)
      : text
          .slice(0, -1)
          .split('\n')
          .map((line) => line.split('\t').map(unescapeTsv));
  return rows.map((row) => Object.fromEntries(header!.map((f, i) => [f, unguardFormula(row[i]!)])));
}

describe('crm contacts list --all -o csv|tsv: a field the first record lacks', () => {
  it.each(['csv', 'tsv'] as const)(
    '-o %s: every field of every record is in the file, and reads back',
    async (format) => {
      expect(records.map((r) => r.email)).toEqual(MADE.map((c) => c.email)); // the first lacks what the others hold
      const list = await runCrm(['contacts', 'list', '--all', '-o', format], { env: t.env(), timeoutMs: 30_000 });
      expect(list.code, list.stderr).toBe(0);
      expect(list.stderr).toBe('');
      const fields = [...new Set(records.flatMap((r) => Object.keys(r)))];
      expect(rowsOf(list.stdout, format)).toEqual(
        records.map((r) => Object.fromEntries(fields.map((f) => [f, r[f] ?? '']))),
      );
      // the command's columns first, in their order
      expect(
        list.stdout
          .split('\n')[0]!
          .split(format === 'csv' ? ',' : '\t')
          .slice(0, 5),
      ).toEqual(['id', 'email', 'first_name', 'last_name', 'owner_id']);

      const file = join(dir, `contacts.${format}`);
      writeFileSync(file, list.stdout);
      const plan = await runCrm(['batch', 'contacts', file, '--match', 'email', '--dry-run', '-o', 'json'], {
        env: t.env(),
        timeoutMs: 30_000,
      });
      expect(plan.code, plan.stderr).toBe(0);
      const { create, update, unchanged, invalid, changes } = JSON.parse(plan.stdout) as Record<string, unknown>;
      expect({ create, update, unchanged, invalid, changes }).toEqual({
        create: 0,
        update: 0,
        unchanged: MADE.length,
        invalid: 0,
        changes: {},
      });
    },
  );
});
