import { Writable } from 'node:stream';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { createListWriter, HEADER_SAMPLE, writeRecord, type ListWriter } from '../../../src/output/writers.js';
import { unescapeTsv } from '../../helpers/tsv.js';
import { fakeStdout, slowStdout } from '../../helpers/fake-io.js';
import { parseHeader } from '../../../src/import/input/header.js';

const records = [
  { id: 'c_1', name: 'Ada', link: { type: 'owner', id: 'u_1' }, tags: ['a', 'b'], score: -5 },
  { id: 'c_2', name: 'Bob, "the" builder', link: null, tags: [], score: 3.5 },
  { id: 'c_3', name: 'Line\nbreak', link: { type: 'viewer' }, tags: ['x'], score: null },
];

async function writeAll(w: ListWriter, list: unknown[]): Promise<void> {
  for (const r of list) await w.write(r);
  await w.end();
}

describe('json list writer', () => {
  it.each([0, 1, 3, 250])('streams valid JSON equal to JSON.stringify for %i records', async (n) => {
    const list = Array.from({ length: n }, (_, i) => ({ ...records[i % 3], n: i }));
    const out = fakeStdout();
    const w = createListWriter('json', out);
    await writeAll(w, list);
    expect(out.text()).toBe(`${JSON.stringify(list, null, 2)}\n`);
    expect(JSON.parse(out.text())).toEqual(list);
  });

  it('prints [] for an empty list', async () => {
    const out = fakeStdout();
    await createListWriter('json', out).end();
    expect(out.text()).toBe('[]\n');
  });

  it('writes each record as it arrives (streams)', async () => {
    const out = fakeStdout();
    const w = createListWriter('json', out);
    await w.write({ id: 1 });
    expect(out.text()).toBe('[\n  {\n    "id": 1\n  }');
    await w.write({ id: 2 });
    expect(out.text()).toContain('"id": 2');
  });

  it('applies --fields with dot paths, keeping the nested shape; missing fields are null', async () => {
    const out = fakeStdout();
    await writeAll(createListWriter('json', out, { fields: ['name', 'link.type', 'id'] }), records);
    expect(JSON.parse(out.text())).toEqual([
      { name: 'Ada', link: { type: 'owner' }, id: 'c_1' },
      { name: 'Bob, "the" builder', link: { type: null }, id: 'c_2' },
      { name: 'Line\nbreak', link: { type: 'viewer' }, id: 'c_3' },
    ]);
    expect(Object.keys(JSON.parse(out.text())[0])).toEqual(['name', 'link', 'id']);
  });

  it('escapes C1 and bidi controls that JSON.stringify leaves raw, keeping the same value', async () => {
    const out = fakeStdout();
    const hostile = { s: 'a\u009b31mb\u202ec\u007f\u001b[2J' };
    await writeAll(createListWriter('json', out), [hostile]);
    expect(out.text()).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
    expect(out.text()).toContain('\\u009b');
    expect(JSON.parse(out.text())).toEqual([hostile]);
  });
});

describe('ndjson list writer', () => {
  it('writes one record per line', async () => {
    const out = fakeStdout();
    const w = createListWriter('ndjson', out);
    await writeAll(w, records);
    const lines = out.text().split('\n');
    expect(lines.at(-1)).toBe('');
    expect(lines.slice(0, -1).map((l) => JSON.parse(l))).toEqual(records);
  });

  it('prints nothing for an empty list and supports --fields', async () => {
    const empty = fakeStdout();
    await createListWriter('ndjson', empty).end();
    expect(empty.text()).toBe('');
    const out = fakeStdout();
    await writeAll(createListWriter('ndjson', out, { fields: ['id', 'link.id'] }), records.slice(0, 1));
    expect(out.text()).toBe('{"id":"c_1","link":{"id":"u_1"}}\n');
  });
});

describe('csv / tsv list writers', () => {
  it('writes a header from the first record and RFC 4180 rows that csv-parse reads back', async () => {
    const out = fakeStdout();
    await writeAll(createListWriter('csv', out), records);
    expect(out.text()).toMatchInlineSnapshot(`
      "id,name,link,tags,score
      c_1,Ada,"{""type"":""owner"",""id"":""u_1""}","[""a"",""b""]",-5
      c_2,"Bob, ""the"" builder",,[],3.5
      c_3,"Line
      break","{""type"":""viewer""}","[""x""]",
      "
    `);
    const rows = parse<Record<string, string>>(out.text(), { columns: true });
    expect(rows.map((r) => r.name)).toEqual(['Ada', 'Bob, "the" builder', 'Line\nbreak']);
    expect(JSON.parse(rows[0]!.link!)).toEqual(records[0]!.link);
  });

  it('follows --fields (dot paths) for header and cells', async () => {
    const out = fakeStdout();
    await writeAll(createListWriter('csv', out, { fields: ['id', 'link.type'] }), records);
    expect(out.text()).toBe('id,link.type\nc_1,owner\nc_2,\nc_3,viewer\n');
  });

  it('prints only the header for an empty list with --fields, nothing without', async () => {
    const a = fakeStdout();
    await createListWriter('csv', a, { fields: ['id', 'name'] }).end();
    expect(a.text()).toBe('id,name\n');
    const b = fakeStdout();
    await createListWriter('csv', b).end();
    expect(b.text()).toBe('');
  });

  it('guards against formula injection in string cells', async () => {
    const out = fakeStdout();
    await writeAll(createListWriter('csv', out, { fields: ['name', 'n'] }), [
      { name: '=HYPERLINK("http://x")', n: -5 },
    ]);
    expect(out.text()).toBe('name,n\n"\'=HYPERLINK(""http://x"")",-5\n');
  });

  it('tsv escapes tabs and newlines and reads back', async () => {
    const out = fakeStdout();
    await writeAll(createListWriter('tsv', out), [{ a: 'x\ty', b: 'l1\nl2', c: 'back\\slash' }]);
    expect(out.text()).toBe('a\tb\tc\nx\\ty\tl1\\nl2\tback\\\\slash\n');
    const [, row] = out.text().trimEnd().split('\n');
    expect(row!.split('\t').map(unescapeTsv)).toEqual(['x\ty', 'l1\nl2', 'back\\slash']);
  });

  it('shows control characters escaped when stdout is a terminal', async () => {
    const out = fakeStdout({ isTTY: true });
    await writeAll(createListWriter('csv', out), [{ a: 'red\x1b[31m', b: 'over\rwrite' }]);
    expect(out.text()).toBe('a,b\nred\\x1b[31m,over\\rwrite\n');
  });
});

describe('table list writer', () => {
  it('renders the default columns without colour', async () => {
    const out = fakeStdout();
    const w = createListWriter('table', out, { columns: ['id', 'name', 'link.type'], color: false });
    await writeAll(w, records);
    expect(out.text()).toMatchInlineSnapshot(`
      "┌─────┬────────────────────┬───────────┐
      │ id  │ name               │ link.type │
      │ c_1 │ Ada                │ owner     │
      │ c_2 │ Bob, "the" builder │           │
      │ c_3 │ Line\\nbreak        │ viewer    │
      └─────┴────────────────────┴───────────┘
      "
    `);
    expect(out.text()).not.toContain('\x1b');
  });

  it('--fields wins over default columns; nested values are compact JSON', async () => {
    const out = fakeStdout();
    await writeAll(
      createListWriter('table', out, { fields: ['id', 'tags'], columns: ['name'], color: false }),
      records.slice(0, 1),
    );
    expect(out.text()).toContain('["a","b"]');
    expect(out.text()).not.toContain('Ada');
  });

  it('never sends raw control characters from hostile cells or keys', async () => {
    const out = fakeStdout();
    const hostile = {
      'k\x1b[2J': 'osc \x1b]8;;http://evil.example\x07click\x1b]8;;\x07',
      b: 'clear \x1b[2J\x1b[H',
      c: 'fake\rOK',
      d: 'c1 \x9b31m red',
      e: 'bidi \u202etxt.exe',
    };
    await writeAll(createListWriter('table', out, { color: false }), [hostile]);
    const text = out.text();
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    expect(text).toContain('\\x1b]8;;http://evil.example\\x07');
    expect(text).toContain('fake\\rOK');
    expect(text).toContain('\\x9b31m');
    expect(text).toContain('\\u202e');
  });

  it('flushes a table every tableChunkSize rows, keeping the columns', async () => {
    const out = fakeStdout();
    const w = createListWriter('table', out, { color: false, tableChunkSize: 2 });
    await writeAll(w, [{ id: 1 }, { id: 2 }, { id: 3, extra: 'x' }]);
    const text = out.text();
    expect(text.match(/┌/g)).toHaveLength(2);
    expect(text.match(/│ id │/g)).toHaveLength(2);
    expect(text).not.toContain('extra');
    expect(text).toMatch(/│ 3 +│/);
  });

  it('cuts long cells', async () => {
    const out = fakeStdout();
    await writeAll(createListWriter('table', out, { color: false, maxCellWidth: 10 }), [{ a: 'x'.repeat(50) }]);
    expect(out.text()).toContain(`${'x'.repeat(9)}…`);
    expect(out.text()).not.toContain('x'.repeat(10));
  });

  it('prints nothing for an empty list', async () => {
    const out = fakeStdout();
    const w = createListWriter('table', out, { columns: ['id'] });
    await w.end();
    expect(out.text()).toBe('');
  });
});

describe('backpressure', () => {
  it.each(['json', 'ndjson', 'csv', 'tsv'] as const)(
    '%s: write waits for drain when the stream is full',
    async (format) => {
      const slow = slowStdout(16);
      const w = createListWriter(format, slow.stream);
      // csv/tsv hold the first HEADER_SAMPLE records for the header, then write them at once
      let p: void | Promise<void> = undefined;
      for (let i = 0; p === undefined && i <= HEADER_SAMPLE; i++)
        p = w.write({ id: `c_${i}`, name: 'a fairly long name to fill the buffer' });
      expect(p).toBeInstanceOf(Promise);
      let done = false;
      void p!.then(() => (done = true));
      await new Promise((r) => setImmediate(r));
      expect(done).toBe(false);
      slow.release();
      await p;
      expect(done).toBe(true);
    },
  );

  it('keeps the amount buffered bounded over 100,000 records with a slow reader', async () => {
    let drains = 0;
    const chunks: string[] = [];
    const stream = new Writable({
      highWaterMark: 1024,
      write(chunk: Buffer, _enc, cb) {
        chunks.push(chunk.toString('utf8'));
        setImmediate(cb); // a reader slower than the producer
      },
    });
    stream.on('drain', () => drains++);
    const w = createListWriter('ndjson', stream);
    let maxBuffered = 0;
    for (let i = 0; i < 100_000; i++) {
      const p = w.write({ id: `c_${i}`, name: 'x' });
      maxBuffered = Math.max(maxBuffered, stream.writableLength);
      if (p) await p;
    }
    await w.end();
    await new Promise<void>((resolve) => stream.end(resolve)); // let the reader catch up
    expect(maxBuffered).toBeLessThan(1024 + 100);
    expect(drains).toBeGreaterThan(1000);
    expect(chunks.join('').split('\n')).toHaveLength(100_001);
  });

  it('rejects instead of hanging when the reader goes away', async () => {
    const slow = slowStdout(8);
    const w = createListWriter('ndjson', slow.stream);
    const p = w.write({ id: 'c_1', pad: 'xxxxxxxxxxxxxxxx' });
    slow.stream.destroy();
    await expect(p).rejects.toMatchObject({ code: 'EPIPE' });
  });
});

describe('writeRecord', () => {
  const rec = { id: 'c_1', name: 'Ada', link: { type: 'owner' }, tags: ['a'] };

  it('json: pretty-printed with 2 spaces', async () => {
    const out = fakeStdout();
    await writeRecord('json', out, rec);
    expect(out.text()).toBe(`${JSON.stringify(rec, null, 2)}\n`);
  });

  it('json: null prints null; --fields projects', async () => {
    const a = fakeStdout();
    await writeRecord('json', a, null);
    expect(a.text()).toBe('null\n');
    const b = fakeStdout();
    await writeRecord('ndjson', b, rec, { fields: ['link.type'] });
    expect(b.text()).toBe('{"link":{"type":"owner"}}\n');
  });

  it('csv and tsv: header and one row', async () => {
    const a = fakeStdout();
    await writeRecord('csv', a, rec);
    expect(a.text()).toBe('id,name,link,tags\nc_1,Ada,"{""type"":""owner""}","[""a""]"\n');
    const b = fakeStdout();
    await writeRecord('tsv', b, rec, { fields: ['id', 'link.type'] });
    expect(b.text()).toBe('id\tlink.type\nc_1\towner\n');
  });

  it('table: a key/value table', async () => {
    const out = fakeStdout();
    await writeRecord('table', out, { ...rec, note: 'evil\x1b[2J' }, { color: false });
    expect(out.text()).toMatchInlineSnapshot(`
      "┌──────┬──────────────────┐
      │ id   │ c_1              │
      │ name │ Ada              │
      │ link │ {"type":"owner"} │
      │ tags │ ["a"]            │
      │ note │ evil\\x1b[2J      │
      └──────┴──────────────────┘
      "
    `);
  });

  it('table: wraps long values to the terminal width', async () => {
    const out = fakeStdout({ isTTY: true, columns: 40 });
    await writeRecord('table', out, { body: 'word '.repeat(30) }, { color: false });
    for (const line of out.text().trimEnd().split('\n')) expect(line.length).toBeLessThanOrEqual(40);
  });
});

describe('--fields naming a field no record has', () => {
  it.each(['json', 'ndjson', 'csv', 'tsv', 'table'] as const)(
    '%s: one notice at the end of the list, naming it and the fields there are',
    async (format) => {
      const notices: string[] = [];
      const w = createListWriter(format, fakeStdout(), {
        fields: ['id', 'emial', 'link.type'],
        notice: (m) => notices.push(m),
      });
      await writeAll(w, records);
      expect(notices).toEqual([
        '--fields: none of the 3 records printed has "emial"; the first one\'s fields: id, name, link, tags, score',
      ]);
    },
  );

  it('a field present in some record (even null) is not reported; an empty list says nothing', async () => {
    const notices: string[] = [];
    await writeAll(
      createListWriter('json', fakeStdout(), { fields: ['id', 'score', 'link.type'], notice: (m) => notices.push(m) }),
      records,
    );
    await writeAll(createListWriter('json', fakeStdout(), { fields: ['emial'], notice: (m) => notices.push(m) }), []);
    expect(notices).toEqual([]);
  });

  it('a single record (get) is judged at once', async () => {
    const notices: string[] = [];
    await writeRecord('json', fakeStdout(), records[0], { fields: ['id', 'emial'], notice: (m) => notices.push(m) });
    expect(notices).toEqual(['--fields: the record printed has no "emial"; its fields: id, name, link, tags, score']);
  });
});

describe('csv/tsv: fields the header lacks', () => {
  /** the records the header is made of: a first page where every record has only these fields */
  const page = (fields = { email: 'p@x' }) =>
    Array.from({ length: HEADER_SAMPLE }, (_, i) => ({ id: `p${i}`, ...fields }));

  it('fields of records after the first HEADER_SAMPLE that the header lacks are named once, with the --fields that includes them', async () => {
    for (const format of ['csv', 'tsv'] as const) {
      const out = fakeStdout();
      const notices: string[] = [];
      const records = [
        ...page(),
        { id: 'c1', email: 'a@x' },
        { id: 'c2', email: 'b@x', address: { city: 'P' }, tags: ['a'] },
        { id: 'c3', tags: [] },
      ];
      await writeAll(createListWriter(format, out, { notice: (m) => notices.push(m) }), records);
      expect(notices).toEqual([
        `Not in this file: fields that records after the first ${HEADER_SAMPLE} have and the header ` +
          `(the fields of those ${HEADER_SAMPLE}) lacks: "address" (1 record), "tags" (2 records). ` +
          'To include them: --fields id,email,address,tags (or -o ndjson).',
      ]);
    }
  });

  it('nothing is said when every record fits the header, or --fields chose the columns', async () => {
    const notices: string[] = [];
    const notice = (m: string) => notices.push(m);
    await writeAll(createListWriter('csv', fakeStdout(), { notice }), [{ id: 'a' }, { id: 'b' }]);
    await writeAll(createListWriter('csv', fakeStdout(), { notice, fields: ['id'] }), [{ id: 'a' }, { id: 'b', x: 1 }]);
    await writeAll(createListWriter('csv', fakeStdout(), { notice, fields: ['id'] }), [...page(), { id: 'b', x: 1 }]);
    expect(notices).toEqual([]);
  });

  it('a name a pasted --fields cannot carry (a comma, a space): only -o ndjson is offered', async () => {
    const notices: string[] = [];
    await writeAll(createListWriter('csv', fakeStdout(), { notice: (m) => notices.push(m) }), [
      ...page(),
      { id: 'b', 'home town, state': 'x' },
    ]);
    expect(notices[0]).toMatch(/To include them: -o ndjson\.$/);
  });
});

describe('csv/tsv: a field named like a typed header', () => {
  it('is written as a JSON string, which crm batch reads as that field exactly (issue 28)', async () => {
    const out = fakeStdout();
    await writeAll(createListWriter('csv', out), [{ id: 'c1', 'tags:list': 'a', 'n:Number': 1, 'a:b': 2 }]);
    expect(out.text()).toBe('id,"""tags:list""","""n:Number""",a:b\nc1,a,1,2\n');
    const [header]: string[][] = parse(out.text());
    expect(parseHeader(header!).columns.map((c) => [c.field, c.type])).toEqual([
      ['', 'string'],
      ['tags:list', 'string'],
      ['n:Number', 'string'],
      ['a_b', 'string'], // not a type suffix: a plain header, normalised (or the records' own a:b, when read)
    ]);
  });
});
