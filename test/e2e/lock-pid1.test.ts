// End to end (issue 28, "Locks die with their process"): crm as PID 1 of a container, killed with -9 in the middle
// of an import, then started again — as PID 1 again, the pid its lock names. The rerun resumes the job rather than
// being refused for ever as "another crm (process 1)". A new PID namespace (unshare, as root) makes crm PID 1;
// where unshare cannot, the lock's logic is covered by test/unit/util/lock-process.test.ts.
import { execFile, spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CRM_BIN, cleanEnv, collect, type CrmResult } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';

const NAMESPACE = ['--pid', '--fork', '--kill-child', '--mount-proc'];
const unshareWorks = await new Promise<boolean>((resolve) =>
  execFile('unshare', [...NAMESPACE, 'sh', '-c', 'test $$ = 1'], (err) => resolve(!err)),
);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!unshareWorks)('crm as PID 1, killed with -9 mid-job', () => {
  let t: TestSandbox;
  beforeAll(async () => {
    t = await startTestSandbox({ rateLimit: 1_000_000, orgRateLimit: 1_000_000 });
  });
  afterAll(async () => t?.close());

  const contacts = async (): Promise<number> =>
    ((await t.control('/stats')) as { records: { contacts: number } }).records.contacts;

  /** `crm ARGS` as PID 1 of a new PID namespace (unshare's child: a kill -9 of unshare kills it too). */
  const asPid1 = (args: string[], cwd: string) =>
    spawn('unshare', [...NAMESPACE, process.execPath, CRM_BIN, ...args], {
      env: cleanEnv(t.env('admin')),
      cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
    });

  /** The job locks in the config folder (the journals' folder is in it), by name → text. */
  function locks(): Map<string, string> {
    const found = new Map<string, string>();
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        if (e.isDirectory()) walk(join(dir, e.name));
        else if (e.name.endsWith('.lock')) found.set(join(dir, e.name), readFileSync(join(dir, e.name), 'utf8'));
      }
    };
    walk(t.configDir);
    return found;
  }

  it('the same command, as PID 1 again, resumes the job (not refused as "another crm (process 1)")', async () => {
    const dir = tempDir('crm-lock-pid1-');
    const rows = Array.from({ length: 300 }, (_, i) => `P ${i + 1},pid1.${i + 1}@example.com`);
    writeFileSync(join(dir, 'people.csv'), `First Name,Email\n${rows.join('\n')}\n`);
    const args = ['batch', 'contacts', 'people.csv', '--chunk-size', '10', '--concurrency', '1'];

    // slow answers, so that the run is killed with most of its chunks left
    await t.control('/faults', { latency_ms: 150 });
    const before = await contacts();
    const first = asPid1(args, dir);
    const killed = collect(first, { timeoutMs: 60_000 });
    let ended = false;
    void killed.finally(() => (ended = true)).catch(() => undefined);
    while (!ended && (await contacts()) === before) await sleep(20);
    first.kill('SIGKILL');
    const stopped: CrmResult = await killed;
    expect(stopped.signal, stopped.stderr).toBe('SIGKILL');
    await sleep(200); // crm is killed as unshare dies (--kill-child): let that land
    const left = [...locks().values()];
    expect(left).toHaveLength(1);
    expect((JSON.parse(left[0]!) as { pid: number }).pid).toBe(1);
    const partial = await t.countByEmail('pid1');
    expect(partial.size).toBeGreaterThan(0);
    expect(partial.size).toBeLessThan(300);

    await t.control('/faults', { latency_ms: 0 });
    const again = await collect(asPid1(args, dir), { timeoutMs: 60_000 });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).not.toContain('is running this same job');
    // resumed: the chunks answered are skipped, one in flight at the kill is sent again under its keys
    expect(again.stderr).toMatch(/\d+ chunks? .*(finished|sent) by an earlier run/);
    const counts = await t.countByEmail('pid1');
    expect(counts.size).toBe(300);
    expect([...counts.values()].filter((n) => n > 1)).toEqual([]);
    expect(locks().size).toBe(0);
  });
});
