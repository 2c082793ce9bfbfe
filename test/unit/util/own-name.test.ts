// A file of one run's own (src/util/own-name.ts, CONTRACT §7c): two runs of the same second never share a name, and
// a move never replaces another file (issue 27: the first run's undo, the only copy of the original values, was lost).
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isBackupFile } from '../../../src/import/files/backup.js';
import { createOwnFile, freeOwnName, moveToOwnName, ownName } from '../../../src/util/own-name.js';
import { tempDir } from '../../helpers/temp.js';

const NOW = Date.UTC(2026, 10, 28, 12, 0, 0, 250);

describe('a file of one run own', () => {
  it('the names: one per n, each read back as a backup by its name', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4_102_444_800_000 }), fc.integer({ min: 1, max: 999 }), (now, n) => {
        const name = ownName('contacts.deleted', '.ndjson', now, n);
        expect(isBackupFile(name)).toBe(true);
        expect(name).not.toBe(ownName('contacts.deleted', '.ndjson', now, n + 1));
        expect(ownName('contacts.deleted', '.ndjson', now, n).startsWith('contacts.deleted.')).toBe(true);
      }),
    );
  });

  it('runs of the same second, at once: each its own file', async () => {
    const dir = tempDir('crm-own-');
    const stem = join(dir, 'contacts.deleted');
    const made = await Promise.all(Array.from({ length: 8 }, () => createOwnFile(stem, '.ndjson', NOW)));
    expect(new Set(made).size).toBe(8);
    expect(readdirSync(dir).sort()).toEqual(made.map((p) => p.slice(dir.length + 1)).sort());
    expect(made).toContain(`${stem}.20261128T120000Z.ndjson`);
    expect(made).toContain(`${stem}.20261128T120000Z-8.ndjson`);
    expect(await freeOwnName(stem, '.ndjson', NOW)).toBe(`${stem}.20261128T120000Z-9.ndjson`);
  });

  it('a move never replaces a file: three quick moves keep all three', async () => {
    const dir = tempDir('crm-own-');
    const undo = join(dir, 'people.csv.undo.csv');
    const moved: string[] = [];
    for (const run of ['first', 'second', 'third']) {
      writeFileSync(undo, run);
      moved.push((await moveToOwnName(undo, join(dir, 'people.csv.undo'), '.csv', NOW))!);
    }
    expect(moved.map((p) => readFileSync(p, 'utf8'))).toEqual(['first', 'second', 'third']);
    expect(readdirSync(dir)).toHaveLength(3);
    expect(await moveToOwnName(undo, join(dir, 'people.csv.undo'), '.csv', NOW)).toBeUndefined();
  });
});
