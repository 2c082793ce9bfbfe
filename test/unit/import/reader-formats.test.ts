// crm's own -o tsv and -o json read back by `crm batch` (issue 28): a `.tsv` file as its header and cells (the
// writer's backslash escapes undone), a `.json` file as the array the writer makes, element by element, its numbers
// exact and its lines right, across read chunks; a file that is not such an array refused naming its line.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { openInput, type ReadRow } from '../../../src/import/input/reader.js';
import { createListWriter } from '../../../src/output/writers.js';
import { parseJson, RawNumber, stringifyJson } from '../../../src/json/exact-json.js';
import { fakeStdout } from '../../helpers/fake-io.js';
import { runs } from '../../helpers/property.js';
import { tempDir } from '../../helpers/temp.js';

const dir = tempDir('crm-reader-formats-');
let n = 0;
async function read(name: string, text: string): Promise<{ header: string[] | null; rows: ReadRow[]; format: string }> {
  const path = join(dir, `${n++}-${name}`);
  writeFileSync(path, text);
  const r = await openInput(path, { name: path });
  const rows: ReadRow[] = [];
  for await (const row of r.rows) rows.push(row);
  return { header: r.header, rows, format: r.format };
}

async function written(format: 'tsv' | 'json', records: unknown[]): Promise<string> {
  const out = fakeStdout();
  const w = createListWriter(format, out);
  for (const r of records) await w.write(r);
  await w.end();
  return out.text();
}

describe('a .tsv file', () => {
  it('is its header and cells, the escapes undone', async () => {
    const text = await written('tsv', [{ id: 'c1', note: 'a\tb\\n\nc\r', zip: '00501' }]);
    const got = await read('x.tsv', `\ufeff${text}`);
    expect(got).toMatchObject({ format: 'csv', header: ['id', 'note', 'zip'] });
    expect(got.rows).toEqual([
      { line: 2, cells: ['c1', 'a\tb\\n\nc\r', '00501'], raw: ['c1', 'a\tb\\n\nc\r', '00501'] },
    ]);
  });
});

describe('a .json file', () => {
  it('is the array -o json writes, element by element, with each element’s line', async () => {
    const records = [{ a: 1, s: 'x,]}"\\' }, { b: [1, { c: '[' }] }, { big: new RawNumber('12345678901234567890123') }];
    const got = await read('x.json', await written('json', records));
    expect(got.format).toBe('ndjson');
    expect(got.rows.map((r) => [r.line, stringifyJson(r.json)])).toEqual([
      [2, '{"a":1,"s":"x,]}\\"\\\\"}'],
      [6, '{"b":[1,{"c":"["}]}'],
      [14, '{"big":12345678901234567890123}'],
    ]);
  });

  it('property: any records -o json writes read back as the same values, elements across read chunks', async () => {
    const record = fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 5 });
    await fc.assert(
      fc.asyncProperty(fc.array(record, { maxLength: 6 }), fc.nat(3), async (records, big) => {
        // a long string now and then: an element that crosses the 64 KiB chunks of the read
        const all = records.map((r, i) => (i === big ? { ...r, long: 'é"x'.repeat(30_000) } : r));
        const got = await read('p.json', await written('json', all));
        expect(got.rows.map((r) => r.json)).toEqual(all.map((r) => parseJson(JSON.stringify(r))));
      }),
      runs(60),
    );
  });

  it.each([
    ['{"a":1}\n', /line 1: not a JSON array/],
    ['[\n  {"a":1},\n', /line 3: the array is not closed/],
    ['[{"a":1}]\n{"b":2}\n', /line 2: there is more after/],
    ['[{"a":1},,{"b":2}]', /line 1: an empty element/],
  ])('refuses %j naming the line', async (text, message) => {
    await expect(read('bad.json', text)).rejects.toThrow(message);
  });

  it('an empty array is no rows; an element too large is a row of its own, the rest read', async () => {
    expect((await read('e.json', '[]\n')).rows).toEqual([]);
    const path = join(dir, 'large.json');
    writeFileSync(path, `[{"a":"${'x'.repeat(2000)}"},\n{"b":1}]`);
    const r = await openInput(path, { name: path, maxRecordBytes: 1000 });
    const rows: ReadRow[] = [];
    for await (const row of r.rows) rows.push(row);
    expect(rows.map((x) => x.error?.code ?? stringifyJson(x.json))).toEqual(['RECORD_TOO_LARGE', '{"b":1}']);
  });
});
