import { describe, expect, it } from 'vitest';
import { RAW_UNSAFE } from '../../helpers/unsafe.js';
import { escapeChar, escapeJsonForTerminal, safeJson, sanitizeForTerminal } from '../../../src/output/sanitize.js';

// Anything a terminal may act on: C0, DEL, C1, bidi controls, line/paragraph separators.

const hex2 = (c: number): string => c.toString(16).padStart(2, '0');

describe('sanitizeForTerminal', () => {
  it('leaves ordinary text alone (the same string, no copy)', () => {
    for (const s of ['', 'Ada Lovelace', 'café – naïve ✓ 日本語 😀', 'C:\\Users\\ada', 'a\\x1b literal']) {
      expect(sanitizeForTerminal(s)).toBe(s);
    }
  });

  it.each(Array.from({ length: 32 }, (_, c) => c))('escapes C0 control 0x%s', (c) => {
    const out = sanitizeForTerminal(`a${String.fromCharCode(c)}b`);
    expect(out).not.toMatch(RAW_UNSAFE);
    const named: Record<number, string> = { 9: '\\t', 10: '\\n', 13: '\\r' };
    expect(out).toBe(`a${named[c] ?? `\\x${hex2(c)}`}b`);
  });

  it('escapes DEL and every C1 control (U+0080–U+009F)', () => {
    expect(sanitizeForTerminal('\x7f')).toBe('\\x7f');
    for (let c = 0x80; c <= 0x9f; c++) {
      expect(sanitizeForTerminal(`x${String.fromCharCode(c)}y`)).toBe(`x\\x${hex2(c)}y`);
    }
  });

  it('leaves printable Latin-1 right after the C1 range alone', () => {
    expect(sanitizeForTerminal('\u00a0\u00e9\u00ff')).toBe('\u00a0\u00e9\u00ff');
  });

  it.each([
    ['CSI clear screen', '\x1b[2J\x1b[H', '\\x1b[2J\\x1b[H'],
    ['SGR colour', '\x1b[31mred\x1b[0m', '\\x1b[31mred\\x1b[0m'],
    [
      'OSC 8 hyperlink (BEL)',
      '\x1b]8;;http://evil.example\x07click\x1b]8;;\x07',
      '\\x1b]8;;http://evil.example\\x07click\\x1b]8;;\\x07',
    ],
    [
      'OSC 8 hyperlink (ST)',
      '\x1b]8;;http://evil\x1b\\x\x1b]8;;\x1b\\',
      '\\x1b]8;;http://evil\\x1b\\x\\x1b]8;;\\x1b\\',
    ],
    ['window title', '\x1b]0;pwned\x07', '\\x1b]0;pwned\\x07'],
    ['8-bit CSI', '\x9b2J', '\\x9b2J'],
    ['8-bit OSC', '\x9d0;t\x9c', '\\x9d0;t\\x9c'],
    ['CR overwrite', 'rm -rf /\rls -la   ', 'rm -rf /\\rls -la   '],
    ['backspace overwrite', 'evil\b\b\b\bgood', 'evil\\x08\\x08\\x08\\x08good'],
    ['cursor up and erase line', 'ok\x1b[1A\x1b[2K', 'ok\\x1b[1A\\x1b[2K'],
    ['DCS', '\x1bP1$r\x1b\\', '\\x1bP1$r\\x1b\\'],
  ])('neutralises %s', (_name, input, expected) => {
    const out = sanitizeForTerminal(input);
    expect(out).toBe(expected);
    expect(out).not.toMatch(RAW_UNSAFE);
  });

  it('escapes bidi overrides, isolates and marks (Trojan Source)', () => {
    const bidi = [0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069, 0x200e, 0x200f, 0x061c];
    for (const c of bidi) {
      const out = sanitizeForTerminal(`invoice${String.fromCharCode(c)}fdp.exe`);
      expect(out).toBe(`invoice\\u${c.toString(16).padStart(4, '0')}fdp.exe`);
    }
    expect(sanitizeForTerminal('a\u2028b\u2029c')).toBe('a\\u2028b\\u2029c');
  });

  it('keeps newlines (and folds CRLF) with keepNewlines, still escaping a lone CR', () => {
    expect(sanitizeForTerminal('one\r\ntwo\nthree\rfour\x1b[2J', { keepNewlines: true })).toBe(
      'one\ntwo\nthree\\rfour\\x1b[2J',
    );
  });

  it('keeps tabs with keepTabs', () => {
    expect(sanitizeForTerminal('a\tb\nc', { keepTabs: true })).toBe('a\tb\\nc');
  });

  it('is idempotent', () => {
    const s = 'x\x1b]8;;u\x07\r\n\t\x9b\u202e';
    expect(sanitizeForTerminal(sanitizeForTerminal(s))).toBe(sanitizeForTerminal(s));
  });

  it('escapeChar agrees with it', () => {
    expect(escapeChar('\x1b')).toBe('\\x1b');
    expect(escapeChar('\u202e')).toBe('\\u202e');
  });
});

describe('JSON output escaping', () => {
  it('escapes DEL, C1 and bidi as \\u escapes and keeps the value', () => {
    const value = { s: '\x7f\x9b\u202e\u2028 ok', n: 1 };
    const json = safeJson(value);
    expect(json).toBe('{"s":"\\u007f\\u009b\\u202e\\u2028 ok","n":1}');
    expect(json).not.toMatch(RAW_UNSAFE);
    expect(JSON.parse(json)).toEqual(value);
  });

  it('JSON.stringify already escapes C0: the result never holds a raw control', () => {
    const value = { s: Array.from({ length: 32 }, (_, c) => String.fromCharCode(c)).join('') };
    expect(safeJson(value)).not.toMatch(RAW_UNSAFE);
    expect(JSON.parse(safeJson(value, 2))).toEqual(value);
  });

  it('prints undefined as null and bigints as strings', () => {
    expect(safeJson(undefined)).toBe('null');
    expect(safeJson({ n: 10n })).toBe('{"n":"10"}');
    expect(escapeJsonForTerminal('"plain"')).toBe('"plain"');
  });
});
