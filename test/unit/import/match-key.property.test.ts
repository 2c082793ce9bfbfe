// Properties of the match key (`--match`, issue 18): a row's key and a record's are the same text however the
// value is padded, spelled (NFC/NFD) or, for an email, cased; distinct values never share a key, whatever
// characters they hold (a separator, quotes, backslashes); values that cannot be a key make no key.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RawNumber } from '../../../src/json/exact-json.js';
import { isCaseFreeField, keyPart, matchKey } from '../../../src/import/match/key.js';
import { runs } from '../../helpers/property.js';

const space = fc.string({ unit: fc.constantFrom(' ', '\t', '\n', '\r', '\u00a0', '\u3000', '\ufeff'), maxLength: 3 });
/** text with the characters a key's encoding could trip on, and some whose case or spelling varies */
const text = fc.oneof(
  fc.string({
    unit: fc.constantFrom(
      'a',
      'B',
      'é',
      'e\u0301',
      'İ',
      'ß',
      'Σ',
      '@',
      '.',
      ' ',
      '\u0000',
      '"',
      '\\',
      ',',
      '[',
      ']',
      ';',
      '1',
    ),
    maxLength: 8,
  }),
  fc.string({ maxLength: 8 }),
);
const field = fc.constantFrom('name', 'email', 'work_email', 'domain', 'emails', 'constructor');
const flipCase = (s: string, flips: readonly boolean[]): string =>
  Array.from(s, (c, i) => (flips[i % Math.max(1, flips.length)] ? c.toUpperCase() : c.toLowerCase())).join('');

describe('keyPart', () => {
  it('is invariant under surrounding whitespace and how a character is spelled (NFC/NFD)', () => {
    fc.assert(
      fc.property(field, text, space, space, (f, s, before, after) => {
        expect(keyPart(f, `${before}${s}${after}`)).toBe(keyPart(f, s));
        expect(keyPart(f, s.normalize('NFD'))).toBe(keyPart(f, s.normalize('NFC')));
      }),
      runs(),
    );
  });

  it('ignores the case of an email field (ASCII letters flipped at random), and only of an email field', () => {
    const email = fc.string({
      unit: fc.constantFrom('a', 'b', 'Z', 'q', '@', '.', '-', '1'),
      minLength: 1,
      maxLength: 12,
    });
    fc.assert(
      fc.property(
        fc.constantFrom('email', 'work_email', 'domain', 'web_domain'),
        email,
        fc.array(fc.boolean(), { maxLength: 5 }),
        (f, s, flips) => {
          expect(keyPart(f, flipCase(s, flips))).toBe(keyPart(f, s));
          if (flipCase(s, flips) !== s) expect(keyPart('name', flipCase(s, flips))).not.toBe(keyPart('name', s));
        },
      ),
      runs(),
    );
  });

  it('gives distinct trimmed NFC values distinct parts, and a number its shortest text', () => {
    fc.assert(
      fc.property(field, text, text, (f, a, b) => {
        const norm = (s: string): string => (isCaseFreeField(f) ? s.toLowerCase() : s).trim().normalize('NFC');
        if (norm(a) !== '' && norm(b) !== '') expect(keyPart(f, a) === keyPart(f, b)).toBe(norm(a) === norm(b));
      }),
      runs(),
    );
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (n) => {
        expect(keyPart('n', n)).toBe(String(n));
        expect(keyPart('n', n)).toBe(keyPart('n', String(n)));
      }),
      runs(),
    );
  });

  it('examples: each rule', () => {
    expect(keyPart('name', '  Acme \t')).toBe('Acme');
    expect(keyPart('name', 'Acme')).not.toBe(keyPart('name', 'acme'));
    expect(keyPart('email', ' Ann@Example.COM ')).toBe('ann@example.com');
    expect(keyPart('work_email', 'Ann@X.io')).toBe('ann@x.io');
    expect(keyPart('emails', 'Ann@X.io')).toBe('Ann@X.io');
    expect(keyPart('name', 'Cafe\u0301')).toBe('Café');
    expect(keyPart('email', 'İ@x.io')).toBe('i\u0307@x.io'); // toLowerCase, not a locale's
    expect(keyPart('n', 1.0)).toBe('1');
    expect(keyPart('n', 42)).toBe(keyPart('n', '42'));
    expect(keyPart('n', -0)).toBe('0');
    expect(keyPart('n', 1e21)).toBe('1e+21');
    expect(keyPart('b', true)).toBe('true');
    expect(keyPart('b', false)).toBe('false');
    expect(keyPart('n', new RawNumber('12345678901234567891'))).toBe('12345678901234567891');
    for (const v of [null, undefined, '', '  \n', '\u00a0', [], ['a'], {}, { a: 1 }, NaN, Infinity, -Infinity]) {
      expect(keyPart('name', v)).toBeUndefined();
    }
  });
});

describe('matchKey', () => {
  const parts = fc.array(fc.tuple(field, text), { minLength: 1, maxLength: 3 });

  it('is the same text for two records exactly when every part is (injective over parts, separators included)', () => {
    fc.assert(
      fc.property(parts, fc.array(fc.oneof(text, fc.constant(undefined)), { maxLength: 3 }), (ps, others) => {
        const fields = ps.map(([f], i) => `f${i}_${f}`); // distinct fields; `f0_email` is still an email field
        const a: Record<string, unknown> = {};
        const b: Record<string, unknown> = {};
        ps.forEach(([, v], i) => {
          a[fields[i]!] = v;
          b[fields[i]!] = others[i] === undefined ? ` ${v} ` : others[i];
        });
        const ka = matchKey(fields, a);
        const kb = matchKey(fields, b);
        const pa = fields.map((f) => keyPart(f, a[f]));
        const pb = fields.map((f) => keyPart(f, b[f]));
        expect(ka === undefined).toBe(pa.includes(undefined));
        if (ka !== undefined && kb !== undefined) expect(ka === kb).toBe(pa.every((p, i) => p === pb[i]));
      }),
      runs(),
    );
  });

  it('keeps parts apart when a separator-like character moves from one part to the next', () => {
    const piece = fc.string({
      unit: fc.constantFrom('a', '\u0000', '"', '\\', ',', '[', ']', ';', '|', '\t'),
      maxLength: 4,
    });
    fc.assert(
      fc.property(piece, piece, piece, fc.constantFrom('\u0000', '","', ',', ';', '|', '\\'), (x, y, z, sep) => {
        const fields = ['first', 'last'];
        const a = { first: `${x}${sep}${y}`, last: z };
        const b = { first: x, last: `${y}${sep}${z}` };
        const same = fields.every((f) => keyPart(f, a[f as keyof typeof a]) === keyPart(f, b[f as keyof typeof b]));
        const [ka, kb] = [matchKey(fields, a), matchKey(fields, b)];
        if (ka !== undefined && kb !== undefined) expect(ka === kb).toBe(same);
      }),
      runs(),
    );
  });

  it("is the same for a row's cells and the record's values: padding, email case, a number's text", () => {
    fc.assert(
      fc.property(text, fc.integer(), space, (name, n, pad) => {
        const record = { email: 'Ann@X.io', name, age: n, id: 'c_1' };
        const row = { email: `${pad} ann@x.IO${pad}`, name: `${pad}${name.normalize('NFD')}`, age: String(n) };
        expect(matchKey(['email', 'name', 'age'], row)).toBe(matchKey(['email', 'name', 'age'], record));
      }),
      runs(),
    );
  });

  it('examples: one field is its part; parts holding the separator stay apart; a missing part makes no key', () => {
    expect(matchKey(['email'], { email: ' A@x.io' })).toBe('a@x.io');
    const two = ['first', 'last'];
    expect(matchKey(two, { first: 'a\u0000b', last: 'c' })).not.toBe(matchKey(two, { first: 'a', last: 'b\u0000c' }));
    expect(matchKey(two, { first: 'a","b', last: 'c' })).not.toBe(matchKey(two, { first: 'a', last: 'b","c' }));
    expect(matchKey(two, { first: 'a', last: 'b' })).toBe(matchKey(two, { first: ' a', last: 'b ' }));
    expect(matchKey(two, { first: 'a', last: '' })).toBeUndefined();
    expect(matchKey(two, { first: 'a' })).toBeUndefined();
    expect(matchKey(['constructor'], {})).toBeUndefined(); // not Object.prototype's
  });
});
