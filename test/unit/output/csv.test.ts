import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { cellText } from '../../../src/output/cell.js';
import { csvCell, csvRow } from '../../../src/output/csv.js';
import { unescapeTsv } from '../../helpers/tsv.js';

describe('cellText', () => {
  it.each([
    [null, ''],
    [undefined, ''],
    ['', ''],
    ['text', 'text'],
    [0, '0'],
    [-5, '-5'],
    [1.5e21, '1.5e+21'],
    [true, 'true'],
    [false, 'false'],
    [{ a: 1, b: [1, 'x'] }, '{"a":1,"b":[1,"x"]}'],
    [[1, 2], '[1,2]'],
    [[], '[]'],
    [new Date('2026-01-02T03:04:05Z'), '2026-01-02T03:04:05.000Z'],
  ])('%j → %j', (value, text) => {
    expect(cellText(value)).toBe(text);
  });

  it('bigints as their digits', () => {
    expect(cellText(12n)).toBe('12');
    expect(cellText({ n: 12n })).toBe('{"n":"12"}');
  });
});

describe('csvCell (RFC 4180)', () => {
  it.each([
    ['plain', 'plain'],
    ['with,comma', '"with,comma"'],
    ['say "hi"', '"say ""hi"""'],
    ['line\nbreak', '"line\nbreak"'],
    ['cr\rhere', '"cr\rhere"'],
    ['tab\tinside', 'tab\tinside'],
    ['', ''],
    [' padded ', ' padded '],
  ])('%j → %j', (value, cell) => {
    expect(csvCell(value)).toBe(cell);
  });

  it('JSON-encodes nested values and quotes them', () => {
    expect(csvCell({ a: 'x,y' })).toBe('"{""a"":""x,y""}"');
    expect(csvCell(['a'])).toBe('"[""a""]"');
  });
});

describe('CSV injection guard (OWASP)', () => {
  it.each([
    ['=1+2', "'=1+2"],
    ['+1+2', "'+1+2"],
    ['-1+2', "'-1+2"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\t=1', "'\t=1"],
    ['\r=1', `"'\r=1"`],
    ['\n=1', `"'\n=1"`],
    ['=HYPERLINK("http://evil","x")', `"'=HYPERLINK(""http://evil"",""x"")"`],
    ['-5', "'-5"],
    ['＝1+2', "'＝1+2"],
    ['=1,2', `"'=1,2"`],
  ])('string %j → %j', (value, cell) => {
    expect(csvCell(value)).toBe(cell);
  });

  it('leaves safe starts alone, including a formula sign that is not first', () => {
    for (const s of ['a=1', ' =1', '1-2', 'user@example.com', "'quoted", '(1)']) expect(csvCell(s)).toBe(s);
  });

  it('does not prefix real numbers: a JSON number can never spell a formula', () => {
    expect(csvCell(-5)).toBe('-5');
    expect(csvCell(-0.25)).toBe('-0.25');
    expect(csvCell(-1e-7)).toBe('-1e-7');
    expect(csvCell('-5')).toBe("'-5");
  });

  it('applies to tsv too', () => {
    expect(csvCell('=cmd', '\t')).toBe("'=cmd");
    expect(csvCell('\tx', '\t')).toBe("'\\tx");
  });
});

describe('tsv cells', () => {
  it.each([
    ['plain', 'plain'],
    ['a\tb', 'a\\tb'],
    ['a\nb', 'a\\nb'],
    ['a\r\nb', 'a\\r\\nb'],
    ['back\\slash', 'back\\\\slash'],
    ['a,"b"', 'a,"b"'],
  ])('%j → %j and back', (value, cell) => {
    expect(csvCell(value, '\t')).toBe(cell);
    expect(unescapeTsv(cell)).toBe(value);
  });
});

describe('terminal mode', () => {
  it('escapes control characters instead of sending them raw', () => {
    expect(csvCell('a\x1b[2Jb', ',', { terminal: true })).toBe('a\\x1b[2Jb');
    expect(csvCell('x\ny', ',', { terminal: true })).toBe('x\\ny');
    expect(csvCell('x\ty\x9b', '\t', { terminal: true })).toBe('x\\ty\\x9b');
  });
});

describe('csvRow', () => {
  it('joins cells with the separator, no terminator', () => {
    expect(csvRow(['a', 1, null, { b: 2 }])).toBe('a,1,,"{""b"":2}"');
    expect(csvRow(['a', 'b c', undefined], '\t')).toBe('a\tb c\t');
    expect(csvRow([])).toBe('');
  });

  it('round-trips hostile values through csv-parse', () => {
    const values = [
      'plain',
      'comma, inside',
      'quote " inside',
      '""',
      'multi\nline\r\ncrlf',
      ' lead and trail ',
      'unicode ✓ 日本',
      'x\x1b[31my',
      '',
    ];
    const text = `${csvRow(values)}\n${csvRow(values.map((v) => v.toUpperCase()))}\n`;
    const rows = parse(text);
    expect(rows).toEqual([values, values.map((v) => v.toUpperCase())]);
  });

  it('round-trips formula-looking strings with the guard prefix only', () => {
    const values = ['=1+2', '-x', '@a', '+b', '\tt', '\rr'];
    const [row] = parse(`${csvRow(values)}\n`, { relax_quotes: false });
    expect(row).toEqual(values.map((v) => `'${v}`));
  });
});
