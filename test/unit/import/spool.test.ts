import { existsSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/http/errors.js';
import { Chunker } from '../../../src/import/check/chunker.js';
import { runImport, type ImportDeps } from '../../../src/import/engine.js';
import { Spool, type SpoolEntry } from '../../../src/import/check/spool.js';
import { fakeServer } from './fake-server.js';
import { tempDir } from './helpers.js';

const BASE = 'http://127.0.0.1:4010/api/v2';

function setup(content: string) {
  const dir = tempDir();
  const input = join(dir, 'people.csv');
  writeFileSync(input, content);
  const journalDir = join(dir, 'imports');
  const server = fakeServer();
  let t = 1_000;
  const deps = (over: Partial<ImportDeps> = {}): ImportDeps => ({
    send: server.send,
    journalDir,
    clock: { now: () => (t += 5) },
    cwd: dir,
    ...over,
  });
  const spools = (): string[] =>
    (existsSync(journalDir) ? readdirSync(journalDir) : []).filter((n) => n.startsWith('rows.spool'));
  return { dir, input, journalDir, server, deps, spools, opts: { resource: 'contacts', input, baseUrl: BASE } };
}

async function all(spool: Spool): Promise<SpoolEntry[]> {
  const out: SpoolEntry[] = [];
  for await (const e of spool.entries()) out.push(e);
  return out;
}

describe('the spool: the file is parsed once', () => {
  it('sends the rows the check pass read, not what the file holds by then', async () => {
    const s = setup('email,first_name\na@x.io,Ann\nb@x.io,Bob\n');
    // same size and time (whole seconds, so exactly): the sending pass cannot tell; a second parse would send Zed
    utimesSync(s.input, 1e9, 1e9);
    const swap = async (): Promise<void> => {
      writeFileSync(s.input, 'email,first_name\nz@x.io,Zed\nb@x.io,Bob\n');
      utimesSync(s.input, 1e9, 1e9);
    };
    const sum = await runImport(s.opts, s.deps({ beforeSend: swap }));
    expect(sum.created).toBe(2);
    expect(s.server.created.map((r) => r.first_name)).toEqual(['Ann', 'Bob']);
    expect(s.spools()).toEqual([]);
  });

  it('is removed after a refusal and after a fatal error', async () => {
    const s = setup('email,score:number\na@x.io,1\nb@x.io,x\n');
    await expect(runImport({ ...s.opts, strict: true }, s.deps())).rejects.toThrow(UsageError);
    expect(s.spools()).toEqual([]);
    const boom: ImportDeps['send'] = () => Promise.reject(new TypeError('boom'));
    await expect(runImport(s.opts, s.deps({ send: boom }))).rejects.toThrow('boom');
    expect(s.spools()).toEqual([]);
  });

  it('a dry run writes none', async () => {
    const s = setup('email\na@x.io\n');
    await runImport({ ...s.opts, dryRun: true }, s.deps({ onProgress: () => expect(s.spools()).toEqual([]) }));
    expect(s.spools()).toEqual([]);
  });

  it('gives back each chunk and invalid row as written, across blocks, whatever the cells hold', async () => {
    const dir = tempDir();
    const spool = await Spool.create(dir);
    const chunker = new Chunker(2);
    const odd = ['tab\there', 'line\nbreak\r\n', 'é😀\u2028', '"quoted",x', 'x'.repeat(3 * 1024 * 1024)];
    const rows = odd.map((cell, i) => ({ line: i + 2, record: { note: cell, n: i }, raw: [cell, String(i)] }));
    const chunks = rows.map((r) => chunker.push(r)).filter((c) => c !== undefined);
    chunks.push(chunker.flush()!);
    for (const c of chunks) await spool.chunk(c, c.lines[0]! * 10);
    await spool.invalid({ line: 9, raw: { a: 'b\tc' }, code: 'INVALID_JSON', reason: 'not\tJSON' }, 90);
    await spool.end(100);
    const got = await all(spool);
    expect(got.map((e) => e.bytes)).toEqual([20, 40, 60, 90, 100]);
    got.slice(0, 3).forEach((e, k) => {
      const c = chunks[k]!;
      expect({ seq: e.chunk!.seq, lines: e.chunk!.lines, body: e.chunk!.body }).toEqual({
        seq: c.seq,
        lines: c.lines,
        body: c.body,
      });
      expect(e.chunk!.raws()).toEqual(c.rows.map((r) => r.raw));
      expect(e.chunk!.records()).toEqual(c.rows.map((r) => r.record));
    });
    expect(got[3]!.invalid).toEqual({ line: 9, raw: { a: 'b\tc' }, code: 'INVALID_JSON', reason: 'not\tJSON' });
    expect(readFileSync(spool.path).length).toBeGreaterThan(3 * 1024 * 1024);
    await spool.remove();
    expect(readdirSync(dir)).toEqual([]);
  });
});
