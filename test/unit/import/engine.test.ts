import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { AuthError, InterruptedError, ServerError, UsageError, ValidationError } from '../../../src/http/errors.js';
import {
  importExitCode,
  importSummaryOf,
  runImport,
  type ImportDeps,
  type ImportOptions,
  type ImportProgress,
} from '../../../src/import/engine.js';
import { chunkKey } from '../../../src/import/check/chunker.js';
import { parseHeader } from '../../../src/import/input/header.js';
import { ImportJournal } from '../../../src/import/journal/journal.js';
import { keyIdentity } from '../../../src/import/journal/journal.js';
import { compactJournal } from '../../../src/import/journal/folder.js';
import { rowToRecord } from '../../../src/import/input/header.js';
import { duplicates, fakeServer, settle, type FakeServer } from './fake-server.js';
import { readAll, tempDir } from './helpers.js';

const BASE = 'http://127.0.0.1:4010/api/v2';

function csv(n: number, bad: (i: number) => string | undefined = () => undefined): string {
  const lines = ['Email,First Name,score:number'];
  for (let i = 0; i < n; i++) lines.push(bad(i) ?? `u${i}@x.io,User ${i},${i}`);
  return lines.join('\n') + '\n';
}

function setup(content: string, name = 'people.csv') {
  const dir = tempDir();
  const input = join(dir, name);
  writeFileSync(input, content);
  const journalDir = join(dir, 'config', 'imports');
  let t = 1_000;
  const warnings: string[] = [];
  const progress: ImportProgress[] = [];
  const deps = (server: FakeServer, over: Partial<ImportDeps> = {}): ImportDeps => ({
    send: server.send,
    journalDir,
    clock: { now: () => (t += 5) },
    cwd: dir,
    warn: (m) => warnings.push(m),
    onProgress: (p) => progress.push({ ...p }),
    ...over,
  });
  const opts = (over: Partial<ImportOptions> = {}): ImportOptions => ({
    resource: 'contacts',
    input,
    baseUrl: BASE,
    ...over,
  });
  return { dir, input, journalDir, deps, opts, warnings, progress };
}

/** A run that crashes while chunk 2 (of 10 rows each) is in flight: journaled as sent, never answered. */
async function crashAtChunk2(s: ReturnType<typeof setup>, server: FakeServer): Promise<void> {
  const crash: ImportDeps['send'] = async (req) => {
    if (req.seq === 2) throw new TypeError('boom: process killed');
    return server.send(req);
  };
  await runImport(s.opts({ chunkSize: 10, concurrency: 1 }), s.deps(server, { send: crash })).catch(() => undefined);
}

describe('runImport: sending', () => {
  it('imports every row in chunks and returns the summary', async () => {
    const s = setup(csv(250));
    const server = fakeServer();
    const sum = await runImport(s.opts(), s.deps(server));
    expect(sum).toMatchObject({
      resource: 'contacts',
      rows: 250,
      created: 250,
      failed: 0,
      invalid: 0,
      skipped: 0,
      chunks: 3,
      requests: 3,
      retries: 0,
      rejects_file: null,
    });
    expect(sum.elapsed_ms).toBeGreaterThan(0);
    expect(Object.keys(sum).sort()).toEqual(
      [
        'resource',
        'rows',
        'created',
        'failed',
        'invalid',
        'skipped',
        'chunks',
        'requests',
        'retries',
        'elapsed_ms',
        'rejects_file',
        'in_doubt',
        'unknown',
        'unknown_file',
        'not_sent',
        'reasons',
      ].sort(),
    );
    expect(importExitCode(sum)).toBe(0);
    // chunks go concurrently: they reach the server in any order (CI on Node 24 saw 100, 50, 100)
    expect(server.calls.map((c) => c.records.length).sort((a, b) => b - a)).toEqual([100, 100, 50]);
    expect(server.created.find((r) => r.email === 'u0@x.io')).toMatchObject({
      email: 'u0@x.io',
      first_name: 'User 0',
      score: 0,
    });
    expect(duplicates(server.created)).toEqual([]);
    expect(new Set(server.calls.map((c) => c.key)).size).toBe(3);
    expect(existsSync(`${s.input}.rejects.csv`)).toBe(false);
    expect(readdirSync(s.dir).some((f) => f.includes('.tmp-'))).toBe(false);
    const last = s.progress[s.progress.length - 1]!;
    expect(last).toMatchObject({ phase: 'send', rowsTotal: 250, rows: 250, created: 250, inFlight: 0 });
  });

  it('invalid rows and item errors go to the rejects file with their line, code and message', async () => {
    const s = setup(
      csv(6, (i) => (i === 1 ? 'bad-email,B,1' : i === 3 ? 'c@x.io,C,three' : i === 4 ? 'd@x.io,D' : undefined)),
    );
    const server = fakeServer();
    const sum = await runImport(s.opts({ chunkSize: 2 }), s.deps(server));
    expect(sum).toMatchObject({ rows: 6, created: 3, failed: 1, invalid: 2, rejects_file: `${s.input}.rejects.csv` });
    expect(importExitCode(sum)).toBe(9);
    const rejects = await readAll(sum.rejects_file!);
    expect(rejects.header).toEqual(['Email', 'First Name', 'score:number', '_line', '_error_code', '_error_message']);
    const byLine = Object.fromEntries(rejects.rows.map((r) => [r.cells![3], r.cells]));
    expect(byLine['3']).toEqual(['bad-email', 'B', '1', '3', 'VALIDATION_FAILED', 'email must contain @']);
    expect(byLine['5']).toEqual([
      'c@x.io',
      'C',
      'three',
      '5',
      'INVALID_VALUE',
      'column "score:number": "three" is not a number',
    ]);
    expect(byLine['6']).toEqual(['d@x.io', 'D', '', '6', 'INVALID_COLUMN_COUNT', 'expected 3 columns, got 2']);
    // invalid rows are never sent
    expect(server.calls.flatMap((c) => c.records.map((r) => r.email))).not.toContain('c@x.io');
  });

  it('the rejects file, fed back, parses to the same records', async () => {
    const header = 'Email,Full Name,amount:number,tags:list,active:boolean,meta:json';
    const rows = [
      'no-at-1,"Doe, Jane",12.5,a;b,yes,"{""k"":[1,2]}"',
      'no-at-2,"multi\nline ""quoted""",,x,0,',
      'ok@x.io,Fine,1,,true,',
    ];
    const s = setup(`\ufeff${header}\r\n${rows.join('\r\n')}\r\n`);
    const sum = await runImport(s.opts(), s.deps(fakeServer()));
    expect(sum).toMatchObject({ created: 1, failed: 2 });
    const mapping = parseHeader(header.split(','));
    const original = await readAll(s.input);
    const back = await readAll(sum.rejects_file!);
    const backMapping = parseHeader(back.header!);
    const want = original.rows.slice(0, 2).map((r) => rowToRecord(r.cells!, mapping));
    const got = back.rows.map((r) => rowToRecord(r.cells!, backMapping));
    expect(got).toEqual(want);
    expect(want[0]).toEqual({
      ok: true,
      record: {
        email: 'no-at-1',
        full_name: 'Doe, Jane',
        amount: 12.5,
        tags: ['a', 'b'],
        active: true,
        meta: { k: [1, 2] },
      },
    });
    // and importing it again rejects them again, without duplicating the _ columns
    const again = await runImport(
      s.opts({ input: sum.rejects_file!, rejectsPath: join(s.dir, 'r2.csv') }),
      s.deps(fakeServer()),
    );
    expect(again).toMatchObject({ rows: 2, failed: 2 });
    expect((await readAll(join(s.dir, 'r2.csv'))).header).toEqual([
      ...header.split(','),
      '_line',
      '_error_code',
      '_error_message',
    ]);
  });

  it('--results writes _line, id and the original columns of every created row', async () => {
    const s = setup(csv(3, (i) => (i === 1 ? 'nope,N,1' : undefined)));
    const results = join(s.dir, 'results.csv');
    await runImport(s.opts({ resultsPath: results }), s.deps(fakeServer()));
    const r = await readAll(results);
    expect(r.header).toEqual(['_line', 'id', 'Email', 'First Name', 'score:number']);
    expect(r.rows.map((x) => x.cells)).toEqual([
      ['2', 'con_1', 'u0@x.io', 'User 0', '0'],
      ['4', 'con_2', 'u2@x.io', 'User 2', '2'],
    ]);
  });

  it('never has more than `concurrency` chunks in flight, and reads at most one chunk ahead while they are busy', async () => {
    const s = setup(csv(1000));
    const server = fakeServer();
    server.hold = true;
    const run = runImport(s.opts({ chunkSize: 10, concurrency: 3 }), s.deps(server));
    // the first chunk goes alone (if its rows all failed alike, the run would stop there)
    await server.waitPending(1);
    await settle();
    expect(server.calls).toHaveLength(1);
    server.releaseAll();
    let released = 1;
    while (released < 100) {
      await server.waitPending(Math.min(3, 100 - released));
      await settle(); // give the engine every chance to read on or start more
      const sending = s.progress.filter((p) => p.phase === 'send');
      const rowsRead = sending.length ? sending[sending.length - 1]!.rows : 0;
      // three chunks out, a fourth waiting for a slot and a fifth being filled at most
      expect(rowsRead).toBeLessThanOrEqual((server.calls.length + 2) * 10);
      expect(server.pending.length).toBeLessThanOrEqual(3);
      released += server.pending.length;
      server.releaseAll();
    }
    const sum = await run;
    expect(sum.created).toBe(1000);
    expect(server.maxInFlight).toBe(3);
  });

  it('a header-only file sends nothing', async () => {
    const s = setup('email,name\n');
    const server = fakeServer();
    expect(await runImport(s.opts(), s.deps(server))).toMatchObject({ rows: 0, created: 0, chunks: 0 });
    expect(server.calls).toEqual([]);
  });

  it('an empty file is a UsageError naming the file; nothing is sent', async () => {
    const s = setup('');
    const server = fakeServer();
    const err = await runImport(s.opts(), s.deps(server)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toContain('people.csv is empty');
    expect(server.calls).toEqual([]);
  });

  it('an unclosed quote is an invalid row; the rows around it are sent (more in unclosed-quote.test.ts)', async () => {
    const s = setup(csv(300) + '"z@x.io,Z,1\n');
    const server = fakeServer();
    const sum = await runImport(s.opts(), s.deps(server));
    expect(sum).toMatchObject({ rows: 301, created: 300, invalid: 1 });
    expect(server.created).toHaveLength(300);
  });

  it('reads NDJSON; a bad line is an invalid row, rejects are NDJSON', async () => {
    const s = setup('{"email":"a@x.io","n":1}\n{"email":\n{"email":"b"}\n', 'people.ndjson');
    const server = fakeServer();
    const sum = await runImport(s.opts(), s.deps(server));
    expect(sum).toMatchObject({
      rows: 3,
      created: 1,
      invalid: 1,
      failed: 1,
      rejects_file: `${s.input}.rejects.ndjson`,
    });
    const lines = readFileSync(sum.rejects_file!, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toContainEqual(expect.objectContaining({ _raw: '{"email":', _line: 2, _error_code: 'INVALID_JSON' }));
    expect(lines).toContainEqual({
      email: 'b',
      _line: 3,
      _error_code: 'VALIDATION_FAILED',
      _error_message: 'email must contain @',
    });
  });

  it('reads standard input through a temporary copy, removed afterwards; the same content resumes', async () => {
    const s = setup('');
    const content = csv(30);
    const server = fakeServer();
    const sum = await runImport(
      s.opts({ input: '-', chunkSize: 10 }),
      s.deps(server, { stdin: Readable.from([content]) }),
    );
    expect(sum).toMatchObject({ rows: 30, created: 30 });
    expect(readdirSync(s.journalDir).filter((f) => f.startsWith('stdin-'))).toEqual([]);
    const again = await runImport(
      s.opts({ input: '-', chunkSize: 10 }),
      s.deps(server, { stdin: Readable.from([content]) }),
    );
    expect(again).toMatchObject({ created: 0, skipped: 30, chunks: 0 });
    expect(server.calls).toHaveLength(3);
  });

  it('refuses a batch for a resource without batch-create, and bad sizes', async () => {
    const s = setup(csv(1));
    await expect(runImport(s.opts({ resource: 'meetings' }), s.deps(fakeServer()))).rejects.toThrow(
      /cannot be batch-created/,
    );
    await expect(runImport(s.opts({ chunkSize: 101 }), s.deps(fakeServer()))).rejects.toThrow(/--chunk-size/);
    await expect(runImport(s.opts({ concurrency: 0 }), s.deps(fakeServer()))).rejects.toThrow(/--concurrency/);
    await expect(runImport(s.opts({ rejectsPath: s.input }), s.deps(fakeServer()))).rejects.toThrow(
      /input file itself/,
    );
    await expect(runImport(s.opts({ resultsPath: `${s.input}.rejects.csv` }), s.deps(fakeServer()))).rejects.toThrow(
      /different files/,
    );
    await expect(
      runImport(s.opts({ rejectsPath: join(s.dir, 'no', 'such', 'dir.csv') }), s.deps(fakeServer())),
    ).rejects.toThrow(/cannot write/);
  });

  it('rows repeating an earlier row are not sent: skipped, named, and the parts still add up to the rows', async () => {
    const s = setup('email,n\n' + 'same@x.io,1\nother@x.io,1\nsame@x.io,1\nsame@x.io,1\n');
    const server = fakeServer();
    const sum = await runImport(s.opts({ chunkSize: 2 }), s.deps(server));
    expect(server.calls.map((c) => c.records.length)).toEqual([2]);
    expect(sum).toMatchObject({
      rows: 4,
      created: 2,
      skipped: 2,
      repeated: 2,
      failed: 0,
      not_sent: 0,
      rejects_file: null,
    });
    expect(s.warnings.join('\n')).toMatch(/line 4 repeats line 2: skipped\n {2}line 5 repeats line 2: skipped/);
    // the rerun of the finished import reports them as skipped too, and sends nothing
    const again = await runImport(s.opts({ chunkSize: 2 }), s.deps(server));
    expect(again).toMatchObject({ rows: 4, created: 0, skipped: 4 });
    expect(server.calls).toHaveLength(1);
  });
});

describe('runImport: --strict and --dry-run', () => {
  it('--strict sends nothing when any row is invalid, and lists the first invalid rows', async () => {
    const s = setup(csv(50, (i) => (i % 10 === 3 ? `x${i}@x.io,X,notanumber` : undefined)));
    const server = fakeServer();
    const err = await runImport(s.opts({ strict: true }), s.deps(server)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as UsageError).exitCode).toBe(2);
    expect((err as Error).message).toMatch(
      /5 of 50 rows are invalid; nothing was sent \(--strict\)\n {2}line 5: column "score:number"/,
    );
    expect(server.calls).toEqual([]);
  });

  it('--strict with a clean file imports it', async () => {
    const s = setup(csv(5));
    expect(await runImport(s.opts({ strict: true }), s.deps(fakeServer()))).toMatchObject({ created: 5 });
  });

  it('--dry-run prints the plan and sends and writes nothing', async () => {
    const s = setup(csv(250, (i) => (i === 7 ? 'a@x.io,A,x' : undefined)));
    const server = fakeServer();
    const sum = await runImport(s.opts({ dryRun: true }), s.deps(server));
    expect(sum.plan).toEqual({
      rows: 250,
      valid: 249,
      invalid: 1,
      repeated: 0,
      chunks: 3,
      chunk_size: 100,
      concurrency: 4,
      finished_chunks: 0,
      first_invalid: [{ line: 9, code: 'INVALID_VALUE', reason: 'column "score:number": "x" is not a number' }],
      mapping: [
        { column: 'Email', field: 'email', type: 'string', ignored: false, read_only: false },
        { column: 'First Name', field: 'first_name', type: 'string', ignored: false, read_only: false },
        { column: 'score:number', field: 'score', type: 'number', ignored: false, read_only: false },
      ],
    });
    expect(sum).toMatchObject({ rows: 250, invalid: 1, created: 0, requests: 0, rejects_file: null });
    expect(server.calls).toEqual([]);
    expect(existsSync(s.journalDir) ? readdirSync(s.journalDir) : []).toEqual([]);
    expect(readdirSync(s.dir)).toEqual(['people.csv']);
  });
});

describe('runImport: failures, resume and idempotency', () => {
  it('a chunk that fails after its retries is in doubt, not a reject (it may have been written), not journaled; the rerun sends it again under the same key', async () => {
    const s = setup(csv(300));
    const server = fakeServer();
    server.fault = (req) => (req.seq === 2 ? 'before' : undefined);
    const first = await runImport(s.opts(), s.deps(server));
    expect(first).toMatchObject({ created: 200, failed: 100, in_doubt: 100, chunks: 3, rejects_file: null });
    expect(existsSync(`${s.input}.rejects.csv`)).toBe(false);
    const failedKey = server.calls.find((c) => c.seq === 2)!.key;

    server.fault = undefined;
    const second = await runImport(s.opts(), s.deps(server));
    expect(second).toMatchObject({ created: 100, skipped: 200, failed: 0, chunks: 1, rejects_file: null });
    expect(server.calls.slice(3).map((c) => c.key)).toEqual([failedKey]);
    expect(duplicates(server.created)).toEqual([]);
    expect(server.created).toHaveLength(300);
  });

  it('a whole chunk refused with a 4xx is a reject and journaled; a rerun sends those rows again under a new key (issue 17), the rest skipped', async () => {
    const s = setup(csv(300));
    const server = fakeServer();
    server.fault = (req) =>
      req.seq === 2 ? new ValidationError('too many fields', { status: 422, code: 'VALIDATION_FAILED' }) : undefined;
    const first = await runImport(s.opts(), s.deps(server));
    expect(first).toMatchObject({ created: 200, failed: 100, in_doubt: 0, rejects_file: `${s.input}.rejects.csv` });
    expect((await readAll(first.rejects_file!)).rows).toHaveLength(100);
    const refusedKey = server.calls.find((c) => c.seq === 2)!.key;
    server.fault = undefined;
    const calls = server.calls.length;
    const second = await runImport(s.opts(), s.deps(server));
    expect(second).toMatchObject({ created: 100, skipped: 200, failed: 0, requests: 1, rejects_file: null });
    expect(server.calls.slice(calls).map((c) => [c.seq, c.key === refusedKey])).toEqual([[2, false]]);
    expect(s.warnings.some((w) => /left 100 rows not created: those rows are sent again/.test(w))).toBe(true);
    expect(duplicates(server.created)).toEqual([]);
    expect(server.created).toHaveLength(300);
    // finished now: nothing more is sent
    const third = await runImport(s.opts(), s.deps(server));
    expect(third).toMatchObject({ created: 0, skipped: 300, requests: 0 });
  });

  it('rows rejected by the server, once their rejects file was imported, are not sent again by a rerun of the original', async () => {
    const s = setup(csv(300));
    const server = fakeServer();
    server.fault = (req) =>
      req.seq === 2 ? new ValidationError('too many fields', { status: 422, code: 'VALIDATION_FAILED' }) : undefined;
    const first = await runImport(s.opts(), s.deps(server));
    expect(first).toMatchObject({ created: 200, failed: 100 });
    server.fault = undefined;
    const fixed = await runImport(s.opts({ input: first.rejects_file! }), s.deps(server));
    expect(fixed).toMatchObject({ created: 100, failed: 0 });
    const calls = server.calls.length;
    const again = await runImport(s.opts(), s.deps(server));
    expect(again).toMatchObject({ created: 0, skipped: 200, failed: 100, requests: 0 });
    expect(server.calls).toHaveLength(calls);
    expect(server.created).toHaveLength(300);
  });

  it('rows the batch answer says nothing about go to the unknown file, never to the rejects file', async () => {
    const s = setup(csv(10, (i) => (i === 7 ? 'bad,x,1' : undefined)));
    const server = fakeServer();
    const inner = server.send;
    const send: typeof inner = async (req) => {
      const res = await inner(req);
      const items = res.envelope.data.items.filter((it) => it.index !== 2);
      return { ...res, envelope: { ...res.envelope, data: { ...res.envelope.data, items } } };
    };
    const sum = await runImport(s.opts(), s.deps(server, { send }));
    expect(sum).toMatchObject({
      failed: 2,
      unknown: 1,
      in_doubt: 0,
      unknown_file: join(s.dir, 'people.csv.unknown.csv'),
      rejects_file: `${s.input}.rejects.csv`,
    });
    expect((await readAll(sum.rejects_file!)).rows.map((r) => r.cells![4])).toEqual(['VALIDATION_FAILED']);
    expect((await readAll(sum.unknown_file!)).rows.map((r) => r.cells![4])).toEqual(['NO_ITEM_RESULT']);
    // the finished import, rerun, sends the rejected row again (rejected again), never the unknown one
    const calls = server.calls.length;
    const again = await runImport(s.opts(), s.deps(server, { send }));
    expect(again).toMatchObject({
      requests: 1,
      failed: 2,
      unknown: 1,
      unknown_file: sum.unknown_file,
      rejects_file: sum.rejects_file,
    });
    expect(
      server.calls
        .slice(calls)
        .map((c) => JSON.parse(c.body) as unknown[])
        .map((b) => b.length),
    ).toEqual([1]);
  });

  it('a chunk written by the server but answered with 500 is replayed on rerun, not created twice', async () => {
    const s = setup(csv(300));
    const server = fakeServer();
    server.fault = (req) => (req.seq === 3 ? 'after' : undefined);
    const first = await runImport(s.opts(), s.deps(server));
    expect(first).toMatchObject({ created: 200, failed: 100 });
    server.fault = undefined;
    const second = await runImport(s.opts(), s.deps(server));
    // the replayed chunk's rows were created by the first run: skipped, not created by this one
    expect(second).toMatchObject({ created: 0, skipped: 300 });
    expect(server.replays).toBe(1);
    expect(server.created).toHaveLength(300);
    expect(duplicates(server.created)).toEqual([]);
  });

  it('crash between chunks: a fresh engine skips the finished chunks without sending, even when the server forgot its keys', async () => {
    const s = setup(csv(500));
    const server = fakeServer();
    // a bug-like failure (not a CrmError) stops the run, like a crash, after 2 chunks
    server.fault = (_req, n) => (n === 3 ? new Error('process died') : undefined);
    const err = await runImport(s.opts({ concurrency: 1 }), s.deps(server)).catch((e: unknown) => e);
    expect((err as Error).message).toBe('process died');
    expect(importSummaryOf(err)).toMatchObject({ created: 200, chunks: 3 });
    const journal = await ImportJournal.peek(s.journalDir, {
      contentSha256: (await import('node:crypto')).createHash('sha256').update(readFileSync(s.input)).digest('hex'),
      resource: 'contacts',
      baseUrl: BASE,
    });
    expect(journal?.size).toBe(2);

    server.fault = undefined;
    server.forget();
    const sentBefore = server.calls.length;
    const second = await runImport(s.opts({ concurrency: 1 }), s.deps(server));
    expect(second).toMatchObject({ created: 300, skipped: 200, chunks: 3 });
    expect(server.calls.slice(sentBefore).map((c) => c.seq)).toEqual([3, 4, 5]);
    expect(duplicates(server.created)).toEqual([]);
    expect(s.warnings.some((w) => w.includes('resuming: 2 chunks'))).toBe(true);
  });

  it('a crash after the server wrote but before the journal: the rerun replays under the same key', async () => {
    const s = setup(csv(200));
    const server = fakeServer();
    let crashed = false;
    const inner = server.send;
    const deps = s.deps(server, {
      send: async (req) => {
        const res = await inner(req);
        if (req.seq === 2 && !crashed) {
          crashed = true;
          throw new Error('killed');
        }
        return res;
      },
    });
    await expect(runImport(s.opts({ concurrency: 1 }), deps)).rejects.toThrow('killed');
    const second = await runImport(s.opts({ concurrency: 1 }), s.deps(server));
    expect(second).toMatchObject({ created: 0, skipped: 200 });
    expect(server.replays).toBe(1);
    expect(server.created).toHaveLength(200);
  });

  it('a journal from before run ids: its chunk in doubt is sent again under the key of that time (replayed, not created twice)', async () => {
    const s = setup(csv(200));
    const server = fakeServer();
    let crashed = false;
    const inner = server.send;
    const crash = s.deps(server, {
      send: async (req) => {
        if (req.seq === 2 && !crashed) {
          crashed = true;
          // the server wrote it under the key of before run ids; then the process died
          await inner({ ...req, key: chunkKey(BASE, 'contacts', req.body) });
          throw new Error('killed');
        }
        return inner(req);
      },
    });
    await expect(runImport(s.opts({ concurrency: 1 }), crash)).rejects.toThrow('killed');
    const [name] = readdirSync(s.journalDir).filter((f) => f.endsWith('.jsonl'));
    const path = join(s.journalDir, name!);
    const [head, ...rest] = readFileSync(path, 'utf8').split('\n');
    const { run_id: _run, ...legacy } = JSON.parse(head!) as Record<string, unknown>;
    writeFileSync(path, [JSON.stringify(legacy), ...rest].join('\n'));
    const second = await runImport(s.opts({ concurrency: 1 }), s.deps(server));
    expect(second).toMatchObject({ created: 0, skipped: 200 });
    expect(server.replays).toBe(1);
    expect(server.created).toHaveLength(200);
    expect(duplicates(server.created)).toEqual([]);
  });

  it('a finished import rerun sends nothing and says so; --no-resume is a new run: fresh keys, every row created again', async () => {
    const s = setup(csv(120));
    const server = fakeServer();
    await runImport(s.opts(), s.deps(server));
    const again = await runImport(s.opts(), s.deps(server));
    expect(again).toMatchObject({ rows: 120, created: 0, skipped: 120, chunks: 0, requests: 0 });
    expect(s.warnings.some((w) => w.includes('already imported'))).toBe(true);
    expect(server.calls).toHaveLength(2);
    // --no-resume ignores the journal and starts a new run with keys of its own: the server does not answer from the first run's
    const forced = await runImport(s.opts({ resume: false }), s.deps(server));
    expect(forced).toMatchObject({ chunks: 2, created: 120, skipped: 0 });
    expect(server.replays).toBe(0);
    expect(server.created).toHaveLength(240);
  });

  it('rejects from finished chunks are written again by the rerun, never twice', async () => {
    const s = setup(csv(200, (i) => (i === 5 ? 'bad,B,5' : undefined)));
    const server = fakeServer();
    server.fault = (req) => (req.seq === 2 ? 'before' : undefined);
    await runImport(s.opts(), s.deps(server));
    server.fault = undefined;
    const second = await runImport(s.opts(), s.deps(server));
    expect(second).toMatchObject({ created: 100, skipped: 99, failed: 1 });
    const rejects = await readAll(second.rejects_file!);
    expect(rejects.rows.map((r) => r.cells![3])).toEqual(['7']);
  });

  it('a different --chunk-size after a run that created rows is another job over the same rows: refused, nothing sent', async () => {
    const s = setup(csv(300));
    const server = fakeServer();
    server.fault = (req) => (req.seq === 3 ? 'before' : undefined);
    await runImport(s.opts(), s.deps(server));
    const n = server.calls.length;
    await expect(runImport(s.opts({ chunkSize: 50 }), s.deps(server))).rejects.toThrow(
      /with other options .*rows were created then; nothing was sent/,
    );
    expect(server.calls).toHaveLength(n);
  });

  it('an authentication failure stops the import: rows not sent are not rejects, the error keeps its class', async () => {
    const s = setup(csv(500));
    const server = fakeServer();
    server.fault = (req) => (req.seq >= 2 ? new AuthError('bad key', { status: 401 }) : undefined);
    const err = await runImport(s.opts({ concurrency: 1 }), s.deps(server)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AuthError);
    expect(importSummaryOf(err)).toMatchObject({ created: 100, failed: 0, rejects_file: null });
    expect(server.calls).toHaveLength(2);
  });

  it('a thrown non-Error (a bug) stops the import with its content in the message, not "[object Object]"', async () => {
    const s = setup(csv(10));
    const server = fakeServer();
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- a non-Error is the point of the test
    const send: ImportDeps['send'] = () => Promise.reject({ code: 'WEIRD', detail: 'from a bug' });
    const err = await runImport(s.opts(), s.deps(server, { send })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toContain("code: 'WEIRD'");
    expect(importSummaryOf(err)).toMatchObject({ created: 0 });
  });

  it('stops after 5 chunks fail in a row', async () => {
    const s = setup(csv(1000));
    const server = fakeServer();
    server.fault = () => 'before';
    const err = await runImport(s.opts({ concurrency: 1, chunkSize: 10 }), s.deps(server)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServerError);
    expect((err as ServerError).message).toMatch(/^stopped after 5 chunks in a row failed; the last: injected 500/);
    expect((err as ServerError).hint).toMatch(/a rerun skips the finished chunks/);
    expect(server.calls).toHaveLength(5);
    expect(importSummaryOf(err)).toMatchObject({ failed: 50, created: 0 });
  });

  it('uses the client counters for requests and retries when given', async () => {
    const s = setup(csv(10));
    let stats = { requests: 7, retries: 1 };
    const server = fakeServer();
    const inner = server.send;
    const sum = await runImport(
      s.opts(),
      s.deps(server, {
        stats: () => stats,
        send: async (req) => {
          stats = { requests: stats.requests + 3, retries: stats.retries + 2 };
          return inner(req);
        },
      }),
    );
    expect(sum).toMatchObject({ requests: 3, retries: 2 });
  });
});

describe('runImport: abort', () => {
  it('stops starting chunks, waits for those in flight, journals them, then throws InterruptedError (130)', async () => {
    const s = setup(csv(1000));
    const server = fakeServer();
    server.hold = true;
    const ac = new AbortController();
    const run = runImport(s.opts({ chunkSize: 10, concurrency: 2 }), s.deps(server, { signal: ac.signal })).catch(
      (e: unknown) => e,
    );
    await server.waitPending(1); // the first chunk goes alone
    server.releaseAll();
    await server.waitPending(2);
    server.releaseAll();
    await server.waitPending(2);
    await settle();
    expect(server.pending.length).toBe(2);
    ac.abort();
    server.releaseAll();
    const err = await run;
    expect(err).toBeInstanceOf(InterruptedError);
    expect((err as InterruptedError).exitCode).toBe(130);
    // how far it got: 5 of 100 chunks answered, 50 rows created, 950 left
    expect((err as Error).message).toBe(
      'interrupted after 5 of 100 chunks: 50 rows created; 950 rows of 1,000 left (not sent yet), not in the rejects file',
    );
    // the summary is printed by the command: not repeated as details
    expect((err as InterruptedError).details).toEqual([]);
    const sum = importSummaryOf(err)!;
    expect(sum.created).toBe(50);
    expect(server.calls).toHaveLength(5);

    server.hold = false;
    const second = await runImport(s.opts({ chunkSize: 10, concurrency: 2 }), s.deps(server));
    expect(second).toMatchObject({ skipped: 50, created: 950 });
    expect(duplicates(server.created)).toEqual([]);
    expect(server.created).toHaveLength(1000);
  });

  it('aborted before sending: nothing is sent', async () => {
    const s = setup(csv(10));
    const server = fakeServer();
    const ac = new AbortController();
    ac.abort();
    await expect(runImport(s.opts(), s.deps(server, { signal: ac.signal }))).rejects.toBeInstanceOf(InterruptedError);
    expect(server.calls).toEqual([]);
  });
});

describe('runImport: a changed file at the same path', () => {
  const fix = (n: number, bad: number) => csv(n, (i) => (i === bad ? `u${i}@x.io,User ${i},oops` : undefined));

  it('a file fixed in place after a partial import is refused (exit 2, nothing sent), pointing at the rejects file and --no-resume', async () => {
    const s = setup(fix(1000, 500));
    const server = fakeServer();
    const first = await runImport(s.opts(), s.deps(server));
    expect(first).toMatchObject({ created: 999, invalid: 1 });
    writeFileSync(s.input, csv(1000)); // the cell fixed in place
    const err = await runImport(s.opts(), s.deps(server)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as UsageError).exitCode).toBe(2);
    expect((err as Error).message).toMatch(
      /people\.csv has changed since it was imported into contacts .*nothing was sent/,
    );
    expect((err as UsageError).hint).toMatch(/people\.csv\.rejects\.csv.*--no-resume/);
    expect(server.created).toHaveLength(999);
    // the safe path: the fixed rejects file creates exactly the missing row
    const rejects = readFileSync(`${s.input}.rejects.csv`, 'utf8').replace(',oops,', ',500,');
    const rj = join(s.dir, 'fixed.csv');
    writeFileSync(rj, rejects);
    expect(await runImport(s.opts({ input: rj }), s.deps(server))).toMatchObject({ created: 1 });
    expect(server.created).toHaveLength(1000);
    expect(duplicates(server.created)).toEqual([]);
    // still refused later (the earlier journal is still there), also after a server rejection fixed in place
    expect(await runImport(s.opts(), s.deps(server)).catch((e: unknown) => e)).toBeInstanceOf(UsageError);
  });

  it('a row the server rejected, fixed in place, does not duplicate the rest of its chunk', async () => {
    const s = setup(csv(150, (i) => (i === 120 ? `nope,User ${i},${i}` : undefined)));
    const server = fakeServer();
    expect(await runImport(s.opts(), s.deps(server))).toMatchObject({ created: 149, failed: 1 });
    writeFileSync(s.input, csv(150));
    await expect(runImport(s.opts(), s.deps(server))).rejects.toThrow(/has changed since/);
    expect(server.created).toHaveLength(149);
  });

  it('--no-resume imports the changed file knowingly and supersedes the older journal; its rerun resumes normally', async () => {
    const s = setup(csv(10));
    const server = fakeServer();
    await runImport(s.opts(), s.deps(server));
    writeFileSync(s.input, csv(11));
    // one chunk of 11 rows: another key, so all of them are created again, as the refusal said
    expect(await runImport(s.opts({ resume: false }), s.deps(server))).toMatchObject({ created: 11 });
    expect(readdirSync(s.journalDir).filter((f) => f.endsWith('.jsonl'))).toHaveLength(1);
    expect(await runImport(s.opts(), s.deps(server))).toMatchObject({ created: 0, skipped: 11 });
    expect(server.created).toHaveLength(21);
  });

  it('an earlier import that sent nothing (only its header) does not block', async () => {
    const s = setup(csv(10));
    const ac = new AbortController();
    ac.abort();
    const server = fakeServer();
    // stops before anything is journaled or sent
    await runImport(s.opts(), s.deps(server, { signal: ac.signal })).catch(() => undefined);
    writeFileSync(s.input, csv(11));
    expect(await runImport(s.opts(), s.deps(server))).toMatchObject({ created: 11 });
  });

  it('the same file under another API key is refused (its rows would be created again); --no-resume imports it knowingly; the key is never stored', async () => {
    const s = setup(csv(10));
    const server = fakeServer();
    await runImport(s.opts({ keyId: keyIdentity('key-one') }), s.deps(server));
    const calls = server.calls.length;
    const err = await runImport(s.opts({ keyId: keyIdentity('key-two') }), s.deps(server)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as UsageError).message).toMatch(
      /was imported into contacts at .* with another API key .*nothing was sent/,
    );
    expect((err as UsageError).hint).toMatch(/--no-resume/);
    expect(server.calls.length).toBe(calls);
    const again = await runImport(s.opts({ keyId: keyIdentity('key-two'), resume: false }), s.deps(server));
    // sent (this fake's idempotency cache is not per key, so it replays: skipped, not created)
    expect(again.created + again.skipped).toBe(10);
    expect(server.calls.length).toBeGreaterThan(calls);
    // that key now has its journal: its rerun resumes (nothing sent), and so does the first key's
    expect(await runImport(s.opts({ keyId: keyIdentity('key-two') }), s.deps(server))).toMatchObject({
      created: 0,
      skipped: 10,
      requests: 0,
    });
    expect(await runImport(s.opts({ keyId: keyIdentity('key-one') }), s.deps(server))).toMatchObject({
      created: 0,
      skipped: 10,
      requests: 0,
    });
    for (const f of readdirSync(s.journalDir))
      expect(readFileSync(join(s.journalDir, f), 'utf8')).not.toContain('key-');
  });

  it('another key whose import created nothing (chunks refused whole by a 4xx) does not block; one with a chunk in doubt does', async () => {
    const refusing = fakeServer();
    refusing.fault = () => new ValidationError('no', { status: 422, code: 'VALIDATION_FAILED' });
    const s = setup(csv(10));
    expect(await runImport(s.opts({ keyId: keyIdentity('key-one') }), s.deps(refusing))).toMatchObject({
      created: 0,
      failed: 10,
    });
    expect(await runImport(s.opts({ keyId: keyIdentity('key-two') }), s.deps(fakeServer()))).toMatchObject({
      created: 10,
    });

    const failing = fakeServer();
    failing.fault = () => 'before';
    const d = setup(csv(12));
    expect(await runImport(d.opts({ keyId: keyIdentity('key-one') }), d.deps(failing))).toMatchObject({ in_doubt: 12 });
    const err = await runImport(d.opts({ keyId: keyIdentity('key-two') }), d.deps(fakeServer())).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UsageError);
  });
});

describe('runImport: resuming cheaply', () => {
  it("a finished import is answered from its journal's last line: nothing sent, the earlier totals", async () => {
    const s = setup(csv(250, (i) => (i === 4 ? 'x@x.io,X,nan' : undefined)));
    const server = fakeServer();
    const first = await runImport(s.opts(), s.deps(server));
    expect(first).toMatchObject({ created: 249, failed: 0, invalid: 1 });
    const second = await runImport(s.opts(), s.deps(server));
    expect(second).toMatchObject({
      rows: 250,
      created: 0,
      skipped: 249,
      failed: 0,
      invalid: 1,
      chunks: 0,
      rejects_file: first.rejects_file,
    });
    expect(s.warnings.at(-1)).toMatch(/already imported/);
    expect(server.calls).toHaveLength(3);
    // with --results the journal is streamed again for the ids
    const results = join(s.dir, 'out.csv');
    await runImport(s.opts({ resultsPath: results }), s.deps(server));
    expect(readFileSync(results, 'utf8').trim().split('\r\n')).toHaveLength(250);
    expect(server.calls).toHaveLength(3);
  });

  it('a finished journal compacted by pruning still means "imported": nothing sent, even without the rejects file; --results is refused', async () => {
    const s = setup(csv(250, (i) => (i === 3 ? 'bad,X,1' : undefined)));
    const server = fakeServer();
    const first = await runImport(s.opts(), s.deps(server));
    expect(first).toMatchObject({ created: 249, failed: 1 });
    const [name] = readdirSync(s.journalDir).filter((f) => f.endsWith('.jsonl'));
    expect(await compactJournal(join(s.journalDir, name!))).toBe(true);
    rmSync(first.rejects_file!);
    const again = await runImport(s.opts(), s.deps(server));
    expect(again).toMatchObject({ rows: 250, created: 0, skipped: 249, failed: 1, requests: 0, rejects_file: null });
    const err = await runImport(s.opts({ resultsPath: join(s.dir, 'r.csv') }), s.deps(server)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toMatch(/compacted/);
    expect(server.calls).toHaveLength(3);
    expect(server.created).toHaveLength(249);
  });

  it('warns about chunks that were in flight at a crash: re-sent under the same keys, safe while the server remembers them', async () => {
    const s = setup(csv(30));
    const server = fakeServer();
    await crashAtChunk2(s, server);
    const again = await runImport(s.opts({ chunkSize: 10, concurrency: 1 }), s.deps(server));
    expect(again).toMatchObject({ skipped: 10, created: 20 });
    const w = s.warnings.find((m) => m.includes('without an answer'));
    expect(w).toMatch(/1 chunk \(2\) was sent.*same Idempotency-Keys.*24 h/);
  });
});

describe('runImport: unreadable input', () => {
  it('a bad header (two columns, one field) is a UsageError naming both; nothing is sent', async () => {
    const s = setup('Email,E-mail,email\na@x.io,b,c\n');
    const server = fakeServer();
    const err = await runImport(s.opts(), s.deps(server)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toMatch(/"Email" \(column 1\) and "email" \(column 3\)/);
    expect(server.calls).toEqual([]);
  });

  it('a missing file is a UsageError (exit 2) naming it', async () => {
    const s = setup('x');
    const err = await runImport(s.opts({ input: join(s.dir, 'nope.csv') }), s.deps(fakeServer())).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toContain('nope.csv');
  });
});

describe('runImport: a request cancelled by Ctrl-C', () => {
  it('is neither a reject nor journaled: the rerun sends it under the same key', async () => {
    const s = setup(csv(30));
    const server = fakeServer();
    const ac = new AbortController();
    const inner = server.send;
    const keys: string[] = [];
    const cancelling: ImportDeps['send'] = async (req) => {
      keys.push(req.key);
      if (req.seq === 2) {
        ac.abort();
        throw new Error('The operation was aborted');
      }
      return inner(req);
    };
    const err = await runImport(
      s.opts({ chunkSize: 10, concurrency: 1 }),
      s.deps(server, { signal: ac.signal, send: cancelling }),
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InterruptedError);
    // it went out: in doubt (may have been written), counted among failed, not a reject; the last 10 not sent
    expect(importSummaryOf(err)).toMatchObject({
      created: 10,
      failed: 10,
      in_doubt: 10,
      not_sent: 10,
      rejects_file: null,
    });
    const again = await runImport(s.opts({ chunkSize: 10, concurrency: 1 }), s.deps(server));
    expect(again).toMatchObject({ skipped: 10, created: 20 });
    expect(server.calls.find((c) => c.seq === 2)?.key).toBe(keys[1]);
  });
});

describe('runImport: a chunk stopped by Ctrl-C before its request went out', () => {
  // the HTTP sender throws InterruptedError only before sending (e.g. waiting for the rate limit)
  const stoppedBeforeSending =
    (server: FakeServer, ac: AbortController): ImportDeps['send'] =>
    async (req) => {
      if (req.seq === 2) {
        ac.abort();
        throw new InterruptedError('interrupted');
      }
      return server.send(req);
    };

  it('is not in doubt: the rerun does not warn that it could be created twice', async () => {
    const s = setup(csv(30));
    const server = fakeServer();
    const ac = new AbortController();
    const err = await runImport(
      s.opts({ chunkSize: 10, concurrency: 1 }),
      s.deps(server, { signal: ac.signal, send: stoppedBeforeSending(server, ac) }),
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InterruptedError);
    expect((err as Error).message).toBe(
      'interrupted after 1 of 3 chunks: 10 rows created; 20 rows of 30 left (not sent yet), not in the rejects file',
    );
    const again = await runImport(s.opts({ chunkSize: 10, concurrency: 1 }), s.deps(server));
    expect(again).toMatchObject({ skipped: 10, created: 20 });
    expect(s.warnings.filter((m) => m.includes('without an answer'))).toEqual([]);
  });

  it('still warns about a chunk an earlier crash left in doubt, even when this run stopped it before sending', async () => {
    const s = setup(csv(30));
    const server = fakeServer();
    await crashAtChunk2(s, server);
    const ac = new AbortController();
    await runImport(
      s.opts({ chunkSize: 10, concurrency: 1 }),
      s.deps(server, { signal: ac.signal, send: stoppedBeforeSending(server, ac) }),
    ).catch(() => undefined);
    s.warnings.length = 0;
    await runImport(s.opts({ chunkSize: 10, concurrency: 1 }), s.deps(server));
    expect(s.warnings.find((m) => m.includes('without an answer'))).toMatch(/1 chunk \(2\) was sent/);
  });
});
