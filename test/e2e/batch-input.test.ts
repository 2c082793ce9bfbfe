// End to end: inputs that lie (issue 9, classes 2 and 5). Files that are not files (a named pipe,
// /dev/zero, a 4 GB sparse file interrupted in its first pass), one huge cell, and encodings
// (invalid UTF-8, NUL bytes, UTF-16 with a BOM, --encoding windows-1252), each against the real
// binary and the sandbox.
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { readdir, readlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect, runCrm, startCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';

let t: TestSandbox;
let dir: string;
beforeAll(async () => {
  t = await startTestSandbox({ rateLimit: 1_000_000, orgRateLimit: 1_000_000 });
  dir = mkdtempSync(join(tmpdir(), 'crm-batch-input-'));
});
afterAll(async () => {
  await t?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const crm = (args: string[], opts: { input?: string | Buffer; env?: Record<string, string> } = {}) =>
  runCrm(['-o', 'json', ...args], { env: t.env('admin', opts.env), input: opts.input, cwd: dir, timeoutMs: 30_000 });

/** Contacts of this test (emails starting with `tag.`), email → first name. */
async function contacts(tag: string): Promise<Map<string, string | undefined>> {
  const out = new Map<string, string | undefined>();
  let cursor: string | null = null;
  for (;;) {
    const res = await fetch(`${t.sb.baseUrl}/contacts?limit=100${cursor ? `&cursor=${cursor}` : ''}`, {
      headers: { 'X-Service-Api-Key': t.sb.keys.admin },
    });
    const body = (await res.json()) as {
      data: Array<{ email: string; first_name?: string }>;
      page_info: { end_cursor: string | null; has_next_page: boolean };
    };
    for (const c of body.data) if (c.email.startsWith(`${tag}.`)) out.set(c.email, c.first_name);
    if (!body.page_info.has_next_page) return out;
    cursor = body.page_info.end_cursor;
  }
}

const rejectsOf = (path: string): Array<Record<string, string>> =>
  parse(readFileSync(path), { columns: true, bom: true });

/**
 * Sends `signal` to a crm started on `args` once `ready` resolves (crm has opened its input, so its
 * signal handlers are in: a signal during Node's start-up kills it by the signal); how long it took
 * to exit, and its result.
 */
async function interrupt(args: string[], signal: NodeJS.Signals, ready: (pid: number) => Promise<unknown>) {
  const child = startCrm(['-o', 'json', ...args], { env: t.env('admin'), cwd: dir });
  const done = collect(child, { timeoutMs: 30_000 });
  await Promise.race([ready(child.pid!), done]);
  const sent = Date.now();
  child.kill(signal);
  const r = await done;
  return { ...r, ms: Date.now() - sent };
}

/** Resolves once process `pid` has `path` open (Linux: its /proc/PID/fd links). */
async function opened(pid: number, path: string): Promise<void> {
  for (;;) {
    const fds = await readdir(`/proc/${pid}/fd`).catch(() => []);
    for (const fd of fds) if ((await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')) === path) return;
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('files that are not files', () => {
  it('a named pipe is read once: imported, and a rerun (with a journal) resumes instead of hanging', async () => {
    const fifo = join(dir, 'pipe.csv');
    execFileSync('mkfifo', [fifo]);
    const feed = (text: string): void => {
      // opens when crm opens the pipe for reading (a reader gone before the write is done: EPIPE, no matter)
      createWriteStream(fifo)
        .on('error', () => {})
        .end(text);
    };
    const text = 'email,first_name\nfifo.1@example.com,Ann\nfifo.2@example.com,Bob\n';
    feed(text);
    const first = await crm(['batch', 'contacts', fifo]);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ rows: 2, created: 2 });
    feed(text);
    const again = await crm(['batch', 'contacts', fifo]);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ rows: 2, created: 0, skipped: 2 });
    expect([...(await contacts('fifo')).keys()].sort()).toEqual(['fifo.1@example.com', 'fifo.2@example.com']);
  });

  it('a named pipe whose writer never finishes: SIGTERM exits 130 at once', async () => {
    const fifo = join(dir, 'stuck.csv');
    execFileSync('mkfifo', [fifo]);
    // crm killed with the pipe open: the writer's EPIPE is expected, not a failure of the run
    const writer = createWriteStream(fifo).on('error', () => {});
    writer.write('email\nstuck.1@example.com\n');
    const r = await interrupt(['batch', 'contacts', fifo], 'SIGTERM', () => once(writer, 'open'));
    writer.destroy();
    expect(r.code, r.stderr).toBe(130);
    expect(r.ms).toBeLessThan(1000);
  });

  it('/dev/zero is refused at once as not text (exit 2)', async () => {
    const r = await crm(['batch', 'contacts', '/dev/zero']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/not a text file/);
  });

  it.each(['SIGINT', 'SIGTERM'] as const)(
    'a 4 GB sparse file interrupted in its first pass (%s) exits 130 within a second',
    async (signal) => {
      const path = join(dir, `sparse-${signal}.csv`);
      const rows = Array.from({ length: 2000 }, (_, i) => `sparse.${i}@example.com`).join('\n');
      writeFileSync(path, `email\n${rows}\n`);
      truncateSync(path, 4 * 1024 ** 3); // the rest reads as NUL bytes and costs no disk
      // an earlier journal makes the first pass hash the whole file before parsing it
      writeFileSync(join(dir, 'small.csv'), 'email\nsparse.small@example.com\n');
      expect((await crm(['batch', 'contacts', join(dir, 'small.csv')])).code).toBe(0);
      const r = await interrupt(['batch', 'contacts', path], signal, (pid) => opened(pid, path));
      expect(r.code, r.stderr).toBe(130);
      expect(r.ms).toBeLessThan(1000);
      expect([...(await contacts('sparse')).keys()]).toEqual(['sparse.small@example.com']);
    },
  );
});

describe('one huge cell', () => {
  it('a row over 1 MiB is an invalid row (not copied into the rejects file); the others are imported; the way forward its message gives works', async () => {
    const path = join(dir, 'huge.csv');
    const big = 'x'.repeat(3 * 1024 * 1024);
    writeFileSync(
      path,
      `email,first_name\nhuge.1@example.com,Ann\nhuge.2@example.com,"${big}\nmore"\nhuge.3@example.com,"Multi\nline"\n`,
    );
    const r = await crm(['batch', 'contacts', path]);
    expect(r.code, r.stderr).toBe(9);
    expect(JSON.parse(r.stdout)).toMatchObject({ rows: 3, created: 2, invalid: 1 });
    const rejectsPath = `${path}.rejects.csv`;
    const rejects = rejectsOf(rejectsPath);
    expect(rejects).toEqual([
      {
        email: '',
        first_name: '',
        _line: '3',
        _error_code: 'RECORD_TOO_LARGE',
        _error_message: expect.stringMatching(/larger than 1 MiB/),
      },
    ]);
    expect(rejects[0]!._error_message).toContain(
      `copy lines 3–4 of ${path} into a new file under a copy of its header line, shorten the row, and import that file`,
    );
    expect(await contacts('huge')).toEqual(
      new Map([
        ['huge.1@example.com', 'Ann'],
        ['huge.3@example.com', 'Multi\nline'],
      ]),
    );
    // the rejects file fed back (as the summary says): the placeholder is skipped with a notice, not a new EMPTY_ROW reject
    const back = await crm(['batch', 'contacts', rejectsPath]);
    expect(back.code, back.stderr).toBe(0);
    expect(JSON.parse(back.stdout)).toMatchObject({ rows: 0, created: 0, invalid: 0, rejects_file: null });
    expect(back.stderr).toMatch(/1 RECORD_TOO_LARGE row \(line 2\) holds no cells and is skipped/);
    expect(() => readFileSync(`${rejectsPath}.rejects.csv`)).toThrow();
    // what the message says: lines 3–4 under the header, shortened, as a new file
    const lines = readFileSync(path, 'utf8').split('\n');
    const own = join(dir, 'huge-row.csv');
    writeFileSync(own, `${lines[0]}\n${lines.slice(2, 4).join('\n').replace(big, 'Bo')}\n`);
    const fixed = await crm(['batch', 'contacts', own]);
    expect(fixed.code, fixed.stderr).toBe(0);
    expect((await contacts('huge')).get('huge.2@example.com')).toBe('Bo\nmore');
  });

  it('an NDJSON line over 1 MiB likewise', async () => {
    const path = join(dir, 'huge.ndjson');
    const lines = [
      { email: 'hugejson.1@example.com' },
      { email: 'hugejson.2@example.com', first_name: 'y'.repeat(2 * 1024 * 1024) },
      { email: 'hugejson.3@example.com' },
    ];
    writeFileSync(path, lines.map((l) => JSON.stringify(l)).join('\n'));
    const r = await crm(['batch', 'contacts', path]);
    expect(r.code, r.stderr).toBe(9);
    expect(JSON.parse(r.stdout)).toMatchObject({ rows: 3, created: 2, invalid: 1 });
    const rejectsPath = `${path}.rejects.ndjson`;
    const rejects = readFileSync(rejectsPath, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rejects).toMatchObject([
      {
        _line: 2,
        _error_code: 'RECORD_TOO_LARGE',
        _error_message: expect.stringContaining(`copy line 2 of ${path} into a new .ndjson file`),
      },
    ]);
    const back = await crm(['batch', 'contacts', rejectsPath]);
    expect(back.code, back.stderr).toBe(0);
    expect(JSON.parse(back.stdout)).toMatchObject({ rows: 0, invalid: 0, rejects_file: null });
  });
});

describe('input encodings', () => {
  it('invalid UTF-8 refuses the whole file before anything is sent (exit 2), naming the lines; a NUL byte is an invalid row whose rejects keep its bytes', async () => {
    const path = join(dir, 'bad-bytes.csv');
    const nul = Buffer.concat([
      Buffer.from('email,first_name\r\nenc.1@example.com,Ann\r\nenc.3@example.com,Nu'),
      Buffer.from([0]),
      Buffer.from('l\r\n'),
    ]);
    writeFileSync(
      path,
      Buffer.concat([
        nul,
        Buffer.from('enc.2@example.com,Jos'),
        Buffer.from([0xe9]),
        Buffer.from('\r\nenc.4@example.com,Zoë\r\n'),
      ]),
    );
    const r = await crm(['batch', 'contacts', path]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(
      /is not UTF-8 text: line 4 \("enc\.2@example\.com,Jos\\xE9"\) has bytes that are not valid UTF-8\. Nothing was sent/,
    );
    expect(r.stderr).toMatch(/--encoding windows-1252/);
    expect(await contacts('enc')).toEqual(new Map());
    expect(() => readFileSync(`${path}.rejects.csv`)).toThrow();
    // a NUL byte alone: that row is invalid, and the rejects file holds it byte for byte
    writeFileSync(path, Buffer.concat([nul, Buffer.from('enc.4@example.com,Zoë\r\n')]));
    const n = await crm(['batch', 'contacts', path]);
    expect(n.code, n.stderr).toBe(9);
    expect(JSON.parse(n.stdout)).toMatchObject({ rows: 3, created: 2, invalid: 1 });
    const rejects = rejectsOf(`${path}.rejects.csv`);
    expect(rejects.map((x) => [x._line, x._error_code, x.first_name])).toEqual([['3', 'INVALID_CHARACTER', 'Nu\0l']]);
    expect(await contacts('enc')).toEqual(
      new Map([
        ['enc.1@example.com', 'Ann'],
        ['enc.4@example.com', 'Zoë'],
      ]),
    );
  });

  it('a Windows-1252 file: refused whole without --encoding (no journal left), imported with it; its rejects are UTF-8 with a BOM, and a BOM that --encoding contradicts is refused', async () => {
    const path = join(dir, 'w1252.csv');
    const cp = (s: string): Buffer => Buffer.from(s, 'latin1');
    writeFileSync(
      path,
      cp('email,first_name\r\nw1.1@example.com,Ann\r\nw1.2@example.com,René\r\n,Zoë\r\nw1.3@example.com,Müller\r\n'),
    );
    const first = await crm(['batch', 'contacts', path]);
    expect(first.code, first.stderr).toBe(2);
    expect(first.stderr).toMatch(
      /line 3 \("w1\.2@example\.com,Ren\\xE9"\), line 4 \(",Zo\\xEB"\), line 5 \("w1\.3@example\.com,M\\xFCller"\) have bytes that are not valid UTF-8/,
    );
    expect(await contacts('w1')).toEqual(new Map());
    // what the message says works: not refused as a changed file
    const r = await crm(['batch', 'contacts', path, '--encoding', 'windows-1252']);
    expect(r.code, r.stderr).toBe(9);
    expect(JSON.parse(r.stdout)).toMatchObject({ rows: 4, created: 3, failed: 1 });
    expect(await contacts('w1')).toEqual(
      new Map([
        ['w1.1@example.com', 'Ann'],
        ['w1.2@example.com', 'René'],
        ['w1.3@example.com', 'Müller'],
      ]),
    );
    const rejectsPath = `${path}.rejects.csv`;
    expect(r.stderr).toContain(`run \`crm batch contacts ${rejectsPath}\`.`);
    expect(r.stderr).not.toMatch(/rejects\.csv[^\n]*--encoding/);
    const bytes = readFileSync(rejectsPath);
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(rejectsOf(rejectsPath)).toMatchObject([
      { email: '', first_name: 'Zoë', _line: '4', _error_code: 'VALIDATION_FAILED' },
    ]);
    // the rejects file is UTF-8: reading it as windows-1252 would store "ZoÃ«"
    const wrong = await crm(['batch', 'contacts', rejectsPath, '--encoding', 'windows-1252']);
    expect(wrong.code, wrong.stderr).toBe(2);
    expect(wrong.stderr).toMatch(/starts with a utf-8 byte order mark, but --encoding says windows-1252/);
    writeFileSync(rejectsPath, bytes.toString('utf8').replace('\r\n,Zoë,', '\r\nw1.4@example.com,Zoë,'));
    const fixed = await crm(['batch', 'contacts', rejectsPath]);
    expect(fixed.code, fixed.stderr).toBe(0);
    expect((await contacts('w1')).get('w1.4@example.com')).toBe('Zoë');
  });

  it('an 8-bit --encoding on a file that is UTF-8 with accents is refused (it would change them), on a plain ASCII one it is harmless', async () => {
    const path = join(dir, 'utf8-as-cp.csv');
    writeFileSync(path, 'email,first_name\nw3.1@example.com,Zoë\n');
    const r = await crm(['batch', 'contacts', path, '--encoding', 'windows-1252']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(
      'is UTF-8 text ("ample.com,Zoë"), but --encoding windows-1252 would import it as "ample.com,ZoÃ«"; nothing was sent',
    );
    expect(r.stderr).toMatch(/rerun without --encoding/);
    writeFileSync(path, 'email,first_name\nw3.2@example.com,Zoe\n');
    const ascii = await crm(['batch', 'contacts', path, '--encoding', 'windows-1252']);
    expect(ascii.code, ascii.stderr).toBe(0);
    expect([...(await contacts('w3')).keys()]).toEqual(['w3.2@example.com']);
  });

  it('bytes the given --encoding cannot decode refuse the file (exit 2), naming the line', async () => {
    const path = join(dir, 'w1252-bad.csv');
    writeFileSync(
      path,
      Buffer.concat([
        Buffer.from('email,first_name\nw2.1@example.com,Ann\nw2.2@example.com,x'),
        Buffer.from([0x81]),
        Buffer.from('\n'),
      ]),
    );
    const r = await crm(['batch', 'contacts', path, '--encoding', 'windows-1252']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(
      /cannot be decoded as windows-1252: line 3 has bytes that windows-1252 has no character for\. Nothing was sent/,
    );
    expect(await contacts('w2')).toEqual(new Map());
  });

  it.each([
    ['utf-16be', (s: string) => Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(s, 'utf16le').swap16()])],
    ['utf-16le', (s: string) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(s, 'utf16le')])],
  ] as const)('a %s file with a BOM is decoded', async (name, encode) => {
    const tag = `u${name.slice(-2)}`;
    const path = join(dir, `${tag}.csv`);
    writeFileSync(path, encode(`email,first_name\r\n${tag}.1@example.com,Zoë 😀\r\n${tag}.2@example.com,Łukasz\r\n`));
    const r = await crm(['batch', 'contacts', path]);
    expect(r.code, r.stderr).toBe(0);
    expect(await contacts(tag)).toEqual(
      new Map([
        [`${tag}.1@example.com`, 'Zoë 😀'],
        [`${tag}.2@example.com`, 'Łukasz'],
      ]),
    );
  });

  it('--encoding windows-1252 (and latin1) decodes an 8-bit export; without it the file is refused, not mangled', async () => {
    const path = join(dir, 'excel.csv');
    // "José", "€uro" and "Müller" in Windows-1252
    writeFileSync(
      path,
      Buffer.concat([
        Buffer.from('email,first_name\r\ncp.1@example.com,Jos'),
        Buffer.from([0xe9]),
        Buffer.from('\r\ncp.2@example.com,'),
        Buffer.from([0x80]),
        Buffer.from('uro\r\ncp.3@example.com,M'),
        Buffer.from([0xfc]),
        Buffer.from('ller\r\n'),
      ]),
    );
    const plain = await crm(['batch', 'contacts', path, '--dry-run']);
    expect(plain.code, plain.stderr).toBe(2);
    expect(plain.stderr).toMatch(/line 2 .*line 3 .*line 4 .*not valid UTF-8/);
    const r = await crm(['batch', 'contacts', path, '--encoding', 'windows-1252']);
    expect(r.code, r.stderr).toBe(0);
    expect(await contacts('cp')).toEqual(
      new Map([
        ['cp.1@example.com', 'José'],
        ['cp.2@example.com', '€uro'],
        ['cp.3@example.com', 'Müller'],
      ]),
    );
    const latin = await crm(['batch', 'contacts', path, '--encoding', 'latin1', '--dry-run']);
    expect(latin.code, latin.stderr).toBe(0);
    expect(JSON.parse(latin.stdout)).toMatchObject({ valid: 3, invalid: 0 });
  });

  it('an unknown --encoding is a usage error', async () => {
    const r = await crm(['batch', 'contacts', join(dir, 'excel.csv'), '--encoding', 'klingon']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--encoding "klingon"/);
  });

  it('NDJSON: a line that is not valid UTF-8 refuses the file', async () => {
    const path = join(dir, 'bad.ndjson');
    writeFileSync(
      path,
      Buffer.concat([
        Buffer.from('{"email":"nd.1@example.com"}\n{"email":"nd.2@example.com","first_name":"Jos'),
        Buffer.from([0xe9]),
        Buffer.from('"}\n'),
      ]),
    );
    const r = await crm(['batch', 'contacts', path]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/line 2 \(".*"first_name":"Jos\\xE9"}"\) has bytes that are not valid UTF-8/);
    expect([...(await contacts('nd')).keys()]).toEqual([]);
  });

  it('NDJSON: a number a double cannot hold is sent as written, never rounded (test/hostile/numbers.test.ts checks the bytes)', async () => {
    const path = join(dir, 'big.ndjson');
    writeFileSync(
      path,
      '{"email":"ndbig.1@example.com","score":12}\n{"email":"ndbig.2@example.com","score":12345678901234567891}\n',
    );
    const r = await crm(['-o', 'json', 'batch', 'contacts', path]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ created: 2, invalid: 0 });
    expect([...(await contacts('ndbig')).keys()].sort()).toEqual(['ndbig.1@example.com', 'ndbig.2@example.com']);
  });

  it('standard input: invalid UTF-8 refuses it (and --encoding then imports it); UTF-16 with a BOM is decoded', async () => {
    const bad = Buffer.concat([
      Buffer.from('email,first_name\nstdin.1@example.com,Ann\nstdin.2@example.com,Jos'),
      Buffer.from([0xe9]),
      Buffer.from('\n'),
    ]);
    const r = await crm(['batch', 'contacts', '-'], { input: bad });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/standard input is not UTF-8 text: line 3/);
    const cp = await crm(['batch', 'contacts', '-', '--encoding', 'latin1'], { input: bad });
    expect(cp.code, cp.stderr).toBe(0);
    const u16 = Buffer.concat([
      Buffer.from([0xff, 0xfe]),
      Buffer.from('email,first_name\nstdin.3@example.com,Zoë\n', 'utf16le'),
    ]);
    const ok = await crm(['batch', 'contacts', '-'], { input: u16 });
    expect(ok.code, ok.stderr).toBe(0);
    expect(await contacts('stdin')).toEqual(
      new Map([
        ['stdin.1@example.com', 'Ann'],
        ['stdin.2@example.com', 'José'],
        ['stdin.3@example.com', 'Zoë'],
      ]),
    );
  });

  it('a file that is not text at all (a NUL in its header, UTF-16 without a BOM) is refused with exit 2', async () => {
    const bin = join(dir, 'binary.csv');
    writeFileSync(bin, Buffer.from([0x50, 0x4b, 3, 4, 0x14, 0, 0, 0, 10, 10]));
    const r = await crm(['batch', 'contacts', bin]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/not a text file/);
    const nobom = join(dir, 'nobom.csv');
    writeFileSync(nobom, Buffer.from('email\nx@example.com\n', 'utf16le'));
    const u = await crm(['batch', 'contacts', nobom]);
    expect(u.code, u.stderr).toBe(2);
    expect(u.stderr).toMatch(/--encoding utf-16le/);
  });
});

describe('NDJSON on standard input', () => {
  const ndjson = (tag: string): string =>
    [1, 2].map((i) => JSON.stringify({ email: `${tag}.${i}@example.com`, first_name: `N${i}` })).join('\n') + '\n';

  it("the help's example is true: `cat people.ndjson | crm batch contacts - --input-format ndjson --strict`", async () => {
    const help = await runCrm(['batch', '--help'], { env: t.env('admin'), cwd: dir });
    const example = /cat people\.ndjson \| crm (.+)/.exec(help.stdout)?.[1];
    expect(example).toMatch(/--input-format ndjson/);
    const r = await crm(example!.trim().split(/\s+/), { input: ndjson('ndin') });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ rows: 2, created: 2 });
    expect(await contacts('ndin')).toEqual(
      new Map([
        ['ndin.1@example.com', 'N1'],
        ['ndin.2@example.com', 'N2'],
      ]),
    );
  });

  it('NDJSON read as CSV by default (stdin, or a name not ending in .ndjson) is refused with exit 2, pointing at --input-format', async () => {
    const r = await crm(['batch', 'contacts', '-', '--strict'], { input: ndjson('ndcsv') });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(
      /standard input starts with "\{" like NDJSON, but would be read as CSV.*\n.*--input-format ndjson/,
    );
    const path = join(dir, 'people.txt');
    writeFileSync(path, ndjson('ndtxt'));
    const f = await crm(['batch', 'contacts', path]);
    expect(f.code, f.stderr).toBe(2);
    expect(f.stderr).toMatch(/its name does not end in \.ndjson or \.jsonl/);
    expect(await contacts('ndcsv')).toEqual(new Map());
    const ok = await crm(['batch', 'contacts', path, '--input-format', 'ndjson']);
    expect(ok.code, ok.stderr).toBe(0);
    expect([...(await contacts('ndtxt')).keys()].sort()).toEqual(['ndtxt.1@example.com', 'ndtxt.2@example.com']);
  });
});
