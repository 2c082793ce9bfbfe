// written-ids.ts, what keeps a collection's file free of repeats (issue 28): pages of records whose ids repeat
// (any JSON type; a number and a string of the same digits are two ids), written through `fresh` with the file
// reopened between pages (a resumed run rebuilds the ids from the file): every id once, its first read kept,
// records without an id always written. With a table whose hashes collide all the time, equality is still
// decided by the ids' text, never by a hash.
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { idJson, WrittenIds, type IdTable } from '../../../../src/commands/snapshot/written-ids.js';
import { RawNumber, stringifyJson } from '../../../../src/json/exact-json.js';
import { runs } from '../../../helpers/property.js';
import { tempDir } from '../../../helpers/temp.js';

/** A table whose "hash" is the text's length modulo 3: most ids share one with another. */
function collidingTable(): IdTable {
  const slots = new Map<number, number>();
  return { get: (text) => slots.get(text.length % 3), set: (text, value) => void slots.set(text.length % 3, value) };
}

const ids = fc.oneof(
  fc.constantFrom('101', 101, '1', 1, 'a', 'b', null, true, false, { k: 1 }, [1], [1, 2], 'con_x', 1.5),
  fc.constant(new RawNumber('12345678901234567891')),
  fc.constant(new RawNumber('12345678901234567892')),
  fc.nat(20),
  fc.string({ maxLength: 3 }),
);
const record = fc.oneof(
  { weight: 9, arbitrary: fc.record({ id: ids, v: fc.nat(5) }) },
  { weight: 1, arbitrary: fc.record({ v: fc.nat(5) }) }, // no id: never a repeat
);

describe('WrittenIds', () => {
  it('every id once (by its JSON text), its first read kept, across reopenings, whatever the hashes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(record, { maxLength: 6 }), { minLength: 1, maxLength: 8 }),
        fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
        fc.boolean(),
        async (pages, reopenAfter, colliding) => {
          const file = join(tempDir('crm-written-ids-'), 'part');
          writeFileSync(file, '');
          const table = colliding ? collidingTable : undefined;
          let written = await WrittenIds.of(file, table);
          let bytes = 0;
          for (const [p, page] of pages.entries()) {
            const { text, count } = written.fresh(page, bytes);
            appendFileSync(file, text);
            bytes += Buffer.byteLength(text);
            expect(text.split('\n').filter(Boolean)).toHaveLength(count);
            if (reopenAfter[p]) {
              await written.close();
              written = await WrittenIds.of(file, table);
            }
          }
          await written.close();

          // what the file must hold: each record in order, but an id already seen skipped
          const seen = new Set<string>();
          const expected = pages.flat().filter((r) => {
            const id = idJson(r);
            if (id === undefined) return true;
            if (seen.has(id)) return false;
            seen.add(id);
            return true;
          });
          expect(readFileSync(file, 'utf8')).toBe(expected.map((r) => `${stringifyJson(r)}\n`).join(''));
        },
      ),
      runs(150),
    );
  });

  it('a number id and a string id of the same digits are two records; two reads of one are one', async () => {
    const file = join(tempDir('crm-written-ids-'), 'part');
    writeFileSync(file, '');
    const written = await WrittenIds.of(file, collidingTable);
    const first = written.fresh(
      [
        { id: 101, n: 1 },
        { id: '101', n: 2 },
        { id: 101, n: 3 },
      ],
      0,
    );
    expect(first.count).toBe(2);
    appendFileSync(file, first.text);
    const again = written.fresh([{ id: '101', n: 4 }, { id: 101, n: 5 }, { id: 102 }], Buffer.byteLength(first.text));
    expect(again.text).toBe('{"id":102}\n');
    await written.close();
  });
});
