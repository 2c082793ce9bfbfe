// The window's units are found by a binary search on their sending order (window-units.ts): any sequence of sends,
// answers, drops and prunes leaves the same units, with the same answer times, as the linear search it replaced.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addUnit, dropUnit, keepUsed, markAnswered, type Unit } from '../../../src/http/window-units.js';

type Op = { kind: 'send' } | { kind: 'answer' | 'drop'; pick: number; at: number } | { kind: 'keep'; used: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.constant<Op>({ kind: 'send' }),
  fc.record({ kind: fc.constantFrom('answer' as const, 'drop' as const), pick: fc.nat(60), at: fc.nat(1e6) }),
  fc.record({ kind: fc.constant('keep' as const), used: fc.nat(40) }),
);

describe('window units', () => {
  it('are found by seq as a search from the front finds them, whatever was sent, answered, dropped or pruned', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
        const [fast, slow]: [Unit[], Unit[]] = [[], []];
        let seq = 0;
        for (const o of ops) {
          if (o.kind === 'send') {
            seq++;
            addUnit(fast, seq);
            slow.push({ seq });
          } else if (o.kind === 'keep') {
            keepUsed(fast, seq, o.used);
            keepUsed(slow, seq, o.used);
          } else {
            const target = seq === 0 ? 1 : (o.pick % (seq + 2)) + 1; // one sent, or one never sent
            if (o.kind === 'answer') {
              markAnswered(fast, target, o.at);
              const u = slow.find((x) => x.seq === target);
              if (u) u.answeredAt = o.at;
            } else {
              dropUnit(fast, target);
              const i = slow.findIndex((x) => x.seq === target);
              if (i >= 0) slow.splice(i, 1);
            }
          }
          expect(fast).toEqual(slow);
        }
      }),
    );
  });
});
