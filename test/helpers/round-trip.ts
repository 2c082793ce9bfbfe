// What the round-trip tests (issue 28) share: generated records holding every kind of value a CRM
// record can (every JSON type, deep objects and lists, numbers no double holds, leading zeros, text
// that reads as a number or a boolean, blank text, null, NFC and NFD Unicode, awkward field names);
// one exact comparison of values; and `crm` run in this process.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import type { ApiRecord } from '../../src/api/envelopes.js';
import { main } from '../../src/cli/main.js';
import { RawNumber, stringifyJson } from '../../src/json/exact-json.js';
import { setOwn } from '../../src/util/set-own.js';
import { fakeIO } from './fake-io.js';

/** What the server sets: an import leaves them out of a create (CONTRACT §7). */
export const SERVER_FIELDS = ['id', 'created_at', 'updated_at', 'owner_id'];

/** Numbers a double cannot hold as written: they must come back as these digits. */
export const BIG_NUMBERS = [
  '12345678901234567890123',
  '0.10000000000000000001',
  '-98765432109876543210.5',
  '9007199254740993',
  '1e400',
];

/** Text that a reader could take for something else. */
export const TRICKY_TEXT = [
  '00501',
  '37',
  '-12',
  '1e3',
  '0.10',
  '12345678901234567890123',
  'true',
  'FALSE',
  'null',
  'yes',
  '',
  ' ',
  ' padded ',
  '=1+1',
  "'-12",
  '@home',
  'a,b',
  'say "hi"',
  'two\nlines',
  'tab\there',
  'a;b',
  '{"a":1}',
  '[1,2]',
  'Caf\u00e9',
  'Cafe\u0301',
  '\u00c5ngstr\u00f6m',
  'A\u030angstro\u0308m',
  '😀',
];

/** Field names no reader may change: prototype names, dots, spaces, commas, quotes, capitals, NFC and NFD. */
export const AWKWARD_NAMES = [
  '__proto__',
  'constructor',
  'toString',
  'a.b',
  'First Name',
  'x,y',
  'say "hi"',
  'UPPER',
  'Caf\u00e9',
  'Cafe\u0301',
];

/** Field names that read as a typed header (`name:type`, CONTRACT §7): a CSV column of one must still be that field. */
export const TYPED_LOOKING_NAMES = ['tags:list', 'score:number'];

/** Ids a server may give: formula signs, commas, quotes, NFC and NFD, leading zeros, characters a URL escapes, numbers. */
export const AWKWARD_IDS: Array<string | number> = [
  '-7',
  '=7',
  "'x",
  '@x',
  'a,b',
  'q"x',
  'Caf\u00e9',
  'Cafe\u0301',
  '00501',
  'two words',
  'a/b',
  '%41',
  '?x#y',
  101,
  7,
];

/** Plain field names: what every reader keeps, so a failure with them is about values. */
export const PLAIN_NAMES = ['zip', 'score', 'tags', 'meta', 'active', 'note', 'title', 'amount'];

/** `__proto__` as an own key, as the JSON reader makes it. */
export function objectOf(pairs: Iterable<readonly [string, unknown]>): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const [k, v] of pairs) setOwn(o, k, v);
  return o;
}

const CELL_UNITS = [
  'a',
  'Z',
  '0',
  '5',
  ' ',
  ',',
  '"',
  "'",
  '\n',
  '\r',
  '\t',
  '=',
  '-',
  'é',
  'e\u0301',
  '😀',
  '\\',
  ';',
  ':',
  '{',
];

export const text: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...TRICKY_TEXT) },
  fc.string({ unit: fc.constantFrom(...CELL_UNITS), maxLength: 8 }),
);

/** A number as the server writes it: a double (never -0, which JSON writes as 0), or one no double holds. */
export const number: fc.Arbitrary<number | RawNumber> = fc.oneof(
  fc.integer({ min: -100_000, max: 100_000 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((x) => (Object.is(x, -0) ? 0 : x)),
  fc.constantFrom(...BIG_NUMBERS).map((t) => new RawNumber(t)),
);

export const scalar: fc.Arbitrary<unknown> = fc.oneof(text, number, fc.boolean(), fc.constant(null));

/** A key inside a nested object: plain, or one of the awkward names. */
const nestedKey = fc.oneof(fc.constantFrom('a', 'b', 'k'), fc.constantFrom(...AWKWARD_NAMES, ...TYPED_LOOKING_NAMES));

const tree = fc.letrec<{ value: unknown; list: unknown[]; object: unknown }>((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, scalar, tie('list'), tie('object')),
  list: fc.array(tie('value'), { maxLength: 3 }),
  object: fc
    .uniqueArray(fc.tuple(nestedKey, tie('value')), { selector: ([k]) => k, maxLength: 3 })
    .map((pairs) => objectOf(pairs)),
}));

/** Any JSON value, up to three levels deep. */
export const jsonValue: fc.Arbitrary<unknown> = tree.value;

/** A list, and an object, nested: what a CSV cell holds as JSON text. */
export const jsonList: fc.Arbitrary<unknown[]> = tree.list;
export const jsonObject: fc.Arbitrary<unknown> = tree.object;
export const deepValue: fc.Arbitrary<unknown> = fc.oneof(jsonList, jsonObject);

/** Text every reader keeps as it is (no blank, no formula, no number look-alike): for tests about names. */
export const plainText = fc.stringMatching(/^[a-z]{1,6}$/);

/** A field's values as a CRM's records hold them: one JSON type a field. */
export const TYPES = { text, number, boolean: fc.boolean(), object: jsonObject, list: jsonList, plain: plainText };
export type TypeName = keyof typeof TYPES;

/**
 * Records whose fields each hold values of one type (or null), and the target CRM's record holding each field with a
 * value of that type: a create types a text cell by what the collection's records hold (§7b), as a CRM's schema would.
 */
export const typedExport = (types: readonly TypeName[], names: readonly string[] = PLAIN_NAMES, prefix = 'u') =>
  fc
    .uniqueArray(fc.tuple(fc.constantFrom(...names), fc.constantFrom(...types)), {
      selector: ([f]) => f,
      minLength: 1,
      maxLength: 4,
    })
    .chain((fields) => {
      const withValues = (email: string, values: unknown[]) =>
        objectOf([['email', email], ...fields.map(([f], j) => [f, values[j]] as const)]);
      const cell = (t: TypeName) => fc.option(TYPES[t] as fc.Arbitrary<unknown>, { nil: null, freq: 6 });
      return fc.tuple(
        fc
          .array(fc.tuple(...fields.map(([, t]) => cell(t))), { minLength: 1, maxLength: 4 })
          .map((rows) => rows.map((values, i) => withValues(`${prefix}${i}@x.test`, values))),
        fc
          .tuple(...fields.map(([, t]) => TYPES[t] as fc.Arbitrary<unknown>))
          .map((values) => [withValues(`${prefix}-schema@x.test`, values)]),
      );
    });

export interface RecordsOptions {
  /** the field names to draw from (default PLAIN_NAMES) */
  names?: readonly string[];
  /** exactly these fields instead of a draw from `names` */
  fields?: readonly string[];
  /** their values (default jsonValue) */
  values?: fc.Arbitrary<unknown>;
  /** every record has every drawn field (default: each record its own subset) */
  sameFields?: boolean;
  minRecords?: number;
  maxRecords?: number;
  /** the emails' prefix: `<prefix><n>@x.test` */
  prefix?: string;
}

/**
 * Records as a CRM holds them, without id and server fields: a unique email each, then fields drawn from
 * `names` with values of `values`.
 */
export function records(o: RecordsOptions = {}): fc.Arbitrary<ApiRecord[]> {
  const names = o.names ?? PLAIN_NAMES;
  const values = o.values ?? jsonValue;
  const cell = o.sameFields ? values : fc.option(values, { nil: undefined, freq: 4 });
  const one = (fields: readonly string[]) => fc.tuple(...fields.map(() => cell));
  const drawn = o.fields
    ? fc.constant(o.fields)
    : fc.uniqueArray(fc.constantFrom(...names), { minLength: 1, maxLength: 4 });
  return drawn.chain((fields) =>
    fc
      .array(one(fields), { minLength: o.minRecords ?? 1, maxLength: o.maxRecords ?? 4 })
      .map((rows) =>
        rows.map((vals, i) =>
          objectOf([
            ['email', `${o.prefix ?? 'u'}${i}@x.test`],
            ...fields.flatMap((f, j) => (vals[j] === undefined ? [] : [[f, vals[j]] as const])),
          ]),
        ),
      ),
  );
}

/** The records as a CRM holds them: its id first (`idOf(i)`, default `con_<i+1>`), the server's fields last. */
export function held(list: readonly ApiRecord[], idOf: (i: number) => unknown = (i) => `con_${i + 1}`): ApiRecord[] {
  return list.map((r, i) =>
    objectOf([
      ['id', idOf(i)],
      ...Object.entries(r),
      ['created_at', '2026-01-02T03:04:05.000Z'],
      ['updated_at', '2026-01-02T03:04:05.000Z'],
      ['owner_id', 'usr_1'],
    ]),
  );
}

/** The record without the fields the server sets. */
export function ownFields(record: ApiRecord): ApiRecord {
  return objectOf(Object.entries(record).filter(([k]) => !SERVER_FIELDS.includes(k)));
}

/**
 * What a create from an export (`list -o FORMAT`, read by `crm batch`) must store: the record's own fields. A CSV or
 * TSV cell is text to the contract: an empty one is left out (null and blank text come back absent, §7) and text is
 * sent trimmed (§7b "What is compared is what is sent"); JSON and NDJSON values are exact.
 */
export function createdFromExport(record: ApiRecord, format: Format): ApiRecord {
  const own = ownFields(record);
  if (format === 'json' || format === 'ndjson') return own;
  const blank = (v: unknown) => v === null || (typeof v === 'string' && v.trim() === '');
  return objectOf(
    Object.entries(own).flatMap(([k, v]) => (blank(v) ? [] : [[k, typeof v === 'string' ? v.trim() : v] as const])),
  );
}

/**
 * One text per value, equal exactly when the values are: numbers by their JSON text (a RawNumber by its
 * digits), object keys in any order but spelled exactly (NFC and NFD differ), null apart from absent.
 */
export function canon(value: unknown): string {
  if (value instanceof RawNumber) return value.text;
  if (Array.isArray(value)) return `[${value.map(canon).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canon((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return stringifyJson(value) ?? 'undefined';
}

/** The records by their email (each must have one). */
export function byEmail(list: readonly ApiRecord[]): Map<string, ApiRecord> {
  return new Map(list.map((r) => [String(r.email), r]));
}

let folders = 0;

/** A new folder under `root`, with `config` beside the files: an earlier example's journals are not this one's. */
export function freshFolder(root: string): { dir: string; config: string } {
  const dir = join(root, `run-${++folders}`);
  mkdirSync(dir, { recursive: true });
  return { dir, config: join(dir, 'config') };
}

export type Format = 'csv' | 'tsv' | 'json' | 'ndjson';

/** The [format, kind] cases of a table of properties, from the kinds each format is tested with. */
export function cases<K extends string>(byFormat: Partial<Record<Format, readonly K[]>>): Array<[Format, K]> {
  return Object.entries(byFormat).flatMap(([format, kinds]) =>
    kinds.map((kind) => [format as Format, kind] as [Format, K]),
  );
}

export interface InProcess {
  code: number;
  out: string;
  err: string;
}

/** `crm ARGS` in this process (the whole command line: parsing, command, engine, output), with `env` only. */
export async function crmIn(args: string[], env: Record<string, string>): Promise<InProcess> {
  const f = fakeIO();
  const code = await main(args, { io: f.io, env, handleSignals: false });
  return { code, out: f.out(), err: f.err() };
}

/** The words of a command crm printed (`crm batch contacts 'a b.csv' --match id`), quotes undone, without `crm`. */
export function commandWords(line: string): string[] {
  const words = [...line.matchAll(/'([^']*)'|"((?:[^"\\]|\\.)*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
  if (words[0] !== 'crm') throw new Error(`not a crm command: ${line}`);
  return words.slice(1);
}
