// Issue 28, "Round trips are exact", end to end: each file crm writes, read back by the command that reads it,
// with the built binary against the in-process sandbox, a few records per pair (the issue's own cases, and
// records generated from a fixed seed). The properties with many examples are test/unit/roundtrip/ (in this
// process, against a server that keeps values exactly); this suite checks the same pairs with the sandbox.
//   list -o csv|tsv|json|ndjson → batch --match email / --match id (plans nothing; creates the values exported),
//   → batch (a plain create: the values exported) and → batch --update (every record as it was)
//   <input>.undo.csv → --match id · <input>.created.csv → --delete · <input>.deleted.ndjson → batch, then its
//   owners file → --match id · a single delete's <resource>.deleted.<time>.ndjson → the command it prints · the
//   rejects file, fixed → batch · --results FILE → --match id · snapshot → sandbox --from
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ApiRecord } from '../../src/api/envelopes.js';
import { parseJson, RawNumber, stringifyJson } from '../../src/json/exact-json.js';
import { quoteCsv } from '../../src/output/csv.js';
import { apiData } from '../helpers/api-data.js';
import { runCrm, startSandboxProcess, type CrmResult } from '../helpers/run-crm.js';
import {
  byEmail,
  canon,
  cases,
  commandWords,
  createdFromExport,
  objectOf,
  ownFields,
  PLAIN_NAMES,
  typedExport,
  TYPES,
  type TypeName,
} from '../helpers/round-trip.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir('crm-rt-e2e-');
let folders = 0;
const folder = (name: string): string => join(dir, `${++folders}-${name}`);

/** The issue's cases in one record: zip codes, numbers and text alike, numbers beyond a double, JSON, blank, null, NFC/NFD. */
const ISSUE_VALUES = objectOf([
  ['email', 'issue@x.test'],
  ['zip', '00501'],
  ['score', 37],
  ['code', '37'],
  ['flag', 'true'],
  ['active', true],
  ['big', new RawNumber('12345678901234567890123')],
  ['ratio', new RawNumber('0.10000000000000000001')],
  ['address', { city: 'Paris', lines: ['1 rue', { floor: 2 }] }],
  ['tags', ['vip']],
  ['blank', ''],
  ['nothing', null],
  ['nfc', 'Caf\u00e9'],
  ['nfd', 'Cafe\u0301'],
]);
/** Field names no reader may change, NFC and NFD side by side. */
const ISSUE_NAMES = objectOf([
  ['email', 'names@x.test'],
  ['__proto__', 'p'],
  ['constructor', 'c'],
  ['a.b', 'dot'],
  ['First Name', 'Ada'],
  ['x,y', 'comma'],
  ['say "hi"', 'quote'],
  ['Caf\u00e9', 'nfc key'],
  ['Cafe\u0301', 'nfd key'],
]);

/** Records from a fixed seed, each field of one type (or null), with a record of the target holding those types. */
const [generated, generatedSchema] = fc.sample(typedExport(Object.keys(TYPES) as TypeName[], PLAIN_NAMES, 'g'), {
  seed: 28,
  numRuns: 1,
})[0]!;
/** `record` under another email: what a CRM of the same fields and types holds. */
const sameFields = (record: ApiRecord, email: string): ApiRecord =>
  objectOf([...Object.entries(record), ['email', email]]);

/** The records of each group, every field on each (an export's header is its first record's). */
const GROUPS = {
  issue: [ISSUE_VALUES],
  generated,
  names: [
    ISSUE_NAMES,
    objectOf(Object.keys(ISSUE_NAMES).map((k, i) => [k, k === 'email' ? 'names2@x.test' : `v${i}`])),
  ],
};
/** What the target of a create holds: a record of each field, of its type (a create is typed by what records hold). */
const SCHEMA: Record<Group, ApiRecord[]> = {
  issue: [sameFields(ISSUE_VALUES, 'issue-schema@x.test')],
  generated: generatedSchema,
  names: [sameFields(ISSUE_NAMES, 'names-schema@x.test')],
};
type Group = keyof typeof GROUPS;

const api = apiData;

/** Every contact the sandbox holds, as its answers' text says. */
async function contacts(t: TestSandbox): Promise<ApiRecord[]> {
  const all: ApiRecord[] = [];
  for (let cursor: string | null = null; ;) {
    const res = await fetch(`${t.sb.baseUrl}/contacts?limit=100${cursor ? `&cursor=${cursor}` : ''}`, {
      headers: { 'X-Service-Api-Key': t.sb.keys.admin },
    });
    const page = parseJson(await res.text()) as { data: ApiRecord[]; page_info: { end_cursor: string | null } };
    all.push(...page.data);
    if (!page.page_info.end_cursor) return all;
    cursor = page.page_info.end_cursor;
  }
}

/** A sandbox of this test's own, holding `list` (created exactly as written). */
async function holding(list: readonly ApiRecord[]): Promise<TestSandbox> {
  const t = await startTestSandbox();
  for (const r of list) await api(t, 'POST', '/contacts', r);
  return t;
}

async function crm(t: TestSandbox, args: string[]): Promise<CrmResult> {
  return runCrm(args, { env: t.env(), timeoutMs: 30_000 });
}

/** `crm ARGS -o json` that must exit 0: its JSON summary. */
async function ok(t: TestSandbox, args: string[]): Promise<Record<string, unknown>> {
  const r = await crm(t, [...args, '-o', 'json']);
  expect(r.code, `crm ${args.join(' ')}: exit ${r.code}\n${r.stderr}`).toBe(0);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

const owns = (list: readonly ApiRecord[]) => list.map((r) => canon(ownFields(r)));

// each format with each group of records: a pair crm does not read back yet is added here once it does
const MATCH_CASES = cases<Group>({
  csv: ['issue', 'generated', 'names'],
  tsv: ['issue', 'generated', 'names'],
  json: ['issue', 'generated', 'names'],
  ndjson: ['issue', 'generated', 'names'],
});
const CREATE_CASES = cases<Group>({
  csv: ['issue', 'generated', 'names'],
  tsv: ['issue', 'generated', 'names'],
  json: ['issue', 'generated', 'names'],
  ndjson: ['issue', 'generated', 'names'],
});

describe.concurrent('crm contacts list -o FORMAT → crm batch contacts FILE --match', () => {
  it.each(MATCH_CASES)(
    '-o %s, %s: reconciled back unedited by email and by id, plans nothing',
    async (format, group) => {
      const t = await holding(GROUPS[group]);
      try {
        const exported = await crm(t, ['contacts', 'list', '--all', '-o', format]);
        expect(exported.code, exported.stderr).toBe(0);
        const file = folder(`export.${format}`);
        writeFileSync(file, exported.stdout);
        for (const field of ['email', 'id']) {
          const plan = await ok(t, ['batch', 'contacts', file, '--match', field, '--dry-run']);
          const { create, update, invalid, changes } = plan;
          expect({ field, create, update, invalid, changes }).toEqual({
            field,
            create: 0,
            update: 0,
            invalid: 0,
            changes: {},
          });
        }
      } finally {
        await t.close();
      }
    },
  );

  it.each(
    CREATE_CASES.flatMap(([format, group]) => [[format, group, 'match'] as const, [format, group, 'create'] as const]),
  )(
    '-o %s, %s: reconciled (--%s email) or created into another CRM of the same fields, creates the values exported',
    async (format, group, how) => {
      const [from, to] = await Promise.all([holding(GROUPS[group]), holding(SCHEMA[group])]);
      try {
        const exported = await crm(from, ['contacts', 'list', '--all', '-o', format]);
        expect(exported.code, exported.stderr).toBe(0);
        const file = folder(`export.${format}`);
        writeFileSync(file, exported.stdout);
        await ok(to, ['batch', 'contacts', file, ...(how === 'match' ? ['--match', 'email'] : [])]);
        const made = byEmail(await contacts(to));
        const list = GROUPS[group];
        expect(owns(list.map((r) => made.get(String(r.email)) ?? {}))).toEqual(
          owns(list.map((r) => createdFromExport(r, format))),
        );
      } finally {
        await Promise.all([from.close(), to.close()]);
      }
    },
  );
});

const UPDATE_CASES = cases<Group>({
  csv: ['issue', 'names'],
  tsv: ['issue', 'names'],
  json: ['issue', 'names'],
  ndjson: ['issue', 'names'],
});

describe.concurrent('crm contacts list -o FORMAT → crm batch contacts FILE --update', () => {
  it.each(UPDATE_CASES)(
    '-o %s, %s: updated from the export unedited, every record stays as it was',
    async (format, group) => {
      const t = await holding(GROUPS[group]);
      try {
        const before = await contacts(t);
        const exported = await crm(t, ['contacts', 'list', '--all', '-o', format]);
        expect(exported.code, exported.stderr).toBe(0);
        const file = folder(`export.${format}`);
        writeFileSync(file, exported.stdout);
        await ok(t, ['batch', 'contacts', file, '--update']);
        // the server's own fields aside: an update moves updated_at
        expect(owns(await contacts(t))).toEqual(owns(before));
      } finally {
        await t.close();
      }
    },
  );
});

/** Each record's `fields`, null where absent (an undo clears a field that was absent). */
const fieldsOf = (r: ApiRecord | undefined, fields: readonly string[]) =>
  fields.map((f) => canon(r !== undefined && Object.hasOwn(r, f) ? r[f] : null));

describe.concurrent('the ways back', () => {
  it.each(['issue', 'generated', 'names'] as const)(
    '<input>.undo.csv → --match id puts every %s back; applied again, plans nothing',
    async (group: Group) => {
      const t = await holding(GROUPS[group]);
      try {
        const before = await contacts(t);
        const fields = [...new Set(before.flatMap((r) => Object.keys(ownFields(r))))].filter((f) => f !== 'email');
        // every field changed (to a number, where text was), and a field the records did not have
        const rows = before.map((r, i) =>
          stringifyJson(objectOf([['id', r.id], ...fields.map((f) => [f, i] as const), ['added', 'new']])),
        );
        const input = folder('changes.ndjson');
        writeFileSync(input, `${rows.join('\n')}\n`);
        const forward = await ok(t, ['batch', 'contacts', input, '--match', 'id']);
        await ok(t, ['batch', 'contacts', String(forward.undo_file), '--match', 'id']);
        const now = new Map((await contacts(t)).map((r) => [r.id, r]));
        const all = [...fields, 'added'];
        expect(before.map((r) => fieldsOf(now.get(r.id), all))).toEqual(before.map((r) => fieldsOf(r, all)));
        const again = await ok(t, ['batch', 'contacts', String(forward.undo_file), '--match', 'id', '--dry-run']);
        expect({ update: again.update, changes: again.changes }).toEqual({ update: 0, changes: {} });
      } finally {
        await t.close();
      }
    },
  );

  it('<input>.created.csv → --delete removes exactly the records the run created', async () => {
    const t = await holding([{ email: 'stays@x.test' }]);
    try {
      const input = folder('new.ndjson');
      writeFileSync(
        input,
        GROUPS.generated.map((r) => `${stringifyJson(objectOf([...Object.entries(r)]))}\n`).join(''),
      );
      const created = await ok(t, ['batch', 'contacts', input, '--match', 'email']);
      expect(await contacts(t)).toHaveLength(GROUPS.generated.length + 1);
      await ok(t, ['batch', 'contacts', String(created.created_file), '--delete', '--yes']);
      expect((await contacts(t)).map((r) => r.email)).toEqual(['stays@x.test']);
    } finally {
      await t.close();
    }
  });

  it.each(['issue', 'generated', 'names'] as const)(
    "a delete's backup → crm batch contacts FILE brings back every %s, its owners file → --match id every owner",
    async (group: Group) => {
      const t = await holding(GROUPS[group]);
      try {
        const owners = ['usr_other', '-3', 'a,b "q"', 'Cafe\u0301'];
        for (const [i, r] of (await contacts(t)).entries())
          await api(t, 'PATCH', `/contacts/${encodeURIComponent(String(r.id))}`, {
            owner_id: owners[i % owners.length],
          });
        const before = await contacts(t);
        const listed = await crm(t, ['contacts', 'list', '--all', '-o', 'csv', '--fields', 'id']);
        expect(listed.code, listed.stderr).toBe(0);
        const ids = folder('ids.csv');
        writeFileSync(ids, listed.stdout);
        const deleted = await ok(t, ['batch', 'contacts', ids, '--delete', '--yes']);
        expect(await contacts(t)).toEqual([]);
        const restored = await ok(t, ['batch', 'contacts', String(deleted.backup_file)]);
        const again = byEmail(await contacts(t));
        expect(owns(before.map((r) => again.get(String(r.email)) ?? {}))).toEqual(owns(before));
        await ok(t, ['batch', 'contacts', String(restored.owners_file), '--match', 'id']);
        const owned = byEmail(await contacts(t));
        expect(before.map((r) => owned.get(String(r.email))?.owner_id)).toEqual(before.map((r) => r.owner_id));
      } finally {
        await t.close();
      }
    },
  );
  it('crm contacts delete ID… --yes: its backup <resource>.deleted.<time>.ndjson, through the command crm prints, brings back every value', async () => {
    const t = await holding(GROUPS.generated);
    try {
      const before = await contacts(t);
      const cwd = folder('single');
      mkdirSync(cwd);
      const deleted = await runCrm(['contacts', 'delete', ...before.map((r) => String(r.id)), '--yes'], {
        env: t.env(),
        cwd,
      });
      expect(deleted.code, deleted.stderr).toBe(0);
      const printed = /`(crm batch contacts [^`]*\.deleted\.[^`]*\.ndjson)`/.exec(deleted.stderr)?.[1];
      expect(printed, deleted.stderr).toBeDefined();
      const again = await runCrm(commandWords(printed!), { env: t.env(), cwd });
      expect(again.code, again.stderr).toBe(0);
      const made = byEmail(await contacts(t));
      expect(owns(before.map((r) => made.get(String(r.email)) ?? {}))).toEqual(owns(before));
    } finally {
      await t.close();
    }
  });
});

describe.concurrent('the rows an import writes back out', () => {
  it('the rejects file, fixed as crm says, creates the rows as the file had them (typed columns, any text)', async () => {
    const [t, control] = await Promise.all([startTestSandbox(), startTestSandbox()]);
    try {
      const header = 'email,note,zip,score:number,active:boolean,tags:list,meta:json';
      const rows = [
        [
          '',
          ' padded ',
          '00501',
          '12345678901234567890123',
          'true',
          'vip;b',
          '{"city":"Paris","n":0.10000000000000000001}',
        ],
        ['', 'Cafe\u0301, "quoted"\nline', '37', '-0.5', 'no', '', '[1,[2,{"a.b":null}]]'],
      ];
      const csv = (emails: string[]) =>
        [header, ...rows.map((r, i) => [emails[i]!, ...r.slice(1)].map(quoteCsv).join(','))].join('\r\n') + '\r\n';
      const input = folder('people.csv');
      writeFileSync(input, csv(['', '']));
      const first = await crm(t, ['batch', 'contacts', input]);
      expect(first.code, first.stderr).toBe(9);
      const rejects = `${input}.rejects.csv`;
      expect(first.stderr).toContain(`crm batch contacts ${rejects}`);
      // fixed: the email filled in, every other cell as crm wrote it
      const table: string[][] = parse(readFileSync(rejects, 'utf8'), { bom: true });
      const at = table[0]!.indexOf('email');
      table.slice(1).forEach((r, i) => (r[at] = `row${i}@x.test`));
      writeFileSync(rejects, table.map((r) => r.map(quoteCsv).join(',')).join('\r\n') + '\r\n');
      await ok(t, ['batch', 'contacts', rejects]);
      // the same rows with their emails from the start, into another sandbox
      const fixed = folder('fixed.csv');
      writeFileSync(fixed, csv(['row0@x.test', 'row1@x.test']));
      await ok(control, ['batch', 'contacts', fixed]);
      const sorted = async (s: TestSandbox) => owns(await contacts(s)).sort();
      expect(await sorted(t)).toEqual(await sorted(control));
    } finally {
      await Promise.all([t.close(), control.close()]);
    }
  });

  it.each(['results.csv', 'results.ndjson'])('--results %s → --match id plans nothing', async (name) => {
    const t = await startTestSandbox();
    try {
      const input = folder('people.ndjson');
      writeFileSync(input, GROUPS.generated.map((r) => `${stringifyJson(r)}\n`).join(''));
      const results = folder(name);
      await ok(t, ['batch', 'contacts', input, '--results', results]);
      const plan = await ok(t, ['batch', 'contacts', results, '--match', 'id', '--dry-run']);
      const { create, update, invalid, changes } = plan;
      expect({ create, update, invalid, changes }).toEqual({ create: 0, update: 0, invalid: 0, changes: {} });
    } finally {
      await t.close();
    }
  });

  it('crm snapshot DIR → crm sandbox --from DIR serves every record as it was (values only)', async () => {
    const t = await holding([...GROUPS.generated, ...GROUPS.names]);
    try {
      const before = await contacts(t);
      const snap = folder('snap');
      await ok(t, ['snapshot', snap, '--resources', 'contacts']);
      const served = await startSandboxProcess(['--from', snap, '--port', '0']);
      try {
        const res = await fetch(`${served.baseUrl}/contacts?limit=100`, {
          headers: { 'X-Service-Api-Key': served.admin },
        });
        const data = (parseJson(await res.text()) as { data: ApiRecord[] }).data;
        expect(data.map((r) => canon(r))).toEqual(before.map((r) => canon(r)));
      } finally {
        await served.stop();
      }
    } finally {
      await t.close();
    }
  });
});
