// A way back used as people use it (issue 27, CONTRACT §7c): the undo command a --match run prints, pasted into a
// shell, twice, after the list is applied again, when the records are already back, and a week later after a
// colleague's change. Judged by what the sandbox holds after each step, not by crm's summary.
import { writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getRecord, logLength, requestLog } from '../helpers/bulk.js';
import { crmOnPath, runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';

let t: TestSandbox;
let dir: string;
let bin: string;
beforeAll(async () => {
  t = await startTestSandbox({ seed: 3, rateLimit: 1_000_000, orgRateLimit: 1_000_000 });
  dir = tempDir('crm-week-');
  // `crm` on the PATH, as a user has it
  bin = crmOnPath(dir);
});
afterAll(async () => {
  await t?.close();
});

const env = () => ({ ...t.env('admin'), PATH: `${bin}:${process.env.PATH ?? ''}` });
const crm = (args: string[]) => runCrm(args, { env: t.env('admin'), cwd: dir, timeoutMs: 120_000 });

/** The command printed after `title` (the line below it), as the user would paste it. */
function printed(stderr: string, title: string): string {
  const lines = stderr.split('\n');
  const at = lines.findIndex((l) => l.startsWith(title));
  expect(at, stderr).toBeGreaterThanOrEqual(0);
  return lines[at + 1]!.trim();
}

/** Runs a pasted command line in a shell (not spawnSync: the sandbox answers from this process). */
function paste(command: string): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', command], { cwd: dir, env: env(), stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stderr }));
  });
}

async function api(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${t.sb.baseUrl}${path}`, {
    method,
    headers: { 'X-Service-Api-Key': t.sb.keys.admin, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(res.status, `${method} ${path}`).toBeLessThan(300);
  return ((await res.json()) as { data: Record<string, unknown> }).data;
}

const UNDO = 'To put back the values this run changed:';

describe('the undo a --match run prints, over a week', () => {
  it('applied, undone, applied again, undone again, undone once more, and a week later after a colleague', async () => {
    const id = (await api('POST', '/contacts', { email: 'week@example.com', title: 'Orig', score: 1 })).id as string;
    const list = join(dir, 'list.csv');
    writeFileSync(list, 'email,title,score:number\nweek@example.com,New,2\n');
    const title = async () => (await getRecord(t, 'contacts', id))?.title;

    const first = await crm(['batch', 'contacts', list, '--match', 'email']);
    expect(first.code, first.stderr).toBe(0);
    expect(await title()).toBe('New');
    const undo = printed(first.stderr, UNDO);
    expect(undo).toMatch(/^crm batch contacts \S+list\.csv\.undo\.csv --match id$/);
    expect((await paste(undo)).code).toBe(0);
    expect(await getRecord(t, 'contacts', id)).toMatchObject({ title: 'Orig', score: 1 });

    // the list applied again: crm rewrites the undo file (the first moved aside); its printed undo works again
    const again = await crm(['batch', 'contacts', list, '--match', 'email']);
    expect(again.code, again.stderr).toBe(0);
    expect(await title()).toBe('New');
    const undo2 = printed(again.stderr, UNDO);
    const second = await paste(undo2);
    expect(second.code, second.stderr).toBe(0);
    expect(await getRecord(t, 'contacts', id)).toMatchObject({ title: 'Orig', score: 1 });

    // already so: nothing is sent, and it says so
    const since = await logLength(t);
    const third = await paste(undo2);
    expect(third.code, third.stderr).toBe(0);
    expect(third.stderr).toMatch(/1 unchanged/);
    expect((await requestLog(t, since)).filter((e) => e.method !== 'GET')).toEqual([]);

    // a week later, after a colleague's change: the file's values, whatever happened in between
    await api('PATCH', `/contacts/${id}`, { title: 'Colleague', score: 9 });
    const later = await paste(undo2);
    expect(later.code, later.stderr).toBe(0);
    expect(await getRecord(t, 'contacts', id)).toMatchObject({ title: 'Orig', score: 1 });
  });
});
