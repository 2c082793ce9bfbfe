// Properties of header mapping and typed cells: names map deterministically to one non-empty,
// distinct field each (or the header is refused), and a typed cell is either the value its text
// means, exactly, or an invalid row with a reason — never a silently changed value.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/http/errors.js';
import { parseJson, RawNumber, stringifyJson } from '../../../src/json/exact-json.js';
import {
  convertCell,
  normalizeFieldName,
  parseColumnMaps,
  parseHeader,
  splitType,
} from '../../../src/import/input/header.js';
import { rowToRecord } from '../../../src/import/input/header.js';
import { runs } from '../../helpers/property.js';

const headerText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.string({ unit: fc.constantFrom('a', 'B', ' ', '_', '-', ':', 'é', 'e\u0301', 'İ', 'ß', '1', '#'), maxLength: 8 }),
  fc
    .tuple(
      fc.constantFrom('First Name', 'first_name', 'Email', ' email ', '_line', 'amount', 'Café', 'Cafe\u0301', ''),
      fc.constantFrom('', ':number', ':Boolean', ' : list', ':json', ':string', ':nope'),
    )
    .map(([name, type]) => `${name}${type}`),
);

describe('normalizeFieldName', () => {
  it('is idempotent, yields letters/marks/digits joined by single `_`, and ignores how é is spelled', () => {
    fc.assert(
      fc.property(headerText, (name) => {
        const f = normalizeFieldName(name);
        expect(normalizeFieldName(f)).toBe(f);
        expect(f).toMatch(/^(?:[\p{L}\p{M}\p{N}]+(?:_[\p{L}\p{M}\p{N}]+)*)?$/u);
        expect(normalizeFieldName(name.normalize('NFD'))).toBe(normalizeFieldName(name.normalize('NFC')));
      }),
      runs(200),
    );
    expect(normalizeFieldName('Cafe\u0301')).toBe('café');
  });
});

describe('parseHeader', () => {
  it('gives each kept column one non-empty, distinct field, or refuses the header (never silently)', () => {
    fc.assert(
      fc.property(fc.array(headerText, { minLength: 1, maxLength: 6 }), (cells) => {
        let mapping;
        try {
          mapping = parseHeader(cells);
        } catch (err) {
          expect(err).toBeInstanceOf(UsageError);
          return;
        }
        expect(parseHeader(cells)).toEqual(mapping);
        expect(mapping.width).toBe(cells.length);
        expect(mapping.columns.map((c) => c.index)).toEqual(cells.map((_, i) => i));
        const kept = mapping.columns.filter((c) => !c.ignored);
        expect(kept.length).toBeGreaterThan(0);
        expect(new Set(kept.map((c) => c.field)).size).toBe(kept.length);
        for (const c of mapping.columns) {
          const trimmed = cells[c.index]!.trim();
          expect(c.ignored).toBe(trimmed.startsWith('_'));
          if (c.ignored) continue;
          const t = splitType(trimmed);
          expect(c.field).toBe(normalizeFieldName(t.name));
          expect(c.field).not.toBe('');
          expect(c.type).toBe(t.type);
        }
      }),
      runs(200),
    );
  });

  it('--map sends a column to the field as written, `__proto__` included, as an own key', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('__proto__', 'constructor', 'toString', 'x.y', 'E-mail'),
        fc.jsonValue(),
        (field, value) => {
          const mapping = parseHeader(['Email', 'data:json'], parseColumnMaps([`data=${field}`]));
          const row = rowToRecord(['a@b.c', JSON.stringify(value)], mapping);
          if (!row.ok) throw new Error(row.reason);
          expect(Object.getPrototypeOf(row.record)).toBe(Object.prototype);
          expect(Object.hasOwn(row.record, field)).toBe(true);
          expect(JSON.stringify(row.record)).toBe(
            `{"email":"a@b.c",${JSON.stringify(field)}:${JSON.stringify(value)}}`,
          );
        },
      ),
      runs(100),
    );
  });
});

// An independent oracle: the exact value of a decimal text as m × 10^e with a BigInt m.
function rational(text: string): { m: bigint; e: number } {
  const r = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!r) throw new Error(`not decimal: ${text}`);
  const frac = r[3] ?? '';
  const m = BigInt(`${r[2] ?? ''}${frac}` || '0');
  return { m: r[1] === '-' ? -m : m, e: Number(r[4] ?? 0) - frac.length };
}
function sameDecimal(a: string, b: string): boolean {
  const x = rational(a);
  const y = rational(b);
  const e = Math.min(x.e, y.e);
  return x.m * 10n ** BigInt(x.e - e) === y.m * 10n ** BigInt(y.e - e);
}

const digits = (max: number) => fc.string({ unit: fc.constantFrom('0', '1', '5', '9'), maxLength: max });
const decimalText = fc
  .tuple(
    fc.constantFrom('', '+', '-'),
    digits(22),
    fc.option(digits(22)),
    fc.option(fc.integer({ min: -420, max: 420 })),
  )
  .map(([sign, int, frac, exp]) => `${sign}${int}${frac === null ? '' : `.${frac}`}${exp === null ? '' : `e${exp}`}`);
const numberCell = fc.oneof(
  decimalText,
  decimalText.map((t) => ` ${t} `),
  fc.double({ noNaN: true }).map(String),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
  fc.constantFrom(
    '1e400',
    '1e-400',
    '0x10',
    '12abc',
    '1_000',
    '١٢',
    'Infinity',
    '0b1',
    '1e',
    '.',
    '-',
    '12.',
    '.5',
    '00012',
    '-0',
  ),
  fc.string({ unit: 'binary', maxLength: 6 }),
);

describe('convertCell', () => {
  it('number: the exact value of the text, or invalid with a reason', () => {
    fc.assert(
      fc.property(numberCell, (cell) => {
        const r = convertCell(cell, 'number');
        const t = cell.trim();
        if (t === '') {
          expect(r).toEqual({ ok: true, value: undefined, empty: true });
        } else if (!r.ok) {
          expect(r.reason).toMatch(/number/);
        } else {
          // a double when one holds it exactly, else the text itself (RawNumber): sent as JSON, parsed back exactly
          const sent = stringifyJson(r.value)!;
          expect(sent).toMatch(/^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/);
          expect(sameDecimal(t, sent)).toBe(true);
          expect(stringifyJson(parseJson(sent))).toBe(sent);
          if (typeof r.value === 'number') expect(Number.isFinite(r.value)).toBe(true);
          else expect(r.value).toBeInstanceOf(RawNumber);
        }
      }),
      runs(1000),
    );
  });

  it('number: every double, and every integer a double holds, is accepted as itself', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (d) => {
        expect(convertCell(String(d), 'number')).toEqual({ ok: true, value: d === 0 ? 0 : d, empty: false });
        expect(convertCell(d.toExponential(), 'number')).toEqual({ ok: true, value: d === 0 ? 0 : d, empty: false });
      }),
      runs(200),
    );
  });

  it.each([
    ['12345678901234567891', '12345678901234567891'],
    ['1e-400', '1e-400'],
    ['0.10000000000000000001', '0.10000000000000000001'],
    ['9007199254740993', '9007199254740993'],
    ['+9007199254740993', '9007199254740993'],
    ['-.10000000000000000001', '-0.10000000000000000001'],
    ['0012345678901234567891.', '12345678901234567891'],
  ])('number: %s would be rounded as a double, so it is sent as written (issue 27)', (cell, sent) => {
    const r = convertCell(cell, 'number');
    expect(r).toMatchObject({ ok: true, empty: false });
    expect(stringifyJson((r as { value: unknown }).value)).toBe(sent);
  });

  it('boolean: true/false, yes/no, 1/0 in any casing and padding; anything else invalid', () => {
    const word = fc
      .tuple(
        fc.constantFrom('true', 'false', 'yes', 'no', '1', '0'),
        fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }),
        fc.constantFrom('', ' ', '\t'),
      )
      .map(([w, up, pad]) => ({
        cell: `${pad}${[...w].map((c, i) => (up[i] ? c.toUpperCase() : c)).join('')}${pad}`,
        value: ['true', 'yes', '1'].includes(w),
      }));
    fc.assert(
      fc.property(word, ({ cell, value }) => {
        expect(convertCell(cell, 'boolean')).toEqual({ ok: true, value, empty: false });
      }),
      runs(200),
    );
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 6 }), (cell) => {
        const r = convertCell(cell, 'boolean');
        const w = cell.trim().toLowerCase();
        if (w === '') expect(r).toMatchObject({ empty: true });
        else if (['true', 'yes', '1', 'false', 'no', '0'].includes(w)) expect(r.ok).toBe(true);
        else expect(r).toMatchObject({ ok: false, reason: expect.stringMatching(/boolean/) });
      }),
      runs(300),
    );
  });

  it('list: items without `;`, trimmed and non-empty, come back as written', () => {
    const item = fc
      .string({ unit: 'binary', minLength: 1, maxLength: 6 })
      .map((s) => s.replaceAll(';', '').trim())
      .filter((s) => s !== '');
    fc.assert(
      fc.property(fc.array(item, { minLength: 1, maxLength: 5 }), fc.constantFrom(';', '; ', ' ;'), (items, sep) => {
        expect(convertCell(items.join(sep), 'list')).toEqual({ ok: true, value: items, empty: false });
      }),
      runs(300),
    );
  });

  it('json: any JSON value comes back as itself, `__proto__` keys as own keys, never a prototype', () => {
    const withProto = fc.dictionary(fc.constantFrom('__proto__', 'constructor', 'a'), fc.jsonValue({ maxDepth: 2 }));
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), withProto), (v) => {
        const text = JSON.stringify(v);
        const r = convertCell(text, 'json');
        if (!r.ok) throw new Error(r.reason);
        expect(JSON.stringify(r.value)).toBe(text);
        if (v !== null && typeof v === 'object' && Object.hasOwn(v, '__proto__')) {
          expect(Object.getPrototypeOf(r.value)).toBe(Object.prototype);
        }
      }),
      runs(200),
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('json: a number a double cannot hold is sent as written rather than rounded (issue 27)', () => {
    for (const cell of [
      '{"n":12345678901234567891}',
      '[1e400]',
      '1e-400',
      '{"a":"12345678901234567891","b":0.10000000000000000001}',
    ]) {
      const r = convertCell(cell, 'json');
      expect(r).toMatchObject({ ok: true, empty: false });
      expect(stringifyJson((r as { value: unknown }).value)).toBe(cell);
    }
    expect(convertCell('{"a":"12345678901234567891","b":1e3}', 'json')).toEqual({
      ok: true,
      value: { a: '12345678901234567891', b: 1000 },
      empty: false,
    });
  });
});
