import { describe, expect, it } from 'vitest';
import { cellDisplay, truncate } from '../../../src/output/cell.js';
import { renderKeyValueTable, renderTable as render } from '../../../src/output/table.js';

const renderTable = (...args: Parameters<typeof render>): string => render(...args).text;

describe('cellDisplay', () => {
  it('shows values as text, nested values as compact JSON', () => {
    expect(cellDisplay(null)).toBe('');
    expect(cellDisplay(undefined)).toBe('');
    expect(cellDisplay(0)).toBe('0');
    expect(cellDisplay(false)).toBe('false');
    expect(cellDisplay({ a: [1, { b: 'c' }] })).toBe('{"a":[1,{"b":"c"}]}');
  });

  it('sanitises, then cuts to the width', () => {
    expect(cellDisplay('a\x1b[2Jb')).toBe('a\\x1b[2Jb');
    expect(cellDisplay({ long: 'x'.repeat(100) }, 20)).toBe('{"long":"xxxxxxxxxx…');
    expect(cellDisplay({ s: '\x1b' })).toBe('{"s":"\\u001b"}');
  });
});

describe('truncate', () => {
  it('keeps short text, cuts long text with …, never splits a surrogate pair', () => {
    expect(truncate('short', 10)).toBe('short');
    expect(truncate('abcdefghij', 5)).toBe('abcd…');
    expect(truncate('😀😀😀😀😀😀', 4)).toBe('😀😀😀…');
    expect(truncate('anything', 0)).toBe('anything');
  });
});

describe('renderTable', () => {
  it('plain when colour is off', () => {
    const text = renderTable(
      ['id', 'name'],
      [
        ['1', 'Ada'],
        [2, null],
      ],
      { color: false },
    );
    expect(text).toMatchInlineSnapshot(`
      "┌────┬──────┐
      │ id │ name │
      │ 1  │ Ada  │
      │ 2  │      │
      └────┴──────┘
      "
    `);
    expect(text).not.toContain('\x1b');
  });

  it('escapes hostile headers and cells', () => {
    const text = renderTable(['id\x1b[8m'], [['\x1b]8;;http://evil\x07x\x1b]8;;\x07'], ['\r\x9b2J']], { color: false });
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(text).toContain('id\\x1b[8m');
    expect(text).toContain('\\r\\x9b2J');
  });

  it('uses ANSI styles only when colour is on', () => {
    const colored = renderTable(['id'], [['1']], { color: true });
    const plain = renderTable(['id'], [['1']], { color: false });
    expect(plain).not.toContain('\x1b');
    // with colour the header and border may be styled; stripped, the layout is the same
    expect(colored.replace(/\x1b\[[0-9;]*m/g, '')).toBe(plain);
  });
});

describe('renderKeyValueTable', () => {
  it('one row per field, values whole without a width', () => {
    const long = 'y'.repeat(150);
    const text = renderKeyValueTable(
      [
        ['id', 'c_1'],
        ['body', long],
      ],
      { color: false },
    );
    expect(text).toContain(long);
  });

  it('wraps to the width when given', () => {
    const text = renderKeyValueTable([['body', 'lorem ipsum dolor sit amet '.repeat(10)]], { color: false, width: 50 });
    for (const line of text.trimEnd().split('\n')) expect(line.length).toBeLessThanOrEqual(50);
    expect(text.split('\n').length).toBeGreaterThan(5);
  });

  it('keeps its natural width when everything fits', () => {
    const text = renderKeyValueTable(
      [
        ['rows', 20],
        ['resource', 'contacts'],
      ],
      { color: false, width: 200 },
    );
    expect(
      Math.max(
        ...text
          .trimEnd()
          .split('\n')
          .map((l) => l.length),
      ),
    ).toBeLessThan(30);
  });
});

describe('list tables fit the terminal', () => {
  it('renderTable with a width cuts cells with … so no line is longer', () => {
    const text = renderTable(
      ['name', 'base', 'v1'],
      [['p1', 'http://127.0.0.1:4555/api/v2 and more', 'http://127.0.0.1:4555/api/v1 and more']],
      {
        color: false,
        width: 50,
      },
    );
    for (const line of text.trimEnd().split('\n')) expect(line.length).toBeLessThanOrEqual(50);
    expect(text).toContain('…');
  });
});
