// Rows sent again by a rerun (issue 17): which rows, the chunk they make, the answer merged back; and the
// options fingerprint that makes a job.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ChunkReject, FinishedChunk } from '../../../src/import/shapes.js';
import { NO_RESULT_CODE } from '../../../src/import/send/outcome.js';
import { mergeAnswer, rowsToSendAgain, subChunk } from '../../../src/import/send/resend.js';
import { optionsOf } from '../../../src/import/plan.js';
import type { SpooledChunk } from '../../../src/import/check/spool.js';
import { runs } from '../../helpers/property.js';

/** An earlier answer of a chunk of `n` rows: per row created, rejected or unknown. */
const answer = fc
  .array(fc.constantFrom('created', 'rejected', 'unknown'), { minLength: 1, maxLength: 12 })
  .map((kinds): FinishedChunk => {
    const ids = kinds.map((k, i) => (k === 'created' ? `id_${i}` : null));
    const rejects: ChunkReject[] = kinds.flatMap((k, i) =>
      k === 'created' ? [] : [{ i, code: k === 'unknown' ? NO_RESULT_CODE : 'VALIDATION_FAILED', message: k }],
    );
    return { seq: 1, key: 'crm-batch-x', lines: kinds.map((_k, i) => i + 2), ids, rejects };
  });

const chunkOf = (done: FinishedChunk): SpooledChunk => {
  const records = done.lines.map((l) => ({ email: `r${l}@example.com` }));
  return {
    seq: 1,
    lines: done.lines,
    body: JSON.stringify(records),
    records: () => records,
    raws: () => done.lines.map((l) => [`r${l}`]),
  };
};

describe('rowsToSendAgain', () => {
  it('sends again exactly the rejected rows (never a created or unknown one), in order; all of them when the record changed; none without retry', () => {
    fc.assert(
      fc.property(answer, (done) => {
        const again = rowsToSendAgain(done, false, true);
        const rejected = done.rejects.filter((r) => r.code !== NO_RESULT_CODE).map((r) => r.i);
        expect(again ?? []).toEqual(rejected);
        expect(rowsToSendAgain(done, false, false)).toBeUndefined();
        expect(rowsToSendAgain(done, true, false)).toEqual(done.ids.map((_x, i) => i));
      }),
      runs(),
    );
  });
});

describe('subChunk and mergeAnswer', () => {
  it('the rows sent again, answered: their new answer replaces theirs, every other row keeps the earlier answer', () => {
    fc.assert(
      fc.property(answer, fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }), (done, ok) => {
        const idx = rowsToSendAgain(done, false, true);
        if (!idx) return;
        const whole = chunkOf(done);
        const sub = subChunk(whole, idx);
        expect(sub.lines).toEqual(idx.map((i) => whole.lines[i]));
        expect(JSON.parse(sub.body)).toEqual(idx.map((i) => whole.records()[i]));
        const ids = idx.map((_i, j) => (ok[j] ? `new_${j}` : null));
        const rejects = idx.flatMap((_i, j) => (ok[j] ? [] : [{ i: j, code: 'AGAIN', message: 'again' }]));
        const merged = mergeAnswer({ whole, idx, done }, ids, rejects);
        expect(merged.ids).toHaveLength(done.ids.length);
        merged.ids.forEach((id, i) => {
          const j = idx.indexOf(i);
          expect(id).toBe(j >= 0 ? ids[j] : done.ids[i]);
        });
        // every row not created has exactly one reject, in index order
        const notCreated = merged.ids.flatMap((id, i) => (id === null ? [i] : []));
        expect(merged.rejects.map((r) => r.i)).toEqual(notCreated);
      }),
      runs(),
    );
  });
});

describe('optionsOf (part of the job)', () => {
  const run = (maps: Array<[string, string]>, chunkSize = 100, format?: 'csv' | 'ndjson') => ({
    maps: new Map(maps),
    chunkSize,
    ...(format ? { format } : {}),
  });
  it('none for the defaults; the same for the same maps in any order; another for another map, chunk size or format', () => {
    expect(optionsOf(run([]))).toBeUndefined();
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(fc.string({ minLength: 1 }), fc.string()), {
          selector: ([k]) => k,
          minLength: 1,
          maxLength: 5,
        }),
        (maps) => {
          const a = optionsOf(run(maps));
          expect(a).toBeDefined();
          expect(optionsOf(run([...maps].reverse()))).toBe(a);
          expect(optionsOf(run(maps, 50))).not.toBe(a);
          expect(optionsOf(run(maps, 100, 'ndjson'))).not.toBe(a);
          expect(optionsOf(run([...maps.slice(1), [maps[0]![0], `${maps[0]![1]}x`]]))).not.toBe(a);
        },
      ),
      runs(),
    );
  });
});
