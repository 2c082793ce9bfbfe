import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  MAX_NAME_BYTES,
  UnsafePathError,
  fileNames,
  foldedName,
  resolveInside,
  safeFileName,
  shortHash,
} from '../../../src/util/safe-name.js';

const HOSTILE = [
  '../../etc/passwd',
  '..\\x',
  'a/b',
  '/abs/path',
  'C:\\Windows\\system32',
  'CON',
  'con',
  'nul.json',
  'NUL',
  'Com1',
  'LPT9.txt',
  'aux .json',
  'COM¹',
  '\u0000',
  'a\u0000b',
  '\x1b[31mred',
  '\x9b31m',
  '\u202eevil\u202c',
  'x'.repeat(500),
  'é'.repeat(300),
  '😀'.repeat(120),
  '.',
  '..',
  '...',
  '.hidden',
  '',
  ' ',
  'trailing.',
  'trailing ',
  'a:b',
  'a*b?c"d<e>f|g',
  'a~b',
  '\ud800lone',
];

function assertSafe(name: string): void {
  expect(name.length).toBeGreaterThan(0);
  expect(name).not.toMatch(/[/\\\u0000-\u001f\u007f-\u009f<>:"|?*\u202a-\u202e\u2066-\u2069]/);
  expect(name.startsWith('.')).toBe(false);
  expect(name).not.toMatch(/[. ]$/);
  expect(name.split('.')[0]!.replace(/[ .]+$/, '')).not.toMatch(/^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])$/i);
  expect(Buffer.byteLength(name, 'utf8')).toBeLessThanOrEqual(MAX_NAME_BYTES);
  expect(name).not.toMatch(/[\ud800-\udfff]/u);
  // and it lands directly inside the folder, with or without the extension
  const dir = path.resolve('/tmp/crm-downloads');
  expect(path.dirname(resolveInside(dir, name))).toBe(dir);
  expect(path.dirname(resolveInside(dir, `${name}.json`))).toBe(dir);
}

describe('safeFileName', () => {
  it('keeps ordinary ids as they are', () => {
    for (const id of ['rec_123', 'rec_AbC-09', 'réunion-北京', 'a.b', 'rec.2024-01-01', 'x'.repeat(200)]) {
      expect(safeFileName(id)).toBe(id);
    }
  });

  it.each(HOSTILE.map((id) => [JSON.stringify(id).slice(0, 40), id]))('makes %s safe', (_label, id) => {
    const name = safeFileName(id);
    assertSafe(name);
    // a changed name carries the hash of the original id
    expect(name.endsWith(`~${shortHash(id)}`)).toBe(true);
  });

  it('gives the expected shapes for the classic attacks', () => {
    expect(safeFileName('../../etc/passwd')).toBe(`___.._etc_passwd~${shortHash('../../etc/passwd')}`);
    expect(safeFileName('a/b')).toBe(`a_b~${shortHash('a/b')}`);
    expect(safeFileName('CON')).toBe(`_CON~${shortHash('CON')}`);
    expect(safeFileName('nul.json')).toBe(`_nul.json~${shortHash('nul.json')}`);
    expect(safeFileName('')).toBe(`_~${shortHash('')}`);
    expect(safeFileName('\x1b[31m')).toBe(`_[31m~${shortHash('\x1b[31m')}`);
  });

  it('caps long names at about 200 bytes without splitting a character', () => {
    for (const id of ['x'.repeat(500), 'é'.repeat(300), '😀'.repeat(120), '北'.repeat(100)]) {
      const name = safeFileName(id);
      expect(Buffer.byteLength(name, 'utf8')).toBeLessThanOrEqual(MAX_NAME_BYTES);
      expect(Buffer.from(name, 'utf8').toString('utf8')).toBe(name); // no broken code point
      expect(name).toMatch(/~[0-9a-f]{12}$/);
    }
  });

  it('maps distinct ids to distinct names, hostile or not', () => {
    const ids = [
      ...HOSTILE,
      'a_b',
      'a/b',
      'a\\b',
      'a:b',
      'a\u0000b',
      '_CON',
      'CON',
      `a_b~${shortHash('a/b')}`, // an id that imitates the changed name of another
      'x'.repeat(500),
      `${'x'.repeat(499)}y`,
      `${'x'.repeat(300)}`,
      '.',
      '_',
      '..',
      '__',
    ];
    for (let i = 0; i < 2000; i++) ids.push(`rec_${i}`, `../rec_${i}`, `rec/${i}`);
    const unique = [...new Set(ids)];
    const names = unique.map((id) => safeFileName(id));
    expect(new Set(names).size).toBe(unique.length);
  });

  it('is deterministic', () => {
    for (const id of HOSTILE) expect(safeFileName(id)).toBe(safeFileName(id));
  });

  it('forceHash adds the hash to an unchanged name', () => {
    expect(safeFileName('Rec_A', { forceHash: true })).toBe(`Rec_A~${shortHash('Rec_A')}`);
  });
});

describe('fileNames', () => {
  it('adds .json and separates names that differ only by case or normalisation', () => {
    const names = fileNames(['rec_1', 'Rec_A', 'rec_a', 'caf\u00e9', 'cafe\u0301']);
    expect(names[0]).toBe('rec_1.json');
    expect(names[1]).toBe(`Rec_A~${shortHash('Rec_A')}.json`);
    expect(names[2]).toBe(`rec_a~${shortHash('rec_a')}.json`);
    expect(new Set(names.map(foldedName)).size).toBe(5);
  });
});

describe('resolveInside', () => {
  const dir = path.resolve('/tmp/crm-downloads');

  it('returns the path of a plain name inside the folder', () => {
    expect(resolveInside(dir, 'rec_1.json')).toBe(path.join(dir, 'rec_1.json'));
    expect(resolveInside('relative/dir', 'a.json')).toBe(path.resolve('relative/dir', 'a.json'));
  });

  it.each(['../x', '../../etc/passwd', 'a/b', 'a\\b', '..', '.', '', '/etc/passwd', 'a\u0000b', 'sub/../../x'])(
    'refuses %j',
    (name) => {
      expect(() => resolveInside(dir, name)).toThrow(UnsafePathError);
    },
  );

  it('never lets a hostile id escape once made safe', () => {
    for (const id of HOSTILE) {
      const full = resolveInside(dir, `${safeFileName(id)}.json`);
      expect(path.relative(dir, full)).not.toMatch(/^\.\.|[/\\]/);
    }
  });
});
