// Issue 28, "Round trips are exact": the rows crm writes back out of an import read back as the rows' values.
// The rejects file (`<input>.rejects.csv` / `.rejects.ndjson`, files/outputs.ts createRejectsWriter), imported
// as crm says once the cause is fixed, sends exactly the records the first run sent; the `--results FILE`
// (createResultsWriter), reconciled back with `--match id`, plans nothing. In this process, against a server
// that keeps values exactly (helpers/exact-crm.ts).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiRecord } from '../../../src/api/envelopes.js';
import { RawNumber, stringifyJson } from '../../../src/json/exact-json.js';
import { quoteCsv } from '../../../src/output/csv.js';
import { startExactCrm, type ExactCrm } from '../../helpers/exact-crm.js';
import { runs } from '../../helpers/property.js';
import {
  AWKWARD_NAMES,
  canon,
  crmIn,
  deepValue,
  freshFolder,
  jsonValue,
  number,
  PLAIN_NAMES,
  plainText,
  records,
  scalar,
  text,
} from '../../helpers/round-trip.js';
import { tempDir } from '../../helpers/temp.js';

let crm: ExactCrm;
const root = tempDir('crm-rt-rows-');
beforeAll(async () => {
  crm = await startExactCrm();
});
afterAll(() => crm?.close());

const RUNS = { ...runs(12), interruptAfterTimeLimit: 90_000, markInterruptAsFailure: true };

/** The records the batch creates sent, in order, each as its exact text. */
const sent = (): string[] =>
  crm.writes.filter((w) => w.path.endsWith('/batch')).flatMap((w) => (w.body as ApiRecord[]).map((r) => canon(r)));

/** `input` imported while the server refuses every row, then its rejects file imported as crm says: the same records sent. */
async function rejectThenFix(input: string, env: Record<string, string>): Promise<void> {
  crm.refuseCreates = true;
  const first = await crmIn(['batch', 'contacts', input, '-o', 'json'], env);
  expect(first.code, first.err).toBe(9);
  const rejects = String((JSON.parse(first.out) as Record<string, unknown>).rejects_file);
  expect(first.err, 'the printed command').toContain(`crm batch contacts ${rejects}`);
  const refused = sent();
  expect(refused.length).toBeGreaterThan(0);
  crm.refuseCreates = false;
  crm.writes.length = 0;
  const again = await crmIn(['batch', 'contacts', rejects, '-o', 'json'], env);
  expect(again.code, again.err).toBe(0);
  expect(sent()).toEqual(refused);
}

describe('the rejects file → crm batch contacts FILE (the command crm prints)', () => {
  it.each([
    ['any JSON value', PLAIN_NAMES, jsonValue],
    ['any field name', AWKWARD_NAMES, plainText],
  ] as const)(
    'of an NDJSON input sends the rows as they were: %s',
    async (_what, names, values) => {
      await fc.assert(
        fc.asyncProperty(records({ names, values }), async (list) => {
          crm.clear();
          const { dir, config } = freshFolder(root);
          const input = join(dir, 'people.ndjson');
          writeFileSync(input, list.map((r) => `${stringifyJson(r)}\n`).join(''));
          await rejectThenFix(input, crm.env(config));
        }),
        RUNS,
      );
    },
    180_000,
  );

  /** A CSV as a person writes it: typed columns, any text in the untyped one (no leading `'`: that one is crm's guard). */
  const csvRows = fc.array(
    fc.tuple(
      text.filter((t) => !t.startsWith("'")),
      // (1e400 is refused by `:number` before anything is sent: the export properties find that)
      number.filter((x) => !(x instanceof RawNumber && x.text === '1e400')),
      fc.boolean(),
      fc.array(fc.stringMatching(/^[a-z0-9 ]{1,5}$/), { maxLength: 3 }),
      jsonValue,
    ),
    { minLength: 1, maxLength: 4 },
  );

  it('of a CSV input with typed columns (:number, :boolean, :list, :json) sends the rows as they were', async () => {
    await fc.assert(
      fc.asyncProperty(csvRows, async (rows) => {
        crm.clear();
        const { dir, config } = freshFolder(root);
        const input = join(dir, 'people.csv');
        const lines = rows.map(([note, score, active, tags, meta], i) =>
          [`u${i}@x.test`, note, stringifyJson(score)!, String(active), tags.join(';'), stringifyJson(meta)!]
            .map(quoteCsv)
            .join(','),
        );
        writeFileSync(input, ['email,note,score:number,active:boolean,tags:list,meta:json', ...lines].join('\r\n'));
        await rejectThenFix(input, crm.env(config));
      }),
      RUNS,
    );
  }, 180_000);
});

describe('--results FILE → crm batch contacts FILE --match id', () => {
  it.each([
    ['results.csv', 'scalars', scalar],
    ['results.csv', 'objects and lists', deepValue],
    ['results.ndjson', 'any JSON value', jsonValue],
  ] as const)(
    '%s of an NDJSON import holding %s plans nothing',
    async (name, _what, values) => {
      await fc.assert(
        fc.asyncProperty(records({ values }), async (list) => {
          crm.clear();
          const { dir, config } = freshFolder(root);
          const env = crm.env(config);
          const input = join(dir, 'people.ndjson');
          const results = join(dir, name);
          writeFileSync(input, list.map((r) => `${stringifyJson(r)}\n`).join(''));
          const made = await crmIn(['batch', 'contacts', input, '--results', results], env);
          expect(made.code, made.err).toBe(0);
          const r = await crmIn(['batch', 'contacts', results, '--match', 'id', '--dry-run', '-o', 'json'], env);
          expect(r.code, r.err).toBe(0);
          const plan = JSON.parse(r.out) as Record<string, unknown>;
          const { create, update, invalid, changes } = plan;
          expect({ create, update, invalid, changes }).toEqual({ create: 0, update: 0, invalid: 0, changes: {} });
        }),
        RUNS,
      );
    },
    180_000,
  );

  it("results.ndjson of rows carrying ids (an export): each line's id is the new record's, the old one its _input_id (issue 28: the old id won)", async () => {
    crm.clear();
    const { dir, config } = freshFolder(root);
    const env = crm.env(config);
    const input = join(dir, 'exported.ndjson');
    const results = join(dir, 'results.ndjson');
    const old = ['con_gone_1', 'con_gone_2'];
    writeFileSync(input, old.map((id, i) => `${stringifyJson({ id, email: `old${i}@x.test`, n: i })}\n`).join(''));
    const made = await crmIn(['batch', 'contacts', input, '--results', results], env);
    expect(made.code, made.err).toBe(0);
    const lines = readFileSync(results, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { id: string; _input_id: string; email: string });
    expect(lines.map((l) => l._input_id)).toEqual(old);
    for (const l of lines) expect(old).not.toContain(l.id);
    const r = await crmIn(['batch', 'contacts', results, '--match', 'id', '--dry-run', '-o', 'json'], env);
    expect(r.code, r.err).toBe(0);
    const { create, update, invalid, changes } = JSON.parse(r.out) as Record<string, unknown>;
    expect({ create, update, invalid, changes }).toEqual({ create: 0, update: 0, invalid: 0, changes: {} });
  }, 60_000);
});
