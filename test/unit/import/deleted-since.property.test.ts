// A create sent again under an interrupted run's key and answered from the server's cache (send/outcome.ts
// `deletedSince`, issue 27): exactly its rows the read found no record for and the answer calls created are taken
// back as DELETED_SINCE; every other row is as the answer said, and the counts add up.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DELETED_SINCE, deletedSince } from '../../../src/import/send/outcome.js';
import { runs } from '../../helpers/property.js';

describe('deletedSince', () => {
  it('takes back exactly the created rows the read found absent', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ id: fc.option(fc.constantFrom('c1', 'c2', ''), { nil: null }), absent: fc.boolean() }), {
          minLength: 1,
          maxLength: 12,
        }),
        (rows) => {
          const lines = rows.map((_, i) => i + 2);
          const ids = rows.map((r) => r.id);
          const rejects = rows.flatMap((r, i) => (r.id === null ? [{ i, code: 'X', message: 'no' }] : []));
          const out = { ids, rejects, created: ids.filter((x) => x !== null).length };
          const absent = lines.filter((_, i) => rows[i]!.absent);
          const got = deletedSince(out, lines, absent);
          const gone = rows.flatMap((r, i) => (r.absent && r.id !== null ? [i] : []));
          expect(got.ids).toEqual(ids.map((id, i) => (gone.includes(i) ? null : id)));
          expect(got.rejects.filter((r) => r.code === DELETED_SINCE).map((r) => r.i)).toEqual(gone);
          expect(got.rejects.filter((r) => r.code === 'X')).toEqual(rejects);
          expect(got.created).toBe(got.ids.filter((x) => x !== null).length);
          expect(got.rejects.length + got.created).toBe(rows.length);
        },
      ),
      runs(),
    );
  });
});
