// Properties of file names from recording ids: any id gives a safe name, and distinct ids give
// distinct files, also on file systems that fold case or normalise (two recordings must never
// overwrite each other's file).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_NAME_BYTES, fileNames, safeFileName } from '../../../src/util/safe-name.js';
import { runs } from '../../helpers/property.js';

/** Every code point, lone surrogate halves included. */
const anyChar = fc.integer({ min: 0, max: 0x10ffff }).map((cp) => String.fromCodePoint(cp));
/** Pieces that clean, fold or normalise into one another. */
const tricky = fc.constantFrom(
  'a',
  'A',
  's',
  'S',
  'ſ',
  'i',
  'I',
  'ı',
  'İ',
  'ß',
  'ẞ',
  'k',
  'K',
  '\u212a',
  'é',
  'e\u0301',
  'É',
  'ǅ',
  'ǆ',
  'Ǆ',
  'σ',
  'ς',
  'Σ',
  'ﬀ',
  'ff',
  '.',
  ' ',
  '_',
  '~',
  '/',
  '\\',
  ':',
  '\u0000',
  '\u200b',
  '\u202e',
  'CON',
  'nul',
  '1',
  '\ud800',
  '\u00ad',
  '\u2028',
  '\u061c',
  '\u{e0001}',
);
const id = fc.oneof(
  fc.string({ unit: anyChar, maxLength: 30 }),
  fc.string({ unit: tricky, maxLength: 8 }),
  fc.tuple(fc.string({ unit: tricky, maxLength: 3 }), fc.nat(300)).map(([s, n]) => `${'x'.repeat(n)}${s}`),
);

const RESERVED = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]|conin\$|conout\$)$/i;

describe('safeFileName', () => {
  it('is a plain, bounded, non-reserved name for any id', () => {
    fc.assert(
      fc.property(id, (raw) => {
        const name = safeFileName(raw);
        expect(name).not.toMatch(/[/\\\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/u);
        expect(name).not.toBe('');
        expect(name).not.toMatch(/^\./);
        expect(name).not.toMatch(/[. ]$/);
        expect(Buffer.byteLength(name, 'utf8')).toBeLessThanOrEqual(MAX_NAME_BYTES);
        expect(RESERVED.test(name.split('.')[0]!.replace(/[ .]+$/, ''))).toBe(false);
        expect(safeFileName(raw)).toBe(name);
      }),
      runs(1000),
    );
  });

  it('is injective: distinct ids give distinct names', () => {
    fc.assert(
      fc.property(fc.uniqueArray(id, { minLength: 2, maxLength: 30 }), (ids) => {
        expect(new Set(ids.map((i) => safeFileName(i))).size).toBe(ids.length);
      }),
      runs(500),
    );
  });
});

// How file systems could see two names as one: lower case (ext4 casefold, a first guess), upper
// case per code point (NTFS), case folding (APFS, approximated by lower∘upper∘lower), and either
// normalisation form (APFS and HFS+ compare canonically equivalent names as equal).
const FOLDS: ReadonlyArray<(s: string) => string> = [
  (s) => s.normalize('NFC').toLowerCase(),
  (s) => s.normalize('NFD').toUpperCase().normalize('NFD'),
  (s) => s.normalize('NFC').toLowerCase().toUpperCase().toLowerCase().normalize('NFC'),
  (s) => s.normalize('NFD').toUpperCase().toLowerCase().normalize('NFD'),
];

describe('fileNames', () => {
  it('gives distinct ids distinct files, however the file system folds case or normalises', () => {
    fc.assert(
      fc.property(fc.uniqueArray(id, { minLength: 2, maxLength: 20 }), (ids) => {
        const names = fileNames(ids);
        for (const fold of FOLDS) expect(new Set(names.map(fold)).size).toBe(ids.length);
      }),
      runs(500),
    );
  });

  it.each([
    ['ſ', 's'],
    ['ı', 'i'],
    ['ẞ', 'ss'],
    ['ǅ', 'Ǆ'],
    ['ς', 'σ'],
  ])('%s and %s get two files', (a, b) => {
    const names = fileNames([a, b]);
    for (const fold of FOLDS) expect(fold(names[0]!)).not.toBe(fold(names[1]!));
  });
});
