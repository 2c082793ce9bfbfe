// A file's columns against the fields the CRM's records have (issue 18): which columns are reported, which are
// refused (near a known field) and which only warned of; and the first chunk failing alike (outcome.ts).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PartialFailureError, UsageError } from '../../../src/http/errors.js';
import {
  checkColumns,
  columnFields,
  columnsVerdict,
  mapFlag,
  nearestField,
  type ColumnField,
} from '../../../src/import/check/columns.js';
import { parseColumnMaps, parseHeader } from '../../../src/import/input/header.js';
import { failedAlike, NO_RESULT_CODE } from '../../../src/import/send/outcome.js';
import { runs } from '../../helpers/property.js';

const CONTACT_FIELDS = [
  'id',
  'email',
  'first_name',
  'last_name',
  'company_id',
  'owner_id',
  'title',
  'phone',
  'created_at',
];
const known = new Set(CONTACT_FIELDS);

describe('nearestField', () => {
  it.each([
    ['e_mail_address', 'email'],
    ['e_mail', 'email'],
    ['emial', 'email'],
    ['emails', 'email'],
    ['firstname', 'first_name'],
    ['frist_name', 'first_name'],
    ['job_title', 'title'],
    ['phone_number', 'phone'],
    ['last_name_of_person', 'last_name'],
  ])('%s → %s', (field, nearest) => {
    expect(nearestField(field, CONTACT_FIELDS)).toBe(nearest);
  });

  it.each(['shoe_size', 'notes', 'x', 'linkedin_url', ''])('%s → nothing near', (field) => {
    expect(nearestField(field, CONTACT_FIELDS)).toBeUndefined();
  });

  it('never suggests a field the server sets (a create leaves it out): "Account ID" is a new field, not id', () => {
    expect(checkColumns([{ column: 'Account ID', field: 'account_id', mapped: false }], known).unknown).toEqual([
      { column: 'Account ID', field: 'account_id' },
    ]);
  });
});

const field = fc.oneof(
  fc.constantFrom(...CONTACT_FIELDS, 'e_mail_address', 'emial', 'shoe_size', 'job_title', 'notes', 'first', 'name'),
  fc.stringMatching(/^[a-z][a-z0-9_]{0,12}$/),
);
const columns = fc.array(fc.record({ column: fc.string({ maxLength: 8 }), field, mapped: fc.boolean() }), {
  maxLength: 8,
});
const knownSet = fc.uniqueArray(field, { maxLength: 10 }).map((a) => new Set(a));

describe('checkColumns (properties)', () => {
  it('reports exactly the columns not given by --map whose field no record has, in file order; a suggestion is a known field the server does not set', () => {
    fc.assert(
      fc.property(columns, knownSet, (cols, k) => {
        const { unknown } = checkColumns(cols, k);
        const want = cols.filter((c) => !c.mapped && !k.has(c.field));
        expect(unknown.map((u) => [u.column, u.field])).toEqual(want.map((c) => [c.column, c.field]));
        for (const u of unknown) {
          if (u.nearest === undefined) continue;
          expect(k.has(u.nearest)).toBe(true);
          expect(['id', 'created_at', 'updated_at', 'owner_id']).not.toContain(u.nearest);
        }
      }),
      runs(),
    );
  });

  it('--map on a column, or its field appearing on a record, never adds a report (the check only ever relents)', () => {
    fc.assert(
      fc.property(columns, knownSet, fc.nat(), (cols, k, i) => {
        if (cols.length === 0) return;
        const before = checkColumns(cols, k).unknown.length;
        const c = cols[i % cols.length]!;
        const mapped: ColumnField[] = cols.map((x) => (x === c ? { ...x, mapped: true } : x));
        expect(checkColumns(mapped, k).unknown.length).toBeLessThanOrEqual(before);
        expect(checkColumns(cols, new Set([...k, c.field])).unknown.length).toBeLessThanOrEqual(before);
      }),
      runs(),
    );
  });

  it('the verdict refuses (a UsageError naming each such column with its --map) exactly when a column is near a known field; else at most a warning', () => {
    fc.assert(
      fc.property(columns, knownSet, (cols, k) => {
        const { unknown } = checkColumns(cols, k);
        const v = columnsVerdict(unknown, { resource: 'contacts', name: 'people.csv', csv: true });
        // an NDJSON file's keys are a program's: never refused as a typo, at most a warning
        expect(columnsVerdict(unknown, { resource: 'contacts', name: 'x.ndjson', csv: false }).error).toBeUndefined();
        const near = unknown.filter((u) => u.nearest !== undefined);
        if (near.length > 0) {
          expect(v.error).toBeInstanceOf(UsageError);
          expect(v.warning).toBeUndefined();
          for (const u of near) expect(v.error!.message).toContain(mapFlag(u.column, u.nearest!));
        } else {
          expect(v.error).toBeUndefined();
          expect(v.warning === undefined).toBe(unknown.length === 0);
          for (const u of unknown) expect(v.warning).toContain(JSON.stringify(u.column));
        }
      }),
      runs(),
    );
  });
});

describe('columnFields and the verdict', () => {
  it('a CSV header: the sent columns, --map marked, ignored and read-only columns left out', () => {
    const maps = parseColumnMaps(['E-mail Address=email', 'Old=']);
    const mapping = parseHeader(['id', 'First Name', 'E-mail Address', '_line', 'Old', 'Score:number'], maps);
    expect(columnFields({ mapping, ndjsonKeys: [] }, maps)).toEqual([
      { column: 'First Name', field: 'first_name', mapped: false },
      { column: 'E-mail Address', field: 'email', mapped: true },
      { column: 'Score:number', field: 'score', mapped: false },
    ]);
  });

  it("NDJSON keys: --map renames (and types), `_` keys and the server's fields left out; an update's id skipped", () => {
    const maps = parseColumnMaps(['mail=email:string', 'gone=']);
    const keys = ['mail', 'gone', '_line', 'id', 'Nickname'];
    expect(columnFields({ ndjsonKeys: keys }, maps)).toEqual([
      { column: 'mail', field: 'email', mapped: true },
      { column: 'Nickname', field: 'Nickname', mapped: false },
    ]);
    expect(columnFields({ mapping: parseHeader(['id', 'Title']), ndjsonKeys: [] }, new Map(), ['id'])).toEqual([
      { column: 'Title', field: 'title', mapped: false },
    ]);
  });

  it('the refusal names the column, its field, the suggestion and the --map to use; the hint how to keep it as a new field', () => {
    const { unknown } = checkColumns([{ column: 'E-mail Address', field: 'e_mail_address', mapped: false }], known);
    const v = columnsVerdict(unknown, { resource: 'contacts', name: 'people.csv', csv: true });
    expect(v.error!.message).toBe(
      'people.csv: a column fills a field that no contacts record has, near one that does; nothing was sent:\n' +
        '  "E-mail Address" (field e_mail_address): no contacts record has it;\n    did you mean email? use --map "E-mail Address=email"',
    );
    expect(v.error!.hint).toContain('--map "E-mail Address=e_mail_address" sends the column as it is');
    expect(v.error!.exitCode).toBe(2);
  });

  it('a --map flag that double quotes would not keep as it is is single-quoted', () => {
    expect(mapFlag('Price $', 'price')).toBe(`--map 'Price $=price'`);
    expect(mapFlag(`It's "x"`, 'x')).toBe(`--map 'It'\\''s "x"=x'`);
  });
});

describe('failedAlike: the first answered chunk', () => {
  const reject = (i: number, code = 'VALIDATION_FAILED', message = 'email: required') => ({ i, code, message });
  const none = { created: 0, skipped: 0, repeated: 0 };

  it('every row (two or more) failed with one same error: a PartialFailureError (exit 9) with the reason and the way on', () => {
    const err = failedAlike(3, [reject(0), reject(1), reject(2)], none)!;
    expect(err).toBeInstanceOf(PartialFailureError);
    expect(err.exitCode).toBe(9);
    expect(err.message).toBe(
      'stopped after the first chunk: its 3 rows all failed with the same error (VALIDATION_FAILED: email: required); the rest of the file was not sent (it would fail alike)',
    );
    expect(err.hint).toMatch(/--dry-run shows it/);
    expect(err.hint).toMatch(/nothing was created, so the corrected command \(another job\) sends every row/);
    expect(err.hint).toMatch(/rerun this same command: it sends the rejected rows again, then the rest/);
  });

  it('rows of the job created before it (an earlier run, a resumed job): no pattern, no stop; repeated rows are not created rows', () => {
    expect(failedAlike(2, [reject(0), reject(1)], { created: 0, skipped: 100, repeated: 0 })).toBeUndefined();
    expect(failedAlike(2, [reject(0), reject(1)], { created: 1, skipped: 0, repeated: 0 })).toBeUndefined();
    expect(failedAlike(2, [reject(0), reject(1)], { created: 0, skipped: 3, repeated: 3 })).toBeInstanceOf(
      PartialFailureError,
    );
  });

  it.each([
    ['one row (no pattern)', 1, [reject(0)]],
    ['a row created', 3, [reject(0), reject(2)]],
    ['another message', 2, [reject(0), reject(1, 'VALIDATION_FAILED', 'email: invalid_email')]],
    ['another code', 2, [reject(0), reject(1, 'CONFLICT')]],
    ['rows the answer said nothing about', 2, [reject(0, NO_RESULT_CODE, 'x'), reject(1, NO_RESULT_CODE, 'x')]],
  ])('%s: no stop', (_what, rows, rejects) => {
    expect(failedAlike(rows, rejects, none)).toBeUndefined();
  });
});
