import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/http/errors.js';
import {
  convertCell,
  normalizeFieldName,
  parseColumnMaps,
  mapHeader,
  parseHeader,
  splitType,
  type FieldType,
} from '../../../src/import/input/header.js';
import { objectToRecord, rowToRecord } from '../../../src/import/input/header.js';

describe('normalizeFieldName', () => {
  it.each([
    ['First Name', 'first_name'],
    ['  Email  ', 'email'],
    ['E-mail Address', 'e_mail_address'],
    ['Company   ID', 'company_id'],
    ['#id', 'id'],
    ['Prénom', 'prénom'],
    ['already_snake', 'already_snake'],
    ['Phone (mobile)', 'phone_mobile'],
    ['a__b', 'a_b'],
    ['ÄRGER', 'ärger'],
    ['!!!', ''],
  ])('%j → %j', (input, expected) => expect(normalizeFieldName(input)).toBe(expected));
});

describe('splitType', () => {
  it.each([
    ['amount:number', 'amount', 'number', true],
    ['Active : Boolean', 'Active', 'boolean', true],
    ['tags:list', 'tags', 'list', true],
    ['meta:json', 'meta', 'json', true],
    ['name:string', 'name', 'string', true],
    ['time:hh', 'time:hh', 'string', false],
    ['plain', 'plain', 'string', false],
  ])('%j', (header, name, type, typed) => expect(splitType(header)).toEqual({ name, type, typed }));
});

describe('parseHeader', () => {
  it('maps names and types, and ignores _ columns', () => {
    const h = parseHeader(['First Name', 'amount:number', '_line', '_error_code', 'Active:boolean']);
    expect(h.width).toBe(5);
    expect(h.columns.map((c) => [c.column, c.field, c.type, c.ignored])).toEqual([
      ['First Name', 'first_name', 'string', false],
      ['amount:number', 'amount', 'number', false],
      ['_line', '', 'string', true],
      ['_error_code', '', 'string', true],
      ['Active:boolean', 'active', 'boolean', false],
    ]);
  });

  it('--map overrides by original column name, with or without the type suffix', () => {
    const maps = parseColumnMaps(['First Name=given_name', 'amount=total', 'Notes=', 'Score=score:number']);
    const h = parseHeader(['First Name', 'amount:number', 'Notes', 'Score'], maps);
    expect(h.columns.map((c) => [c.field, c.type, c.ignored])).toEqual([
      ['given_name', 'string', false],
      ['total', 'number', false],
      ['', 'string', true],
      ['score', 'number', false],
    ]);
  });

  it('a --map may rescue a _ column', () => {
    const h = parseHeader(['_internal', 'email'], parseColumnMaps(['_internal=external_id']));
    expect(h.columns[0]).toMatchObject({ field: 'external_id', ignored: false });
  });

  it.each([
    [['email', ''], /the header of column 2 is empty/],
    [['email', '   '], /the header of column 2 is empty/],
    [
      ['First Name', 'first_name'],
      /columns "First Name" \(column 1\) and "first_name" \(column 2\) both fill the field "first_name"/,
    ],
    [['email', 'Email:string'], /"email" \(column 1\) and "Email:string" \(column 2\)/],
    [['!!!'], /has no letters or digits/],
    [['_a', '_b'], /no column to import/],
  ])('%j is a usage error', (cells, message) => {
    const err = (() => {
      try {
        parseHeader(cells);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toMatch(message);
  });

  it('a --map to an existing field clashes; a --map of a missing column is an error', () => {
    expect(() => parseHeader(['a', 'b'], parseColumnMaps(['a=b']))).toThrow(/both fill the field "b"/);
    expect(() => parseHeader(['a'], parseColumnMaps(['nope=x']))).toThrow(/not in the header: "nope"/);
  });

  it('parseColumnMaps checks its flags', () => {
    expect(() => parseColumnMaps(['nofield'])).toThrow(UsageError);
    expect(() => parseColumnMaps(['=x'])).toThrow(UsageError);
    expect(() => parseColumnMaps(['a=x', 'a=y'])).toThrow(/mapped twice/);
    expect(parseColumnMaps(['a=b=c'])).toEqual(new Map([['a=b', 'c']]));
  });
});

describe('convertCell', () => {
  const ok = (value: unknown) => ({ ok: true, value, empty: false });
  const empty = { ok: true, value: undefined, empty: true };
  it.each<[string, FieldType, unknown]>([
    ['hello', 'string', ok('hello')],
    [' padded ', 'string', ok(' padded ')],
    ['', 'string', empty],
    ['   ', 'number', empty],
    ['42', 'number', ok(42)],
    [' -3.5 ', 'number', ok(-3.5)],
    ['1e3', 'number', ok(1000)],
    ['.5', 'number', ok(0.5)],
    ['+7', 'number', ok(7)],
    ['true', 'boolean', ok(true)],
    ['YES', 'boolean', ok(true)],
    ['1', 'boolean', ok(true)],
    ['False', 'boolean', ok(false)],
    ['no', 'boolean', ok(false)],
    ['0', 'boolean', ok(false)],
    ['a; b ;;c;', 'list', ok(['a', 'b', 'c'])],
    [' ; ; ', 'list', empty],
    ['solo', 'list', ok(['solo'])],
    ['{"a":[1,2]}', 'json', ok({ a: [1, 2] })],
    ['null', 'json', ok(null)],
    ['"s"', 'json', ok('s')],
  ])('%j as %s', (cell, type, expected) => expect(convertCell(cell, type)).toEqual(expected));

  it.each<[string, FieldType, RegExp]>([
    ['abc', 'number', /not a number/],
    ['1,000', 'number', /not a number/],
    ['0x10', 'number', /not a number/],
    ['Infinity', 'number', /not a number/],
    ['1e999', 'number', /not a number/],
    ['NaN', 'number', /not a number/],
    ['maybe', 'boolean', /not a boolean/],
    ['2', 'boolean', /not a boolean/],
    ['{a:1}', 'json', /not valid JSON/],
  ])('%j as %s is invalid', (cell, type, reason) => {
    const r = convertCell(cell, type);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toMatch(reason);
  });
});

describe('rowToRecord', () => {
  const header = parseHeader(['Email', 'First Name', 'amount:number', 'tags:list', '_line']);

  it('builds the record, leaving out empty cells and _ columns', () => {
    expect(rowToRecord(['a@b.c', '', '12.5', 'x;y', '7'], header)).toEqual({
      ok: true,
      record: { email: 'a@b.c', amount: 12.5, tags: ['x', 'y'] },
    });
  });

  it('a ragged row is invalid: expected N columns, got M', () => {
    expect(rowToRecord(['a@b.c', 'A'], header)).toEqual({
      ok: false,
      code: 'INVALID_COLUMN_COUNT',
      reason: 'expected 5 columns, got 2',
      field: '',
    });
    expect(rowToRecord(['1', '2', '3', '4', '5', '6'], header)).toMatchObject({
      ok: false,
      reason: 'expected 5 columns, got 6',
    });
  });

  it('a cell that does not fit its type names the column and the value', () => {
    expect(rowToRecord(['a@b.c', 'A', 'twelve', '', ''], header)).toEqual({
      ok: false,
      code: 'INVALID_VALUE',
      reason: 'column "amount:number": "twelve" is not a number',
      field: 'amount',
    });
  });

  it('shortens a long value in the reason', () => {
    const r = rowToRecord(['a', 'b', 'x'.repeat(5000), '', ''], header);
    expect(!r.ok && r.reason.length).toBeLessThan(120);
  });

  it('a row with nothing to send is invalid', () => {
    expect(rowToRecord(['', ' ', '', '', '9'], header)).toMatchObject({ ok: false, code: 'EMPTY_ROW' });
  });
});

describe('objectToRecord (NDJSON)', () => {
  it("a rejects line that was not JSON, its _raw fixed there: the row it holds (issue 28's trial: 'no field to import')", () => {
    const own = { _line: 2, _error_code: 'INVALID_JSON', _error_message: 'Unexpected end of JSON input' };
    expect(objectToRecord({ _raw: '{"email":"a@x.test","n":12345678901234567890}', ...own })).toMatchObject({
      ok: true,
      record: { email: 'a@x.test' },
    });
    expect(objectToRecord({ _raw: '{"email":', ...own })).toMatchObject({
      ok: false,
      code: 'INVALID_JSON',
      reason: expect.stringMatching(/its _raw is not JSON yet .*: fix the text there/),
    });
    // a row of its own with a field `_raw` beside others is that row
    expect(objectToRecord({ _raw: 'x', email: 'b@x.test' })).toEqual({ ok: true, record: { email: 'b@x.test' } });
  });

  it('keeps values as typed, drops _ keys, applies --map', () => {
    const maps = parseColumnMaps(['mail=email', 'drop=']);
    expect(objectToRecord({ mail: 'a@b.c', n: 1, ok: true, x: null, _line: 3, drop: 'z' }, maps)).toEqual({
      ok: true,
      record: { email: 'a@b.c', n: 1, ok: true, x: null },
    });
  });
  it.each([[[1]], ['s'], [null], [3]])('%j is not an object', (v) => {
    expect(objectToRecord(v)).toMatchObject({ ok: false, code: 'INVALID_JSON' });
  });
  it('a map that collides with a key is invalid; an empty object is invalid', () => {
    expect(objectToRecord({ mail: 'a', email: 'b' }, parseColumnMaps(['mail=email']))).toMatchObject({ ok: false });
    expect(objectToRecord({ _line: 1 })).toMatchObject({ ok: false, code: 'EMPTY_ROW' });
  });
});

describe('server-set fields (READ_ONLY_FIELDS)', () => {
  it('columns of an exported list that the server sets are left out; a --map to one is sent', () => {
    const m = parseHeader(['id', 'Email', 'created_at', 'owner_id']);
    expect(m.columns.filter((c) => !c.ignored).map((c) => c.field)).toEqual(['email']);
    expect(m.columns.filter((c) => c.readOnly).map((c) => c.column)).toEqual(['id', 'created_at', 'owner_id']);
    const mapped = parseHeader(['id', 'email'], new Map([['id', 'external_id']]));
    expect(mapped.columns.map((c) => c.field)).toEqual(['external_id', 'email']);
    expect(objectToRecord({ id: 'con_1', email: 'a@b.c', updated_at: 'x' })).toEqual({
      ok: true,
      record: { email: 'a@b.c' },
    });
  });
});

describe('a header naming a field as the CRM’s records name it (issue 28: an export reads back as written)', () => {
  const nfd = 'Gro\u0308ße';
  const known = new Set(['__proto__', 'firstName', 'email', 'first_name', nfd, 'id']);
  it('is that field exactly: `__proto__`, camelCase, a name in NFD; others are normalised, `_line` left out', () => {
    const cells = ['__proto__', 'firstName', 'Email', 'First Name', nfd, '_line', 'id', 'tags:list'];
    const m = parseHeader(cells, new Map(), [], known);
    expect(m.columns.map((c) => (c.ignored ? null : c.field))).toEqual([
      '__proto__',
      'firstName',
      'email',
      'first_name',
      nfd,
      null,
      null,
      'tags',
    ]);
    const r = rowToRecord(['p', 'Ada', 'a@x', 'Ada', 'g', '3', 'c_1', 'a;b'], m);
    expect(r.ok && Object.hasOwn(r.record, '__proto__') && r.record.__proto__).toBe('p');
    expect(r.ok && Object.getPrototypeOf(r.record)).toBe(Object.prototype);
  });

  it('without the records’ fields, as before: `__proto__` is one of crm’s `_` columns, left out', () => {
    const m = parseHeader(['__proto__', 'firstName'], new Map());
    expect(m.columns.map((c) => (c.ignored ? null : c.field))).toEqual([null, 'firstname']);
  });

  it('only headers that are not already a field’s name ask for the records’ fields', async () => {
    let asked = 0;
    const knownFields = async () => (asked++, known);
    await mapHeader(['email', 'first_name', 'score:number'], new Map(), [], knownFields);
    expect(asked).toBe(0);
    const m = await mapHeader(['email', 'firstName'], new Map(), [], knownFields);
    expect([asked, m.columns[1]!.field]).toEqual([1, 'firstName']);
    await mapHeader(['__proto__'], new Map(), [], knownFields);
    expect(asked).toBe(2);
  });
});
