// End to end (issue 18): a create's columns are checked against the fields the CRM's records have (one page
// read) before anything is sent; --dry-run shows the header-to-field mapping; a run whose first answered
// chunk failed every row with the same error stops there instead of sending the rest to fail alike.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crmOnPath, paste, runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';

let t: TestSandbox;
let dir: string;
beforeAll(async () => {
  t = await startTestSandbox({ rateLimit: 1_000_000, orgRateLimit: 1_000_000 });
  dir = mkdtempSync(join(tmpdir(), 'crm-batch-columns-'));
  // the CRM holds a few contacts: their fields are what a file's columns are checked against
  for (const i of [1, 2, 3]) {
    const res = await fetch(`${t.sb.baseUrl}/contacts`, {
      method: 'POST',
      headers: { 'X-Service-Api-Key': t.sb.keys.admin, 'content-type': 'application/json' },
      body: JSON.stringify({ email: `seed.${i}@example.com`, first_name: `Seed ${i}`, last_name: 'Person' }),
    });
    expect(res.status).toBe(201);
  }
});
afterAll(async () => {
  await t?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const crm = (args: string[]) => runCrm(args, { env: t.env('admin'), cwd: dir, timeoutMs: 60_000 });
type Logged = { method: string; path: string; query?: unknown };
const log = async (): Promise<Logged[]> => (await t.control('/requests')) as Logged[];
/** the requests the sandbox saw since `before` (a log length) */
const since = async (before: number): Promise<Logged[]> => (await log()).slice(before);
const posts = (l: Logged[]) => l.filter((r) => r.method === 'POST' && r.path.endsWith('/contacts/batch')).length;
const contactsCount = async (): Promise<number> =>
  ((await t.control('/stats')) as { records: { contacts: number } }).records.contacts;

/** `n` rows of First Name,<email header>, emails tagged; `blankEvery`: every such row has no email */
function csv(name: string, n: number, emailHeader = 'E-mail Address', blankEvery = 0): string {
  const tag = name.replace(/\W/g, '');
  const lines = [`First Name,${emailHeader}`];
  for (let i = 1; i <= n; i++)
    lines.push(`P${i},${blankEvery && i % blankEvery === 0 ? '' : `${tag}.${i}@example.com`}`);
  const p = join(dir, `${name}.csv`);
  writeFileSync(p, `${lines.join('\n')}\n`);
  return p;
}

describe('crm batch checks columns against the fields the CRM has', () => {
  it('E-mail Address is refused before anything is sent (exit 2): did you mean email? use --map "E-mail Address=email"', async () => {
    const p = csv('refused', 30);
    const before = (await log()).length;
    const count = await contactsCount();
    // the dry run refuses it as the run does (issue 29's re-trial: it said every row valid), without sending it
    // back to --dry-run
    const dry = await crm(['batch', 'contacts', p, '--dry-run']);
    expect(dry.code, dry.stderr).toBe(2);
    expect(dry.stderr).toContain(`did you mean email? use --map "E-mail Address=email"`);
    expect(dry.stderr).not.toContain('--dry-run shows');
    const r = await crm(['batch', 'contacts', p]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('--dry-run shows how every column maps');
    expect(r.stderr).toMatch(
      /"E-mail Address" \(field e_mail_address\): no contacts record has it;\n {4}did you mean email\?/,
    );
    expect(r.stderr).toContain(`--map "E-mail Address=email"`);
    expect(r.stderr).toMatch(/nothing was sent/);
    // one page read, no write
    const seen = await since(before);
    expect(seen.map((x) => `${x.method} ${x.path}`)).toEqual(['GET /api/v2/contacts', 'GET /api/v2/contacts']);
    expect(JSON.stringify(seen[0]!.query)).toMatch(/limit.*100/);
    expect(await contactsCount()).toBe(count);
    // the suggested --map, on the same file: another job, every row created
    const fixed = await crm(['-o', 'json', 'batch', 'contacts', p, '--map', 'E-mail Address=email']);
    expect(fixed.code, fixed.stderr).toBe(0);
    expect(JSON.parse(fixed.stdout)).toMatchObject({ rows: 30, created: 30 });
    expect((await t.countByEmail('refused')).size).toBe(30);
  });

  it('--map acknowledges a column as it is: never refused', async () => {
    const p = join(dir, 'ack.csv');
    writeFileSync(p, 'Email,Emails\nack.1@example.com,x\n');
    expect((await crm(['batch', 'contacts', p])).code).toBe(2);
    const r = await crm(['-o', 'json', 'batch', 'contacts', p, '--map', 'Emails=emails']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ rows: 1, created: 1, failed: 0 });
  });

  it('a column no record has and near no field is sent, with a warning (a new custom field)', async () => {
    const p = join(dir, 'custom.csv');
    writeFileSync(p, 'Email,Shoe Size:number\ncustom.1@example.com,42\ncustom.2@example.com,43\n');
    const r = await crm(['-o', 'json', 'batch', 'contacts', p]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ created: 2 });
    expect(r.stderr).toMatch(/"Shoe Size:number" \(field shoe_size\): no contacts record has it yet/);
  });

  it('an empty collection is no check: nothing refused, nothing said (the server answers each row)', async () => {
    const p = join(dir, 'companies.csv');
    writeFileSync(p, 'Nmae,Domian\nAcme,acme.test\n');
    const r = await crm(['-o', 'json', 'batch', 'companies', p]);
    expect(r.code, r.stderr).toBe(9);
    expect(JSON.parse(r.stdout)).toMatchObject({ rows: 1, failed: 1 });
    expect(r.stderr).not.toMatch(/record has/);
  });

  it('--dry-run shows the header-to-field mapping (ignored and read-only columns marked), and -o json has it as mapping', async () => {
    const p = join(dir, 'plan.csv');
    writeFileSync(p, 'id,First Name,E-mail,Score:number,_line,Old\ncon_1,Ada,plan.1@example.com,3,2,x\n');
    const before = (await log()).length;
    const text = await crm(['-o', 'table', 'batch', 'contacts', p, '--dry-run', '--map', 'Old=']);
    // the plan, then the refusal the run would meet (E-mail is near email: exit 2, as the run)
    expect(text.code, text.stderr).toBe(2);
    expect(text.stderr).toContain('did you mean email? use --map "E-mail=email"');
    expect(text.stdout).toContain('Columns:');
    expect(text.stdout).toMatch(/^ {2}First Name +→ first_name \(string\)$/m);
    expect(text.stdout).toMatch(/^ {2}Score:number +→ score \(number\)$/m);
    expect(text.stdout).toMatch(/^ {2}id +left out: the server sets it$/m);
    expect(text.stdout).toMatch(/^ {2}_line +ignored$/m);
    expect(text.stdout).toMatch(/^ {2}Old +left out by --map$/m);
    const json = await crm(['-o', 'json', 'batch', 'contacts', p, '--dry-run', '--map', 'Old=']);
    expect(json.code, json.stderr).toBe(2);
    expect(JSON.parse(json.stdout).mapping).toEqual([
      { column: 'id', field: null, type: 'string', ignored: true, read_only: true },
      { column: 'First Name', field: 'first_name', type: 'string', ignored: false, read_only: false },
      { column: 'E-mail', field: 'e_mail', type: 'string', ignored: false, read_only: false },
      { column: 'Score:number', field: 'score', type: 'number', ignored: false, read_only: false },
      { column: '_line', field: null, type: 'string', ignored: true, read_only: false },
      { column: 'Old', field: null, type: 'string', ignored: true, read_only: false },
    ]);
    // a dry run sends nothing; it reads the one page the run types its cells by (issue 28), once per run
    expect((await since(before)).map((x) => `${x.method} ${x.path}`)).toEqual([
      'GET /api/v2/contacts',
      'GET /api/v2/contacts',
    ]);
  });
});

describe('--update: the columns other than the id are checked the same way', () => {
  it('Frist Name is refused (did you mean first_name?), no PATCH sent; the right column updates', async () => {
    const res = await fetch(`${t.sb.baseUrl}/contacts?limit=2`, { headers: { 'X-Service-Api-Key': t.sb.keys.admin } });
    const ids = ((await res.json()) as { data: Array<{ id: string }> }).data.map((c) => c.id);
    const p = join(dir, 'upd.csv');
    writeFileSync(p, `id,Frist Name\n${ids.map((id, i) => `${id},Renamed ${i}`).join('\n')}\n`);
    const before = (await log()).length;
    const r = await crm(['batch', 'contacts', p, '--update']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(
      /"Frist Name" \(field frist_name\): no contacts record has it;\n {4}did you mean first_name\? use --map "Frist Name=first_name"/,
    );
    expect((await since(before)).filter((x) => x.method !== 'GET')).toEqual([]);
    const ok = await crm(['-o', 'json', 'batch', 'contacts', p, '--update', '--map', 'Frist Name=first_name']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ updated: 2 });
  });
});

describe('a first chunk whose every row failed alike stops the run', () => {
  it('every row of the first chunk failed with one error: one request, the rest not sent, exit 9 and the way on; the corrected --map then imports every row once', async () => {
    // --map acknowledges the column (so it is not refused): the server then rejects every row alike (email required)
    const p = csv('alike', 250);
    const before = (await log()).length;
    const r = await crm(['-o', 'json', 'batch', 'contacts', p, '--map', 'E-mail Address=e_mail_address']);
    expect(r.code, r.stderr).toBe(9);
    expect(posts(await since(before))).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ rows: 250, created: 0, failed: 100, not_sent: 150 });
    expect(r.stderr).toMatch(
      /stopped after the first chunk: its 100 rows all failed with the same error \(VALIDATION_FAILED/,
    );
    expect(r.stderr).toMatch(/the rest of the file was not sent \(it would fail alike\)/);
    expect(r.stderr).toMatch(/150 not sent yet/);
    expect(r.stderr).toMatch(/--dry-run shows/);
    expect(r.stderr).toContain('--map');
    expect((await t.countByEmail('alike')).size).toBe(0);
    // as the hint says: the corrected mapping is another job, which sends every row
    const fixed = await crm(['-o', 'json', 'batch', 'contacts', p, '--map', 'E-mail Address=email']);
    expect(fixed.code, fixed.stderr).toBe(0);
    expect(JSON.parse(fixed.stdout)).toMatchObject({ rows: 250, created: 250, failed: 0 });
    const counts = await t.countByEmail('alike');
    expect(counts.size).toBe(250);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
  });

  it('a first chunk with rows failing for another reason than the rest (some created) does not stop', async () => {
    const p = csv('mixed', 250, 'Email', 3);
    const before = (await log()).length;
    const r = await crm(['-o', 'json', 'batch', 'contacts', p]);
    expect(r.code, r.stderr).toBe(9);
    expect(posts(await since(before))).toBe(3);
    expect(JSON.parse(r.stdout)).toMatchObject({ rows: 250, created: 167, failed: 83, not_sent: 0 });
    expect(r.stderr).not.toMatch(/stopped after the first chunk/);
  });

  it('the rejects hint of a run with --map keeps the maps: pasted once the row is fixed, it imports it (issue 29 re-trial)', async () => {
    const p = join(dir, 'mapped-rejects.csv');
    writeFileSync(p, 'E-mail Address,First Name\nmapped.ok@example.com,Ok\nnot-an-address,Bad\n');
    const r = await crm(['batch', 'contacts', p, '--map', 'E-mail Address=email']);
    expect(r.code, r.stderr).toBe(9);
    const hint = /fix it there and run `([^`]+)`/.exec(r.stderr.replace(/\s+/g, ' '))?.[1];
    expect(hint).toBe(`crm batch contacts ${p}.rejects.csv --map 'E-mail Address=email'`);
    const rejects = `${p}.rejects.csv`;
    writeFileSync(rejects, readFileSync(rejects, 'utf8').replace('not-an-address', 'mapped.fixed@example.com'));
    const env = { ...t.env('admin'), PATH: `${crmOnPath(dir)}:${process.env.PATH ?? ''}` };
    const pasted = await paste(hint!, { cwd: dir, env });
    expect(pasted.code, pasted.stderr).toBe(0);
    expect((await t.countByEmail('mapped')).get('mapped.fixed@example.com')).toBe(1);
  });
});
