// Spawns the built binary (`bin/crm`, run by the same Node as the tests) and collects its output.
// Asynchronous on purpose: the sandbox usually runs in this same process.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const CRM_BIN = fileURLToPath(new URL('../../bin/crm', import.meta.url));

/** Makes `DIR/bin` hold a `crm` (the built binary), for PATH: a printed command then runs as printed. Returns it. */
export function crmOnPath(dir: string): string {
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, 'crm'), `#!/bin/sh\nexec '${process.execPath}' '${CRM_BIN}' "$@"\n`);
  chmodSync(join(bin, 'crm'), 0o755);
  return bin;
}

/** The command a run printed after `title` (the line below it), as a user would copy it; undefined when none. */
export function printedAfter(stderr: string, title: string): string | undefined {
  const lines = stderr.split('\n');
  const at = lines.findIndex((l) => l.startsWith(title));
  return at < 0 ? undefined : lines[at + 1]?.trim();
}

/** Runs a pasted command line in `sh` in `cwd` (not spawnSync: a sandbox in this process must go on answering). */
export function paste(
  command: string,
  opts: { cwd: string; env: Record<string, string | undefined> },
): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', command], { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stderr }));
  });
}

export interface CrmResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env?: Record<string, string | undefined>;
  input?: string | Buffer;
  cwd?: string;
  timeoutMs?: number;
}

/** The environment every test run starts from: no inherited CRM_* settings, no colors. */
export function cleanEnv(extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('CRM_') && v !== undefined) env[k] = v;
  env.NO_COLOR = '1';
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

export function startCrm(args: string[], opts: RunOptions = {}): ChildProcess {
  return spawn(process.execPath, [CRM_BIN, ...args], {
    env: cleanEnv(opts.env),
    cwd: opts.cwd,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

export function runCrm(args: string[], opts: RunOptions = {}): Promise<CrmResult> {
  const child = startCrm(args, opts);
  return collect(child, opts);
}

export function collect(child: ChildProcess, opts: Pick<RunOptions, 'input' | 'timeoutMs'> = {}): Promise<CrmResult> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`crm timed out after ${opts.timeoutMs ?? 20000} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, opts.timeoutMs ?? 20000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    if (opts.input !== undefined) child.stdin!.end(opts.input);
    else child.stdin!.end();
  });
}

/** A `crm sandbox` process that has printed its start line (base_url, keys, control_url). */
export interface SandboxProcess {
  baseUrl: string;
  controlUrl?: string;
  admin: string;
  pid: number;
  /** from the spawn to the start line */
  startMs: number;
  /** SIGTERM; resolves to the exit code */
  stop(): Promise<number | null>;
}

/** Spawns `crm sandbox ARGS` and waits for its start line. */
export async function startSandboxProcess(args: string[]): Promise<SandboxProcess> {
  const t0 = performance.now();
  const child = startCrm(['sandbox', ...args]);
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`sandbox exited with ${code}: ${stderr}`)));
  });
  const info = JSON.parse(line) as { base_url: string; control_url?: string; keys: { admin: string } };
  return {
    baseUrl: info.base_url,
    controlUrl: info.control_url,
    admin: info.keys.admin,
    pid: child.pid!,
    startMs: performance.now() - t0,
    stop: () => (child.kill('SIGTERM'), exited),
  };
}
