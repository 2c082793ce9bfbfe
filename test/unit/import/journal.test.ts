import { appendFileSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { open as openFile } from 'node:fs/promises';
import { describe, expect, it, vi } from 'vitest';
import { UsageError } from '../../../src/http/errors.js';
import { ImportJournal } from '../../../src/import/journal/journal.js';
import { journalPath, keyIdentity, readComplete, type FinishedChunk } from '../../../src/import/journal/journal.js';
import { pruneJournals } from '../../../src/import/journal/folder.js';
import { tempDir } from './helpers.js';

const identity = { contentSha256: 'ab'.repeat(32), resource: 'contacts', baseUrl: 'http://127.0.0.1:4010/api/v2' };
const open = (dir: string, over: Partial<{ plan: string; resume: boolean }> = {}) =>
  ImportJournal.open(dir, identity, { plan: 'p1', resume: true, input: 'in.csv', now: 0, ...over });
const chunk = (seq: number): FinishedChunk => ({
  seq,
  key: `crm-batch-${seq}`,
  lines: [seq * 10, seq * 10 + 1],
  ids: [`con_${seq}a`, null],
  rejects: [{ i: 1, code: 'VALIDATION_FAILED', message: 'email is required' }],
});

const line = (v: object) => `${JSON.stringify(v)}\n`;

describe('ImportJournal', () => {
  it('is created atomically in the folder (no temp file left), named from content, resource and base URL', async () => {
    const dir = tempDir();
    const j = await open(dir);
    await j.sent(1, 'crm-batch-1');
    await j.close();
    expect(readdirSync(dir)).toEqual([journalPath(dir, identity).split('/').pop()]);
    expect(statSync(j.path).mode & 0o777).toBe(0o600);
    expect(journalPath(dir, { ...identity, resource: 'deals' })).not.toBe(j.path);
    expect(journalPath(dir, { ...identity, contentSha256: 'cd'.repeat(32) })).not.toBe(j.path);
  });

  it('is written at its first line: a run that journals nothing (refused before its first request) leaves none', async () => {
    const dir = tempDir();
    const refused = await open(dir);
    await refused.close();
    expect(readdirSync(dir)).toEqual([]);
    // a run that finished sending nothing is still finished
    const empty = await open(dir);
    await empty.complete(0, { rows: 0, created: 0, failed: 0, invalid: 0 });
    await empty.close();
    expect(
      readFileSync(empty.path, 'utf8')
        .split('\n')
        .map((l) => l.slice(0, 17)),
    ).toEqual(['{"type":"header",', '{"type":"complete', '']);
  });

  it('records finished chunks and loads them on the next open', async () => {
    const dir = tempDir();
    const j = await open(dir);
    await Promise.all([j.record(chunk(1)), j.record(chunk(2))]);
    await j.close();
    const again = await open(dir);
    expect(again.resumedChunks).toBe(2);
    expect(await again.get(2)).toEqual(chunk(2));
    expect(await again.get(3)).toBeUndefined();
    await again.close();
  });

  it('group commit: answers that arrive during an fsync share the next write and fsync; each settles only after an fsync that followed its write', async () => {
    const dir = tempDir();
    const j = await open(dir);
    // its header written first, before the spies
    await j.begin();
    // the FileHandle class, spied on: what was written and synced, in order
    const probe = await openFile(join(dir, 'probe'), 'w');
    const proto = Object.getPrototypeOf(probe) as {
      write: (...a: unknown[]) => Promise<unknown>;
      datasync: () => Promise<void>;
    };
    await probe.close();
    const events: string[] = [];
    const write = proto.write;
    const datasync = proto.datasync;
    const w = vi.spyOn(proto, 'write').mockImplementation(async function (this: unknown, ...a: unknown[]) {
      const r = await write.apply(this, a);
      const seqs = [...String(a[0]).matchAll(/"seq":(\d+)/g)].map((m) => m[1]);
      events.push(`write ${seqs.join(',')}`);
      return r;
    });
    const d = vi.spyOn(proto, 'datasync').mockImplementation(async function (this: unknown) {
      await datasync.apply(this);
      events.push('sync');
    });
    try {
      const first = j.record(chunk(1)).then(() => events.push('done 1'));
      // the others arrive while the first one is being written and synced
      while (!events.includes('write 1')) await new Promise((r) => setImmediate(r));
      const rest = [2, 3, 4, 5, 6].map((n) => j.record(chunk(n)).then(() => events.push(`done ${n}`)));
      await Promise.all([first, ...rest]);
    } finally {
      w.mockRestore();
      d.mockRestore();
    }
    await j.close();
    // the first answer is written alone; the five that came while it was synced, together
    expect(events.filter((e) => e === 'sync')).toHaveLength(2);
    expect(events.filter((e) => e.startsWith('write'))).toEqual(['write 1', 'write 2,3,4,5,6']);
    for (let n = 1; n <= 6; n++) {
      const wrote = events.findIndex((e) => e.startsWith('write') && e.slice(6).split(',').includes(String(n)));
      const synced = events.findIndex((e, i) => e === 'sync' && i > wrote);
      expect(wrote).toBeGreaterThanOrEqual(0);
      expect(synced).toBeGreaterThan(wrote);
      expect(events.indexOf(`done ${n}`)).toBeGreaterThan(synced);
    }
    const again = await open(dir);
    expect(again.resumedChunks).toBe(6);
    await again.close();
  });

  it('a torn last line (crash mid-append) is cut off; later appends are intact', async () => {
    const dir = tempDir();
    const j = await open(dir);
    await j.record(chunk(1));
    await j.close();
    appendFileSync(j.path, line({ type: 'chunk', ...chunk(2) }).slice(0, 40));
    const j2 = await open(dir);
    expect(j2.resumedChunks).toBe(1);
    await j2.record(chunk(3));
    await j2.close();
    const j3 = await open(dir);
    expect((await Promise.all([1, 2, 3].map((n) => j3.get(n)))).map(Boolean)).toEqual([true, false, true]);
    await j3.close();
  });

  it('a damaged line in the middle (not JSON) is skipped, the rest kept', async () => {
    const dir = tempDir();
    const j = await open(dir);
    await j.record(chunk(1));
    await j.record(chunk(2));
    await j.close();
    const [header, , second] = readFileSync(j.path, 'utf8').split('\n');
    writeFileSync(j.path, `${header}\n{"type":"chunk","seq":1,"key":"crm-ba\u0000\n${second}\n`);
    const j2 = await ImportJournal.peek(dir, identity);
    expect(j2?.size).toBe(1);
    expect(await j2?.get(2)).toEqual(chunk(2));
    await j2?.close();
  });

  it('a different plan (chunk size, mapping) is refused; --no-resume replaces the journal', async () => {
    const dir = tempDir();
    const j = await open(dir);
    await j.record(chunk(1));
    await j.close();
    await expect(open(dir, { plan: 'p2' })).rejects.toThrow(UsageError);
    // replaced at the new run's first line: one that journals nothing leaves the earlier journal as it was
    const refused = await open(dir, { plan: 'p2', resume: false });
    expect(refused.resumedChunks).toBe(0);
    await refused.close();
    await expect(open(dir, { plan: 'p2' })).rejects.toThrow(UsageError);
    const fresh = await open(dir, { plan: 'p2', resume: false });
    await fresh.sent(1, 'crm-batch-1');
    await fresh.close();
    const again = await open(dir, { plan: 'p2' });
    expect(again.size).toBe(0);
    await again.close();
  });

  it('a damaged header is a usage error pointing at --no-resume', async () => {
    const dir = tempDir();
    writeFileSync(journalPath(dir, identity), 'garbage\n');
    await expect(open(dir)).rejects.toThrow(/damaged/);
  });

  it('complete() marks it; peek reads without creating', async () => {
    const dir = tempDir();
    expect(await ImportJournal.peek(dir, identity)).toBeUndefined();
    expect(readdirSync(dir)).toEqual([]);
    const j = await open(dir);
    await j.record(chunk(1));
    await j.complete(Date.UTC(2026, 0, 2));
    await j.close();
    const p = await ImportJournal.peek(dir, identity);
    expect(p?.completed?.at).toBe('2026-01-02T00:00:00.000Z');
    await expect(p!.record(chunk(2))).rejects.toThrow(/read-only/);
  });

  it('pruneJournals removes old unfinished journals and stale leftovers, and compacts old finished ones (never forgets them)', async () => {
    const dir = tempDir();
    const done = await open(dir);
    await done.record(chunk(1));
    await done.complete(Date.UTC(2026, 0, 1), { rows: 2, created: 1, failed: 1, invalid: 0 });
    await done.close();
    const stale = await ImportJournal.open(
      dir,
      { ...identity, resource: 'deals' },
      { plan: 'p', resume: true, input: 'x', now: 0 },
    );
    await stale.begin();
    await stale.close();
    const recent = await ImportJournal.open(
      dir,
      { ...identity, resource: 'tasks' },
      { plan: 'p', resume: true, input: 'x', now: 0 },
    );
    await recent.begin();
    await recent.close();
    // leftovers of this (live) process: kept until a day old
    writeFileSync(join(dir, `stdin-${process.pid}-abc.buf`), 'x');
    writeFileSync(join(dir, `fresh.jsonl.tmp-${process.pid}-abcd`), 'x');
    const old = new Date(Date.now() - 40 * 86_400_000);
    for (const f of [done.path, stale.path, join(dir, `stdin-${process.pid}-abc.buf`)]) utimesSync(f, old, old);
    const weeks = new Date(Date.now() - 20 * 86_400_000);
    utimesSync(recent.path, weeks, weeks);
    expect(await pruneJournals(dir, Date.now())).toBe(3); // stale + stdin removed, done compacted
    expect(readdirSync(dir).sort()).toEqual(
      [done.path, recent.path]
        .map((p) => p.split('/').pop()!)
        .concat(`fresh.jsonl.tmp-${process.pid}-abcd`)
        .sort(),
    );
    expect(readFileSync(done.path, 'utf8').trim().split('\n')).toHaveLength(2);
    expect(await readComplete(done.path)).toMatchObject({
      at: '2026-01-01T00:00:00.000Z',
      rows: 2,
      created: 1,
      failed: 1,
      invalid: 0,
      compacted: true,
    });
    const again = await open(dir);
    expect(again.completed).toMatchObject({ compacted: true });
    expect(again.resumedChunks).toBe(0);
    await again.close();
  });

  it('pruneJournals removes leftovers of processes that are gone, and compacts the oldest finished journals beyond the size cap', async () => {
    const dir = tempDir();
    const dead = 2 ** 22 + 12345; // above pid_max on most systems: no such process
    writeFileSync(join(dir, `stdin-${dead}-abc.buf`), 'user data');
    writeFileSync(join(dir, `x.jsonl.tmp-${dead}-abcd`), 'x');
    const a = await ImportJournal.open(
      dir,
      { ...identity, resource: 'deals' },
      { plan: 'p', resume: true, input: 'x', now: 0 },
    );
    for (let i = 1; i <= 20; i++) await a.record(chunk(i));
    await a.complete(0, { rows: 40, created: 20, failed: 20, invalid: 0 });
    await a.close();
    const b = await open(dir);
    for (let i = 1; i <= 20; i++) await b.record(chunk(i));
    await b.complete(0);
    await b.close();
    const older = new Date(Date.now() - 86_400_000);
    utimesSync(a.path, older, older);
    const bSize = statSync(b.path).size;
    // a cap below both: the oldest finished one is compacted, the one to keep is left alone
    expect(await pruneJournals(dir, Date.now(), { maxTotalBytes: 10, keep: b.path })).toBe(3);
    expect(readdirSync(dir).sort()).toEqual([a.path, b.path].map((p) => p.split('/').pop()!).sort());
    expect(statSync(a.path).size).toBeLessThan(1000);
    expect(statSync(b.path).size).toBe(bSize);
  });

  it('sent chunks without an answer are reported as in doubt; a complete line is read from the end alone', async () => {
    const dir = tempDir();
    const j = await open(dir);
    await j.sent(1, 'crm-batch-1');
    await j.record(chunk(1));
    await j.sent(2, 'crm-batch-2');
    await j.sent(3, 'crm-batch-3');
    await j.close();
    const again = await open(dir);
    expect(again.inDoubt()).toEqual([2, 3]);
    expect(again.resumedChunks).toBe(1);
    await again.complete(Date.UTC(2026, 0, 1), { rows: 3, created: 2, failed: 1, invalid: 0 });
    await again.close();
    expect(await readComplete(j.path)).toEqual({
      type: 'complete',
      at: '2026-01-01T00:00:00.000Z',
      rows: 3,
      created: 2,
      failed: 1,
      invalid: 0,
    });
  });

  it('a journal of the earlier format (each line sealed with a "sum") is read as before', async () => {
    const dir = tempDir();
    const sealed = (v: object) => `${JSON.stringify(v).slice(0, -1)},"sum":"0123456789abcdef"}\n`;
    const header = {
      type: 'header',
      version: 1,
      resource: 'contacts',
      base_url: identity.baseUrl,
      content_sha256: identity.contentSha256,
    };
    writeFileSync(
      journalPath(dir, identity),
      sealed({ ...header, plan: 'p1', input: 'in.csv', created_at: '2026-01-01T00:00:00.000Z' }) +
        sealed({ type: 'chunk', ...chunk(1) }) +
        sealed({ type: 'sent', seq: 2, key: 'crm-batch-2' }) +
        sealed({ type: 'sent', seq: 3, key: 'crm-batch-3' }) +
        sealed({ type: 'unsent', seq: 3 }),
    );
    const j = await open(dir);
    expect(j.resumedChunks).toBe(1);
    expect(await j.get(1)).toEqual(chunk(1));
    expect(j.inDoubt()).toEqual([2]);
    await j.complete(0, { rows: 2 });
    await j.close();
    expect(await readComplete(j.path)).toMatchObject({ rows: 2 });
  });

  it('the API key identity is part of the name; a journal from before keys were recorded is adopted', async () => {
    const dir = tempDir();
    expect(keyIdentity('secret-key')).toMatch(/^[0-9a-f]{16}$/);
    expect(keyIdentity('secret-key')).not.toContain('secret');
    expect(keyIdentity(undefined)).toBeUndefined();
    const k1 = { ...identity, keyId: keyIdentity('k1') };
    const k2 = { ...identity, keyId: keyIdentity('k2') };
    expect(journalPath(dir, k1)).not.toBe(journalPath(dir, k2));
    const legacy = await open(dir);
    await legacy.record(chunk(1));
    await legacy.close();
    const adopted = await ImportJournal.open(dir, k1, { plan: 'p1', resume: true, input: 'in.csv', now: 0 });
    expect(adopted.path).toBe(journalPath(dir, k1));
    expect(adopted.resumedChunks).toBe(1);
    await adopted.close();
    const other = await ImportJournal.open(dir, k2, { plan: 'p1', resume: true, input: 'in.csv', now: 0 });
    await other.record(chunk(1));
    await other.close();
    const again = await ImportJournal.open(dir, k2, { plan: 'p1', resume: true, input: 'in.csv', now: 0 });
    expect(again.path).toBe(journalPath(dir, k2));
    expect(readFileSync(again.path, 'utf8')).toContain(`"key_id":"${keyIdentity('k2')}"`);
    expect(readFileSync(again.path, 'utf8')).not.toContain('k2"');
    await again.close();
  });
});
