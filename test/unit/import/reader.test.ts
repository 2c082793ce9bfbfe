import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/http/errors.js';
import { detectFormat } from '../../../src/import/input/reader.js';
import { readAll, tempFile } from './helpers.js';

const SPECTRUM = join(import.meta.dirname, '../../fixtures/csv-spectrum');

describe('csv-spectrum: every CSV parses to its JSON twin', () => {
  const names = readdirSync(join(SPECTRUM, 'csvs')).filter((n) => n.endsWith('.csv'));
  it('has all twelve fixtures', () => expect(names).toHaveLength(12));
  for (const name of names) {
    it(name, async () => {
      let expected = JSON.parse(readFileSync(join(SPECTRUM, 'json', name.replace(/\.csv$/, '.json')), 'utf8')) as
        Record<string, string> | Array<Record<string, string>>;
      if (!Array.isArray(expected)) expected = [expected];
      if (name === 'location_coordinates.csv') {
        // upstream csv-spectrum's JSON twin has a different phone number than its CSV; every other
        // cell is compared, and the CSV's own number is checked
        expected = expected.map((r) => ({ ...r, 'Contact Phone Number': '2095257564' }));
      }
      const { header, rows } = await readAll(join(SPECTRUM, 'csvs', name));
      const objects = rows.map((r) => Object.fromEntries(header!.map((h, i) => [h, r.cells![i]])));
      expect(objects).toEqual(expected);
    });
  }
});

describe('reader: torture cases', () => {
  it('strips a BOM from the first header name', async () => {
    const { header, rows } = await readAll(tempFile('\ufeffemail,name\na@b.c,A\n'));
    expect(header).toEqual(['email', 'name']);
    expect(rows[0]).toMatchObject({ line: 2, cells: ['a@b.c', 'A'] });
  });

  it('gives the line a record starts on, across CRLF, quoted newlines and blank lines', async () => {
    const text = 'a,b\r\n1,2\r\n"x\r\ny",3\r\n\r\n\r\n4,5\r\n"p\nq\nr",6\n7,8';
    const { rows } = await readAll(tempFile(text));
    expect(rows.map((r) => [r.line, r.cells])).toEqual([
      [2, ['1', '2']],
      [3, ['x\r\ny', '3']],
      [7, ['4', '5']],
      [8, ['p\nq\nr', '6']],
      [11, ['7', '8']],
    ]);
  });

  it('passes ragged rows through with their cells', async () => {
    const { rows } = await readAll(tempFile('a,b\n1,2,3\n4\n5,6\n'));
    expect(rows.map((r) => r.cells)).toEqual([['1', '2', '3'], ['4'], ['5', '6']]);
  });

  it('skips blank lines and rows of empty cells, keeps counting lines', async () => {
    const { rows } = await readAll(tempFile('a,b\n\n,\n  ,\n1,2\n\n'));
    expect(rows).toEqual([{ line: 5, cells: ['1', '2'], raw: ['1', '2'] }]);
  });

  it('an unclosed quote is an invalid row on the line where it opens; reading goes on at the next line', async () => {
    const { rows } = await readAll(tempFile('a,b\n1,2\n3,"four\n5,6\n'), { name: 'people.csv' });
    expect(rows).toEqual([
      { line: 2, cells: ['1', '2'], raw: ['1', '2'] },
      {
        line: 3,
        raw: ['3', '"four'],
        error: {
          code: 'UNCLOSED_QUOTE',
          reason: expect.stringMatching(/^a quoted field starts on this line and is never closed/) as string,
        },
      },
      { line: 4, cells: ['5', '6'], raw: ['5', '6'] },
    ]);
  });

  it('stray quotes are kept as text, never lose the row or the next one', async () => {
    const { rows } = await readAll(tempFile('a,b\n1,2\n\n1,"2"x\n3,4 "five"\n'));
    expect(rows.map((r) => [r.line, r.cells])).toEqual([
      [2, ['1', '2']],
      [4, ['1', '"2"x']],
      [5, ['3', '4 "five"']],
    ]);
  });

  it('mixed line ends (CRLF, LF, CR) never merge two rows', async () => {
    const { rows } = await readAll(tempFile('a,b\r\n1,2\n3,4\r5,6\r\n7,8\r'));
    expect(rows.map((r) => [r.line, r.cells])).toEqual([
      [2, ['1', '2']],
      [3, ['3', '4']],
      [4, ['5', '6']],
      [5, ['7', '8']],
    ]);
  });

  it('an empty file is a UsageError naming the file', async () => {
    for (const content of ['', '\n\n', '\ufeff']) {
      const err = await readAll(tempFile(content), { name: 'empty.csv' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UsageError);
      expect((err as Error).message).toBe('empty.csv is empty: a header row is required');
    }
  });

  it('a missing file is a UsageError', async () => {
    const err = await readAll('/nonexistent/x.csv').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toMatch(/cannot read \/nonexistent\/x\.csv/);
  });

  it('a header only gives no rows', async () => {
    const { header, rows } = await readAll(tempFile('email,name\r\n'));
    expect(header).toEqual(['email', 'name']);
    expect(rows).toEqual([]);
  });

  it('keeps a field just under the 1 MiB record limit whole', async () => {
    const big = 'x'.repeat(1000 * 1000) + ',"quoted, with ""quotes""\nand a newline"';
    const { rows } = await readAll(tempFile(`a,b\n"${big.replace(/"/g, '""')}",2\n3,4\n`));
    expect(rows[0]!.cells![0]).toBe(big);
    expect(rows[1]).toMatchObject({ line: 4, cells: ['3', '4'] });
  });

  it('a record over the limit is an invalid row without its cells, skipped without being held; lines go on', async () => {
    const big = 'y'.repeat(5000);
    const text = `a,b\r\n1,2\r\n3,${big}\r\n"q\r\n${big}",x\r\n"${big}""${big}"\n5,6\n7,"${big}`;
    const { rows } = await readAll(tempFile(text), { maxRecordBytes: 1000 });
    expect(rows.map((r) => [r.line, r.error?.code ?? r.cells])).toEqual([
      [2, ['1', '2']],
      [3, 'RECORD_TOO_LARGE'],
      [4, 'RECORD_TOO_LARGE'],
      [6, 'RECORD_TOO_LARGE'],
      [7, ['5', '6']],
      [8, 'RECORD_TOO_LARGE'],
    ]);
    expect(rows[1]!.raw).toEqual([]);
  });

  it('a header over the limit is a UsageError', async () => {
    const err = await readAll(tempFile(`${'h'.repeat(5000)}\n1\n`), { maxRecordBytes: 1000 }).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/line 1: the record starting here is larger than/);
  });

  it('hashes every byte once in order, over-limit records included', async () => {
    const text = `a\n${'y'.repeat(300_000)}\n2\n"${'q'.repeat(200_000)}\n"\n3\n`;
    const parts: Buffer[] = [];
    await readAll(tempFile(text), { maxRecordBytes: 1000, onChunk: (c) => parts.push(Buffer.from(c)) });
    expect(Buffer.concat(parts).toString()).toBe(text);
  });

  it('reads UTF-8 split across read chunks', async () => {
    const rows = Array.from({ length: 20000 }, (_, i) => `${i},ʤé😀${i}`).join('\n');
    const { rows: got } = await readAll(tempFile(`n,s\n${rows}\n`));
    expect(got).toHaveLength(20000);
    expect(got[19999]).toMatchObject({ line: 20001, cells: ['19999', 'ʤé😀19999'] });
  });

  it('hands every byte to onChunk (hashing)', async () => {
    const text = '\ufeffa\n1\n2\n';
    let n = 0;
    await readAll(tempFile(text), { onChunk: (c) => (n += c.length) });
    expect(n).toBe(Buffer.byteLength(text));
  });
});

describe('reader: NDJSON', () => {
  it('detects the format from the extension', () => {
    expect(detectFormat('a.ndjson')).toBe('ndjson');
    expect(detectFormat('a.JSONL')).toBe('ndjson');
    expect(detectFormat('a.csv')).toBe('csv');
    expect(detectFormat('-')).toBe('csv');
  });

  it('one object a line, with line numbers; a bad line becomes an invalid row', async () => {
    const text = '\ufeff{"email":"a@b.c"}\r\n\n{"email": \n[1]\n{"n":2}';
    const { header, rows } = await readAll(tempFile(text, 'x.ndjson'));
    expect(header).toBeNull();
    expect(rows[0]).toEqual({ line: 1, json: { email: 'a@b.c' }, raw: { email: 'a@b.c' } });
    expect(rows[1]).toMatchObject({ line: 3, raw: '{"email": ', error: { code: 'INVALID_JSON' } });
    expect(rows[2]).toEqual({ line: 4, json: [1], raw: '[1]' });
    expect(rows[3]).toMatchObject({ line: 5, json: { n: 2 } });
  });

  it('an empty NDJSON file is a UsageError', async () => {
    const err = await readAll(tempFile('\n \n', 'e.jsonl'), { name: 'e.jsonl' }).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/e\.jsonl is empty/);
  });
});
