// The job's lock (src/import/journal/folder.ts): it appears whole, so a kill -9 at any moment never leaves a lock
// without the pid that lets the rerun take it over (CI once failed on one: "another crm is running this same job").
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lockJob } from '../../../src/import/journal/folder.js';
import type { JournalIdentity } from '../../../src/import/shapes.js';
import { tempDir } from '../../helpers/temp.js';

const identity: JournalIdentity = { contentSha256: 'ab'.repeat(32), resource: 'contacts', baseUrl: 'http://x' };
/** A lock's whole text names this process (util/process-lock.ts: its pid, start and token, on one line). */
const isOurs = (text: string): boolean =>
  text.endsWith('\n') && (JSON.parse(text) as { pid: number }).pid === process.pid;
const locks = (dir: string) => readdirSync(dir).filter((n) => n.endsWith('.lock'));

/** A pid that is certainly no process's now: a child that has exited. */
const deadPid = (): number => spawnSync(process.execPath, ['-e', '0']).pid;

describe('the job lock', () => {
  it('is never seen without its pid, between any two steps of taking it', async () => {
    const dir = tempDir('crm-lock-');
    const seen: string[] = [];
    let looking = true;
    const look = () => {
      for (const name of locks(dir)) {
        try {
          seen.push(readFileSync(join(dir, name), 'utf8'));
        } catch {
          // released between the listing and the read
        }
      }
      if (looking) setImmediate(look);
    };
    look();
    for (let i = 0; i < 200; i++) {
      const release = await lockJob(dir, identity, 'a.csv');
      await release();
    }
    looking = false;
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.filter((text) => !isOurs(text))).toEqual([]);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('refuses while its holder lives, and the refusal names the holder and the lock', async () => {
    const dir = tempDir('crm-lock-');
    const release = await lockJob(dir, identity, 'a.csv');
    const path = join(dir, locks(dir)[0]!);
    writeFileSync(path, `${process.ppid}\n`);
    await expect(lockJob(dir, identity, 'a.csv')).rejects.toThrow(`another crm (process ${process.ppid})`);
    await expect(lockJob(dir, identity, 'a.csv')).rejects.toMatchObject({ hint: expect.stringContaining(path) });
    await release();
    expect(existsSync(path)).toBe(false);
  });

  it("is taken over when its holder's process is gone (kill -9), and leaves no temporary file", async () => {
    const dir = tempDir('crm-lock-');
    const release = await lockJob(dir, identity, 'a.csv');
    const path = join(dir, locks(dir)[0]!);
    writeFileSync(path, `${deadPid()}\n`);
    const again = await lockJob(dir, identity, 'a.csv');
    expect(isOurs(readFileSync(path, 'utf8'))).toBe(true);
    await again();
    await release();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('an empty lock (an older crm killed while taking it) is refused for a minute, then taken over', async () => {
    const dir = tempDir('crm-lock-');
    const release = await lockJob(dir, identity, 'a.csv');
    const path = join(dir, locks(dir)[0]!);
    writeFileSync(path, '');
    await expect(lockJob(dir, identity, 'a.csv')).rejects.toThrow('another crm is running this same job');
    const old = new Date(Date.now() - 61_000);
    utimesSync(path, old, old);
    const again = await lockJob(dir, identity, 'a.csv');
    await again();
    await release();
  });
});
