import { describe, expect, it } from 'vitest';
import { columnsFor, getPath, projectFields } from '../../../src/output/format.js';

describe('getPath / projectFields', () => {
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
