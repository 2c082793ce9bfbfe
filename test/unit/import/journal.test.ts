import { appendFileSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/http/errors.js';
import { ImportJournal, journalPath, openLine, pruneJournals, sealLine, type FinishedChunk } from '../../../src/import/journal.js';
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

describe('sealed lines', () => {
  it('round-trip, and a torn or altered line is refused', () => {
    const line = sealLine({ type: 'chunk', a: [1, 'x"y'] }).trimEnd();
    expect(openLine(line)).toEqual({ type: 'chunk', a: [1, 'x"y'] });
    expect(openLine(line.slice(0, -5))).toBeUndefined();
    expect(openLine(line.replace('x', 'z'))).toBeUndefined();
  });
});

describe('ImportJournal', () => {
  it('is created atomically in the folder (no temp file left), named from content, resource and base URL', async () => {
    const dir = tempDir();
    const j = await open(dir);
    await j.close();
    expect(readdirSync(dir)).toEqual([journalPath(dir, identity).split('/').pop()]);
    expect(statSync(j.path).mode & 0o777).toBe(0o600);
    expect(journalPath(dir, { ...identity, resource: 'deals' })).not.toBe(j.path);
    expect(journalPath(dir, { ...identity, contentSha256: 'cd'.repeat(32) })).not.toBe(j.path);
  });

  it('records finished chunks and loads them on the next open', async () => {
    const dir = tempDir();
    const j = await open(dir);
    await Promise.all([j.record(chunk(1)), j.record(chunk(2))]);
    await j.close();
    const again = await open(dir);
    expect(again.resumedChunks).toBe(2);
    expect(again.get('crm-batch-2')).toEqual(chunk(2));
    expect(again.get('crm-batch-3')).toBeUndefined();
    await again.close();
  });

  it('a torn last line (crash mid-append) is cut off; later appends are intact', async () => {
    const dir = tempDir();
    const j = await open(dir);
    await j.record(chunk(1));
    await j.close();
    appendFileSync(j.path, sealLine({ type: 'chunk', ...chunk(2) }).slice(0, 40));
    const j2 = await open(dir);
    expect(j2.resumedChunks).toBe(1);
    await j2.record(chunk(3));
    await j2.close();
    const j3 = await open(dir);
    expect([j3.get('crm-batch-1'), j3.get('crm-batch-2'), j3.get('crm-batch-3')].map(Boolean)).toEqual([true, false, true]);
    await j3.close();
  });

  it('a damaged line in the middle is skipped, the rest kept', async () => {
    const dir = tempDir();
    const j = await open(dir);
    await j.record(chunk(1));
    await j.record(chunk(2));
    await j.close();
    writeFileSync(j.path, readFileSync(j.path, 'utf8').replace('con_1a', 'con_1X'));
    const j2 = await ImportJournal.peek(dir, identity);
    expect(j2?.size).toBe(1);
    expect(j2?.get('crm-batch-2')).toBeDefined();
  });

  it('a different plan (chunk size, mapping) is refused; --no-resume replaces the journal', async () => {
    const dir = tempDir();
    const j = await open(dir);
    await j.record(chunk(1));
    await j.close();
    await expect(open(dir, { plan: 'p2' })).rejects.toThrow(UsageError);
    const fresh = await open(dir, { plan: 'p2', resume: false });
    expect(fresh.resumedChunks).toBe(0);
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
    expect(p?.completedAt).toBe('2026-01-02T00:00:00.000Z');
    await expect(p!.record(chunk(2))).rejects.toThrow(/read-only/);
  });

  it('pruneJournals removes old finished journals and old leftovers only', async () => {
    const dir = tempDir();
    const done = await open(dir);
    await done.complete(0);
    await done.close();
    const other = await ImportJournal.open(dir, { ...identity, resource: 'deals' }, { plan: 'p', resume: true, input: 'x', now: 0 });
    await other.close();
    writeFileSync(join(dir, 'stdin-1-abc.buf'), 'x');
    writeFileSync(join(dir, 'fresh.jsonl.tmp-1-abcd'), 'x');
    const old = new Date(Date.now() - 40 * 86_400_000);
    for (const f of [done.path, other.path, join(dir, 'stdin-1-abc.buf')]) utimesSync(f, old, old);
    expect(await pruneJournals(dir, Date.now())).toBe(2);
    expect(readdirSync(dir).sort()).toEqual([other.path.split('/').pop(), 'fresh.jsonl.tmp-1-abcd'].sort());
  });
});
