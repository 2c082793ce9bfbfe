// An unclosed quote (issue 5): the row where it opens is an invalid row with its line, and the
// reading resumes on the next line, so every other row is read, checked and sent as usual; the
// check pass and the sending pass see the same rows, lines and chunks.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/http/errors.js';
import { runImport, importExitCode, type ImportDeps, type ImportOptions } from '../../../src/import/engine.js';
import { openInput, splitLine, UNCLOSED_QUOTE_CODE, type ReadRow } from '../../../src/import/input/reader.js';
import { scanInput } from '../../../src/import/check/check.js';
import { duplicates, fakeServer, type FakeServer } from './fake-server.js';
import { readAll, tempDir, tempFile } from './helpers.js';

const BASE = 'http://127.0.0.1:4010/api/v2';
const bad = (line: number, raw: string[]): ReadRow => ({
  line,
  raw,
  error: {
    code: UNCLOSED_QUOTE_CODE,
    reason: expect.stringMatching(/^a quoted field starts on this line and is never closed/) as string,
  },
});
const shape = (rows: ReadRow[]): unknown[] =>
  rows.map((r) => (r.error ? [r.line, r.error.code, r.raw] : [r.line, r.cells]));

describe('reader: an unclosed quote is an invalid row, and reading goes on at the next line', () => {
  it('in the middle: the rows before and after are read, the bad one is invalid with its line', async () => {
    const { header, rows } = await readAll(tempFile('a,b\n1,2\n3,"four\n5,6\n7,8\n'));
    expect(header).toEqual(['a', 'b']);
    expect(rows).toEqual([
      { line: 2, cells: ['1', '2'], raw: ['1', '2'] },
      bad(3, ['3', '"four']),
      { line: 4, cells: ['5', '6'], raw: ['5', '6'] },
      { line: 5, cells: ['7', '8'], raw: ['7', '8'] },
    ]);
  });

  it('two unclosed quotes, blank lines around them', async () => {
    const { rows } = await readAll(tempFile('a,b\n1,2\n\n"x,3\n\n4,5\n6,"y\n\n\n7,8\n9,10'));
    expect(shape(rows)).toEqual([
      [2, ['1', '2']],
      [4, UNCLOSED_QUOTE_CODE, ['"x,3']],
      [6, ['4', '5']],
      [7, UNCLOSED_QUOTE_CODE, ['6', '"y']],
      [10, ['7', '8']],
      [11, ['9', '10']],
    ]);
  });

  it('on the last line, with or without a line end', async () => {
    for (const end of ['', '\n', '\r\n', '\r', '\n\n']) {
      const { rows } = await readAll(tempFile(`a,b\n1,2\n3,"four${end}`));
      expect(shape(rows)).toEqual([
        [2, ['1', '2']],
        [3, UNCLOSED_QUOTE_CODE, ['3', '"four']],
      ]);
    }
  });

  it('between quoted fields that legitimately span lines', async () => {
    const text = 'a,b\n"p\nq",1\n2,"oops\n"r\r\ns",3\n4,"t\n\nu"\n"x,"y""z",5\n"v\rw",6\n';
    const { rows } = await readAll(tempFile(text));
    expect(shape(rows)).toEqual([
      [2, ['p\nq', '1']],
      [4, UNCLOSED_QUOTE_CODE, ['2', '"oops']],
      [5, ['r\r\ns', '3']],
      [7, ['4', 't\n\nu']],
      // a stray quote that does not swallow a line end is text (relax_quotes), not an unclosed quote
      [10, ['"x,"y""z"', '5']],
      [11, ['v\rw', '6']],
    ]);
  });

  it('an unclosed quote followed by a later quoted field (whose opening quote would "close" it)', async () => {
    const { rows } = await readAll(tempFile('a,b\n1,"x\n2,3\n"Doe, Jane",4\n5,"six"\n'));
    expect(shape(rows)).toEqual([
      [2, UNCLOSED_QUOTE_CODE, ['1', '"x']],
      [3, ['2', '3']],
      [4, ['Doe, Jane', '4']],
      [5, ['5', 'six']],
    ]);
  });

  it("in a row whose earlier field legitimately spans lines: the row, up to the quote's line, is invalid", async () => {
    const { rows } = await readAll(tempFile('a,b,c\n"p\r\nq",1,"oops\r\n2,3,4\r\n"r\ns",5,"t\n6,7,8\n'));
    expect(shape(rows)).toEqual([
      [2, UNCLOSED_QUOTE_CODE, ['p\r\nq', '1', '"oops']],
      [4, ['2', '3', '4']],
      [5, UNCLOSED_QUOTE_CODE, ['r\ns', '5', '"t']],
      [7, ['6', '7', '8']],
    ]);
    // closed by the quote of line 4 (`"r`), and at the end of the file
    expect(rows[0]!.error!.reason).toMatch(/^a quoted field starts on line 3 and is never closed/);
    expect(rows[2]!.error!.reason).toMatch(/^a quoted field starts on line 6 and is never closed/);
  });

  it('CRLF and CR line ends', async () => {
    const crlf = await readAll(tempFile('a,b\r\n1,2\r\n3,"four\r\n5,6\r\n"x\r\ny",7\r\n'));
    expect(shape(crlf.rows)).toEqual([
      [2, ['1', '2']],
      [3, UNCLOSED_QUOTE_CODE, ['3', '"four']],
      [4, ['5', '6']],
      [5, ['x\r\ny', '7']],
    ]);
    const cr = await readAll(tempFile('a,b\r1,2\r3,"four\r5,6\r'));
    expect(shape(cr.rows)).toEqual([
      [2, ['1', '2']],
      [3, UNCLOSED_QUOTE_CODE, ['3', '"four']],
      [4, ['5', '6']],
    ]);
  });

  it('a BOM and multi-byte UTF-8 before, on and after the bad line (byte offsets, not characters)', async () => {
    const text = '\ufeffa,b\nü😀,é\nß😀,"x €\n€,1\n"Ω\n😀",2\n';
    const { header, rows } = await readAll(tempFile(text));
    expect(header).toEqual(['a', 'b']);
    expect(shape(rows)).toEqual([
      [2, ['ü😀', 'é']],
      [3, UNCLOSED_QUOTE_CODE, ['ß😀', '"x €']],
      [4, ['€', '1']],
      [5, ['Ω\n😀', '2']],
    ]);
  });

  it('a line starting with a BOM after the resume is not stripped (only the file start is a BOM)', async () => {
    const { rows } = await readAll(tempFile('a,b\n1,"x\n\ufeffc,d\n'));
    expect(shape(rows)).toEqual([
      [2, UNCLOSED_QUOTE_CODE, ['1', '"x']],
      [3, ['\ufeffc', 'd']],
    ]);
  });

  it('many read chunks: every row after each unclosed quote is read, with its line', async () => {
    const lines = ['n,s'];
    for (let i = 0; i < 30000; i++) lines.push(i === 5000 || i === 25000 ? `${i},"é${i}` : `${i},é${i}`);
    const { rows } = await readAll(tempFile(lines.join('\n') + '\n'));
    expect(rows).toHaveLength(30000);
    const invalid = rows.filter((r) => r.error);
    expect(invalid.map((r) => [r.line, r.raw])).toEqual([
      [5002, ['5000', '"é5000']],
      [25002, ['25000', '"é25000']],
    ]);
    expect(rows[5001]).toMatchObject({ line: 5003, cells: ['5001', 'é5001'] });
    expect(rows[29999]).toMatchObject({ line: 30001, cells: ['29999', 'é29999'] });
  });

  it('hands every byte to onChunk exactly once (the content hash), and bytesRead ends at the file size', async () => {
    const text = '\ufeffa\n1\n"2\n3\n"4\n5\n';
    let n = 0;
    const path = tempFile(text);
    const r = await openInput(path, { onChunk: (c) => (n += c.length) });
    const rows: ReadRow[] = [];
    for await (const row of r.rows) rows.push(row);
    expect(rows.map((x) => x.line)).toEqual([2, 3, 4, 5, 6]);
    expect(n).toBe(Buffer.byteLength(text));
    expect(r.bytesRead()).toBe(Buffer.byteLength(text));
  });

  it('the content hash covers every byte once, also when a resume cuts a read short (a large file)', async () => {
    const lines = ['n,s'];
    for (let i = 0; i < 60000; i++) {
      lines.push(
        i === 100 || i === 59000 ? `${i},"open ${i}` : i === 200 || i === 40000 ? `${i},"quoted, ok"` : `${i},ß${i}`,
      );
    }
    const text = `\ufeff${lines.join('\r\n')}\r\n`;
    const path = tempFile(text);
    const scan = await scanInput(path, { format: 'csv', name: 'x.csv', maps: new Map(), chunkSize: 100 });
    expect(scan.contentSha256).toBe(createHash('sha256').update(text).digest('hex'));
    expect(scan).toMatchObject({ rows: 60000, invalid: 2 });
    expect(scan.firstInvalid.map((r) => r.line)).toEqual([102, 59002]);
    const r = await openInput(path);
    let last: ReadRow | undefined;
    for await (const row of r.rows) last = row;
    expect(last).toMatchObject({ line: 60001, cells: ['59999', 'ß59999'] });
    expect(r.bytesRead()).toBe(Buffer.byteLength(text));
  });

  it('stopping early after a resume closes the input', async () => {
    const r = await openInput(tempFile('a\n"1\n2\n3\n'));
    const got: number[] = [];
    for await (const row of r.rows) {
      got.push(row.line);
      if (got.length === 2) break;
    }
    expect(got).toEqual([2, 3]);
  });

  it('an unclosed quote in the header is still a UsageError (exit 2) naming the line', async () => {
    const err = await readAll(tempFile('\n"a,b\n1,2\n'), { name: 'people.csv' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as UsageError).message).toMatch(/people\.csv, line 2: a quoted field starts here and is never closed/);
    expect((err as UsageError).exitCode).toBe(2);
  });

  it('an unclosed quote whose line is over the record limit is a RECORD_TOO_LARGE row; reading goes on', async () => {
    const { rows } = await readAll(tempFile(`a\n1\n"${'y'.repeat(5000)}\n4\n`), { maxRecordBytes: 1000 });
    expect(rows.map((r) => [r.line, r.error?.code ?? r.cells])).toEqual([
      [2, ['1']],
      [3, 'RECORD_TOO_LARGE'],
      [4, ['4']],
    ]);
  });

  it('an unclosed quote on a short line found while skipping an over-limit record is UNCLOSED_QUOTE, as for a small one', async () => {
    const { rows } = await readAll(tempFile(`a,b\n1,"open\n${'z'.repeat(3000)}\n5,6\n`), { maxRecordBytes: 1000 });
    expect(rows.map((r) => [r.line, r.error?.code ?? r.cells])).toEqual([
      [2, 'UNCLOSED_QUOTE'],
      [3, 'RECORD_TOO_LARGE'],
      [4, ['5', '6']],
    ]);
  });
});

describe('splitLine: the best-effort cells of a line whose quote is never closed', () => {
  it('splits on commas, unquotes closed quoted cells, keeps the unclosed one as written', () => {
    expect(splitLine('x,"Doe, Jane",3,"four')).toEqual(['x', 'Doe, Jane', '3', '"four']);
    expect(splitLine('"a ""b"" c",,"open, with, commas')).toEqual(['a "b" c', '', '"open, with, commas']);
    expect(splitLine('"only')).toEqual(['"only']);
    expect(splitLine('1,2,"')).toEqual(['1', '2', '"']);
    expect(splitLine('1,"a"b,"c')).toEqual(['1', '"a"b,"c']);
  });
});

function setup(content: string, name = 'people.csv') {
  const dir = tempDir();
  const input = join(dir, name);
  writeFileSync(input, content);
  const journalDir = join(dir, 'config', 'imports');
  let t = 1_000;
  const deps = (server: FakeServer, over: Partial<ImportDeps> = {}): ImportDeps => ({
    send: server.send,
    journalDir,
    clock: { now: () => (t += 5) },
    cwd: dir,
    warn: () => undefined,
    ...over,
  });
  const opts = (over: Partial<ImportOptions> = {}): ImportOptions => ({
    resource: 'contacts',
    input,
    baseUrl: BASE,
    ...over,
  });
  return { dir, input, journalDir, deps, opts };
}

function csv(n: number, bad: (i: number) => string | undefined = () => undefined): string {
  const lines = ['Email,First Name,score:number'];
  for (let i = 0; i < n; i++) lines.push(bad(i) ?? `u${i}@x.io,User ${i},${i}`);
  return lines.join('\n') + '\n';
}

// rows 120 and 200 (lines 122 and 202) open quotes that never close
const BROKEN = csv(250, (i) => (i === 120 ? '"z@x.io,Z,1' : i === 200 ? 'y@x.io,"Y,2' : undefined));

describe('runImport: unclosed quotes', () => {
  it('the valid rows around them are sent; they are invalid rows in the summary and the rejects file', async () => {
    const s = setup(BROKEN);
    const server = fakeServer();
    const sum = await runImport(s.opts(), s.deps(server));
    expect(sum).toMatchObject({
      rows: 250,
      created: 248,
      failed: 0,
      invalid: 2,
      skipped: 0,
      chunks: 3,
      rejects_file: `${s.input}.rejects.csv`,
    });
    expect(importExitCode(sum)).toBe(9);
    const sent = server.created.map((r) => r.email);
    expect(sent).toHaveLength(248);
    expect(sent).toEqual(expect.arrayContaining(['u119@x.io', 'u121@x.io', 'u199@x.io', 'u201@x.io', 'u249@x.io']));
    expect(sent.some((e) => String(e).includes('z@x.io') || String(e).includes('y@x.io'))).toBe(false);
    expect(duplicates(server.created)).toEqual([]);

    const rejects = await readAll(sum.rejects_file!);
    expect(rejects.header).toEqual(['Email', 'First Name', 'score:number', '_line', '_error_code', '_error_message']);
    expect(rejects.rows.every((r) => !r.error)).toBe(true);
    expect(rejects.rows.map((r) => r.cells!.slice(0, 5))).toEqual([
      ['"z@x.io,Z,1', '', '', '122', UNCLOSED_QUOTE_CODE],
      ['y@x.io', '"Y,2', '', '202', UNCLOSED_QUOTE_CODE],
    ]);
    expect(rejects.rows[0]!.cells![5]).toMatch(/a quoted field starts on this line and is never closed/);

    // fixed and fed back, it imports
    const fixed = readFileSync(sum.rejects_file!, 'utf8')
      .replace('"""z@x.io,Z,1",,', 'z@x.io,Z,1')
      .replace('"""Y,2",', 'Y,2');
    const fixedPath = join(s.dir, 'fixed.csv');
    writeFileSync(fixedPath, fixed);
    const back = await runImport(s.opts({ input: fixedPath }), s.deps(server));
    expect(back).toMatchObject({ rows: 2, created: 2, invalid: 0, failed: 0, rejects_file: null });
    expect(server.created.slice(-2)).toEqual([
      expect.objectContaining({ email: 'z@x.io', first_name: 'Z', score: 1 }),
      expect.objectContaining({ email: 'y@x.io', first_name: 'Y', score: 2 }),
    ]);
  });

  it('the check pass and the sending pass see the same rows, lines and chunks; a rerun sends nothing, --no-resume the same bodies', async () => {
    const s = setup(BROKEN);
    const scan = await scanInput(s.input, { format: 'csv', name: 'people.csv', maps: new Map(), chunkSize: 100 });
    expect(scan).toMatchObject({ rows: 250, valid: 248, invalid: 2 });
    expect(scan.firstInvalid.map((r) => [r.line, r.code])).toEqual([
      [122, UNCLOSED_QUOTE_CODE],
      [202, UNCLOSED_QUOTE_CODE],
    ]);
    const server = fakeServer();
    const first = await runImport(s.opts({ chunkSize: 7 }), s.deps(server));
    expect(first).toMatchObject({ rows: 250, created: 248, invalid: 2, chunks: 36 });
    const bodies = server.calls.map((c) => c.body);
    const again = await runImport(s.opts({ chunkSize: 7 }), s.deps(server));
    expect(again).toMatchObject({ rows: 250, created: 0, invalid: 2, chunks: 0 });
    expect(server.calls).toHaveLength(36);
    const other = fakeServer();
    await runImport(s.opts({ chunkSize: 7, resume: false }), s.deps(other));
    // a new run: the same chunks, under keys of its own
    expect(other.calls.map((c) => c.body).sort()).toEqual([...bodies].sort());
    expect(other.calls.some((c) => server.calls.some((d) => d.key === c.key))).toBe(false);
  });

  it('--strict reports it as an invalid row: exit 2, nothing sent', async () => {
    const s = setup(BROKEN);
    const server = fakeServer();
    const err = await runImport(s.opts({ strict: true }), s.deps(server)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as UsageError).exitCode).toBe(2);
    expect((err as Error).message).toMatch(/2 of 250 rows are invalid; nothing was sent \(--strict\)/);
    expect((err as Error).message).toMatch(/line 122: a quoted field starts on this line and is never closed/);
    expect((err as Error).message).toMatch(/line 202: a quoted field starts on this line/);
    // listed once, in the message: not again as details (the CLI prints both)
    expect((err as UsageError).details).toEqual([]);
    expect(server.calls).toEqual([]);
  });

  it('--dry-run counts it as invalid and sends nothing', async () => {
    const s = setup(BROKEN);
    const server = fakeServer();
    const sum = await runImport(s.opts({ dryRun: true }), s.deps(server));
    expect(sum).toMatchObject({ invalid: 2 });
    expect(server.calls).toEqual([]);
  });

  it('from standard input (buffered to a file, so reading resumes from a byte offset there too)', async () => {
    const s = setup('');
    const server = fakeServer();
    const sum = await runImport(
      s.opts({ input: '-' }),
      s.deps(server, { stdin: Readable.from([Buffer.from(`\ufeff${BROKEN.replace(/\n/g, '\r\n')}`)]) }),
    );
    expect(sum).toMatchObject({ rows: 250, created: 248, invalid: 2 });
    const rejects = await readAll(sum.rejects_file!);
    expect(rejects.rows.map((r) => r.cells![3])).toEqual(['122', '202']);
  });

  it('on the last line: the rows before it are sent', async () => {
    const s = setup(csv(300) + '"z@x.io,Z,1\n');
    const server = fakeServer();
    const sum = await runImport(s.opts(), s.deps(server));
    expect(sum).toMatchObject({ rows: 301, created: 300, invalid: 1, chunks: 3 });
    const rejects = await readAll(sum.rejects_file!);
    expect(rejects.rows.map((r) => r.cells!.slice(3, 5))).toEqual([['302', UNCLOSED_QUOTE_CODE]]);
  });
});
