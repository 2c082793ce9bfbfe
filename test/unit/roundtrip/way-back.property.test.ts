// Issue 28 and CONTRACT §7c, "Values come back exactly": the ways back crm writes, read back by the command it
// prints for them, put back what was there. `<input>.undo.csv` → `crm batch R FILE --match id`;
// `<input>.created.csv` → `--delete`; a delete's backup `<input>.deleted.ndjson` → `crm batch R FILE` (the
// records again), then its `<input>.owners.csv` → `--match id` (their owners again). In this process, against a
// server that keeps values exactly (helpers/exact-crm.ts): a failure is crm's (src/import/files/way-back.ts,
// files/backup.ts, the readers in src/import/input/, match/classify.ts).
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiRecord } from '../../../src/api/envelopes.js';
import { stringifyJson } from '../../../src/json/exact-json.js';
import { startExactCrm, type ExactCrm } from '../../helpers/exact-crm.js';
import { runs } from '../../helpers/property.js';
import {
  AWKWARD_IDS,
  AWKWARD_NAMES,
  byEmail,
  canon,
  crmIn,
  deepValue,
  freshFolder,
  held,
  objectOf,
  ownFields,
  PLAIN_NAMES,
  plainText,
  records,
  scalar,
  type InProcess,
} from '../../helpers/round-trip.js';
import { tempDir } from '../../helpers/temp.js';

/** Owners as a server may name them. */
const AWKWARD_OWNERS = ['usr_2', '-3', '=x', "'x", 'a,b', 'q"x', 'Caf\u00e9', 'Cafe\u0301', 'usr 4', '00501'];

let crm: ExactCrm;
const root = tempDir('crm-rt-way-back-');
beforeAll(async () => {
  crm = await startExactCrm();
});
afterAll(() => crm?.close());

const RUNS = { ...runs(12), interruptAfterTimeLimit: 90_000, markInterruptAsFailure: true };

/** `crm ARGS -o json` that must exit 0: its JSON summary. */
async function ok(args: string[], env: Record<string, string>): Promise<Record<string, unknown>> {
  const r: InProcess = await crmIn([...args, '-o', 'json'], env);
  expect(r.code, `crm ${args.join(' ')}: exit ${r.code}\n${r.err}`).toBe(0);
  return JSON.parse(r.out) as Record<string, unknown>;
}

/** Each record's `fields`, null where absent (an undo clears a field that was absent: §7b). */
const fieldsOf = (record: ApiRecord | undefined, fields: readonly string[]) =>
  Object.fromEntries(
    fields.map((f) => [f, canon(record !== undefined && Object.hasOwn(record, f) ? record[f] : null)]),
  );

/** Records, and for each a change of some fields (to any value, null included) as an NDJSON row of `--match id`. */
const recordsAndChanges = (names: readonly string[], values: fc.Arbitrary<unknown>) =>
  records({ names, values }).chain((list) =>
    fc.tuple(
      fc.constant(list),
      fc.array(fc.uniqueArray(fc.tuple(fc.constantFrom(...names), values), { selector: ([k]) => k, maxLength: 3 }), {
        minLength: list.length,
        maxLength: list.length,
      }),
    ),
  );

/**
 * The CRM holds `list`; a `--match id` run changes `changes`; its undo file, applied as crm prints it, puts every
 * field back (one that was absent is null); applied again, it plans nothing.
 */
async function changeThenUndo(list: ApiRecord[], changes: Array<Array<[string, unknown]>>): Promise<void> {
  crm.clear();
  const before = held(list);
  crm.put('contacts', before);
  const { dir, config } = freshFolder(root);
  const env = crm.env(config);
  const input = join(dir, 'changes.ndjson');
  const rows = before.map((r, i) => stringifyJson(objectOf([['id', r.id], ...changes[i]!]))).join('\n');
  writeFileSync(input, `${rows}\n`);
  const forward = await ok(['batch', 'contacts', input, '--match', 'id'], env);
  if (typeof forward.undo_file !== 'string') return; // nothing changed, nothing to put back
  await ok(['batch', 'contacts', forward.undo_file, '--match', 'id'], env);
  const now = new Map(crm.records('contacts').map((r) => [r.id, r]));
  const touched = [...new Set(changes.flat().map(([f]) => f))];
  expect(before.map((r) => fieldsOf(now.get(r.id), touched))).toEqual(before.map((r) => fieldsOf(r, touched)));
  const again = await ok(['batch', 'contacts', forward.undo_file, '--match', 'id', '--dry-run'], env);
  expect({ update: again.update, changes: again.changes }).toEqual({ update: 0, changes: {} });
}

describe('<input>.undo.csv → crm batch contacts FILE --match id', () => {
  it('puts back every scalar exactly (big numbers, 00501, "37", "true", blank text, null, NFC/NFD)', async () => {
    await fc.assert(
      fc.asyncProperty(recordsAndChanges(PLAIN_NAMES, scalar), ([list, changes]) => changeThenUndo(list, changes)),
      // text with its spaces, blank text, 00501 where a number is now: always tried first
      {
        ...RUNS,
        examples: [
          [
            [
              [{ email: 'u0@x.test', note: ' x ', zip: '', tags: '00501' }],
              [
                [
                  ['note', 'y'],
                  ['zip', 'z'],
                  ['tags', 5],
                ],
              ],
            ],
          ],
        ],
      },
    );
  }, 180_000);

  it('puts back objects and lists exactly, nested', async () => {
    await fc.assert(
      fc.asyncProperty(recordsAndChanges(PLAIN_NAMES, deepValue), ([list, changes]) => changeThenUndo(list, changes)),
      RUNS,
    );
  }, 180_000);

  it('puts back fields with awkward names (__proto__, constructor, a.b, spaces, commas, quotes, NFC/NFD)', async () => {
    await fc.assert(
      fc.asyncProperty(recordsAndChanges(AWKWARD_NAMES, plainText), ([list, changes]) => changeThenUndo(list, changes)),
      RUNS,
    );
  }, 180_000);
});

describe('<input>.created.csv → crm batch contacts FILE --delete', () => {
  it('deletes exactly the records the run created, whatever their ids (formula signs, commas, quotes, NFD, numbers)', async () => {
    const made = records({ values: plainText }).chain((list) =>
      fc.tuple(
        fc.constant(list),
        fc.uniqueArray(fc.constantFrom(...AWKWARD_IDS), { minLength: list.length, maxLength: list.length }),
      ),
    );
    await fc.assert(
      fc.asyncProperty(made, async ([list, ids]) => {
        crm.clear();
        const others = held([{ email: 'other@x.test' }], () => 'other_1');
        crm.put('contacts', others);
        crm.nextIds.push(...ids);
        const { dir, config } = freshFolder(root);
        const env = crm.env(config);
        const input = join(dir, 'new.ndjson');
        writeFileSync(input, list.map((r) => `${stringifyJson(r)}\n`).join(''));
        const created = await ok(['batch', 'contacts', input, '--match', 'email'], env);
        expect(crm.records('contacts')).toHaveLength(list.length + 1);
        await ok(['batch', 'contacts', String(created.created_file), '--delete', '--yes'], env);
        expect(crm.records('contacts').map((r) => canon(r))).toEqual(others.map((r) => canon(r)));
      }),
      RUNS,
    );
  }, 180_000);
});

/**
 * The CRM holds `list` (ids and owners as given); `crm contacts list -o csv --fields id` → `--delete`; its backup
 * imported as crm says (`crm batch contacts FILE.deleted.ndjson`) makes each record again with its values, and the
 * owners file it writes (`--match id`) gives each its owner back.
 */
async function deleteThenRestore(
  list: ApiRecord[],
  ids: Array<string | number>,
  owners: string[],
  /** restore from the name a later delete of the same file moves the backup aside to */
  aside = false,
): Promise<void> {
  crm.clear();
  const before = held(list, (i) => ids[i]).map((r, i) => objectOf([...Object.entries(r), ['owner_id', owners[i]]]));
  crm.put('contacts', before);
  const { dir, config } = freshFolder(root);
  const env = crm.env(config);
  const listed = await crmIn(['contacts', 'list', '--all', '-o', 'csv', '--fields', 'id'], env);
  expect(listed.code, listed.err).toBe(0);
  const idsFile = join(dir, 'ids.csv');
  writeFileSync(idsFile, listed.out);
  const deleted = await ok(['batch', 'contacts', idsFile, '--delete', '--yes'], env);
  expect(crm.records('contacts')).toEqual([]);
  let backup = String(deleted.backup_file);
  if (aside) renameSync(backup, (backup = backup.replace(/\.ndjson$/, '.20260102T030405Z.ndjson')));
  const restored = await ok(['batch', 'contacts', backup], env);
  const again = byEmail(crm.records('contacts'));
  const values = (r: ApiRecord | undefined) => canon(r === undefined ? null : ownFields(r));
  expect(before.map((r) => values(again.get(String(r.email))))).toEqual(before.map(values));
  await ok(['batch', 'contacts', String(restored.owners_file), '--match', 'id'], env);
  const owned = byEmail(crm.records('contacts'));
  expect(before.map((r) => owned.get(String(r.email))?.owner_id)).toEqual(owners);
}

const deletable = (names: readonly string[], values: fc.Arbitrary<unknown>) =>
  records({ names, values }).chain((list) =>
    fc.tuple(
      fc.constant(list),
      fc.uniqueArray(fc.constantFrom(...AWKWARD_IDS), { minLength: list.length, maxLength: list.length }),
      fc.array(fc.constantFrom(...AWKWARD_OWNERS), { minLength: list.length, maxLength: list.length }),
    ),
  );

describe('a delete backup <input>.deleted.ndjson → crm batch contacts FILE, then <input>.owners.csv → --match id', () => {
  it('every record comes back with its scalars (big numbers, 00501, "37", "true", blank, null, NFC/NFD) and its owner', async () => {
    await fc.assert(
      fc.asyncProperty(deletable(PLAIN_NAMES, scalar), (args) => deleteThenRestore(...args)),
      RUNS,
    );
  }, 180_000);

  it('every record comes back with its objects and lists, nested (from <input>.deleted.<time>.ndjson, where a later delete moves it)', async () => {
    await fc.assert(
      fc.asyncProperty(deletable(PLAIN_NAMES, deepValue), (args) => deleteThenRestore(...args, true)),
      RUNS,
    );
  }, 180_000);

  it('every record comes back with its awkward field names (__proto__, constructor, a.b, spaces, commas, quotes, NFC/NFD)', async () => {
    await fc.assert(
      fc.asyncProperty(deletable(AWKWARD_NAMES, plainText), (args) => deleteThenRestore(...args)),
      RUNS,
    );
  }, 180_000);
});
