// Properties of `--set` parsing: a string value comes back exactly, `:=` of any JSON value gives that
// value, bad input is a usage error naming the flag, and no field name can reach a prototype.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applySets, parseParams, parseSet } from '../../../src/commands/shared/body.js';
import { UsageError } from '../../../src/http/errors.js';
import { RawNumber, stringifyJson } from '../../../src/json/exact-json.js';
import { runs } from '../../helpers/property.js';

const anyText = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.string({ unit: fc.constantFrom('=', ':', ':=', ' ', 'a', '"', '{', '\n', 'é', '😀', '\u0000') }),
);
/** A field name `--set` can carry: no `=`, and not ending in `:` (that would read as `:=`). */
const field = fc.oneof(
  anyText.filter((f) => f !== '' && !f.includes('=') && !f.endsWith(':')),
  fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'a.b', 'a[0]', 'hasOwnProperty'),
);

const usageNaming =
  (flag: string) =>
  (err: unknown): boolean =>
    err instanceof UsageError && err.message.includes(flag);

describe('--set', () => {
  it('field=value gives the string value exactly, whatever it holds (`=`, `:=`, unicode, empty)', () => {
    fc.assert(
      fc.property(field, anyText, (f, v) => {
        expect(parseSet(`${f}=${v}`)).toEqual([f, v]);
      }),
      runs(500),
    );
  });

  it('field:=JSON gives that JSON value, however it is spaced', () => {
    fc.assert(
      fc.property(field, fc.jsonValue(), fc.constantFrom(undefined, 2), (f, v, indent) => {
        const [name, value] = parseSet(`${f}:=${JSON.stringify(v, null, indent)}`);
        expect(name).toBe(f);
        expect(JSON.stringify(value)).toBe(JSON.stringify(v));
      }),
      runs(300),
    );
  });

  it('anything else is a usage error that names --set', () => {
    const noField = anyText.map((v) => `=${v}`);
    const noEquals = anyText.filter((s) => !s.includes('='));
    const badJson = fc
      .tuple(field, anyText)
      .filter(([, v]) => {
        try {
          JSON.parse(v);
          return false;
        } catch {
          return true;
        }
      })
      .map(([f, v]) => `${f}:=${v}`);
    fc.assert(
      fc.property(
        fc.oneof(
          noField,
          noEquals,
          badJson,
          anyText.map((v) => `:=${v}`),
        ),
        (spec) => {
          expect(() => parseSet(spec)).toThrow(expect.toSatisfy(usageNaming('--set')));
        },
      ),
      runs(300),
    );
  });

  it('a JSON number a double cannot hold is kept as written, not rounded', () => {
    for (const json of ['12345678901234567891', '1e400', '[1e-400]', '{"a":9007199254740993}']) {
      const [field, value] = parseSet(`n:=${json}`);
      expect(field).toBe('n');
      expect(stringifyJson(value)).toBe(json);
    }
    expect(parseSet('n:=12345678901234567891')[1]).toEqual(new RawNumber('12345678901234567891'));
    expect(parseSet('n:=9007199254740992')).toEqual(['n', 9007199254740992]);
  });

  it('every field lands as an own key of a plain object; no prototype is touched', () => {
    const json = fc.oneof(
      fc.jsonValue(),
      fc.dictionary(fc.constantFrom('__proto__', 'polluted'), fc.jsonValue({ maxDepth: 1 })),
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(field, json), { minLength: 1, maxLength: 4 }), (pairs) => {
        const data = JSON.parse('{"__proto__":{"polluted":1},"keep":true}') as Record<string, unknown>;
        const out = applySets(
          data,
          pairs.map(([f, v]) => `${f}:=${JSON.stringify(v)}`),
        );
        expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
        expect(out.keep).toBe(true);
        const last = new Map(pairs);
        for (const [f, v] of last) {
          expect(Object.hasOwn(out, f)).toBe(true);
          expect(JSON.stringify(Object.getOwnPropertyDescriptor(out, f)!.value)).toBe(JSON.stringify(v));
        }
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      }),
      runs(300),
    );
    expect(JSON.stringify(applySets({}, ['__proto__=x']))).toBe('{"__proto__":"x"}');
    expect(JSON.stringify(applySets({}, ['__proto__:={"a":1}']))).toBe('{"__proto__":{"a":1}}');
  });

  it('--param __proto__=x is a query parameter like any other', () => {
    expect(Object.entries(parseParams(['__proto__=x', 'a=b=c']))).toEqual([
      ['__proto__', 'x'],
      ['a', 'b=c'],
    ]);
  });
});
