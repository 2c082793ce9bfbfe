import { existsSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AtomicTextFile, writeFileAtomic } from '../../../src/util/atomic-file.js';
import { ensureDir, removeStaleTemps } from '../../../src/util/fs.js';
import { forEachLimit, Pool } from '../../../src/util/pool.js';
import { journalFolder } from '../../../src/import/shapes.js';
import { UsageError } from '../../../src/http/errors.js';
import { tempDir } from '../import/helpers.js';

describe('atomic files', () => {
  it('nothing appears under the name before commit; discard leaves the old file', async () => {
    const dir = tempDir();
    const target = join(dir, 'out.csv');
    writeFileSync(target, 'old');
    const f = await AtomicTextFile.create(target);
    f.write('x'.repeat(200_000));
    f.write('end');
    expect(readFileSync(target, 'utf8')).toBe('old');
    await f.discard();
    expect(readFileSync(target, 'utf8')).toBe('old');
    expect(readdirSync(dir)).toEqual(['out.csv']);
    const g = await AtomicTextFile.create(target);
    g.write('new');
    await g.commit();
    expect(readFileSync(target, 'utf8')).toBe('new');
    expect(readdirSync(dir)).toEqual(['out.csv']);
    expect(() => g.write('late')).toThrow();
  });

  it('writeFileAtomic replaces a file whole, mode 0600', async () => {
    const dir = tempDir();
    await writeFileAtomic(join(dir, 'a'), 'one');
    await writeFileAtomic(join(dir, 'a'), 'two');
    expect(readFileSync(join(dir, 'a'), 'utf8')).toBe('two');
    expect(readdirSync(dir)).toEqual(['a']);
    expect(statSync(join(dir, 'a')).mode & 0o777).toBe(0o600);
  });
});

describe('folders and leftovers', () => {
  it('ensureDir makes the missing levels (0700); the journal folder fails fast with a UsageError naming it', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'file'), 'x');
    expect(() => ensureDir(join(dir, 'file', 'imports'))).toThrow(/ENOTDIR|not a folder/);
    expect(() => journalFolder(join(dir, 'file', 'imports'))).toThrow(UsageError);
    expect(() => journalFolder(join(dir, 'file', 'imports'))).toThrow(join(dir, 'file', 'imports'));
    ensureDir(join(dir, 'a', 'b', 'c'));
    expect(statSync(join(dir, 'a', 'b', 'c')).isDirectory()).toBe(true);
    expect(statSync(join(dir, 'a', 'b')).mode & 0o777).toBe(0o700);
  });

  it.runIf(existsSync('/proc/self'))('ensureDir under procfs fails at once instead of spinning', () => {
    const t0 = Date.now();
    expect(() => journalFolder('/proc/nope/imports')).toThrow(/\/proc\/nope\/imports/);
    expect(Date.now() - t0).toBeLessThan(1000);
  });

  it('removeStaleTemps removes temporary copies of owned files of dead processes or over a day old, only', async () => {
    const dir = tempDir();
    const dead = 2 ** 22 + 4321;
    const names = [
      `x.csv.rejects.csv.tmp-${dead}-ab12`, // dead process: removed
      `x.csv.rejects.csv.tmp-${process.pid}-cd34`, // alive: kept
      `x.csv.rejects.csv.tmp-${process.pid}-ef56`, // alive but two days old: removed
      `other.csv.tmp-${dead}-ab12`, // another file's: kept
      `crm-rejects-20260101T000000Z.csv.tmp-${dead}-00ff`, // owned by pattern: removed
    ];
    for (const n of names) writeFileSync(join(dir, n), 'user data');
    const old = new Date(Date.now() - 2 * 86_400_000);
    utimesSync(join(dir, names[2]!), old, old);
    const owned = (n: string) => n === 'x.csv.rejects.csv' || /^crm-rejects-\d{8}T\d{6}Z\.(csv|ndjson)$/.test(n);
    expect(await removeStaleTemps(dir, Date.now(), owned)).toBe(3);
    expect(readdirSync(dir).sort()).toEqual([names[1], names[3]].sort());
  });
});

describe('worker pool', () => {
  it('runs at most `size` at a time, and starts none once stopped', async () => {
    let now = 0;
    let most = 0;
    const seen: number[] = [];
    const started = await forEachLimit(
      [1, 2, 3, 4, 5, 6],
      2,
      async (n) => {
        most = Math.max(most, ++now);
        await new Promise((r) => setImmediate(r));
        seen.push(n);
        now--;
      },
      () => seen.length >= 3,
    );
    expect(most).toBe(2);
    expect(started).toBeLessThan(6);
    expect(seen).toHaveLength(started);
  });

  it('a task that throws stops the pool, and drain throws it', async () => {
    const pool = new Pool(1);
    await pool.run(async () => {
      throw new Error('boom');
    });
    expect(await pool.run(async () => undefined)).toBe(false);
    await expect(pool.drain()).rejects.toThrow('boom');
  });
});
