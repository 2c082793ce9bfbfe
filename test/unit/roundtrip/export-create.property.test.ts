// Issue 28, "Round trips are exact": an export of one CRM reconciled into another of the same fields and types
// (`crm batch RESOURCE FILE --match email`, every row a create) creates records with the values exported: objects
// and lists, numbers no double holds, text that looks like a number (`00501` stays text), every field name. A CSV or
// TSV cell is text to the contract: typed by what the target's records hold, sent trimmed, an empty one left out
// (helpers/round-trip.ts createdFromExport). In this process, against servers that keep values exactly
// (helpers/exact-crm.ts): a failure is the writer's (src/output/writers.ts) or the create's reading and
// typing (src/import/input/header.ts, match/plan-rows.ts createRecord, match/classify.ts valueToSend).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiRecord } from '../../../src/api/envelopes.js';
import { startExactCrm, type ExactCrm } from '../../helpers/exact-crm.js';
import { runs } from '../../helpers/property.js';
import {
  AWKWARD_NAMES,
  byEmail,
  canon,
  cases,
  createdFromExport,
  crmIn,
  freshFolder,
  held,
  ownFields,
  typedExport,
  TYPED_LOOKING_NAMES,
  type Format,
} from '../../helpers/round-trip.js';
import { tempDir } from '../../helpers/temp.js';

let from: ExactCrm;
let to: ExactCrm;
const root = tempDir('crm-rt-create-');
beforeAll(async () => {
  [from, to] = await Promise.all([startExactCrm(), startExactCrm({ idOf: (n) => `new_${n}` })]);
});
afterAll(() => Promise.all([from?.close(), to?.close()]));

/** Exports `list` from one CRM as `format`, reconciles the file into another holding `others`: each record created there. */
async function exportIntoAnother(list: ApiRecord[], others: ApiRecord[], format: Format): Promise<void> {
  from.clear();
  to.clear();
  from.put('contacts', held(list));
  to.put(
    'contacts',
    held(others, (i) => `oth_${i + 1}`),
  );
  const { dir, config } = freshFolder(root);
  const exported = await crmIn(['contacts', 'list', '--all', '-o', format], from.env(config));
  expect(exported.code, exported.err).toBe(0);
  const file = join(dir, `export.${format}`);
  writeFileSync(file, exported.out);
  const r = await crmIn(['batch', 'contacts', file, '--match', 'email', '-o', 'json'], to.env(config));
  expect(r.code, `exit ${r.code}: ${r.err}\n${file}:\n${exported.out}`).toBe(0);
  const created = byEmail(to.records('contacts'));
  const shown = (records: Iterable<ApiRecord>) => [...records].map((c) => canon(ownFields(c)));
  expect(shown(list.map((r) => created.get(String(r.email)) ?? {}))).toEqual(
    shown(list.map((r) => createdFromExport(r, format))),
  );
}

const RUNS = { ...runs(15), interruptAfterTimeLimit: 90_000, markInterruptAsFailure: true };

/** The records each property exports, by what they hold. */
const KINDS = {
  scalars: (format: Format) =>
    fc.asyncProperty(typedExport(['text', 'number', 'boolean']), ([list, others]) =>
      exportIntoAnother(list, others, format),
    ),
  'objects and lists': (format: Format) =>
    fc.asyncProperty(typedExport(['object', 'list']), ([list, others]) => exportIntoAnother(list, others, format)),
  'awkward field names': (format: Format) =>
    fc.asyncProperty(typedExport(['plain'], AWKWARD_NAMES), ([list, others]) =>
      exportIntoAnother(list, others, format),
    ),
  'names like tags:list': (format: Format) =>
    fc.asyncProperty(typedExport(['plain'], TYPED_LOOKING_NAMES), ([list, others]) =>
      exportIntoAnother(list, others, format),
    ),
};
/** the zip code, where the target's records hold the field as a number: always tried first */
const ZIP: [ApiRecord[], ApiRecord[]] = [[{ email: 'u0@x.test', zip: '00501' }], [{ email: 'o0@x.test', zip: 501 }]];

// scalars: big numbers, 00501, "37", "true", blank text, null, NFC/NFD; awkward field names: __proto__, constructor,
// a.b, spaces, commas, quotes, NFC and NFD spellings
const CASES = cases<keyof typeof KINDS>({
  csv: ['scalars', 'objects and lists', 'awkward field names', 'names like tags:list'],
  tsv: ['scalars', 'objects and lists', 'awkward field names', 'names like tags:list'],
  json: ['scalars', 'objects and lists', 'awkward field names', 'names like tags:list'],
  ndjson: ['scalars', 'objects and lists', 'awkward field names', 'names like tags:list'],
});

describe('crm contacts list -o FORMAT → crm batch contacts FILE --match email, into another CRM: creates the values exported', () => {
  it.each(CASES)(
    '-o %s, records holding %s',
    async (format, kind) => {
      const examples = kind === 'scalars' ? { examples: [[ZIP]] } : {};
      await fc.assert(KINDS[kind](format) as fc.IAsyncProperty<[[ApiRecord[], ApiRecord[]]]>, { ...RUNS, ...examples });
    },
    180_000,
  );
});
