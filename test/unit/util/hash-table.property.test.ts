// The flat hash table (src/util/hash-table.ts) behind the repeated-rows check and reconcile's index: against a Map
// of the same operations, through its growth, with one column or two (the file's keys and their records in one).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HashTable, MAX_VALUE } from '../../../src/util/hash-table.js';
import { runs } from '../../helpers/property.js';

const op = fc.record({
  key: fc.string({ maxLength: 6 }),
  value: fc.nat({ max: 5000 }),
  column: fc.constantFrom<0 | 1>(0, 1),
});

describe('HashTable', () => {
  it('reads back what a Map would, through growth, in both columns, sized for any number expected', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 3000 }), fc.nat({ max: 4000 }), (ops, expected) => {
        const table = new HashTable(2, expected);
        const model = new Map<string, [number, number | undefined]>();
        for (const { key, value, column } of ops) {
          table.set(key, value, column);
          const had = model.get(key) ?? [0, undefined];
          model.set(key, column === 0 ? [value, had[1]] : [had[0], value]);
        }
        expect(table.size).toBe(model.size);
        for (const [key, [first, second]] of model) {
          expect(table.get(key)).toBe(first);
          expect(table.get(key, 1)).toBe(second);
        }
        expect(table.get('\u0000absent\u0000')).toBeUndefined();
      }),
      runs(100),
    );
  });

  it('one column: a string set once is found, others are not; values outside 0..MAX_VALUE are refused', () => {
    const table = new HashTable();
    for (let i = 0; i < 5000; i++) table.set(`k${i}`, i);
    expect(table.get('k4999')).toBe(4999);
    expect(table.get('k5000')).toBeUndefined();
    expect(() => table.set('x', MAX_VALUE + 1)).toThrow(RangeError);
    expect(() => table.set('x', -1)).toThrow(RangeError);
  });
});
