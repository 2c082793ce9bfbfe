// Issue 28, as a property: any JSON value (numbers no double holds, numbers a double holds, strings that
// look like numbers, keys such as `__proto__` and `constructor`) sent in a create comes back in the
// create's answer and a get byte for byte, whatever the whitespace of the body sent.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { runs } from '../helpers/property.js';
import { call, expectStatus, useSandbox } from './helpers.js';

const ctx = useSandbox({ seed: undefined });

/** A value as JSON text twice: compact (as the sandbox answers) and spaced (as it is sent). */
type Text = { compact: string; spaced: string };
const same = (text: string): Text => ({ compact: text, spaced: text });

const digits = (min: number, max: number) => fc.stringMatching(new RegExp(`^[0-9]{${min},${max}}$`));
const sign = fc.constantFrom('', '-');
const nonZero = fc.constantFrom(...'123456789');

// Numbers whose text comes back as it is: a double's own text (JSON.stringify), or a number no double
// holds (more than 17 significant digits, or out of a double's range), which the sandbox keeps as written.
const number: fc.Arbitrary<string> = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)),
  fc.integer().map(String),
  // an odd integer above 2^53: no double
  fc.tuple(sign, nonZero, digits(16, 40), fc.constantFrom(...'13579')).map((p) => p.join('')),
  // 19 or more significant digits, the last not 0
  fc.tuple(sign, fc.constantFrom('0.', '0.000'), nonZero, digits(17, 30), nonZero).map((p) => p.join('')),
  fc.tuple(sign, nonZero, digits(0, 6), fc.constant('.'), digits(17, 30), nonZero).map((p) => p.join('')),
  // beyond a double's range either way
  fc
    .tuple(
      sign,
      nonZero,
      fc.option(
        digits(1, 20).map((d) => `.${d}`),
        { nil: '' },
      ),
      fc.constantFrom('e', 'E', 'e+', 'E-', 'e-'),
      fc.integer({ min: 400, max: 99999 }).map(String),
    )
    .map((p) => p.join('')),
);

const tricky = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'valueOf',
  '',
  '12345678901234567890',
  '~crm-raw-number-',
  'a"b\\c',
  'ü\u2028',
];
/** no array index ("0", "42", up to 2^32 - 2): JavaScript lists such keys first, whoever parses the body */
const key = fc
  .oneof(fc.constantFrom(...tricky), fc.string())
  .filter((k) => !/^(0|[1-9]\d*)$/.test(k) || Number(k) > 2 ** 32 - 2);
const string = fc.oneof(fc.constantFrom(...tricky), number, fc.string({ unit: 'binary' }));

const value: fc.Arbitrary<Text> = fc.letrec<{ value: Text }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    number.map(same),
    string.map((s) => same(JSON.stringify(s))),
    fc.constantFrom('true', 'false', 'null').map(same),
    fc.array(tie('value'), { maxLength: 4 }).map((xs) => ({
      compact: `[${xs.map((x) => x.compact).join(',')}]`,
      spaced: `[ ${xs.map((x) => x.spaced).join(' ,\n ')} ]`,
    })),
    fc.uniqueArray(fc.tuple(key, tie('value')), { maxLength: 4, selector: ([k]) => k }).map(object),
  ),
})).value;

function object(entries: Array<[string, Text]>): Text {
  return {
    compact: `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v.compact}`).join(',')}}`,
    spaced: `{ ${entries.map(([k, v]) => `${JSON.stringify(k)} :\t${v.spaced}`).join(' , ')} }`,
  };
}

/** a deal's fields beside its name: not read-only, not `name` */
const fields = fc.uniqueArray(
  fc.tuple(
    key.filter((k) => !['id', 'name', 'owner_id', 'created_at', 'updated_at'].includes(k)),
    value,
  ),
  { minLength: 1, maxLength: 6, selector: ([k]) => k },
);

describe('a create keeps every value as it was sent', () => {
  test('the answer of the create and of a get carry the fields byte for byte', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fields, async (entries) => {
        const sent = object([['name', same(JSON.stringify(`Deal ${++n}`))], ...entries]);
        const created = await call(ctx.sb, 'POST', '/deals', { rawBody: sent.spaced });
        expectStatus(created, 201);
        const id = (JSON.parse(created.text) as { data: { id: string } }).data.id;
        // the record: its id, the fields in the order sent, then what the server sets
        const record = `{"id":${JSON.stringify(id)},${sent.compact.slice(1, -1)},"owner_id":`;
        expect(created.text).toContain(record);
        expect((await call(ctx.sb, 'GET', `/deals/${encodeURIComponent(id)}`)).text).toContain(record);
      }),
      runs(100),
    );
  });
});
