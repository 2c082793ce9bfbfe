// Kill -9 at seeded points, then run again (issue 19's resumable snapshot): each run but the last is killed
// `points[i]` ms after it has written something more (`written()` grew); the next run goes on.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { collect, startCrm } from './run-crm.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs `crm args` until a run finishes (exit 0): the first `points.length` runs are killed at their point
 * unless they finish first. After each kill DIR/manifest.json may say complete only when `finished()`
 * (every file there). Returns how many runs were killed.
 */
export async function killAtPoints(
  args: string[],
  env: Record<string, string | undefined>,
  points: readonly number[],
  dir: string,
  written: () => number,
  finished: () => boolean,
): Promise<number> {
  let kills = 0;
  for (let i = 0; i <= points.length; i++) {
    const before = written();
    const child = startCrm(args, { env });
    const result = collect(child, { timeoutMs: 120_000 });
    let exited = false;
    void result.then(() => (exited = true));
    if (i < points.length) {
      while (!exited && written() <= before) await sleep(2);
      await sleep(points[i]!);
      child.kill('SIGKILL');
    }
    const r = await result;
    if (r.code === 0) return kills;
    expect(r.signal, r.stderr).toBe('SIGKILL');
    kills++;
    // killed after the manifest's last write (the process had not exited yet): complete, truly
    const complete = (JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { complete: boolean }).complete;
    expect(complete, 'complete only when every file is there').toBe(complete && finished());
  }
  throw new Error(`crm ${args.join(' ')}: no run finished`);
}

/** Runs `crm args`, Ctrl-C (SIGINT) as soon as `written()` is above 0: exit 130 saying how to resume, DIR's manifest not complete. */
export async function interruptOnceWritten(
  args: string[],
  env: Record<string, string | undefined>,
  dir: string,
  written: () => number,
): Promise<void> {
  const child = startCrm(args, { env });
  const result = collect(child, { timeoutMs: 60_000 });
  while (written() === 0) await sleep(2);
  child.kill('SIGINT');
  const r = await result;
  expect(r.code, r.stderr).toBe(130);
  expect(r.stderr).toContain('run the same command again to resume');
  expect((JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { complete: boolean }).complete).toBe(false);
}
