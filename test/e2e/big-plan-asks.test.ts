// A reconcile that will write 100 records or more asks first on a terminal, as a delete does (issue 29, "Big
// changes ask first"), in tmux at 80 columns: "n" sends nothing (exit 2), "y" sends the plan; without a
// terminal, or with --yes, nothing is asked (scripts run as before). A restore of creates found by id only in their own
// organization asks too (issue 31, the second trial: a restore after a backup import made each deal twice).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logLength, requestLog } from '../helpers/bulk.js';
import { runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';
import { HAS_TMUX, sh, startTmux, type Tmux } from '../helpers/tmux.js';

const required = process.env.CRM_REQUIRE_SHELLS === '1';
let t: TestSandbox;
let tm: Tmux | undefined;
const dir = tempDir('crm-big-plan-');
beforeAll(async () => {
  t = await startTestSandbox({ rateLimit: 1_000_000, orgRateLimit: 1_000_000 });
});
afterAll(async () => {
  await tm?.close();
  await t?.close();
});

/** A file of `n` people no contact has yet. */
function people(tag: string, n: number): string {
  const path = join(dir, `${tag}.csv`);
  const rows = Array.from({ length: n }, (_, i) => `${tag}${i}@big.test,${tag}${i}`);
  writeFileSync(path, `email,first_name\n${rows.join('\n')}\n`);
  return path;
}
const writesSince = async (since: number) =>
  (await requestLog(t, since)).filter((e) => e.method !== 'GET' && e.path.includes('/contacts')).length;

describe.skipIf(!HAS_TMUX && !required)('on a terminal (tmux, 80 columns)', () => {
  it('120 creates: "n" sends nothing (exit 2); "y" creates every row', async () => {
    tm ??= await startTmux();
    const path = people('ask', 120);
    const command = `crm batch contacts ${sh(path)} --match email`;
    const env = t.env('admin', { NO_COLOR: '1' });
    const since = await logLength(t);

    const no = await tm.run(command, { env, cwd: dir });
    await no.waitFor(/This will create 120 contacts\. Send\? \[y\/N\]$/m);
    await no.type('n', { enter: true });
    const refused = await no.waitExit();
    expect(refused.status, refused.lines.join('\n')).toBe(2);
    expect(refused.lines.join('\n')).toMatch(/not confirmed \("n"\): nothing was sent/);
    expect(await writesSince(since)).toBe(0);

    const yes = await tm.run(command, { env, cwd: dir });
    await yes.waitFor(/Send\? \[y\/N\]$/m);
    await yes.type('y', { enter: true });
    const sent = await yes.waitExit();
    expect(sent.status, sent.lines.join('\n')).toBe(0);
    expect(await writesSince(since)).toBe(2); // 120 creates, 100 a request
  });

  it('--yes asks nothing', async () => {
    tm ??= await startTmux();
    const path = people('yes', 100);
    const pane = await tm.run(`crm batch contacts ${sh(path)} --match email --yes`, {
      env: t.env('admin', { NO_COLOR: '1' }),
      cwd: dir,
    });
    const done = await pane.waitExit();
    expect(done.status, done.lines.join('\n')).toBe(0);
    expect(done.lines.join('\n')).not.toMatch(/Send\?/);
  });
});

it('without a terminal a plan of any size is sent without a question, as before', async () => {
  const r = await runCrm(['batch', 'contacts', people('pipe', 150), '--match', 'email', '-o', 'json'], {
    env: t.env('admin'),
    cwd: dir,
  });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stderr).not.toMatch(/Send\?/);
  expect(JSON.parse(r.stdout)).toMatchObject({ created: 150 });
});

describe.skipIf(!HAS_TMUX && !required)('restore on a terminal (tmux, 80 columns)', () => {
  it('deals deleted in their own organization (found by id only): "n" sends nothing; "y" restores them', async () => {
    tm ??= await startTmux();
    const org = await startTestSandbox({ seed: 5, rateLimit: 1_000_000, orgRateLimit: 1_000_000 });
    try {
      const snap = join(dir, 'restore-snapshot');
      expect((await runCrm(['snapshot', snap], { env: org.env() })).code).toBe(0);
      const ids = join(dir, 'bad.csv');
      const list = await runCrm(['deals', 'list', '--limit', '3', '-o', 'csv', '--fields', 'id'], { env: org.env() });
      writeFileSync(ids, list.stdout);
      const del = await runCrm(['batch', 'deals', ids, '--delete', '--yes', '--no-backup'], { env: org.env() });
      expect(del.code, del.stderr).toBe(0);
      const env = org.env('admin', { NO_COLOR: '1' });
      const since = await logLength(org);

      const no = await tm.run(`crm restore ${sh(snap)}`, { env, cwd: dir });
      // the question alone on its line (a longer one was split "[y/" from "N]" at 80 columns)
      const shown = (await no.waitFor(/^Send\? \[y\/N\]$/m)).join('\n');
      expect(shown).toMatch(/^This will create 3 records \(3 deals\)\.$/m);
      expect(shown.replace(/\s+/g, '')).toContain('deals:the3tocreatearelookedforbytheiridonly');
      await no.type('n', { enter: true });
      const refused = await no.waitExit();
      expect(refused.status, refused.lines.join('\n')).toBe(2);
      expect(refused.lines.join('\n')).toMatch(/not confirmed \("n"\): nothing was sent/);
      expect((await requestLog(org, since)).filter((e) => e.method !== 'GET')).toEqual([]);

      const yes = await tm.run(`crm restore ${sh(snap)}`, { env, cwd: dir });
      await yes.waitFor(/Send\? \[y\/N\]$/m);
      await yes.type('y', { enter: true });
      const sent = await yes.waitExit();
      expect(sent.status, sent.lines.join('\n')).toBe(0);
      const posts = (await requestLog(org, since)).filter((e) => e.method === 'POST');
      expect(posts.map((e) => e.path)).toEqual(['/api/v2/deals/batch']);
    } finally {
      await org.close();
    }
  });
});
