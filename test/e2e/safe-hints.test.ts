// End to end (issue 29): every column hint is safe to follow. A hint is a command someone will paste, so each
// case pastes what crm printed (through sh, as a user would) and checks the store after it: a Zip column is
// never offered a true/false field, a --match naming a --map'ped column is answered with the field, and a
// misspelt --map column is answered with the header's column.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crmOnPath, paste, runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';

let t: TestSandbox;
let dir: string;
let path: string;
beforeAll(async () => {
  t = await startTestSandbox({ rateLimit: 1_000_000, orgRateLimit: 1_000_000 });
  dir = mkdtempSync(join(tmpdir(), 'crm-safe-hints-'));
  path = `${crmOnPath(dir)}:${process.env.PATH ?? ''}`;
  // the CRM's contacts hold vip as true/false and score as a number
  for (const i of [1, 2, 3]) {
    const body = { email: `seed.${i}@example.com`, first_name: `Seed ${i}`, vip: i === 1, score: i };
    const res = await fetch(`${t.sb.baseUrl}/contacts`, {
      method: 'POST',
      headers: { 'X-Service-Api-Key': t.sb.keys.admin, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(201);
  }
});
afterAll(async () => {
  await t?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const crm = (args: string[]) => runCrm(args, { env: t.env('admin'), cwd: dir, timeoutMs: 60_000 });
/** the hint's command after `use `, pasted onto `crm batch contacts FILE` as a user would */
const follow = (base: string, hint: string) =>
  paste(`${base} ${hint}`, { cwd: dir, env: t.env('admin', { PATH: path }) });
const hintAfterUse = (stderr: string): string => /use (--(?:map|match) (?:"[^"]*"|'[^']*'|\S+))/.exec(stderr)![1]!;

/** the contacts whose email starts with `tag.`, by email */
async function stored(tag: string): Promise<Map<string, Record<string, unknown>>> {
  const res = await fetch(`${t.sb.baseUrl}/contacts?limit=100`, { headers: { 'X-Service-Api-Key': t.sb.keys.admin } });
  const all = ((await res.json()) as { data: Array<Record<string, unknown>> }).data;
  return new Map(all.filter((c) => String(c.email).startsWith(`${tag}.`)).map((c) => [String(c.email), c]));
}

function file(name: string, text: string): string {
  writeFileSync(join(dir, name), text);
  return name;
}

describe('column hints are safe to follow (issue 29)', () => {
  it('a Zip column is never offered vip (true/false): sent as a new field with a warning saying how to name it or leave it out', async () => {
    const p = file('zip.csv', 'First Name,Email,Zip\nAl,zip.1@example.com,02139\nBo,zip.2@example.com,94110\n');
    const r = await crm(['-o', 'json', 'batch', 'contacts', p]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/did you mean/);
    expect(r.stderr).toMatch(/"Zip" \(field zip\): no contacts record has it yet/);
    expect(r.stderr).toContain('--map "Zip=FIELD"');
    expect(r.stderr).toContain('--map "Zip="');
    const made = await stored('zip');
    expect(made.get('zip.1@example.com')).toMatchObject({ zip: '02139' });
    // the other way the warning gives: the column left out
    const q = file('zip2.csv', 'First Name,Email,Zip\nCy,zipout.1@example.com,02139\n');
    const out = await follow(`crm batch contacts ${q}`, '--map "Zip="');
    expect(out.code, out.stderr).toBe(0);
    expect(Object.hasOwn((await stored('zipout')).get('zipout.1@example.com')!, 'zip')).toBe(false);
  });

  it('the same with --match: a warning, never "did you mean vip"; the rows made to agree', async () => {
    const p = file('zipm.csv', 'Email,Zip\nzipm.1@example.com,02139\nseed.1@example.com,10001\n');
    const r = await crm(['-o', 'json', 'batch', 'contacts', p, '--match', 'email']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/did you mean/);
    expect((await stored('zipm')).get('zipm.1@example.com')).toMatchObject({ zip: '02139' });
    expect((await stored('seed')).get('seed.1@example.com')).toMatchObject({ zip: '10001', vip: true });
  });

  it('a column of numbers near a number field is refused with its --map; followed, the numbers are numbers', async () => {
    const p = file('scor.csv', 'Email,Scor\nscor.1@example.com,7\nscor.2@example.com,12\n');
    const r = await crm(['batch', 'contacts', p]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/did you mean score\? use --map "Scor=score"/);
    const ok = await follow(`crm batch contacts ${p}`, hintAfterUse(r.stderr));
    expect(ok.code, ok.stderr).toBe(0);
    expect((await stored('scor')).get('scor.2@example.com')).toMatchObject({ score: 12 });
  });

  it('--match "Email Address" --map "Email Address=email": the hint is --match email, which makes the rows agree', async () => {
    const p = file('key.csv', 'First Name,Email Address\nKe,key.1@example.com\nSeed One,seed.2@example.com\n');
    const base = `crm batch contacts ${p} --map "Email Address=email"`;
    const r = await crm(['batch', 'contacts', p, '--match', 'Email Address', '--map', 'Email Address=email']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('use --match email');
    expect(r.stderr).not.toContain('COLUMN=');
    const ok = await follow(base, hintAfterUse(r.stderr));
    expect(ok.code, ok.stderr).toBe(0);
    const made = (await stored('key')).get('key.1@example.com')!;
    expect(made).toMatchObject({ first_name: 'Ke' });
    expect(Object.hasOwn(made, 'email_address')).toBe(false);
    expect((await stored('seed')).get('seed.2@example.com')).toMatchObject({ first_name: 'Seed One' });
  });

  it('--map "Emial Address=email": the header\'s nearest column and the --map that names it', async () => {
    const p = file('emial.csv', 'First Name,Email Address\nEm,emial.1@example.com\n');
    const r = await crm(['batch', 'contacts', p, '--map', 'Emial Address=email']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('did you mean "Email Address"? use --map "Email Address=email"');
    const ok = await follow(`crm batch contacts ${p}`, hintAfterUse(r.stderr));
    expect(ok.code, ok.stderr).toBe(0);
    expect((await stored('emial')).get('emial.1@example.com')).toMatchObject({ first_name: 'Em' });
  });
});
