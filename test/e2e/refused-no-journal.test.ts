// A run refused before it sends anything leaves no journal (issue 28, from the trial): its header pinned the column
// mapping and typing of that moment, so once the records' fields had changed the same command was refused as "used
// another --chunk-size or column mapping" though nothing had ever been sent. The journal is now written with the
// first request: the rerun plans afresh, and a journal that holds sent requests works as before.
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';

let t: TestSandbox;
const dir = tempDir('crm-refused-no-journal-');
beforeAll(async () => {
  t = await startTestSandbox({ rateLimit: 1_000_000, orgRateLimit: 1_000_000 });
});
afterAll(async () => {
  await t?.close();
});

const crm = (args: string[]) => runCrm(args, { env: t.env('admin'), cwd: dir, timeoutMs: 60_000 });
const api = async (method: string, path: string, body: unknown): Promise<Record<string, unknown>> => {
  const res = await fetch(`${t.sb.baseUrl}${path}`, {
    method,
    headers: { 'X-Service-Api-Key': t.sb.keys.admin, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status, `${method} ${path}`).toBeLessThan(300);
  return ((await res.json()) as { data: Record<string, unknown> }).data;
};
/** the journals in crm's journal folder (CRM_CONFIG_DIR/imports) */
const journals = (): string[] => {
  const imports = join(t.configDir, 'imports');
  return existsSync(imports) ? readdirSync(imports).filter((n) => n.endsWith('.jsonl')) : [];
};
type Logged = { method: string; path: string };
const writes = async (): Promise<number> =>
  ((await t.control('/requests')) as Logged[]).filter((r) => r.method !== 'GET' && r.path.includes('/contacts')).length;

it('a run refused by the column check leaves no journal; after the records change, the same command sends', async () => {
  // the one record: a fax line, a score held as text
  const seed = await api('POST', '/contacts', { email: 'seed@refused.test', faxline: '1', score: 'high' });
  const file = join(dir, 'people.csv');
  writeFileSync(file, 'email,Faxlin,score\na@refused.test,2,37\nb@refused.test,3,38\n');
  const command = ['batch', 'contacts', file];

  // a dry run writes no journal
  const dry = await crm([...command, '--dry-run']);
  expect(dry.code, dry.stderr).toBe(2); // refused as the run is (its plan shown first)
  expect(journals()).toEqual([]);

  const before = await writes();
  const refused = await crm(command);
  expect(refused.code, refused.stderr).toBe(2);
  expect(refused.stderr).toMatch(/"Faxlin" \(field faxlin\): no contacts record has it;\n {4}did you mean faxline\?/);
  expect(await writes()).toBe(before);
  expect(journals()).toEqual([]);

  // a colleague's change: the records now have a field named Faxlin as written (the column maps to it, not to
  // faxlin), and hold score as a number (the column's cells are sent as numbers)
  await api('PATCH', `/contacts/${String(seed.id)}`, { Faxlin: 'x', score: 5 });

  const sent = await crm([...command, '-o', 'json']);
  expect(sent.code, sent.stderr).toBe(0);
  expect(sent.stderr).not.toMatch(/another --chunk-size or column mapping|changed since/);
  expect(JSON.parse(sent.stdout)).toMatchObject({ rows: 2, created: 2, failed: 0 });
  expect(journals()).toHaveLength(1);
  const list = await fetch(`${t.sb.baseUrl}/contacts?limit=100`, { headers: { 'X-Service-Api-Key': t.sb.keys.admin } });
  const made = ((await list.json()) as { data: Array<Record<string, unknown>> }).data.find(
    (c) => c.email === 'a@refused.test',
  );
  expect(made).toMatchObject({ Faxlin: '2', score: 37 });

  // the journal that holds the requests sent works as before: the same command sends nothing again
  const again = await crm([...command, '-o', 'json']);
  expect(again.code, again.stderr).toBe(0);
  expect(again.stderr).toMatch(/was already imported into contacts/);
  expect(JSON.parse(again.stdout)).toMatchObject({ created: 0, skipped: 2 });
  expect(await writes()).toBe(before + 1 + 1);
});
