// A delete's backup file (issue 19): the ids it holds, read back when a rerun opens it, and a record
// whose id is there already never written again; what a killed run set aside, removed by the next (issue 27).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ForbiddenError, NotFoundError, ServerError, ValidationError } from '../../../src/http/errors.js';
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

describe('a DELETE refused', () => {
  it("its record's line is blanked at close: the backup holds only records deleted; another run's copy stays", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crm-backup-unit-'));
    try {
      const path = join(dir, 'x.deleted.ndjson');
      const [a, b] = [{ id: 'a', name: 'Ä', n: 1 }, { id: 'b' }];
      const one = await openBackup(path);
      const two = await openBackup(path); // another run appending to the same file
      await one.keep(a);
      await two.keep(a); // it kept the same record: its DELETE goes through
      await one.keep(b);
      one.refused('a');
      expect(one.has('a')).toBe(false); // a later row of this id keeps it again
      one.refused('zzz'); // never kept by this run: nothing
      await one.close();
      await two.close();
      const text = readFileSync(path, 'utf8');
      expect([...backupIds(text)].sort()).toEqual(['a', 'b']);
      expect(text.split('\n').filter((l) => l.trim() === '')).toHaveLength(2); // the blanked line, and the end
      // a run alone: refused, the record is not there at all (and the file reads back as NDJSON)
      const lone = join(dir, 'y.deleted.ndjson');
      const three = await openBackup(lone);
      await three.keep(a);
      three.refused('a');
      await three.close();
      expect(backupIds(readFileSync(lone, 'utf8')).size).toBe(0);
      expect((await openBackup(lone)).has('a')).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a refused DELETE takes back only its own line', () => {
  it('a second DELETE of a record another row deleted (404) takes back nothing; one refused (403) after its keep, its line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crm-backup-unit-'));
    try {
      const path = join(dir, 'z.deleted.ndjson');
      const backup = await openBackup(path);
      const records: Record<string, { id: string; n: number }> = {
        a: { id: 'a', n: 1 },
        b: { id: 'b', n: 2 },
        c: { id: 'c', n: 3 },
        d: { id: 'd', n: 4 },
      };
      const client = {
        request: async (o: { path: string }) => ({ body: { data: records[o.path.split('/').pop()!] } }),
      } as unknown as HttpClient;
      const first = await keepBefore(client, '/contacts/a', 'a', backup, 'contacts');
      await first.beforeSend!(); // its DELETE goes through
      const again = await keepBefore(client, '/contacts/a', 'a', backup, 'contacts');
      expect(again.beforeSend).toBeUndefined(); // held already: nothing written for this DELETE
      again.failed(new NotFoundError('not found', { status: 404 }));
      const b = await keepBefore(client, '/contacts/b', 'b', backup, 'contacts');
      await b.beforeSend!();
      b.failed(new ForbiddenError('this key may not delete', { status: 403 }));
      // retried (429), then refused: the retry's keep finds the line written, and the refusal still takes it back, at once
      const d = await keepBefore(client, '/contacts/d', 'd', backup, 'contacts');
      await d.beforeSend!();
      await d.beforeSend!();
      d.failed(new ValidationError('cannot be deleted', { status: 422 }));
      await backup.keep({ id: 'marker' }); // after the blank in the write queue
      expect(backupIds(readFileSync(path, 'utf8')).has('d')).toBe(false); // before the run ends (a kill then keeps it so)
      const c = await keepBefore(client, '/contacts/c', 'c', backup, 'contacts');
      await c.beforeSend!();
      c.failed(new ServerError('no answer', { status: 503 })); // not a refusal: it may have gone through
      await backup.close();
      expect([...backupIds(readFileSync(path, 'utf8'))]).toEqual(['a', 'marker', 'c']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
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
      const keep = await keepBefore(client, '/contacts/b', 'b', backup, 'contacts');
      // written only when the DELETE is admitted, just before it goes
      expect(backup.has('b')).toBe(false);
      await keep.beforeSend!();
      expect(backup.has('b')).toBe(true);
      expect((await keepBefore(client, '/contacts/b', 'b', backup, 'contacts')).beforeSend).toBeUndefined();
      expect(readFileSync(path, 'utf8')).toBe(`${JSON.stringify(listed[1])}\n`);
      await backup.close();
      expect(readdirSync(dir)).toEqual(['ids.txt.deleted.ndjson']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
