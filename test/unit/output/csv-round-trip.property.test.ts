// Properties of csv/tsv writing: the formula guard and its undo are a bijection, and a value
// written by crm's csv writer and read back by crm's own import reader is the same value.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { cellText } from '../../../src/output/cell.js';
import { csvRow } from '../../../src/output/csv.js';
import { unescapeTsv } from '../../helpers/tsv.js';
import { guardFormula, unguardFormula } from '../../../src/output/formula-guard.js';
import { convertCell } from '../../../src/import/input/header.js';
import { openInput } from '../../../src/import/input/reader.js';
import { runs } from '../../helpers/property.js';

const TRIGGERS = ['=', '+', '-', '@', '\t', '\r', '\n', '\uff1d', '\uff0b', '\uff0d', '\uff20'];

/** Any text, with a bias to the hard cases: runs of `'` before a trigger, quotes, separators, line ends. */
const text = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.string({
    unit: fc.constantFrom("'", '"', ',', '\t', '\r', '\n', '\\', ' ', 'a', '=', '-', '+', '@', '\uff1d', '\ufeff'),
  }),
  fc
    .tuple(fc.nat(3), fc.constantFrom(...TRIGGERS, 'a', ' ', "'"), fc.string())
    .map(([quotes, first, rest]) => `${"'".repeat(quotes)}${first}${rest}`),
);

describe('formula guard', () => {
  it('unguard(guard(v)) === v for every v, and a guarded text never starts with a trigger', () => {
    fc.assert(
      fc.property(text, (v) => {
        const g = guardFormula(v);
        expect(unguardFormula(g)).toBe(v);
        expect(g === v || g === `'${v}`).toBe(true);
        expect(TRIGGERS.includes(g.charAt(0))).toBe(false);
      }),
      runs(500),
    );
  });

  it('the examples of the issue', () => {
    for (const v of ['+15551230000', '-12', '=SUM(A1:A2)', "'quoted", '@x', "'-12", "''=x"]) {
      expect(unguardFormula(guardFormula(v))).toBe(v);
    }
    expect(guardFormula("'quoted")).toBe("'quoted");
    expect(guardFormula("'-12")).toBe("''-12");
  });

  it("a typed cell reads the guarded text as the value itself (`amount:number` of `'-12` is -12)", () => {
    const type = fc.constantFrom('string', 'number', 'boolean', 'list', 'json' as const);
    fc.assert(
      fc.property(text, (v) => {
        const r = convertCell(guardFormula(v), 'string');
        expect(r).toEqual(
          v.trim() === '' ? { ok: true, value: undefined, empty: true } : { ok: true, value: v, empty: false },
        );
      }),
      runs(300),
    );
    // a text without a leading `'` is left alone by unguard, so its typing is the text's own
    fc.assert(
      fc.property(
        text.filter((v) => !v.startsWith("'")),
        type,
        (v, t) => {
          expect(convertCell(guardFormula(v), t)).toEqual(convertCell(v, t));
        },
      ),
      runs(300),
    );
    expect(convertCell("'-12", 'number')).toEqual({ ok: true, value: -12, empty: false });
  });
});

const value = fc.oneof(
  { weight: 4, arbitrary: text },
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.dictionary(fc.string({ maxLength: 3 }), fc.string({ maxLength: 3 }), { maxKeys: 2 }),
);

const dir = mkdtempSync(join(tmpdir(), 'crm-csv-prop-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Reads a csv file the way `crm batch` does: crm's reader, then a string column's convertCell. */
async function readBack(path: string): Promise<{ header: string[] | null; rows: unknown[][] }> {
  const reader = await openInput(path);
  const rows: unknown[][] = [];
  for await (const row of reader.rows) rows.push((row.cells ?? []).map((c) => convertCell(c, 'string')));
  return { header: reader.header, rows };
}

/** What a string column of the import makes of a value's text: blank cells are left out. */
const imported = (v: unknown): unknown =>
  cellText(v).trim() === ''
    ? { ok: true, value: undefined, empty: true }
    : { ok: true, value: cellText(v), empty: false };

describe('csv written by crm and read by crm batch', () => {
  let n = 0;
  it('gives back every value (its text: strings as they are, others as cellText writes them)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(value, { minLength: 2, maxLength: 2 }), { minLength: 1, maxLength: 5 }),
        async (rows) => {
          // the first column keeps a row from being all empty (the import skips such lines)
          const records = rows.map((r, i) => [`r${i}`, ...r]);
          const path = join(dir, `p${++n}.csv`);
          // as the list writer writes: the header, then one row per record, each ended by \n
          writeFileSync(path, [['id', 'a', 'b'], ...records].map((r) => `${csvRow(r)}\n`).join(''));
          const back = await readBack(path);
          expect(back.header).toEqual(['id', 'a', 'b']);
          expect(back.rows).toEqual(records.map((r) => r.map(imported)));
        },
      ),
      runs(100),
    );
  });
});

describe('tsv written by crm', () => {
  it('never holds a raw tab or line end inside a cell, and unescaping gives back every value', () => {
    fc.assert(
      fc.property(fc.array(value, { minLength: 1, maxLength: 4 }), (values) => {
        const line = csvRow(values, '\t');
        expect(line).not.toMatch(/[\r\n]/);
        const cells = line.split('\t');
        expect(cells).toHaveLength(values.length);
        expect(cells.map((c) => unguardFormula(unescapeTsv(c)))).toEqual(values.map(cellText));
      }),
      runs(300),
    );
  });
});
