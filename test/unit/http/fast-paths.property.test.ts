// The hot path of an import's answers (issue 13) skips work that cannot change the result: zod on a
// batch answer of the plain shape, and the key search through a body whose text holds no key. Each
// shortcut is checked against the full way on generated bodies.
import fc from 'fast-check';
import type * as z from 'zod/mini';
import { describe, expect, it } from 'vitest';
import { batchEnvelope, listEnvelope } from '../../../src/api/envelopes.js';
import { isPlainBatch, isPlainList } from '../../../src/http/envelope-check.js';
import { keyRedactor } from '../../../src/http/mask.js';
import { runs } from '../../helpers/property.js';

/** any JSON value, or one of the shapes a field should have */
const junk = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double(),
  fc.string({ maxLength: 4 }),
  fc.constant([]),
  fc.constant({}),
);
const maybe = <T>(good: fc.Arbitrary<T>) => fc.oneof({ weight: 40, arbitrary: good }, { weight: 1, arbitrary: junk });
/** a record of every field, now and then missing one */
const fields = <T extends Record<string, fc.Arbitrary<unknown>>>(shape: T) =>
  fc
    .tuple(
      fc.record(shape),
      fc.oneof({ weight: 19, arbitrary: fc.constant(null) }, fc.constantFrom(...Object.keys(shape))),
    )
    .map(([o, drop]) => {
      const out: Record<string, unknown> = { ...o };
      if (drop !== null) delete out[drop];
      return out;
    });
const int = fc.oneof(
  { weight: 30, arbitrary: fc.nat(1000) },
  fc.integer({ min: -3, max: -1 }),
  fc.constant(2 ** 53),
  fc.constant(1.5),
);
const optional = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });

const item = fc.record(
  {
    index: maybe(int),
    status: maybe(fc.constantFrom('created', 'error', 'created', 'error', 'updated')),
    data: optional(maybe(fc.dictionary(fc.string({ maxLength: 3 }), junk, { maxKeys: 2 }))),
    error: optional(
      maybe(fields({ code: maybe(fc.string({ maxLength: 3 })), message: maybe(fc.string({ maxLength: 3 })) })),
    ),
  },
  { requiredKeys: [] },
);
const envelope = fields({
  object: maybe(fc.constantFrom('batch', 'batch', 'list')),
  data: maybe(
    fields({
      items: maybe(fc.array(maybe(item), { maxLength: 4 })),
      summary: maybe(fields({ total: maybe(int), succeeded: maybe(int), failed: maybe(int) })),
    }),
  ),
  meta: maybe(
    fields({ api_version: maybe(fc.string()), request_id: maybe(fc.string()), timestamp: maybe(fc.string()) }),
  ),
});

const page = fields({
  object: maybe(fc.constantFrom('list', 'list', 'batch')),
  data: maybe(fc.array(maybe(fc.dictionary(fc.string({ maxLength: 3 }), junk, { maxKeys: 3 })), { maxLength: 4 })),
  page_info: maybe(
    fields({
      end_cursor: maybe(fc.option(fc.string({ maxLength: 4 }), { nil: null })),
      has_next_page: maybe(fc.boolean()),
    }),
  ),
  meta: maybe(
    fields({ api_version: maybe(fc.string()), request_id: maybe(fc.string()), timestamp: maybe(fc.string()) }),
  ),
});

/** The shortcut accepts exactly what the schema accepts, on parsed JSON of the generated bodies. */
function sameAsZod(bodies: fc.Arbitrary<unknown>, fast: (v: unknown) => boolean, schema: z.ZodMiniType): void {
  let accepted = 0;
  fc.assert(
    fc.property(bodies, (v) => {
      const parsed = JSON.parse(JSON.stringify(v)) as unknown;
      const ok = fast(parsed);
      accepted += ok ? 1 : 0;
      expect(ok).toBe(schema.safeParse(parsed).success);
    }),
    runs(3000),
  );
  expect(accepted).toBeGreaterThan(300); // the property saw both answers
}

describe('isPlainList', () => {
  it('accepts exactly what listEnvelope accepts, on parsed JSON', () => sameAsZod(page, isPlainList, listEnvelope));
});

describe('isPlainBatch', () => {
  it('accepts exactly what batchEnvelope accepts, on parsed JSON', () =>
    sameAsZod(envelope, isPlainBatch, batchEnvelope));
});

describe('Redactor.holdsNone', () => {
  const key = 'service_live_0123456789abcdefghijf3a9';
  const r = keyRedactor([key, 'service_pk_otherKEY12345678']);
  // texts made of pieces of the key, its escapes and ordinary characters
  const piece = fc.constantFrom(
    key,
    key.replace('_', '\\u005f'),
    key.replace('e', '%65'),
    key.slice(0, 20),
    key.slice(20),
    '\\u005f',
    '\\\\',
    '%5F',
    '_',
    'a',
    ' ',
    'é',
    '\\"',
  );
  const str = fc.array(piece, { maxLength: 6 }).map((p) => p.join(''));

  it('true only when walking the parsed body would change nothing', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(str, str), { maxLength: 4 }), (pairs) => {
        const text = `{${pairs.map(([k, v]) => `"${k}": {"note": "${v}"}`).join(', ')}}`;
        let value: unknown;
        try {
          value = JSON.parse(text);
        } catch {
          return; // not JSON: never parsed
        }
        if (!r.holdsNone(text)) return;
        expect(r.value(JSON.parse(text) as unknown)).toEqual(value);
      }),
      runs(3000),
    );
  });

  it('a body holding the key, literal or escaped, is walked', () => {
    for (const text of [
      `{"a":"${key}"}`,
      `{"a":"${key.replace('_', '\\u005f')}"}`,
      `{"a":"${key.replace('_', '%5F')}"}`,
    ]) {
      expect(r.holdsNone(text)).toBe(false);
    }
    expect(
      r.holdsNone('{"object":"batch","data":{"items":[{"index":0,"status":"created","data":{"id":"con_1"}}]}}'),
    ).toBe(true);
  });
});
