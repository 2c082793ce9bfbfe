// Properties of the row classifier (`--match`, issue 18): applying an update's changes leaves nothing to change;
// a row made from its own record (padded, as text, keys reordered) is unchanged; empty cells change nothing, only
// null clears; a text cell is read by the record's type; text is compared by its code points (not as a key is: a
// name in another normalisation is a change; an email's case is not); a change's text stays short and whole.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { setOwn } from '../../../src/util/set-own.js';
import { changesText, changeText, classify, diffRecord, type Change } from '../../../src/import/match/classify.js';
import { runs } from '../../helpers/property.js';
import { RawNumber } from '../../../src/json/exact-json.js';

const FIELDS = [
  'email',
  'work_email',
  'name',
  'title',
  'age',
  'active',
  'tags',
  'meta',
  'constructor',
  '__proto__',
] as const;
const SKIP = ['email', 'id'];
const pad = fc.constantFrom('', ' ', '\t', ' \u00a0');
const text = fc.oneof(
  fc.string({ unit: fc.constantFrom('a', 'B', 'é', 'e\u0301', ' ', '4', '2', '.', '@'), maxLength: 6 }),
  fc.constantFrom('42', ' 42.0 ', '1e3', 'true', 'FALSE', 'yes', '', '  ', '0x10', '1e400'),
);
const scalar = fc.oneof(
  text,
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer({ min: -3, max: 3 }),
  fc.boolean(),
  fc.constant(null),
);
const json = fc.oneof(
  scalar,
  fc.array(scalar, { maxLength: 3 }),
  fc.dictionary(fc.constantFrom('a', 'b', 'c'), scalar, { maxKeys: 3 }),
);

/** an object from [field, value] pairs, `__proto__` as an own field as the row reader makes it */
const objectOf = (pairs: readonly (readonly [string, unknown])[]): Record<string, unknown> => {
  const o: Record<string, unknown> = {};
  for (const [k, v] of pairs) if (v !== undefined) setOwn(o, k, v);
  return o;
};
const fieldsOf = (values: fc.Arbitrary<unknown>) =>
  fc
    .uniqueArray(fc.tuple(fc.constantFrom(...FIELDS), values), { selector: ([f]) => f, maxLength: FIELDS.length })
    .map(objectOf);

const apply = (record: Record<string, unknown>, changes: readonly Change[]): Record<string, unknown> =>
  objectOf([...Object.entries(record), ...changes.map((c) => [c.field, c.after] as const)]);

/** how a row's cell may spell the record's value: padded, as text, keys in another order */
const spelled = (value: unknown, how: { pad: string; text: boolean }): unknown => {
  if (typeof value === 'string') return `${how.pad}${value}${how.pad}`;
  if (how.text && (typeof value === 'number' || typeof value === 'boolean'))
    return `${how.pad}${String(value)}${how.pad}`;
  if (value !== null && typeof value === 'object' && !Array.isArray(value))
    return objectOf(Object.entries(value).reverse());
  return value;
};

describe('diffRecord', () => {
  it('applying the changes leaves nothing to change, and changes only the row’s fields, in its order', () => {
    fc.assert(
      fc.property(fieldsOf(json), fieldsOf(json), (row, record) => {
        const changes = diffRecord(row, record, SKIP);
        const order = Object.keys(row).filter((f) => changes.some((c) => c.field === f));
        expect(changes.map((c) => c.field)).toEqual(order);
        for (const c of changes) {
          expect(SKIP).not.toContain(c.field);
          expect(c.before).toEqual(Object.hasOwn(record, c.field) ? (record[c.field] ?? null) : null);
        }
        expect(diffRecord(row, apply(record, changes), SKIP)).toEqual([]);
      }),
      runs(),
    );
  });

  it('a row that spells its own record (padded, numbers as text, keys reordered) is unchanged', () => {
    const how = fc.record({ pad, text: fc.boolean() });
    fc.assert(
      fc.property(fieldsOf(json), how, fc.array(fc.constantFrom<string>(...FIELDS)), (record, h, dropped) => {
        const row = objectOf(
          Object.entries(record).map(([f, v]) => [f, dropped.includes(f) ? undefined : spelled(v, h)]),
        );
        expect(classify(row, [{ id: 'c_1', record }], SKIP)).toEqual({ action: 'unchanged', id: 'c_1', changes: [] });
      }),
      runs(),
    );
  });

  it('a row of only empty or absent cells (and skipped fields) changes nothing', () => {
    const empty = fc.constantFrom('', ' ', '\t \u00a0', undefined);
    fc.assert(
      fc.property(
        fieldsOf(empty),
        fc.dictionary(fc.constantFrom(...SKIP), json),
        fieldsOf(json),
        (blank, skipped, record) => {
          expect(diffRecord({ ...blank, ...skipped }, record, SKIP)).toEqual([]);
        },
      ),
      runs(),
    );
  });

  it('null clears: a change from the record’s value to null, none when it is null or absent', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...FIELDS.filter((f) => !SKIP.includes(f))),
        fc.option(json, { nil: undefined }),
        (f, held) => {
          const record = objectOf([[f, held]]);
          const changes = diffRecord(objectOf([[f, null]]), record, SKIP);
          expect(changes).toEqual(held === undefined || held === null ? [] : [{ field: f, before: held, after: null }]);
        },
      ),
      runs(),
    );
  });

  it('a text cell against a number or boolean compares by value and is sent as that type', () => {
    const num = fc.double({ noNaN: true, noDefaultInfinity: true });
    fc.assert(
      fc.property(num, num, pad, (held, cell, p) => {
        const changes = diffRecord({ age: `${p}${String(cell)}${p}` }, { age: held }, SKIP);
        expect(changes).toEqual(cell === held ? [] : [{ field: 'age', before: held, after: Number(String(cell)) }]); // -0 is written 0
      }),
      runs(),
    );
    fc.assert(
      fc.property(fc.boolean(), fc.boolean(), fc.boolean(), (held, cell, upper) => {
        const t = upper ? String(cell).toUpperCase() : String(cell);
        expect(diffRecord({ active: t }, { active: held }, SKIP)).toEqual(
          cell === held ? [] : [{ field: 'active', before: held, after: cell }],
        );
      }),
      runs(),
    );
  });

  it('examples: each rule', () => {
    const d = (row: Record<string, unknown>, record: Record<string, unknown>): Change[] =>
      diffRecord(row, record, SKIP);
    expect(d({ title: 'CEO' }, { title: 'CTO' })).toEqual([{ field: 'title', before: 'CTO', after: 'CEO' }]);
    expect(d({ title: ' CTO ' }, { title: 'CTO' })).toEqual([]);
    expect(d({ title: 'cto' }, { title: 'CTO' })).toHaveLength(1); // only an email ignores case
    // an email's case is one address (issue 29's trial: a reconcile by id rewrote ann@x.io as ANN@x.io); a text's
    // normalisation is the file's to change (issue 28)
    expect(d({ work_email: 'ANN@x.io' }, { work_email: 'ann@X.IO' })).toEqual([]);
    expect(d({ work_email: 'ann@y.io' }, { work_email: 'ann@X.IO' })).toHaveLength(1);
    expect(d({ title: 'Caf\u00e9' }, { title: 'Cafe\u0301' })).toEqual([
      { field: 'title', before: 'Cafe\u0301', after: 'Caf\u00e9' },
    ]);
    expect(d({ title: ' Cafe\u0301 ' }, { title: 'Cafe\u0301' })).toEqual([]);
    expect(d({ title: 'CEO' }, {})).toEqual([{ field: 'title', before: null, after: 'CEO' }]);
    expect(d({ title: '   ' }, { title: 'CTO' })).toEqual([]);
    expect(d({ title: null }, { title: 'CTO' })).toEqual([{ field: 'title', before: 'CTO', after: null }]);
    expect(d({ title: null }, {})).toEqual([]);
    expect(d({ email: 'new@x.io', id: 'c_9', title: 'CTO' }, { email: 'old@x.io', id: 'c_1', title: 'CTO' })).toEqual(
      [],
    );
    expect(d({ age: '42' }, { age: 42 })).toEqual([]);
    expect(d({ age: '42.0' }, { age: 42 })).toEqual([]);
    expect(d({ age: '43' }, { age: 42 })).toEqual([{ field: 'age', before: 42, after: 43 }]);
    expect(d({ age: 'forty' }, { age: 42 })).toEqual([{ field: 'age', before: 42, after: 'forty' }]);
    // a JSON number no double holds is that number, to its digits (issue 28), never text
    expect(d({ age: '1e400' }, { age: 42 })).toEqual([{ field: 'age', before: 42, after: new RawNumber('1e400') }]);
    expect(d({ age: 42 }, { age: '42' })).toEqual([{ field: 'age', before: '42', after: 42 }]); // a typed cell keeps its type
    expect(d({ active: 'true' }, { active: true })).toEqual([]);
    expect(d({ active: 'false' }, { active: true })).toEqual([{ field: 'active', before: true, after: false }]);
    expect(d({ active: 'yes' }, { active: true })).toEqual([{ field: 'active', before: true, after: 'yes' }]);
    expect(d({ tags: ['a', 'b'] }, { tags: ['a', 'b'] })).toEqual([]);
    expect(d({ tags: ['b', 'a'] }, { tags: ['a', 'b'] })).toHaveLength(1);
    expect(d({ meta: { a: 1, b: [2, { c: 3 }] } }, { meta: { b: [2, { c: 3 }], a: 1 } })).toEqual([]);
    expect(d({ meta: { a: 1 } }, { meta: { a: 1, b: null } })).toHaveLength(1);
    expect(d({ constructor: 'x' }, {})).toEqual([{ field: 'constructor', before: null, after: 'x' }]);
  });
});

describe('classify', () => {
  it('0 candidates: create; 2 or more: ambiguous with their ids sorted; 1: update or unchanged', () => {
    const ids = fc.uniqueArray(fc.string({ minLength: 1, maxLength: 4 }), { maxLength: 4 });
    fc.assert(
      fc.property(fieldsOf(json), ids, (row, cs) => {
        const got = classify(
          row,
          cs.map((id) => ({ id, record: {} })),
          SKIP,
        );
        if (cs.length === 0) expect(got).toEqual({ action: 'create', changes: [] });
        if (cs.length > 1) expect(got).toEqual({ action: 'ambiguous', changes: [], candidates: [...cs].sort() });
        if (cs.length === 1) expect(got.action).toBe(diffRecord(row, {}, SKIP).length > 0 ? 'update' : 'unchanged');
      }),
      runs(),
    );
    expect(classify({ title: 'CEO' }, [{ id: 'c_1', record: { title: 'CTO' } }], SKIP)).toEqual({
      action: 'update',
      id: 'c_1',
      changes: [{ field: 'title', before: 'CTO', after: 'CEO' }],
    });
  });
});

describe('changeText', () => {
  it('shows field: before → after as JSON, each value cut at 80 characters, never inside a surrogate pair', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 120 }), json, (s, before) => {
        const t = changeText({ field: 'title', before, after: s });
        expect(t.startsWith('title: ')).toBe(true);
        expect(t).toContain(' → ');
        expect((t as string & { isWellFormed(): boolean }).isWellFormed()).toBe(true);
        expect(Array.from(t).length).toBeLessThanOrEqual('title: '.length + 80 + ' → '.length + 80);
      }),
      runs(),
    );
    expect(changeText({ field: 'title', before: 'CTO', after: 'CEO' })).toBe('title: "CTO" → "CEO"');
    expect(changeText({ field: 'tags', before: null, after: ['a'] })).toBe('tags: null → ["a"]');
    expect(changeText({ field: 'n', before: 'x'.repeat(100), after: 1 })).toBe(`n: "${'x'.repeat(78)}… → 1`);
    expect(changeText({ field: 'e', before: '😀'.repeat(100), after: 1 })).toBe(`e: "${'😀'.repeat(78)}… → 1`);
    const two: Change[] = [
      { field: 'title', before: 'CTO', after: 'CEO' },
      { field: 'age', before: 41, after: 42 },
    ];
    expect(changesText(two)).toBe('title: "CTO" → "CEO"; age: 41 → 42');
  });
});
