// The process lock (src/util/process-lock.ts, issue 28 "Locks die with their process"): a lock names its holder by
// pid, start identity and token, so a crm killed with -9 and started again with the same pid (PID 1 in a
// container) takes its earlier life's lock over, a pid reused by another process does not keep a lock alive, and a
// live holder (another process, or this one) is still refused.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { takeProcessLock } from '../../../src/util/process-lock.js';
import { tempDir } from '../../helpers/temp.js';

class Refused extends Error {
  constructor(readonly holderPid: number | undefined) {
    super(`held by ${holderPid}`);
  }
}
const refuse = (pid: number | undefined) => new Refused(pid);
const take = (path: string) => takeProcessLock(path, refuse);
/** The pid a refusal named, or 'taken' (released at once) when the lock was taken. */
async function outcome(path: string): Promise<number | undefined | 'taken'> {
  try {
    await (
      await take(path)
    )();
    return 'taken';
  } catch (err) {
    if (err instanceof Refused) return err.holderPid;
    throw err;
  }
}

const lockText = (holder: { pid: number; start?: string; token?: string }) => `${JSON.stringify(holder)}\n`;

/** How Linux says when `pid` started (boot id, start time field 22), read here on its own; undefined elsewhere. */
function startOf(pid: number): string | undefined {
  if (!existsSync('/proc/self/stat')) return undefined;
  const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return `${boot}:${stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]}`;
}
const linux = startOf(process.pid) !== undefined;

const children: ChildProcess[] = [];
/** A live process that is not this one. */
function otherProcess(): number {
  const child = spawn(process.execPath, ['-e', 'setTimeout(()=>{},1e5)'], { stdio: 'ignore' });
  children.push(child);
  return child.pid!;
}
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
});

const lockIn = (prefix: string) => join(tempDir(prefix), 'job.lock');

describe('takeProcessLock', () => {
  it('writes this process: its pid, its start identity and a token', async () => {
    const path = lockIn('crm-plock-');
    const release = await take(path);
    const holder = JSON.parse(readFileSync(path, 'utf8')) as { pid: number; start?: string; token: string };
    expect(holder.pid).toBe(process.pid);
    expect(holder.start).toBe(startOf(process.pid));
    expect(holder.token).toMatch(/^[0-9a-f]{16}$/);
    await release();
    expect(existsSync(path)).toBe(false);
  });

  it('is refused to this same process while it holds it, and taken again once released', async () => {
    const path = lockIn('crm-plock-');
    const release = await take(path);
    expect(await outcome(path)).toBe(process.pid);
    await release();
    expect(await outcome(path)).toBe('taken');
  });

  it("takes over this pid's earlier life's lock (killed with -9, started again with the same pid)", async () => {
    const path = lockIn('crm-plock-');
    // the same pid, even the same start identity (what is known of it): not a token this process took
    writeFileSync(path, lockText({ pid: process.pid, start: startOf(process.pid), token: '0123456789abcdef' }));
    expect(await outcome(path)).toBe('taken');
    // a lock of a crm before issue 28: the pid alone
    writeFileSync(path, `${process.pid}\n`);
    expect(await outcome(path)).toBe('taken');
  });

  it("refuses a live other process's lock, naming it (and a lock of the pid alone, from a crm before issue 28)", async () => {
    const path = lockIn('crm-plock-');
    const pid = otherProcess();
    writeFileSync(path, lockText({ pid, start: startOf(pid), token: 'fedcba9876543210' }));
    expect(await outcome(path)).toBe(pid);
    writeFileSync(path, `${pid}\n`);
    expect(await outcome(path)).toBe(pid);
  });

  it.skipIf(!linux)(
    'takes over a lock naming a live pid that started at another time (the pid was reused)',
    async () => {
      const path = lockIn('crm-plock-');
      const pid = otherProcess();
      const [boot, ticks] = startOf(pid)!.split(':');
      writeFileSync(path, lockText({ pid, start: `${boot}:${Number(ticks) - 1}`, token: 'fedcba9876543210' }));
      expect(await outcome(path)).toBe('taken');
      // the same start time, but of another boot
      writeFileSync(path, lockText({ pid, start: `00000000-0000-0000-0000-000000000000:${ticks}`, token: 'x' }));
      expect(await outcome(path)).toBe('taken');
    },
  );

  it('takes over a lock whose process is gone', async () => {
    const path = lockIn('crm-plock-');
    const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
    const start = startOf(child.pid!);
    await new Promise((done) => child.once('exit', done));
    writeFileSync(path, lockText({ pid: child.pid!, start, token: 'fedcba9876543210' }));
    expect(await outcome(path)).toBe('taken');
  });

  it('an empty or garbled lock (its holder not written yet) is refused, naming no one', async () => {
    const path = lockIn('crm-plock-');
    for (const text of ['', '{"pid":', 'not a lock\n']) {
      writeFileSync(path, text);
      expect(await outcome(path)).toBeUndefined();
    }
  });

  it('of many takers of a stale lock at once, exactly one has it', async () => {
    const path = lockIn('crm-plock-');
    for (let round = 0; round < 30; round++) {
      writeFileSync(path, `${process.pid}\n`); // an earlier life's
      const tries = await Promise.allSettled(Array.from({ length: 8 }, () => take(path)));
      const won = tries.flatMap((t) => (t.status === 'fulfilled' ? [t.value] : []));
      expect(won).toHaveLength(1);
      for (const t of tries) if (t.status === 'rejected') expect(t.reason).toBeInstanceOf(Refused);
      await won[0]!();
    }
  });
});
