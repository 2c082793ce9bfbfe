import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/http/errors.js';
import { columnsFor, getPath, parseFields, pickFields, projectFields, resolveFormat } from '../../../src/output/format.js';

describe('resolveFormat', () => {
  it('defaults to table on a TTY and json otherwise', () => {
    expect(resolveFormat(undefined, true)).toBe('table');
    expect(resolveFormat(undefined, false)).toBe('json');
    expect(resolveFormat(undefined, undefined)).toBe('json');
  });

  it('takes the flag as given, case-insensitively', () => {
    expect(resolveFormat('csv', true)).toBe('csv');
    expect(resolveFormat('NDJSON', false)).toBe('ndjson');
    expect(resolveFormat('table', false)).toBe('table');
  });

  it('rejects an unknown format as a usage error', () => {
    expect(() => resolveFormat('yaml', true)).toThrow(UsageError);
    expect(() => resolveFormat('yaml', true)).toThrow(/table, json, ndjson, csv, tsv/);
  });
});

describe('parseFields', () => {
  it('splits, trims, drops blanks and repeats, keeps order', () => {
    expect(parseFields('a, b ,,link.type,a')).toEqual(['a', 'b', 'link.type']);
    expect(parseFields(['a,b', 'c'])).toEqual(['a', 'b', 'c']);
    expect(parseFields(undefined)).toBeUndefined();
  });

  it('rejects an empty list and malformed paths', () => {
    expect(() => parseFields(' , ')).toThrow(UsageError);
    expect(() => parseFields('a..b')).toThrow(UsageError);
    expect(() => parseFields('.a')).toThrow(UsageError);
    expect(() => parseFields('a.')).toThrow(UsageError);
  });
});

describe('getPath / pickFields / projectFields', () => {
  const rec = {
    id: 'd_1',
    link: { type: 'owner', contact: { id: 'c_1' } },
    tags: ['x', 'y'],
    'odd.key': 'literal',
    empty: null,
  };

  it('follows dot paths, array indexes, and prefers a literal dotted key', () => {
    expect(getPath(rec, 'id')).toBe('d_1');
    expect(getPath(rec, 'link.type')).toBe('owner');
    expect(getPath(rec, 'link.contact.id')).toBe('c_1');
    expect(getPath(rec, 'tags.1')).toBe('y');
    expect(getPath(rec, 'odd.key')).toBe('literal');
    expect(getPath(rec, 'empty.x')).toBeUndefined();
    expect(getPath(rec, 'missing')).toBeUndefined();
    expect(getPath(rec, 'id.length')).toBeUndefined();
    expect(getPath(null, 'a')).toBeUndefined();
    expect(getPath(rec, 'toString')).toBeUndefined();
  });

  it('pickFields gives a flat object in the requested order', () => {
    const picked = pickFields(rec, ['link.type', 'id', 'nope']);
    expect(Object.keys(picked)).toEqual(['link.type', 'id', 'nope']);
    expect(picked).toEqual({ 'link.type': 'owner', id: 'd_1', nope: undefined });
  });

  it('projectFields keeps the nested shape, null for missing', () => {
    expect(projectFields(rec, ['id', 'link.type', 'link.contact.id', 'nope', 'odd.key'])).toEqual({
      id: 'd_1',
      link: { type: 'owner', contact: { id: 'c_1' } },
      nope: null,
      'odd.key': 'literal',
    });
    expect(JSON.stringify(projectFields(rec, ['link.type', 'id']))).toBe('{"link":{"type":"owner"},"id":"d_1"}');
  });

  it('projectFields never writes into the input', () => {
    const input = { link: { type: 'owner', id: 'u_1' } };
    const out = projectFields(input, ['link', 'link.extra']);
    expect(out).toEqual({ link: { type: 'owner', id: 'u_1', extra: null } });
    expect(input).toEqual({ link: { type: 'owner', id: 'u_1' } });
  });

  it('projectFields is safe with __proto__ as a field', () => {
    const out = projectFields(JSON.parse('{"__proto__": {"polluted": 1}}'), ['__proto__.polluted']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(JSON.stringify(out)).toBe('{"__proto__":{"polluted":1}}');
  });
});

describe('columnsFor', () => {
  it('uses --fields, then the defaults, then the first record', () => {
    expect(columnsFor({ a: 1, b: 2 }, ['b'], ['a'])).toEqual(['b']);
    expect(columnsFor({ a: 1, b: 2 }, undefined, ['a'])).toEqual(['a']);
    expect(columnsFor({ a: 1, b: 2 })).toEqual(['a', 'b']);
    expect(columnsFor('x')).toEqual(['value']);
  });
});
