// A rerun's cost (issue 29): the rows an earlier run's answers rejected are sent again gathered from their chunks, up to
// a chunk's size a request (50 rows of 20 chunks: one request, not 20), and still exactly once across a crash at any
// point of the rerun: a request of rows sent again is journaled with the rows it carries (`parts`), so a resume sends
// the same rows together under the same key (the server replays it) whichever of its answers were journaled.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ApiRecord } from '../../../src/api/envelopes.js';
import { runImport, type ImportDeps, type ImportOptions } from '../../../src/import/engine.js';
import { chunkKey } from '../../../src/import/check/chunker.js';
import { ImportJournal, type FinishedChunk } from '../../../src/import/journal/journal.js';
import { duplicates, fakeServer, type FakeServer } from './fake-server.js';
import { tempDir } from './helpers.js';

const BASE = 'http://127.0.0.1:4010/api/v2';

/** `n` contacts `u{i}@x.io`, in chunks of 100; the server refuses those whose number `refused` says (for now). */
function setup(n: number) {
  const dir = tempDir();
  const input = join(dir, 'people.csv');
  const lines = ['Email,First Name'];
  for (let i = 0; i < n; i++) lines.push(`u${i}@x.io,User ${i}`);
  writeFileSync(input, `${lines.join('\n')}\n`);
  const journalDir = join(dir, 'config', 'imports');
  let t = 1_000;
  const server = fakeServer();
  const refuse = (refused?: (i: number) => boolean): void => {
    server.refuse = refused && ((r: ApiRecord) => refused(Number(/^u(\d+)@/.exec(String(r.email))![1])));
  };
  const deps = (over: Partial<ImportDeps> = {}): ImportDeps => ({
    send: server.send,
    journalDir,
    clock: { now: () => (t += 5) },
    cwd: dir,
    ...over,
  });
  const opts: ImportOptions = { resource: 'contacts', input, baseUrl: BASE };
  const run = (over: Partial<ImportDeps> = {}, concurrency = 1) => runImport({ ...opts, concurrency }, deps(over));
  const journal = (): string =>
    join(
      journalDir,
      readdirSync(journalDir).find((f) => f.endsWith('.jsonl'))!,
    );
  return { server, refuse, run, journal };
}

/** The rows of each request since call `from`. */
const sizes = (server: FakeServer, from: number): number[] => server.calls.slice(from).map((c) => c.records.length);

/** A sender that lets the server write the run's `n`th request, then dies (kill -9) before its answer is journaled. */
function dieAt(server: FakeServer, n: number): ImportDeps['send'] {
  let sent = 0;
  return async (req) => {
    if (++sent < n) return server.send(req);
    await server.send(req);
    throw new Error('killed');
  };
}

/** 250 rows of 2000 refused by a first run; the rerun's requests (three) leave half of them refused again. */
async function partlyFixed(): Promise<ReturnType<typeof setup>> {
  const s = setup(2000);
  s.refuse((i) => i % 8 === 3);
  await s.run();
  s.refuse((i) => i % 16 === 3);
  return s;
}

/** The cause fixed at last: the rows left are created, and every row of the file was created once. */
async function fixedAtLast(s: ReturnType<typeof setup>): Promise<void> {
  s.refuse();
  expect(await s.run()).toMatchObject({ created: 125, failed: 0 });
  expect(duplicates(s.server.created)).toEqual([]);
  expect(s.server.created).toHaveLength(2000);
}

describe('a rerun sends the rejected rows again, gathered', () => {
  it('50 rows rejected in 20 chunks: one request of 50; each row created once; the next rerun sends nothing', async () => {
    const s = setup(2000);
    s.refuse((i) => i % 40 === 7); // rows 7, 47, 87, … : two or three in each of the 20 chunks
    const first = await s.run({}, 4);
    expect(first).toMatchObject({ created: 1950, failed: 50, requests: 20 });
    s.refuse(); // the cause is fixed
    const calls = s.server.calls.length;
    const rerun = await s.run({}, 4);
    expect(rerun).toMatchObject({ created: 50, skipped: 1950, failed: 0, requests: 1, rejects_file: null });
    expect(sizes(s.server, calls)).toEqual([50]);
    expect(duplicates(s.server.created)).toEqual([]);
    expect(s.server.created).toHaveLength(2000);
    expect(await s.run({}, 4)).toMatchObject({ created: 0, skipped: 2000, requests: 0 });
  });

  it('250 rows rejected in 20 chunks: three requests of at most 100, a chunk’s rows never split; rejected again, sent again', async () => {
    const s = setup(2000);
    s.refuse((i) => i % 8 === 3);
    await s.run({}, 4);
    const calls = s.server.calls.length;
    // still refused: the rerun sends them again (rejected again), gathered, and so does the next
    const rerun = await s.run({}, 4);
    expect(rerun).toMatchObject({ created: 0, skipped: 1750, failed: 250, requests: 3 });
    expect(sizes(s.server, calls).sort((a, b) => a - b)).toEqual([50, 100, 100]);
    s.refuse();
    const again = s.server.calls.length;
    expect(await s.run({}, 4)).toMatchObject({ created: 250, skipped: 1750, failed: 0, requests: 3 });
    expect(new Set(s.server.calls.slice(again).map((c) => c.key)).size).toBe(3);
    expect(duplicates(s.server.created)).toEqual([]);
    expect(s.server.created).toHaveLength(2000);
  });

  it('killed after the server wrote the second request of rows sent again: the same command sends those rows together under its key (replayed); each row once', async () => {
    // partly fixed: the first request of the rerun leaves rows rejected again, which the next run gathers anew
    const s = await partlyFixed();
    // the rerun sends only rows again (every chunk was answered): its second request is killed
    await expect(s.run({ send: dieAt(s.server, 2) })).rejects.toThrow('killed');
    const replays = s.server.replays;
    const resumed = await s.run();
    expect(s.server.replays - replays).toBe(1);
    // the first request's rows are journaled, the second's replayed (skipped: made then), the third's made now
    expect(resumed).toMatchObject({ failed: 125, created: 25, skipped: 1850 });
    expect(duplicates(s.server.created)).toEqual([]);
    await fixedAtLast(s);
  });

  it('killed while the answers of such a request were journaled (only its first chunk’s written): the same command sends it again whole, under its key; each row once', async () => {
    const s = await partlyFixed();
    const rerun = await s.run();
    expect(rerun).toMatchObject({ created: 125, failed: 125, requests: 3 });
    // cut the journal after the first answer of the rerun's first request, as a kill -9 in that write leaves it
    const lines = readFileSync(s.journal(), 'utf8').split('\n');
    const group = lines.findIndex((l) => l.includes('"parts":'));
    const { key } = JSON.parse(lines[group]!) as { key: string };
    const answered = lines.findIndex((l, i) => i > group && l.startsWith('{"type":"chunk"') && l.includes(key));
    writeFileSync(s.journal(), lines.slice(0, answered + 1).join('\n') + '\n');
    const replays = s.server.replays;
    const resumed = await s.run();
    // its first request is the cut one (replayed whole), the two after it were sent then too (replayed)
    expect(s.server.replays - replays).toBe(3);
    expect(resumed).toMatchObject({ created: 0, failed: 125, skipped: 1875 });
    expect(duplicates(s.server.created)).toEqual([]);
    await fixedAtLast(s);
  });

  it('one chunk’s rows an earlier crm sent again alone (before gathering) without an answer: sent again alone under that key (replayed)', async () => {
    const s = setup(300);
    s.refuse((i) => i % 10 === 3);
    await s.run();
    s.refuse();
    // that crm's request of chunk 2's rejected rows, under the key it derived from the chunk's answer: written, then killed
    const text = readFileSync(s.journal(), 'utf8');
    const [header, ...rest] = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const answer = rest.find((l) => l.type === 'chunk' && l.seq === 2)!;
    const records = [103, 113, 123, 133, 143, 153, 163, 173, 183, 193].map((i) => ({
      email: `u${i}@x.io`,
      first_name: `User ${i}`,
    }));
    const body = JSON.stringify(records);
    const key = chunkKey(BASE, 'contacts', body, undefined, `${String(header!.run_id)}\0${String(answer.key)}`);
    writeFileSync(s.journal(), `${text}${JSON.stringify({ type: 'sent', seq: 2, key })}\n`);
    await s.server.send({ resource: 'contacts', seq: 2, key, body, records });
    const calls = s.server.calls.length;
    const rerun = await s.run();
    expect(s.server.calls.slice(calls).map((c) => [c.key === key, c.records.length])).toEqual([
      [true, 10],
      [false, 20],
    ]);
    expect(rerun).toMatchObject({ created: 20, skipped: 280, failed: 0 });
    expect(duplicates(s.server.created)).toEqual([]);
    expect(s.server.created).toHaveLength(300);
  });
});

describe('the journal of rows sent again together', () => {
  const identity = { contentSha256: 'cd'.repeat(32), resource: 'contacts', baseUrl: BASE };
  const open = (dir: string) => ImportJournal.open(dir, identity, { plan: 'p', resume: true, input: 'in', now: 0 });
  const chunk = (seq: number, key = `k${seq}`): FinishedChunk => ({
    seq,
    key,
    lines: [seq * 10, seq * 10 + 1, seq * 10 + 2],
    ids: ['a', null, null],
    rejects: [1, 2].map((i) => ({ i, code: 'VALIDATION_FAILED', message: 'no' })),
  });

  it('pins each of its chunks (their rows and its key) until every one is answered; a request that never went out pins none', async () => {
    const dir = tempDir();
    const j = await open(dir);
    await Promise.all([1, 2, 3].map((n) => j.record(chunk(n))));
    await j.sent(1, 'K', [
      [1, [1, 2]],
      [3, [2]],
    ]);
    await j.close();
    const pinned = async () => {
      const p = (await ImportJournal.peek(dir, identity))!;
      return [1, 2, 3].map((n) => p.pinned(n));
    };
    expect(await pinned()).toEqual([{ key: 'K', idx: [1, 2], parts: 2 }, undefined, { key: 'K', idx: [2], parts: 2 }]);
    expect((await ImportJournal.peek(dir, identity))!.inDoubt()).toEqual([1, 3]);
    // one of its answers journaled: both still pinned (the other may be made; the request goes again whole)
    const k = await open(dir);
    await k.record(chunk(1, 'K'));
    await k.unsent(1); // not written: an earlier run's request
    await k.close();
    expect((await pinned()).map((p) => p?.idx)).toEqual([[1, 2], undefined, [2]]);
    const l = await open(dir);
    await l.record(chunk(3, 'K'));
    await l.close();
    expect(await pinned()).toEqual([undefined, undefined, undefined]);
    // sent again and stopped before it went out (Ctrl-C while waiting for the rate limit): nothing pinned
    const m = await open(dir);
    await m.sent(2, 'K2', [[2, [1]]]);
    await m.unsent(2);
    await m.close();
    const peek = (await ImportJournal.peek(dir, identity))!;
    expect([peek.pinned(2), peek.inDoubt()]).toEqual([undefined, []]);
  });
});
