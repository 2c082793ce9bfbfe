// Two runs taking over the same stale lock (issue 27, "two processes at once"): run B reads the stale holder, is
// held up, and run A takes the lock meanwhile; when B goes on, it must not remove A's lock and take it too.
// The schedule is made exact by holding B's first `stat` (after its read of the holder) until A has the lock.
// Stale: a dead pid (a lock of a crm before issue 28: the pid alone), or this very pid in an earlier life (issue 28).
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { lockJob } from '../../../src/import/journal/folder.js';
import { journalPath } from '../../../src/import/journal/journal.js';
import type { JournalIdentity } from '../../../src/import/shapes.js';
import { tempDir } from '../../helpers/temp.js';

const hold: { stat?: () => Promise<void> } = {};
vi.mock('node:fs/promises', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs/promises')>();
  const stat = (async (...args: Parameters<typeof fs.stat>) => {
    const wait = hold.stat;
    hold.stat = undefined;
    await wait?.();
    return fs.stat(...args);
  }) as typeof fs.stat;
  return { ...fs, default: { ...fs, stat }, stat };
});

const identity: JournalIdentity = { contentSha256: 'cd'.repeat(32), resource: 'contacts', baseUrl: 'http://x' };

const stale = {
  'a dead pid': () => `${spawnSync(process.execPath, ['-e', '0']).pid}\n`,
  'this pid in an earlier life': () =>
    `${JSON.stringify({ pid: process.pid, start: 'earlier:1', token: 'earlier' })}\n`,
};

describe.each(Object.entries(stale))('a stale lock (%s) taken over by two runs at once', (_, staleText) => {
  it('the run that read the stale holder first, then was held up, is refused: one run has the lock', async () => {
    const dir = tempDir('crm-lock-race-');
    const path = `${journalPath(dir, identity)}.lock`;
    await (
      await lockJob(dir, identity, 'a.csv')
    )(); // the folder made
    writeFileSync(path, staleText());
    let goOn!: () => void;
    let paused!: () => void;
    const isPaused = new Promise<void>((r) => (paused = r));
    hold.stat = () => {
      paused();
      return new Promise<void>((r) => (goOn = r));
    };
    const b = lockJob(dir, identity, 'a.csv').then(
      (release) => ({ release }),
      (err: unknown) => ({ err }),
    );
    await isPaused;
    const releaseA = await lockJob(dir, identity, 'a.csv');
    goOn();
    const outcome = await b;
    expect('err' in outcome ? String(outcome.err) : 'B took the lock too').toContain(
      `another crm (process ${process.pid}) is running this same job`,
    );
    const holder = JSON.parse(readFileSync(path, 'utf8')) as { pid: number; token: string };
    expect(holder.pid).toBe(process.pid);
    expect(holder.token).not.toBe('earlier');
    await releaseA();
  });
});
