// Issue 28, CONTRACT §7c "Values come back exactly": the way-back files' writers against the readers of the
// commands crm prints for them, as pure functions (many examples, fast; the whole command lines are
// way-back.property.test.ts). An undo row (files/way-back.ts UndoFile) read as `--match id` reads it
// (input/reader.ts, input/header.ts) and diffed against the record (match/classify.ts diffRecord) puts
// every value back; a delete's backup line (files/backup.ts) read as a create reads it gives the record's own
// fields; a created file's row (CreatedFile) read by `--delete` (operation.ts) names the record's id.
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ApiRecord } from '../../../src/api/envelopes.js';
import { openBackup } from '../../../src/import/files/backup.js';
import { CreatedFile, UndoFile } from '../../../src/import/files/way-back.js';
import { objectToRecord, parseHeader, rowToRecord } from '../../../src/import/input/header.js';
import { openInput, type ReadRow } from '../../../src/import/input/reader.js';
import { diffRecord } from '../../../src/import/match/classify.js';
import { deleteOperation } from '../../../src/import/operation.js';
import { recordPath } from '../../../src/http/url.js';
import { setOwn } from '../../../src/util/set-own.js';
import { runs } from '../../helpers/property.js';
import {
  AWKWARD_IDS,
  AWKWARD_NAMES,
  canon,
  jsonValue,
  objectOf,
  ownFields,
  PLAIN_NAMES,
  plainText,
  SERVER_FIELDS,
} from '../../helpers/round-trip.js';
import { tempDir } from '../../helpers/temp.js';

const dir = tempDir('crm-rt-files-');
let n = 0;
const fresh = (name: string): string => join(dir, `${++n}-${name}`);

async function readRows(path: string): Promise<{ header: string[] | null; rows: ReadRow[] }> {
  const reader = await openInput(path);
  const rows: ReadRow[] = [];
  for await (const row of reader.rows) rows.push(row);
  return { header: reader.header, rows };
}

/** `fields` of a record, null where absent (an undo row says null for a field that was absent: §7b). */
const fieldsOf = (record: ApiRecord, fields: readonly string[]) =>
  Object.fromEntries(fields.map((f) => [f, canon(Object.hasOwn(record, f) ? record[f] : null)]));

/** What the record held before (a value, or absent), and what it holds now, for some fields. */
const beforeAndNow = (names: readonly string[], values: fc.Arbitrary<unknown>) =>
  fc.uniqueArray(
    fc.tuple(
      fc.constantFrom(...names),
      fc.option(values, { nil: undefined, freq: 5 }),
      fc.option(values, { nil: undefined, freq: 5 }),
    ),
    { selector: ([f]) => f, minLength: 1, maxLength: 4 },
  );

/** An undo row written for `fields`, read as `crm batch R FILE --match id` reads it, applied to `now`: the record after. */
async function undone(triples: ReadonlyArray<readonly [string, unknown, unknown]>): Promise<ApiRecord> {
  const fields = triples.map(([f]) => f);
  const path = fresh('changes.csv.undo.csv');
  const undo = await UndoFile.open(path, fields);
  await undo.add('con_1', objectOf(triples.map(([f, before]) => [f, before])));
  await undo.close();
  const { header, rows } = await readRows(path);
  const mapping = parseHeader(header!, new Map(), ['owner_id', 'id']);
  const row = rowToRecord(rows[0]!.cells!, mapping);
  if (!row.ok) throw new Error(`the undo row is invalid: ${row.reason}`);
  // as the match stage reads a row (match/plan-rows.ts): only an untyped column is a text cell, a `:json` one exact
  const text = (field: string) => mapping.columns.some((c) => !c.ignored && c.type === 'string' && c.field === field);
  const now = objectOf(triples.flatMap(([f, , value]) => (value === undefined ? [] : [[f, value] as const])));
  for (const c of diffRecord(row.record, now, ['id'], text)) setOwn(now, c.field, c.after);
  return now;
}

describe('an undo row (UndoFile) read back by --match id', () => {
  it.each([
    ['any JSON value (big numbers, 00501, "37", "true", blank text, null, NFC/NFD)', PLAIN_NAMES, jsonValue],
    ['any field name (__proto__, constructor, a.b, spaces, commas, quotes, NFC/NFD)', AWKWARD_NAMES, plainText],
  ] as const)('puts back exactly %s', async (_what, names, values) => {
    await fc.assert(
      fc.asyncProperty(beforeAndNow(names, values), async (triples) => {
        const fields = triples.map(([f]) => f);
        const before = objectOf(triples.flatMap(([f, v]) => (v === undefined ? [] : [[f, v] as const])));
        expect(fieldsOf(await undone(triples), fields)).toEqual(fieldsOf(before, fields));
      }),
      runs(200),
    );
  });

  // the cases, each on its own: text put back with its spaces, blank text, 00501 where a number is now
  it.each([
    ['note', ' x ', 'y'],
    ['zip', '', 'z'],
    ['tags', '00501', 5],
    ['score', 37, '37'],
    ['meta', { city: 'Paris' }, '{"city":"Paris"}'],
    ['amount', null, 'x'],
  ] as const)('puts back %s: %j (the record holds %j)', async (field, before, now) => {
    expect(fieldsOf(await undone([[field, before, now]]), [field])).toEqual({ [field]: canon(before) });
  });
});

/** A record as a backup holds it: the server's fields, and fields of `names`. */
const backedUp = (names: readonly string[], values: fc.Arbitrary<unknown>) =>
  fc
    .uniqueArray(fc.tuple(fc.constantFrom(...names), values), { selector: ([f]) => f, maxLength: 5 })
    .map((pairs) =>
      objectOf([
        ['id', 'con_1'],
        ['email', 'a@x.test'],
        ...pairs,
        ...SERVER_FIELDS.slice(1).map((f) => [f, 'x'] as const),
      ]),
    );

describe("a delete's backup line (openBackup) read back by crm batch R FILE.deleted.ndjson", () => {
  it.each([
    ['any JSON value', PLAIN_NAMES, jsonValue],
    ['any field name', AWKWARD_NAMES, plainText],
  ] as const)('gives the record its own fields exactly: %s', async (_what, names, values) => {
    await fc.assert(
      fc.asyncProperty(backedUp(names, values), async (record) => {
        const path = fresh('ids.csv.deleted.ndjson');
        const backup = await openBackup(path);
        await backup.keep(record);
        await backup.close();
        const { rows } = await readRows(path);
        const read = objectToRecord(rows[0]!.json);
        expect(read.ok && canon(read.record)).toBe(canon(ownFields(record)));
      }),
      runs(200),
    );
  });
});

const ID_TEXT = fc.oneof(
  fc.constantFrom(...AWKWARD_IDS.filter((id) => typeof id === 'string'), "''=x"),
  fc.string({
    unit: fc.constantFrom('a', '0', '-', '=', "'", ',', '"', '\n', 'é', 'e\u0301', '/', '%', ' '),
    minLength: 1,
  }),
);

describe('a created file row (CreatedFile) read back by --delete', () => {
  it('deletes the record of that id, whatever the id', async () => {
    await fc.assert(
      fc.asyncProperty(
        // (an id with spaces or line ends at its edges is read trimmed: no server gives one)
        ID_TEXT.filter((id) => id.trim() === id && id !== ''),
        async (id) => {
          const path = fresh('new.csv.created.csv');
          const created = await CreatedFile.open(path, ['email']);
          created.add(id, 2, ['a@x.test']);
          await created.close();
          const op = deleteOperation('contacts');
          const { header, rows } = await readRows(path);
          const row = rowToRecord(rows[0]!.cells!, parseHeader(header!, new Map(), op.keep));
          const plan = row.ok ? op.plan(row.record) : row;
          expect(plan.ok && plan.request.path).toBe(recordPath('contacts', id));
        },
      ),
      runs(300),
    );
  });
});
