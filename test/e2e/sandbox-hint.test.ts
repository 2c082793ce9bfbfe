// `crm sandbox`'s start hint (issue 17): the commands it suggests, pasted into a shell as they are
// (a `<admin key above>` placeholder made bash look for a file named `admin`), run and show
// something. Without --seed the sandbox is empty: a list would show only "No results.", so the hint makes a record first and names --seed for sample data.
import { execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crmOnPath, cleanEnv, startCrm } from '../helpers/run-crm.js';

let dir: string;
let binDir: string;
const children: ChildProcess[] = [];
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'crm-sandbox-hint-'));
  binDir = crmOnPath(dir);
});
afterAll(async () => {
  // each sandbox removes its own files as it exits (--tls: its CA folder): wait for that
  const running = children.filter((c) => c.exitCode === null && c.signalCode === null);
  await Promise.all(
    running.map((c) => new Promise<void>((resolve) => (c.once('exit', () => resolve()), c.kill('SIGTERM')))),
  );
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Starts `crm sandbox ARGS`; resolves with its admin key and the lines of its hint, once it has printed them. */
function sandbox(args: string[]): Promise<{ key: string; stderr: string; tries: string[] }> {
  const child = startCrm(['sandbox', '--port', '0', ...args], { env: { CRM_CONFIG_DIR: join(dir, 'config') } });
  children.push(child);
  return new Promise((resolve, reject) => {
    let [stdout, stderr] = ['', ''];
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString();
      if (!stderr.includes('Press Ctrl-C')) return;
      const key = (JSON.parse(stdout.split('\n')[0]!) as { keys: { admin: string } }).keys.admin;
      const tries = stderr
        .split('\n')
        .filter((l) => l.startsWith('  '))
        .map((l) => l.trim());
      resolve({ key, stderr, tries });
    });
    child.on('exit', (code) => reject(new Error(`sandbox exited ${code}: ${stderr}`)));
  });
}

function sh(line: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const env = cleanEnv({ CRM_CONFIG_DIR: join(dir, 'config'), PATH: `${binDir}:${process.env.PATH}` });
    execFile('sh', ['-c', line], { cwd: dir, env }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('crm sandbox: the hint', () => {
  it.each([
    ['without --seed', [] as string[]],
    ['with --seed 42', ['--seed', '42']],
    ['with --tls --seed 42', ['--tls', '--seed', '42']],
  ])('%s: each suggested command runs pasted as it is; the last one lists a contact', async (_name, args) => {
    const s = await sandbox(args);
    expect(s.tries.length, s.stderr).toBeGreaterThan(0);
    if (args.length === 0) expect(s.stderr).toMatch(/--seed 42/);
    let last = { code: 0, stdout: '', stderr: '' };
    for (const line of s.tries) {
      // the sandbox's admin key is a local throw-away key, printed in its JSON line too
      expect(line, s.stderr).toContain(`CRM_API_KEY=${s.key} `);
      last = await sh(`${line} -o json`);
      expect(last.code, `${line}\n${last.stderr}`).toBe(0);
    }
    const listed = JSON.parse(last.stdout) as unknown[];
    expect(Array.isArray(listed) ? listed.length : 0, last.stdout).toBeGreaterThan(0);
  });
});
