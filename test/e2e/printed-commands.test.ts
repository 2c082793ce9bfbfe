// Commands crm prints for the user to run next keep the flags that chose the server: run as printed,
// with a default profile pointing elsewhere, they reach the same CRM (a trial found the rejects hint
// and the "More results" hint without --profile: the pasted command wrote to the default profile's
// server, another CRM).
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { crmOnPath, cleanEnv, runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';

let t: TestSandbox;
let dir: string;
let binDir: string;
beforeAll(async () => {
  t = await startTestSandbox({ seed: 11, rateLimit: 1_000_000, orgRateLimit: 1_000_000 });
  dir = mkdtempSync(join(tmpdir(), 'crm-printed-'));
  binDir = crmOnPath(dir);
  const env = { CRM_CONFIG_DIR: t.configDir };
  // the default profile points at a port where nothing listens; `work` at the sandbox
  for (const [name, url, extra] of [
    ['elsewhere', 'http://127.0.0.1:9/api/v2', ['--default']],
    ['work', t.sb.baseUrl, []],
  ] as const) {
    const r = await runCrm(['keys', 'add', name, '--base-url', url, ...extra], { env, input: `${t.sb.keys.admin}\n` });
    expect(r.code, r.stderr).toBe(0);
  }
});
afterAll(async () => {
  await t?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const crm = (args: string[]) => runCrm(args, { env: { CRM_CONFIG_DIR: t.configDir }, cwd: dir, timeoutMs: 30_000 });

/** Runs a printed command line as a user pastes it, with `crm` on PATH. */
function sh(line: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'sh',
      ['-c', line],
      { cwd: dir, env: cleanEnv({ CRM_CONFIG_DIR: t.configDir, PATH: `${binDir}:${process.env.PATH}` }) },
      (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

it('"More results" keeps --profile and --param: the printed command shows the next page of the same list', async () => {
  const first = await crm([
    '--profile',
    'work',
    '-o',
    'table',
    'contacts',
    'list',
    '--limit',
    '2',
    '--param',
    'owner_id=usr_admin',
  ]);
  expect(first.code, first.stderr).toBe(0);
  const hint = /More results: (crm .*?) \(or --all/.exec(first.stderr)?.[1];
  expect(hint, first.stderr).toMatch(
    /^crm --profile work contacts list --param owner_id=usr_admin --limit 2 --cursor \S+$/,
  );
  const next = await sh(`${hint!} -o json`);
  expect(next.code, next.stderr).toBe(0);
  const all = JSON.parse(
    (
      await crm([
        '--profile',
        'work',
        '-o',
        'json',
        'contacts',
        'list',
        '--limit',
        '4',
        '--param',
        'owner_id=usr_admin',
      ])
    ).stdout,
  ) as Array<{ id: string }>;
  expect((JSON.parse(next.stdout) as Array<{ id: string }>).map((r) => r.id)).toEqual(all.slice(2, 4).map((r) => r.id));
});

it('the rejects hint keeps --profile: the fixed rows go to the same CRM', async () => {
  const file = join(dir, 'people.csv');
  writeFileSync(file, 'email,amount:number\nprinted.1@example.com,1\nprinted.2@example.com,lots\n');
  const r = await crm(['--profile', 'work', 'batch', 'contacts', file]);
  expect(r.code, r.stderr).toBe(9);
  const hint = /run `([^`]+)`/.exec(r.stderr)?.[1];
  expect(hint, r.stderr).toMatch(/^crm --profile work batch contacts \S+rejects\.csv$/);
  writeFileSync(
    `${file}.rejects.csv`,
    'email,amount:number,_line,_error_code,_error_message\nprinted.2@example.com,2,3,,\n',
  );
  const fixed = await sh(hint!);
  expect(fixed.code, fixed.stderr).toBe(0);
  const found = await crm([
    '--profile',
    'work',
    '-o',
    'json',
    'contacts',
    'list',
    '--all',
    '--param',
    'email=printed.2@example.com',
  ]);
  expect(JSON.parse(found.stdout)).toHaveLength(1);
});

it("a --match run's undo and created commands keep --profile: pasted, they act on the CRM the run changed (issue 28's trial: the undo put back values in another CRM)", async () => {
  const list = async (email: string) =>
    JSON.parse(
      (await crm(['--profile', 'work', '-o', 'json', 'contacts', 'list', '--all', '--param', `email=${email}`])).stdout,
    ) as Array<{ first_name: string }>;
  const created = join(dir, 'created.csv');
  writeFileSync(created, 'email,first_name\nprinted.made@example.com,Made\n');
  const made = await crm(['--profile', 'work', 'batch', 'contacts', created, '--match', 'email']);
  expect(made.code, made.stderr).toBe(0);
  const remove = /To remove the records this run created:\n {2}(crm .*)/.exec(made.stderr)?.[1];
  expect(remove, made.stderr).toMatch(/^crm --profile work batch contacts \S+\.created\.csv --delete$/);
  const gone = await sh(`${remove!} --yes`);
  expect(gone.code, gone.stderr).toBe(0);
  expect(await list('printed.made@example.com')).toEqual([]);

  const file = join(dir, 'reconcile.csv');
  writeFileSync(file, 'email,first_name\nprinted.match@example.com,Before\n');
  expect((await crm(['--profile', 'work', 'batch', 'contacts', file, '--match', 'email'])).code).toBe(0);
  writeFileSync(file, 'email,first_name\nprinted.match@example.com,After\n');
  const changed = await crm(['--profile', 'work', 'batch', 'contacts', file, '--match', 'email']);
  expect(changed.code, changed.stderr).toBe(0);
  const undo = /To put back the values this run changed:\n {2}(crm .*)/.exec(changed.stderr)?.[1];
  // the first run's way back holds <input>.created.csv: this run's are names of its own
  expect(undo, changed.stderr).toMatch(
    /^crm --profile work batch contacts \S+\.undo\.\d{8}T\d{6}Z(-\d+)?\.csv --match id$/,
  );
  const back = await sh(undo!);
  expect(back.code, back.stderr).toBe(0);
  expect((await list('printed.match@example.com')).map((r) => r.first_name)).toEqual(['Before']);
});

it('a 401 on a profile: its hint checks that profile’s key (`crm --profile stale keys-check`), and pasted it does', async () => {
  const env = { CRM_CONFIG_DIR: t.configDir };
  const add = await runCrm(['keys', 'add', 'stale', '--base-url', t.sb.baseUrl], {
    env,
    input: 'service_live_wrongwrongwrong0000\n',
  });
  expect(add.code, add.stderr).toBe(0);
  const r = await crm(['--profile', 'stale', 'contacts', 'list', '--limit', '1']);
  expect(r.code, r.stderr).toBe(3);
  const hint = /`(crm --profile stale keys-check)`/.exec(r.stderr)?.[1];
  expect(hint, r.stderr).toBeDefined();
  const check = await sh(hint!);
  // the profile it names is the one that failed (the default profile's server is not even listening)
  expect(check.stderr + check.stdout).toMatch(/stale/);
  expect(check.stderr + check.stdout).not.toMatch(/127\.0\.0\.1:9\b/);
});
