// Numbers as the server sent them: parseJson keeps what a double cannot hold, stringifyJson and the
// cell writers print it back; the fast path (plain JSON.parse) and the exact path agree elsewhere.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  exactNumber,
  maybeInexact,
  parseExact,
  parseJson,
  RawNumber,
  stringifyJson,
} from '../../../src/json/exact-json.js';
import { cellText } from '../../../src/output/cell.js';
import { csvRow } from '../../../src/output/csv.js';
import { cellDisplay } from '../../../src/output/cell.js';
import { safeJson } from '../../../src/output/sanitize.js';
import { runs } from '../../helpers/property.js';

const HOSTILE =
  '{"big":12345678901234567891,"huge":1e400,"tiny":-1e-400,"long":0.1000000000000000000001,"ok":9007199254740992,"neg":-0}';

describe('parseJson', () => {
  it('keeps numbers a double cannot hold as RawNumber, and gives plain numbers for the rest', () => {
    const v = parseJson(HOSTILE) as Record<string, unknown>;
    expect(v.big).toEqual(new RawNumber('12345678901234567891'));
    expect(v.huge).toEqual(new RawNumber('1e400'));
    expect(v.tiny).toEqual(new RawNumber('-1e-400'));
    expect(v.long).toEqual(new RawNumber('0.1000000000000000000001'));
    expect(v.ok).toBe(9007199254740992);
    expect(v.neg).toBe(-0); // -0 is the number 0: printed as 0, like JSON.stringify does
  });

  it('prints them back exactly in json, csv cells and table cells', () => {
    expect(stringifyJson(parseJson(HOSTILE))).toBe(HOSTILE.replace('-0}', '0}'));
    expect(safeJson(parseJson('[1e400]'), 2)).toBe('[\n  1e400\n]');
    const v = parseJson(HOSTILE) as Record<string, unknown>;
    expect(cellText(v.big)).toBe('12345678901234567891');
    expect(csvRow([v.tiny, v.long], ',')).toBe('-1e-400,0.1000000000000000000001'); // a number: no formula guard
    expect(cellDisplay(v.huge)).toBe('1e400');
    expect(cellDisplay({ nested: v.big })).toBe('{"nested":12345678901234567891}');
  });

  it('does not take digits inside strings for numbers', () => {
    const text = '{"phone":"12345678901234567891","note":"x: 1e400, [1e999","esc":"\\"1e400"}';
    expect(parseJson(text)).toEqual(JSON.parse(text));
  });

  it('a string from the server cannot pass for a kept number', () => {
    const v = parseJson('{"a":1e400,"b":"~crm-raw-number-0"}') as Record<string, unknown>;
    expect(v.b).toBe('~crm-raw-number-0');
  });

  it('rejects what JSON.parse rejects', () => {
    for (const bad of ['{12345678901234567891:1}', '[0012345678901234567891]', '[1e400', '{"a":1e400,}', '']) {
      expect(() => parseJson(bad), bad).toThrow(SyntaxError);
    }
  });

  it('survives a huge string (no regex stack overflow)', () => {
    const text = `{"a":1e400,"s":"${'x\\"'.repeat(5_000_000)}"}`;
    expect((parseJson(text) as { s: string }).s.length).toBe(10_000_000);
  });
});

describe('exactNumber', () => {
  it.each([
    ['0', true],
    ['-0', true],
    ['1.50', true],
    ['1e2', true],
    ['0.1', true],
    ['1E+21', true],
    ['9007199254740993', false],
    ['12345678901234567891', false],
    ['1e400', false],
    ['1e-400', false],
    ['0e99999999999999999999', true],
    ['1e-99999999999999999999', false],
    ['123456789012345.6', true],
    ['1.0000000000000000001', false],
    ['+5', true],
    ['', false],
    [' ', false],
    ['.', false],
  ])('%s → %s', (token, exact) => expect(exactNumber(token) !== undefined).toBe(exact));

  it('a decimal of at most 15 digits (the short way an import takes) is the number it reads as', () => {
    const decimal = fc
      .tuple(fc.boolean(), fc.stringMatching(/^\d{2,15}$/), fc.nat(14))
      .map(
        ([neg, digits, at]) =>
          `${neg ? '-' : ''}${digits.slice(0, 1 + (at % (digits.length - 1)))}.${digits.slice(1 + (at % (digits.length - 1)))}`,
      );
    fc.assert(
      fc.property(decimal, (t) => {
        const n = exactNumber(t);
        expect(n).toBe(Number(t));
        // the long way agrees: the shortest text of the double has the same value as the decimal
        expect(Number(String(n)) === Number(t)).toBe(true);
        expect(exactNumber(`${t}0e0`)).toBe(n);
      }),
      runs(2000),
    );
  });
});

// ---- properties ----

const digits = (min: number, max: number) => fc.stringMatching(new RegExp(`^[0-9]{${min},${max}}$`));
/** Any JSON number token: big integers, long decimals, exponents (small and absurd). */
const numberToken = fc
  .tuple(
    fc.boolean(),
    fc.oneof(
      fc.constant('0'),
      fc.tuple(fc.integer({ min: 1, max: 9 }), digits(0, 30)).map(([d, r]) => `${d}${r}`),
    ),
    fc.option(digits(1, 30), { nil: undefined }),
    fc.option(
      fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), fc.oneof(digits(1, 3), digits(4, 25))),
      { nil: undefined },
    ),
  )
  .map(
    ([neg, int, frac, exp]) =>
      `${neg ? '-' : ''}${int}${frac !== undefined ? `.${frac}` : ''}${exp ? exp.join('') : ''}`,
  );

/** A JSON document as text whose numbers are `numberToken`s, with strings that look like numbers (keys never integer-like, which would reorder). */
const doc: fc.Arbitrary<string> = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    numberToken,
    fc
      .oneof(
        fc.string(),
        numberToken,
        numberToken.map((t) => `: ${t}`),
      )
      .map((s) => JSON.stringify(s)),
    fc.constantFrom('true', 'false', 'null'),
    fc.array(tie('value'), { maxLength: 5 }).map((xs) => `[${xs.join(', ')}]`),
    fc
      .uniqueArray(
        fc.tuple(
          fc.string().map((k) => `k${k}`),
          tie('value'),
        ),
        { maxLength: 5, selector: ([k]) => k },
      )
      .map((es) => `{${es.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`),
  ),
})).value;

/** The numbers of a parsed value in order, each as the exact decimal value it stands for. */
function numbers(value: unknown, out: string[] = []): string[] {
  if (value instanceof RawNumber) out.push(canonical(value.text));
  else if (typeof value === 'number') out.push(canonical(String(value)));
  else if (Array.isArray(value)) value.forEach((v) => numbers(v, out));
  else if (value !== null && typeof value === 'object') Object.values(value).forEach((v) => numbers(v, out));
  return out;
}

/** The number tokens of a JSON text (outside strings), as exact values. */
function tokensOf(text: string): string[] {
  return [...text.matchAll(/"(?:[^"\\]|\\.)*"|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/g)]
    .map((m) => m[0])
    .filter((t) => t[0] !== '"')
    .map(canonical);
}

/** Exact decimal value: sign, digits without leading/trailing zeros, exponent as a bigint; any zero is "0". */
function canonical(t: string): string {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(t)!;
  const [, sign, int, frac = '', exp = '0'] = m;
  const all = `${int}${frac}`.replace(/^0+/, '');
  if (all === '') return '0';
  const sig = all.replace(/0+$/, '');
  return `${sign}${sig}e${BigInt(exp) - BigInt(frac.length) + BigInt(all.length - sig.length)}`;
}

describe('properties', () => {
  it('parse → write as json gives back every number with its exact value', () => {
    fc.assert(
      fc.property(doc, (text) => {
        const written = stringifyJson(parseJson(text)) as string;
        expect(tokensOf(written)).toEqual(tokensOf(text));
        // and the written text parses to the same numbers again
        expect(numbers(parseJson(written))).toEqual(tokensOf(text));
      }),
      runs(500),
    );
  });

  it('a number a double holds exactly is a plain number; one it does not is a RawNumber of its text', () => {
    fc.assert(
      fc.property(numberToken, (t) => {
        const v = parseJson(`[${t}]`) as unknown[];
        if (v[0] instanceof RawNumber) expect(v[0].text).toBe(t);
        else expect(canonical(String(v[0]))).toBe(canonical(t));
      }),
      runs(1000),
    );
  });

  it('the pre-scan finds every number a double does not hold, among strings that look like numbers', () => {
    // strings holding digits, exponents, quotes and backslashes: the scan jumps over them, never into a number
    const tricky = fc.string({ unit: fc.constantFrom('1', '9', 'e', 'E', '.', '-', '"', '\\', ':', ',', '[', ' ') });
    const doc = fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v));
    fc.assert(
      fc.property(doc, tricky, numberToken, fc.nat(3), (d, str, t, where) => {
        const parts = [d, JSON.stringify(str), t, `{${JSON.stringify(str)}:${t}}`];
        const text = `[${[...parts.slice(where), ...parts.slice(0, where)].join(',')}]`;
        if (exactNumber(t) === undefined) expect(maybeInexact(text), text).toBe(true);
        // whatever the scan says, the value is the exact path's
        expect(parseJson(text)).toEqual(parseExact(text));
      }),
      runs(1000),
    );
  });

  it('the fast path and the exact path agree on documents without such numbers', () => {
    const plain = fc.jsonValue({ maxDepth: 3, noUnicodeString: false }).map((v) => JSON.stringify(v));
    fc.assert(
      fc.property(plain, (text) => {
        expect(parseJson(text)).toEqual(JSON.parse(text));
        expect(parseExact(text)).toEqual(JSON.parse(text));
        expect(stringifyJson(parseJson(text))).toBe(JSON.stringify(JSON.parse(text)));
      }),
      runs(300),
    );
  });
});
