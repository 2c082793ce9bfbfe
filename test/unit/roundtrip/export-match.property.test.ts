// Issue 28, "Round trips are exact": `crm RESOURCE list -o csv|tsv|json|ndjson` read back by `crm batch
// RESOURCE FILE --match email` (and `--match id`): an unedited export reconciled back plans nothing; and by
// `crm batch RESOURCE FILE --update`: every record stays exactly as it was. Run
// in this process (the whole command line) against a server that keeps every value exactly
// (helpers/exact-crm.ts), so what fails is crm's writer (src/output/writers.ts) or reader
// (src/import/input/*, header.ts typing, match/classify.ts comparison).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiRecord } from '../../../src/api/envelopes.js';
import { startExactCrm, type ExactCrm } from '../../helpers/exact-crm.js';
import { runs } from '../../helpers/property.js';
import {
  AWKWARD_NAMES,
  canon,
  cases,
  crmIn,
  deepValue,
  freshFolder,
  held,
  plainText,
  records,
  scalar,
  type Format,
  TYPED_LOOKING_NAMES,
} from '../../helpers/round-trip.js';
import { tempDir } from '../../helpers/temp.js';

let crm: ExactCrm;
const root = tempDir('crm-rt-export-');
beforeAll(async () => {
  crm = await startExactCrm();
});
afterAll(() => crm?.close());

/** The CRM holding `list`, and its contacts exported as `format` (`crm contacts list --all -o FORMAT`) to a file. */
async function exported(
  list: ApiRecord[],
  format: Format,
): Promise<{ file: string; env: Record<string, string>; text: string }> {
  crm.clear();
  crm.put('contacts', list);
  const { dir, config } = freshFolder(root);
  const env = crm.env(config);
  const r = await crmIn(['contacts', 'list', '--all', '-o', format], env);
  expect(r.code, r.err).toBe(0);
  const file = join(dir, `export.${format}`);
  writeFileSync(file, r.out);
  return { file, env, text: r.out };
}

const NOTHING = { create: 0, update: 0, invalid: 0, ambiguous: 0, duplicate: 0, changes: {} };

/**
 * Exports the CRM's contacts as `format` and reconciles the file back, by email and by id (dry runs): each plan's
 * actions other than `unchanged`, which must all be 0 (and no field changed).
 */
async function exportThenMatch(list: ApiRecord[], format: Format, fields = ['email', 'id']): Promise<void> {
  const { file, env, text } = await exported(list, format);
  for (const field of fields) {
    const r = await crmIn(['batch', 'contacts', file, '--match', field, '--dry-run', '-o', 'json'], env);
    expect(r.code, `--match ${field}: exit ${r.code}: ${r.err}\n${file}:\n${text}`).toBe(0);
    const plan = JSON.parse(r.out) as Record<string, unknown>;
    const { create, update, invalid, ambiguous, duplicate, changes } = plan;
    expect({ field, create, update, invalid, ambiguous, duplicate, changes }).toEqual({ field, ...NOTHING });
    expect(plan.unchanged).toBe(list.length);
  }
}

// two or three whole command lines per example: fewer examples than a pure function's
const RUNS = { ...runs(15), interruptAfterTimeLimit: 90_000, markInterruptAsFailure: true };

/** The records each property exports, by what they hold. */
const KINDS = {
  scalars: (format: Format) =>
    fc.asyncProperty(records({ values: scalar }), (list) => exportThenMatch(held(list), format)),
  'objects and lists': (format: Format) =>
    fc.asyncProperty(records({ values: deepValue }), (list) => exportThenMatch(held(list), format)),
  'awkward field names': (format: Format) =>
    fc.asyncProperty(records({ names: AWKWARD_NAMES, values: plainText }), (list) =>
      exportThenMatch(held(list), format, ['email']),
    ),
  'names like tags:list': (format: Format) =>
    fc.asyncProperty(records({ names: TYPED_LOOKING_NAMES, values: plainText }), (list) =>
      exportThenMatch(held(list), format),
    ),
  'ids that are numbers': (format: Format) =>
    fc.asyncProperty(records({ values: plainText }), (list) =>
      exportThenMatch(
        held(list, (i) => 101 + i),
        format,
      ),
    ),
};

// scalars: big numbers, 00501, "37", "true", blank text, null, NFC/NFD; awkward field names: __proto__, constructor,
// a.b, spaces, commas, quotes, NFC and NFD spellings
const CASES = cases<keyof typeof KINDS>({
  csv: ['scalars', 'objects and lists', 'awkward field names', 'names like tags:list', 'ids that are numbers'],
  tsv: ['scalars', 'objects and lists', 'awkward field names', 'names like tags:list', 'ids that are numbers'],
  json: ['scalars', 'objects and lists', 'awkward field names', 'names like tags:list', 'ids that are numbers'],
  ndjson: ['scalars', 'objects and lists', 'awkward field names', 'names like tags:list', 'ids that are numbers'],
});

describe('crm contacts list -o FORMAT → crm batch contacts FILE --match email, --match id: an unedited export plans nothing', () => {
  it.each(CASES)(
    '-o %s, records holding %s',
    async (format, kind) => {
      await fc.assert(KINDS[kind](format), RUNS);
    },
    180_000,
  );
});

/** Exports the CRM's contacts as `format` and updates them from the file (`--update`): every record as it was. */
async function exportThenUpdate(list: ApiRecord[], format: Format): Promise<void> {
  const { file, env, text } = await exported(list, format);
  const r = await crmIn(['batch', 'contacts', file, '--update'], env);
  expect(r.code, `--update: exit ${r.code}: ${r.err}\n${file}:\n${text}`).toBe(0);
  expect(crm.records('contacts').map((c) => canon(c))).toEqual(list.map((c) => canon(c)));
}

const UPDATES = {
  scalars: (format: Format) =>
    fc.asyncProperty(records({ values: scalar, sameFields: true }), (list) => exportThenUpdate(held(list), format)),
  'objects and lists': (format: Format) =>
    fc.asyncProperty(records({ values: deepValue, sameFields: true }), (list) => exportThenUpdate(held(list), format)),
  'awkward field names': (format: Format) =>
    fc.asyncProperty(records({ names: AWKWARD_NAMES, values: plainText, sameFields: true }), (list) =>
      exportThenUpdate(held(list), format),
    ),
  'names like tags:list': (format: Format) =>
    fc.asyncProperty(records({ names: TYPED_LOOKING_NAMES, values: plainText, sameFields: true }), (list) =>
      exportThenUpdate(held(list), format),
    ),
};

// csv/tsv scalars, objects and lists: an --update reads no record, and these generators give a field different kinds
// in different records (0 in one, false in another), which only a read can type: `--match id` is that read
const UPDATE_CASES = cases<keyof typeof UPDATES>({
  csv: ['awkward field names', 'names like tags:list'],
  tsv: ['awkward field names', 'names like tags:list'],
  json: ['scalars', 'objects and lists', 'awkward field names', 'names like tags:list'],
  ndjson: ['scalars', 'objects and lists', 'awkward field names', 'names like tags:list'],
});

describe('crm contacts list -o FORMAT → crm batch contacts FILE --update: an unedited export leaves every record as it was', () => {
  it.each(UPDATE_CASES)(
    '-o %s, records holding %s',
    async (format, kind) => {
      await fc.assert(UPDATES[kind](format), RUNS);
    },
    180_000,
  );
});
