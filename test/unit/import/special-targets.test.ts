// Output files given as a device or a pipe (`--rejects /dev/null`, `--out /dev/stdout`, a FIFO): written
// in place, never renamed over and never removed. As root, renaming over /dev/null replaced the device
// with a regular file for the whole machine; removing a "stale" rejects file unlinked it.
import { execFileSync } from 'node:child_process';
import { createReadStream, existsSync, lstatSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { AtomicTextFile, removeRegularFile, writeFileAtomic } from '../../../src/util/atomic-file.js';
import { createRejectsWriter } from '../../../src/import/files/outputs.js';

let dir: string;
let fifo: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'crm-special-'));
  fifo = join(dir, 'pipe');
  execFileSync('mkfifo', [fifo]);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Reads the FIFO until its writer closes it. */
function drain(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    createReadStream(path, 'utf8')
      .on('data', (d) => (text += d.toString()))
      .on('end', () => resolve(text))
      .on('error', reject);
  });
}

it('writeFileAtomic writes into a pipe and leaves it a pipe', async () => {
  const read = drain(fifo);
  await writeFileAtomic(fifo, 'hello\n');
  expect(await read).toBe('hello\n');
  expect(lstatSync(fifo).isFIFO()).toBe(true);
});

it('AtomicTextFile writes into a pipe on commit, and discard leaves the pipe in place', async () => {
  const read = drain(fifo);
  const f = await AtomicTextFile.create(fifo);
  f.write('a,b\r\n');
  await f.commit();
  expect(await read).toBe('a,b\r\n');
  expect(lstatSync(fifo).isFIFO()).toBe(true);
  const again = drain(fifo);
  const g = await AtomicTextFile.create(fifo);
  await g.discard();
  await again;
  expect(lstatSync(fifo).isFIFO()).toBe(true);
});

it('a rejects writer with no rejects removes a stale regular file, never a pipe', async () => {
  const read = drain(fifo);
  const w = await createRejectsWriter(fifo, { format: 'csv', header: ['email'] });
  expect(await w.commit()).toBeNull();
  await read;
  expect(lstatSync(fifo).isFIFO()).toBe(true);
  await removeRegularFile(fifo);
  expect(lstatSync(fifo).isFIFO()).toBe(true);
  const stale = join(dir, 'stale.csv');
  writeFileSync(stale, 'old');
  await removeRegularFile(stale);
  expect(existsSync(stale)).toBe(false);
});
