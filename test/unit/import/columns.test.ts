// A file's columns against the fields the CRM's records have (issue 18): which columns are reported, which are
// refused (near a known field) and which only warned of; and the first chunk failing alike (outcome.ts).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PartialFailureError, UsageError } from '../../../src/http/errors.js';
import {
  checkColumns,
  checkMatchColumns,
  idsFromNames,
  columnFields,
  columnsVerdict,
  mapFlag,
  namesId,
  nearestField,
  type ColumnField,
} from '../../../src/import/check/columns.js';
import { parseColumnMaps, parseHeader } from '../../../src/import/input/header.js';
import { ValueKinds } from '../../../src/import/check/value-kinds.js';
import { failedAlike, NO_RESULT_CODE } from '../../../src/import/send/outcome.js';
import { runs } from '../../helpers/property.js';
import { RawNumber } from '../../../src/json/exact-json.js';
import { typedByKind } from '../../../src/import/input/typing.js';

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
/** no value seen: every field fits (the kinds play no part) */
const anyKind = { kinds: new ValueKinds() };

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

  it('an id field only for a column naming an id (the trial: Company → company_id wrote names over ids)', () => {
    const known = ['email', 'company_id', 'owner_id', 'companyId', 'paid'];
    for (const field of ['company', 'compnay', 'owner']) expect(nearestField(field, known), field).toBeUndefined();
    expect(nearestField('company__id', known)).toBe('company_id');
    expect(nearestField('compnay_id', known)).toBe('company_id');
    expect(nearestField('paids', known)).toBe('paid');
  });

  it('a suggestion names an id exactly when the column does (property)', () => {
    const word = fc.constantFrom('company', 'owner', 'deal', 'id', 'ID', 'Id', 'name', 'paid', 'email', '_', ' ');
    fc.assert(
      fc.property(
        fc.array(word, { minLength: 1, maxLength: 4 }),
        fc.uniqueArray(
          fc.array(word, { minLength: 1, maxLength: 3 }).map((w) => w.join('')),
          { maxLength: 8 },
        ),
        (parts, known) => {
          const field = parts.join('');
          const hit = nearestField(field, known);
          if (hit !== undefined) expect(namesId(hit), `${field} → ${hit}`).toBe(namesId(field));
        },
      ),
      runs(),
    );
  });

  it('never suggests a field the server sets (a create leaves it out): "Account ID" is a new field, not id', () => {
    expect(
      checkColumns([{ column: 'Account ID', field: 'account_id', mapped: false }], known, anyKind).unknown,
    ).toEqual([{ column: 'Account ID', field: 'account_id' }]);
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
        const { unknown } = checkColumns(cols, k, anyKind);
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
        const before = checkColumns(cols, k, anyKind).unknown.length;
        const c = cols[i % cols.length]!;
        const mapped: ColumnField[] = cols.map((x) => (x === c ? { ...x, mapped: true } : x));
        expect(checkColumns(mapped, k, anyKind).unknown.length).toBeLessThanOrEqual(before);
        expect(checkColumns(cols, new Set([...k, c.field]), anyKind).unknown.length).toBeLessThanOrEqual(before);
      }),
      runs(),
    );
  });

  it('the verdict refuses (a UsageError naming each such column with its --map) exactly when a column is near a known field; else at most a warning', () => {
    fc.assert(
      fc.property(columns, knownSet, (cols, k) => {
        const { unknown } = checkColumns(cols, k, anyKind);
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
    const { unknown } = checkColumns(
      [{ column: 'E-mail Address', field: 'e_mail_address', mapped: false }],
      known,
      anyKind,
    );
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

/** A ValueKinds that has seen `rows` (each a record as the check pass sends it). */
function seen(...rows: Array<Record<string, unknown>>): ValueKinds {
  const kinds = new ValueKinds();
  for (const r of rows) kinds.see(r);
  return kinds;
}
/** the sandbox's contacts: score a number, vip a boolean, tags a list, the rest text */
const SAMPLES: Record<string, unknown> = { score: 0, vip: false, tags: [], address: {} };
const contacts = new Set([...CONTACT_FIELDS, 'score', 'vip', 'tags', 'address']);
const sample = (f: string): unknown => SAMPLES[f];

describe('a suggestion is near in kind, not only in spelling (issue 29)', () => {
  it('a short name is never suggested for one letter changed (Zip is not vip); letters moved, added or left out are', () => {
    expect(nearestField('zip', ['vip', 'email'])).toBeUndefined();
    expect(nearestField('tag', ['tab'])).toBeUndefined();
    expect(nearestField('nmae', ['name'])).toBe('name');
    expect(nearestField('tag', ['tags'])).toBe('tags');
    expect(nearestField('emal', ['email'])).toBe('email');
    // issue 28's trial: `a.b` (field a_b) was offered `b`, and the pasted --map wrote its values into b
    expect(nearestField('a_b', ['b', 'email'])).toBeUndefined();
    expect(nearestField('ab', ['a'])).toBeUndefined();
  });

  it('Zip (postal codes) near vip (true/false): no suggestion, a new field with the way to name it or leave it out', () => {
    const kinds = seen({ zip: '02139', email: 'a@example.com' }, { zip: '94110' });
    const { unknown } = checkColumns([{ column: 'Zip', field: 'zip', mapped: false }], contacts, { kinds, sample });
    expect(unknown).toEqual([{ column: 'Zip', field: 'zip' }]);
    const v = columnsVerdict(unknown, { resource: 'contacts', name: 'people.csv', csv: true });
    expect(v.error).toBeUndefined();
    expect(v.warning).toContain('"Zip" (field zip): no contacts record has it yet');
    expect(v.warning).toContain('--map "Zip=FIELD"');
    expect(v.warning).toContain('--map "Zip="');
  });

  it.each([
    ['a text column near a number field', 'scor', ['high', '3'], 'score', undefined],
    ['a column of numbers near a number field', 'scor', ['3', '40'], 'score', 'score'],
    ['yes/no near a true/false field (sent as text)', 'vips', ['yes', 'no'], 'vip', undefined],
    ['true/false near a true/false field', 'vips', ['true', 'false'], 'vip', 'vip'],
    ['text near a list field', 'tgas', ['vip'], 'tags', undefined],
    ['JSON lists near a list field', 'tgas', ['["vip"]', '[]'], 'tags', 'tags'],
    ['a typed number near a text field', 'emial', [5], 'email', undefined],
    ['text, numbers among it, near a text field', 'emial', ['a@example.com', '37'], 'email', 'email'],
    ['a column with no value near any field', 'scor', [], 'score', 'score'],
  ])('%s', (_what, field, values, near, want) => {
    expect(nearestField(field, [near])).toBe(near);
    const kinds = seen(...values.map((v) => ({ [field]: v })));
    const { unknown } = checkColumns([{ column: field, field, mapped: false }], contacts, { kinds, sample });
    expect(unknown[0]!.nearest).toBe(want);
  });

  it.each([
    ['37', true],
    [' 37 ', true],
    ['-1.5', true],
    ['0', true],
    ['-0', false],
    ['02139', false],
    ['1.0', false],
    ['1e5', false],
  ])('a cell %j is sent as a number to a number field: %s (as typedByKind reads it)', (cell, number) => {
    expect(seen({ f: cell }).fits('f', 0)).toBe(number);
    expect(typeof typedByKind(cell, 0) !== 'string').toBe(number);
  });

  it('two columns near a field each: "each near one that does"', () => {
    const cols = ['emial', 'frist_name'].map((f) => ({ column: f, field: f, mapped: false }));
    const v = columnsVerdict(checkColumns(cols, known, anyKind).unknown, {
      resource: 'contacts',
      name: 'p.csv',
      csv: true,
    });
    expect(v.error!.message).toMatch(
      /^p\.csv: 2 columns fill fields that no contacts record has, each near one that does; nothing was sent:\n/,
    );
    expect(v.error!.hint).toContain('--map "emial=" leaves it out');
  });
});

/** the kind a value is sent as: a test's own reading, apart from ValueKinds */
const kindOfSent = (v: unknown): string =>
  v === undefined || typeof v === 'string'
    ? 'text'
    : Array.isArray(v)
      ? 'list'
      : typeof v === 'object' && v !== null && !(v instanceof RawNumber)
        ? 'object'
        : typeof v === 'number' || v instanceof RawNumber
          ? 'number'
          : typeof v;

describe('a suggestion is near in kind (properties)', () => {
  const names = [
    'email',
    'emails',
    'emial',
    'score',
    'scores',
    'vip',
    'vips',
    'zip',
    'tags',
    'tagz',
    'adress',
    'address',
  ];
  // a column's values mostly of one sort (so that a whole column can read as a number, a list, …), or of any
  const POOLS: unknown[][] = [
    ['37', '0', '-0', '1.0', ' 37 ', '1e5', '02139', '94110', '-1.5', '12345678901234567890', 37],
    ['true', 'false', 'TRUE', 'yes', true],
    ['["a"]', '[]', '{"a":1}', '[1', 'null', ['a'], { a: 1 }],
    ['x', 'a@example.com', '', null],
  ];
  const column = fc
    .constantFrom(...POOLS, POOLS.flat())
    .chain((pool) => fc.array(fc.constantFrom(...pool), { minLength: 1, maxLength: 5 }));
  const kind = fc.constantFrom<unknown>(undefined, 0, false, [], {});

  it('no suggestion names a field whose records hold another kind than every value of the column would be sent as', () => {
    let suggested = 0;
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(fc.constantFrom(...names), kind), { selector: ([f]) => f, minLength: 1 }),
        fc.uniqueArray(fc.constantFrom(...names), { minLength: 1, maxLength: 4 }),
        fc.array(column, { minLength: 4, maxLength: 4 }),
        (fields, cols, values) => {
          const samples = new Map(fields);
          const knownHere = new Set(samples.keys());
          // row i holds each column's i-th value (a shorter column: no cell)
          const records = [0, 1, 2, 3, 4].map((i) =>
            Object.fromEntries(cols.flatMap((c, j) => (i < values[j]!.length ? [[c, values[j]![i]]] : []))),
          );
          const columns = cols.map((c) => ({ column: c, field: c, mapped: false }));
          const { unknown } = checkColumns(columns, knownHere, {
            kinds: seen(...records),
            sample: (f) => samples.get(f),
          });
          for (const u of unknown) {
            if (u.nearest === undefined) continue;
            suggested++;
            const held = samples.get(u.nearest);
            for (const r of records) {
              const v = r[u.field];
              if (v === undefined || v === null || v === '') continue;
              const sent = typeof v === 'string' ? typedByKind(v, held) : v;
              expect(kindOfSent(sent), `${JSON.stringify(v)} → ${u.nearest}`).toBe(kindOfSent(held));
            }
          }
        },
      ),
      runs(),
    );
    expect(suggested).toBeGreaterThan(0);
  });
});

describe('the key and --map named by their right names (issue 29)', () => {
  const scanOf = (header: string[], maps: string[] = []) => parseHeader(header, parseColumnMaps(maps));
  const hintOf = async (f: () => unknown): Promise<string | undefined> => {
    try {
      await f();
    } catch (err) {
      expect(err).toBeInstanceOf(UsageError);
      return (err as UsageError).hint;
    }
    throw new Error('not refused');
  };

  it('--match "Email Address" --map "Email Address=email": use --match email (never a --map to a new field)', async () => {
    const scan = scanOf(['First Name', 'Email Address'], ['Email Address=email']);
    const hint = await hintOf(() => checkMatchColumns(scan, ['email_address'], 'p.csv'));
    expect(hint).toBe('--match names fields, not columns: --map sends "Email Address" as email; use --match email');
    expect(hint).not.toContain('COLUMN=');
  });

  it('a misspelt --match: the field it is near, the other match fields kept', async () => {
    const scan = scanOf(['Name', 'Domain']);
    const companies = new Set(['id', 'name', 'domain', 'industry']);
    expect(await hintOf(() => checkMatchColumns(scan, ['name', 'domian'], 'p.csv', async () => companies))).toBe(
      'did you mean --match name,domain? the records have that field',
    );
    // the records' fields not read (a dry run): no field is offered, the columns are listed
    expect(await hintOf(() => checkMatchColumns(scan, ['name', 'domian'], 'p.csv'))).toMatch(
      /^name the column that holds domian/,
    );
    expect(await hintOf(() => checkMatchColumns(scan, ['website'], 'p.csv'))).toBe(
      'name the column that holds website with --map "COLUMN=website"; the file\'s columns: "Name", "Domain"',
    );
    // a short name with a letter changed is another word: matching on it would pair rows with the wrong records
    expect(await hintOf(() => checkMatchColumns(scanOf(['Email', 'Vip']), ['zip'], 'p.csv'))).toBe(
      'name the column that holds zip with --map "COLUMN=zip"; the file\'s columns: "Email", "Vip"',
    );
  });

  it('a column named otherwise than the field the records have (Mail holding email): the --map, never --match mail', async () => {
    const contacts = new Set(['id', 'email', 'first_name']);
    const hint = await hintOf(() =>
      checkMatchColumns(scanOf(['Name', 'Mail']), ['email'], 'p.csv', async () => contacts),
    );
    expect(hint).toBe('the records have email: if that column holds it, add --map "Mail=email"');
    expect(hint).not.toContain('--match mail');
  });

  it('--map "Emial Address=email": the header\'s nearest column and the --map to use; a far one: the header\'s columns', async () => {
    const maps = parseColumnMaps(['Emial Address=email']);
    expect(await hintOf(() => parseHeader(['First Name', 'Email Address:string'], maps))).toBe(
      'did you mean "Email Address"? use --map "Email Address=email"',
    );
    expect(await hintOf(() => parseHeader(['Zip', 'Email'], parseColumnMaps(['Vip=vip'])))).toMatch(
      /^the header's columns/,
    );
    expect(await hintOf(() => parseHeader(['First Name', 'Phone'], parseColumnMaps(['Nope=x'])))).toBe(
      'the header\'s columns: "First Name", "Phone" (--map names a column as the header writes it)',
    );
  });
});

describe('failedAlike: the first answered chunk', () => {
  const reject = (i: number, code = 'VALIDATION_FAILED', message = 'email: required') => ({ i, code, message });
  const none = { created: 0, skipped: 0, repeated: 0 };

  it('every row (two or more) failed with one same error: a PartialFailureError (exit 9) with the reason and the way on', async () => {
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

  it('rows of the job created before it (an earlier run, a resumed job): no pattern, no stop; repeated rows are not created rows', async () => {
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

describe('idsFromNames (issue 29\'s re-trial: --map "Company=company_id" wrote names over ids)', () => {
  it('warns for a mapped column that does not name an id filling an id field; not for one that names an id, nor unmapped', () => {
    const c = (column: string, field: string, mapped = true) => ({ column, field, mapped });
    expect(idsFromNames([c('Company', 'company_id')], 'p.csv')).toBe(
      'p.csv: "Company" fills company_id, a field of ids: each cell is sent as an id, and a name is not one; ' +
        'if the column holds names, send it to another field (--map "Company=FIELD")',
    );
    expect(idsFromNames([c('Company ID', 'company_id'), c('Org Id', 'company_id')], 'p.csv')).toBeUndefined();
    expect(idsFromNames([c('company_id', 'company_id', false), c('Company', 'company')], 'p.csv')).toBeUndefined();
  });
});
