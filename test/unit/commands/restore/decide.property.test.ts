// The restore's pure decisions (CONTRACT §10), property-tested: which record of the target a snapshot record is (never
// a guess), and how the ids its fields hold are translated.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decide, referenceOf, translate, type Seen } from '../../../../src/commands/restore/decide.js';

const id = fc.constantFrom('a', 'b', 'c', 'd', 'e');
const seen: fc.Arbitrary<Seen> = fc.record({
  id,
  mapped: fc.option(id, { nil: undefined }),
  mappedThere: fc.boolean(),
  sameIdThere: fc.boolean(),
  key: fc.option(fc.constantFrom('k1', 'k2'), { nil: undefined }),
  keyOthers: fc.nat(3),
  byKey: fc.option(
    fc.oneof(
      id.map((i) => ({ one: { id: i, record: {} } })),
      fc.uniqueArray(id, { minLength: 2, maxLength: 4 }).map((ids) => ({ ids })),
      fc.constant({ noId: true as const }),
    ),
    { nil: undefined },
  ),
  claimed: fc.func(fc.boolean()).map((f) => (t: string) => f(t)),
});

describe('decide', () => {
  it('takes the id map only for a record still there, its own id before a key, and matches only one free record of a key no other snapshot record needs', () => {
    fc.assert(
      fc.property(seen, (s) => {
        const d = decide(s);
        const candidates =
          s.byKey === undefined || 'noId' in s.byKey ? [] : 'ids' in s.byKey ? s.byKey.ids : [s.byKey.one.id];
        const free = candidates.filter((c) => !s.claimed(c));
        if (s.mapped !== undefined && s.mappedThere) expect(d).toEqual({ action: 'mapped', target: s.mapped });
        else if (s.sameIdThere) expect(d).toEqual({ action: 'found', target: s.id });
        else if (d.action === 'matched') {
          expect(free).toEqual([d.target]);
          expect(s.keyOthers).toBe(0);
          expect(s.key).toBeDefined();
        } else if (d.action === 'create')
          expect(s.key === undefined || s.byKey === undefined || (!('noId' in s.byKey) && free.length === 0)).toBe(
            true,
          );
        else expect(d.action).toBe('ambiguous');
      }),
    );
  });
});

describe('referenceOf', () => {
  it('names the collection of *_id, *_ids and plural fields, never owner_id', () => {
    expect(
      ['company_id', 'contact_ids', 'contacts', 'pipeline_id', 'owner_id', 'email', 'deal_idx'].map(referenceOf),
    ).toEqual(['companies', 'contacts', 'contacts', 'pipelines', undefined, undefined, undefined]);
  });
});

describe('translate', () => {
  const value = fc.oneof(
    fc.constantFrom('a', 'b', 'x'),
    fc.integer(),
    fc.constant(null),
    fc.array(fc.constantFrom('a', 'b', 'x'), { maxLength: 3 }),
    fc.dictionary(fc.string(), fc.string(), { maxKeys: 2 }),
  );
  const field = fc.constantFrom(
    'company_id',
    'contact_ids',
    'contacts',
    'name',
    'owner_id',
    'id',
    'created_at',
    'updated_at',
    'amount',
  );
  it('leaves out what the server sets, maps each id it has, keeps and counts the others, touches nothing else', () => {
    fc.assert(
      fc.property(fc.dictionary(field, value), (record) => {
        const lookup = (resource: string, ref: string) => (ref === 'x' ? undefined : `${resource}:${ref}`);
        const { record: out, kept } = translate(record, lookup);
        let unmapped = 0;
        for (const f of ['id', 'created_at', 'updated_at', 'owner_id']) expect(Object.hasOwn(out, f)).toBe(false);
        for (const [f, v] of Object.entries(record)) {
          if (['id', 'created_at', 'updated_at', 'owner_id'].includes(f)) continue;
          const resource = referenceOf(f);
          const one = (x: unknown) => {
            if (typeof x === 'number') return lookup(resource!, String(x)) ?? (unmapped++, x);
            if (typeof x !== 'string') return x;
            const t = lookup(resource!, x);
            if (t === undefined) unmapped++;
            return t ?? x;
          };
          const want = resource === undefined || v === null ? v : Array.isArray(v) ? v.map(one) : one(v);
          expect(out[f]).toEqual(want);
        }
        expect(kept).toBe(unmapped);
      }),
    );
  });
});
