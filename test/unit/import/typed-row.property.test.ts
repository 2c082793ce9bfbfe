// An --update's untyped cell of a field the records hold as different kinds (typing.ts MIXED): a cell JSON
// writes as a number, boolean, list or object could be that value or text, so the row is invalid, naming the
// field and the ways to tell; any other text goes as it is. A field of one kind is typed as before.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { asHeldType, MIXED, typedRow } from '../../../src/import/input/typing.js';
import { runs } from '../../helpers/property.js';

const SAMPLES = [0, false, [], {}];
const looksTyped = (cell: string) => SAMPLES.some((s) => asHeldType(cell, s, true) !== undefined);

describe('typedRow', () => {
  it('a JSON-written cell of a mixed field is invalid, naming the field and --match id; other text is sent as it is', () => {
    const cell = fc.oneof(
      fc.string(),
      fc.constantFrom('true', 'false', '37', '-1.5', '1e400', '["vip"]', '{"a":1}', '00501', 'TRUE', ' true '),
      fc.jsonValue().map((v) => JSON.stringify(v)),
    );
    fc.assert(
      fc.property(cell, (text) => {
        const r = typedRow({ ok: true, record: { email: 'a@x.test', vip: text } }, [['vip', MIXED]]);
        if (looksTyped(text)) {
          expect(r.ok).toBe(false);
          if (!r.ok) {
            expect(r.field).toBe('vip');
            expect(r.reason).toMatch(/^vip .* may be a (number|boolean|json) or text: .*--match id/);
          }
        } else expect(r).toEqual({ ok: true, record: { email: 'a@x.test', vip: text } });
      }),
      runs(),
    );
  });

  it('the cases: true, 37 and a list are asked about; gold, 00501 and TRUE go as text', () => {
    const one = (text: string) => typedRow({ ok: true, record: { vip: text } }, [['vip', MIXED]]);
    expect(one('true')).toMatchObject({ ok: false, reason: expect.stringMatching(/vip "true" may be a boolean/) });
    expect(one('37')).toMatchObject({ ok: false, reason: expect.stringMatching(/may be a number .*vip:number/) });
    expect(one('["a"]')).toMatchObject({ ok: false, reason: expect.stringMatching(/may be a json/) });
    for (const text of ['gold', '00501', 'TRUE']) expect(one(text)).toEqual({ ok: true, record: { vip: text } });
  });

  it('a field of one kind is typed as before; a row already invalid stays as it was', () => {
    const r = typedRow({ ok: true, record: { vip: 'true', n: '37' } }, [
      ['vip', false],
      ['n', 0],
    ]);
    expect(r).toEqual({ ok: true, record: { vip: true, n: 37 } });
    const bad = { ok: false as const, code: 'X', reason: 'r', field: 'f' };
    expect(typedRow(bad, [['vip', MIXED]])).toBe(bad);
  });
});
