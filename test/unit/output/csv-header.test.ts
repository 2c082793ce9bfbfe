// Issue 28, finding 7 of the new-user trial: a csv/tsv export took its columns from the first record only, so a
// field that only later records of the page hold was not in the file. The header is now the fields of the first
// HEADER_SAMPLE records (a whole page), the command's columns first.
import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { headerColumns } from '../../../src/output/format.js';
import { unguardFormula } from '../../../src/output/formula-guard.js';
import { createListWriter, HEADER_SAMPLE, writeWhole } from '../../../src/output/writers.js';
import { unescapeTsv } from '../../helpers/tsv.js';
import { fakeStdout } from '../../helpers/fake-io.js';
import { runs } from '../../helpers/property.js';

const NAMES = ['id', 'email', 'first_name', 'phone', 'owner_id', 'zip', 'a.b', 'x y'];
const DEFAULTS = ['id', 'email', 'first_name', 'last_name', 'owner_id'];
/** flat records whose fields overlap: values with separators, quotes, line breaks and formula triggers */
const record = fc.dictionary(fc.constantFrom(...NAMES), fc.stringMatching(/^[a-z0-9 ,"'=\t\n\\]*$/), {
  maxKeys: 6,
});
const recordList = fc.array(record, { minLength: 1, maxLength: 40 });

describe('headerColumns', () => {
  it('is every field of the records once, the defaults they hold first in their order, then as first seen', () => {
    fc.assert(
      fc.property(recordList, fc.subarray(DEFAULTS), (records, defaults) => {
        const header = headerColumns(records, defaults);
        const seen = [...new Set(records.flatMap((r) => Object.keys(r)))];
        expect(new Set(header).size).toBe(header.length);
        expect([...header].sort()).toEqual([...seen].sort());
        const first = defaults.filter((d) => seen.includes(d));
        expect(header.slice(0, first.length)).toEqual(first);
        expect(header.slice(first.length)).toEqual(seen.filter((f) => !first.includes(f)));
      }),
      runs(),
    );
  });

  it('a record that is not an object is its own `value` column', () => {
    expect(headerColumns(['a', 1])).toEqual(['value']);
    expect(headerColumns([{ id: 'c1' }, { id: 'c2', phone: '1' }], ['phone'])).toEqual(['phone', 'id']);
  });
});

describe('csv/tsv list writers: the header is the fields of the first page', () => {
  it.each(['csv', 'tsv'] as const)(
    '%s: every cell of every record is in the file, and nothing is said',
    async (format) => {
      await fc.assert(
        fc.asyncProperty(recordList, fc.subarray(DEFAULTS), async (records, columns) => {
          const out = fakeStdout();
          const notices: string[] = [];
          const w = createListWriter(format, out, { columns, notice: (m) => notices.push(m) });
          for (const r of records) await w.write(r);
          await w.end();
          const [header, ...rows]: string[][] =
            format === 'csv'
              ? parse(out.text())
              : out
                  .text()
                  .slice(0, -1)
                  .split('\n')
                  .map((line) => line.split('\t').map(unescapeTsv));
          for (const r of records) for (const f of Object.keys(r)) expect(header).toContain(f);
          expect(rows.map((row) => Object.fromEntries(header!.map((f, i) => [f, unguardFormula(row[i]!)])))).toEqual(
            records.map((r) => Object.fromEntries(header!.map((f) => [f, r[f] ?? '']))),
          );
          expect(notices).toEqual([]);
        }),
        runs(100),
      );
    },
  );

  it('a field the first record lacks and a later one holds is a column, the command’s columns first', async () => {
    const out = fakeStdout();
    const records = [
      { id: 'c1', email: 'a@x', owner_id: 'u1', created_at: 't1' },
      { id: 'c2', email: 'b@x', phone: '+1 555', first_name: 'Bo', owner_id: 'u1', created_at: 't2' },
    ];
    const w = createListWriter('csv', out, { columns: DEFAULTS });
    for (const r of records) await w.write(r);
    await w.end();
    expect(out.text()).toBe("id,email,first_name,owner_id,created_at,phone\nc1,a@x,,u1,t1,\nc2,b@x,Bo,u1,t2,'+1 555\n");
  });

  it('--fields keeps exactly its columns in its order, written at once', async () => {
    const out = fakeStdout();
    const w = createListWriter('csv', out, { fields: ['email', 'id'], columns: DEFAULTS });
    await w.write({ id: 'c1', email: 'a@x' });
    expect(out.text()).toBe('email,id\na@x,c1\n');
    await w.write({ id: 'c2', email: 'b@x', phone: '1' });
    await w.end();
    expect(out.text()).toBe('email,id\na@x,c1\nb@x,c2\n');
  });

  it('holds the first HEADER_SAMPLE records, then writes them and streams the rest', async () => {
    const out = fakeStdout();
    const w = createListWriter('csv', out);
    for (let i = 0; i < HEADER_SAMPLE - 1; i++) await w.write({ id: `c${i}` });
    expect(out.text()).toBe('');
    await w.write({ id: 'last', phone: '1' });
    expect(out.text().split('\n')).toHaveLength(HEADER_SAMPLE + 2);
    expect(out.text()).toMatch(/^id,phone\n/);
    await w.write({ id: 'later' });
    expect(out.text()).toMatch(/\nlater,\n$/);
  });

  it('a list that fails part way still writes the records held for the header', async () => {
    const out = fakeStdout();
    const fill = async (w: { write(r: unknown): unknown }): Promise<void> => {
      await w.write({ id: 'c1' });
      await w.write({ id: 'c2', phone: '1' });
      throw new Error('page 2 failed');
    };
    await expect(writeWhole(createListWriter('csv', out), fill)).rejects.toThrow('page 2 failed');
    expect(out.text()).toBe('id,phone\nc1,\nc2,1\n');
  });
});
