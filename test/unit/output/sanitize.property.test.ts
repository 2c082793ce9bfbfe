// Property tests of the one terminal sanitiser (issue 9, class 4).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runs } from '../../helpers/property.js';
import { RAW_UNSAFE } from '../../helpers/unsafe.js';
import { safeJson, sanitizeForTerminal } from '../../../src/output/sanitize.js';

const UNSAFE_CHARS = [
  ...Array.from({ length: 32 }, (_, c) => String.fromCharCode(c)),
  ...Array.from({ length: 0x21 }, (_, i) => String.fromCharCode(0x7f + i)),
  '\u061c',
  '\u200e',
  '\u200f',
  '\u2028',
  '\u2029',
  '\u202a',
  '\u202b',
  '\u202c',
  '\u202d',
  '\u202e',
  '\u2066',
  '\u2067',
  '\u2068',
  '\u2069',
];
const unsafeChar = fc.constantFrom(...UNSAFE_CHARS);
/** any text, with unsafe characters mixed in often */
const hostileText = fc
  .array(fc.oneof(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' }), unsafeChar), { maxLength: 12 })
  .map((p) => p.join(''));
/** printable text: no unsafe character (a backslash allowed) */
const printable = fc.string({ unit: 'grapheme', maxLength: 40 }).filter((s) => !RAW_UNSAFE.test(s));

describe('sanitizeForTerminal (properties)', () => {
  it('never lets an unsafe character through', () => {
    fc.assert(
      fc.property(hostileText, (s) => {
        expect(sanitizeForTerminal(s)).not.toMatch(RAW_UNSAFE);
      }),
      runs(2000),
    );
  });

  it('keeps line feeds only when asked, and nothing else unsafe', () => {
    fc.assert(
      fc.property(hostileText, (s) => {
        expect(sanitizeForTerminal(s, { keepNewlines: true }).replace(/\n/g, '')).not.toMatch(RAW_UNSAFE);
      }),
      runs(100),
    );
  });

  it('leaves printable text unchanged', () => {
    fc.assert(
      fc.property(printable, (s) => {
        expect(sanitizeForTerminal(s)).toBe(s);
      }),
      runs(2000),
    );
  });

  it('shows every unsafe character: texts that differ only in control characters stay different', () => {
    // without a backslash in the text, an escape cannot be mistaken for text typed as an escape
    const noBackslash = printable.filter((s) => !s.includes('\\'));
    fc.assert(
      fc.property(noBackslash, noBackslash, unsafeChar, unsafeChar, (a, b, c1, c2) => {
        const variants = [`${a}${b}`, `${a}${c1}${b}`, `${a}${c2}${b}`, `${a}${c1}${c1}${b}`];
        const distinct = new Set(variants);
        const shown = new Set(variants.map((v) => sanitizeForTerminal(v)));
        expect(shown.size).toBe(distinct.size);
      }),
      runs(2000),
    );
  });

  it('safeJson: the same JSON value, and no raw unsafe character', () => {
    fc.assert(
      fc.property(
        fc.dictionary(hostileText, fc.oneof(hostileText, fc.integer(), fc.array(hostileText, { maxLength: 3 }))),
        (value) => {
          const text = safeJson(value, 2);
          expect(text.replace(/\n/g, '')).not.toMatch(RAW_UNSAFE); // the indentation's line feeds only
          expect(JSON.parse(text)).toEqual(value);
        },
      ),
      runs(500),
    );
  });
});
