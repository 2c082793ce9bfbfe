// A delete's backup file (issue 19): the ids it holds, read back when a rerun opens it, and a record
// whose id is there already never written again; what a killed run set aside, removed by the next (issue 27).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { HttpClient } from '../../../src/http/types.js';
import { backupIds, keepBefore, openBackup } from '../../../src/import/files/backup.js';
import { runs } from '../../helpers/property.js';

const record = fc.record({ id: fc.string({ minLength: 1 }), email: fc.string() });

describe('backupIds', () => {
  it('the ids of the whole lines, a torn last line (killed mid-write) left out', () => {
    fc.assert(
      fc.property(fc.array(record), record, fc.nat(), (whole, torn, cut) => {
        const text = whole.map((r) => `${JSON.stringify(r)}\n`).join('');
        const line = JSON.stringify(torn);
        const partial = line.slice(0, cut % line.length);
        const ids = backupIds(text + partial);
        expect([...ids].sort()).toEqual([...new Set(whole.map((r) => r.id))].sort());
      }),
      runs(),
    );
  });
});

describe('openBackup', () => {
  it('appends each id once across opens (a rerun), after ending a torn line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crm-backup-unit-'));
    try {
      const path = join(dir, 'b.ndjson');
      writeFileSync(path, `${JSON.stringify({ id: 'a' })}\n{"id":"b`);
      const first = await openBackup(path);
      await Promise.all([
        first.keep({ id: 'a' }),
        first.keep({ id: 'b' }),
        first.keep({ id: 'c' }),
        first.keep({ id: 'b' }),
      ]);
      await first.close();
      const again = await openBackup(path);
      await again.keep({ id: 'c' });
      await again.close();
      const ids = backupIds(readFileSync(path, 'utf8'));
      expect([...ids]).toEqual(['a', 'b', 'c']);
      expect(
        readFileSync(path, 'utf8')
          .split('\n')
          .filter((l) => l.startsWith('{"id"') && l.endsWith('}')),
      ).toHaveLength(3);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a file that cannot be written: exit 2 naming it', async () => {
    const path = join(tmpdir(), 'no-such-folder-crm', 'b.ndjson');
    await expect(openBackup(path)).rejects.toMatchObject({ exitCode: 2, message: expect.stringContaining(path) });
  });
});

describe('a listing set aside', () => {
  it("what a killed run set aside is removed by the next run that opens the backup; a live run's is left", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crm-backup-unit-'));
    try {
      const path = join(dir, 'ids.txt.deleted.ndjson');
      const gone = spawnSync(process.execPath, ['-e', '0']).pid; // a process that has ended
      const killed = `.ids.txt.deleted.ndjson.listed.tmp-${gone}-0a1b2c3d`;
      const live = `.ids.txt.deleted.ndjson.listed.tmp-${process.pid}-0a1b2c3d`;
      const other = `.other.deleted.ndjson.listed.tmp-${gone}-0a1b2c3d`;
      for (const f of [killed, live, other, '.ids.txt.deleted.ndjson.listed']) writeFileSync(join(dir, f), '{}\n');
      const backup = await openBackup(path);
      await backup.close();
      expect(readdirSync(dir).sort()).toEqual([live, other, 'ids.txt.deleted.ndjson'].sort());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is not in the backup until its DELETE is admitted (no GET); the hidden .listed file goes at close', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crm-backup-unit-'));
    try {
      const path = join(dir, 'ids.txt.deleted.ndjson');
      const backup = await openBackup(path);
      const listed = [
        { id: 'a', email: 'ä@example.com', score: 1 },
        { id: 'b', email: 'b@example.com', tags: ['x', 'ÿ'] },
      ];
      expect(await backup.stage(listed)).toBe(2);
      expect(await backup.stage(listed)).toBe(0); // set aside already
      expect(backup.has('a')).toBe(false);
      expect(await backup.staged('a')).toEqual(listed[0]);
      expect(readFileSync(path, 'utf8')).toBe('');
      const hidden = readdirSync(dir).filter((f) => f.startsWith(`.ids.txt.deleted.ndjson.listed.tmp-${process.pid}-`));
      expect(hidden).toHaveLength(1);
      expect(readFileSync(join(dir, hidden[0]!), 'utf8')).toContain('"ä@example.com"');
      const client = {
        request: () => {
          throw new Error('no GET for a record the listing set aside');
        },
      } as unknown as HttpClient;
      const keep = await keepBefore(client, '/contacts/b', 'b', backup);
      // written only when the DELETE is admitted, just before it goes
      expect(backup.has('b')).toBe(false);
      await keep!();
      expect(backup.has('b')).toBe(true);
      expect(await keepBefore(client, '/contacts/b', 'b', backup)).toBeUndefined();
      expect(readFileSync(path, 'utf8')).toBe(`${JSON.stringify(listed[1])}\n`);
      await backup.close();
      expect(readdirSync(dir)).toEqual(['ids.txt.deleted.ndjson']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
