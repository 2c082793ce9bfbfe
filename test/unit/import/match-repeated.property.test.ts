// A reconcile's later row with an earlier row's key (issue 29): the key's first row again, exactly (the same record
// after --map and types, its key as the match compares it: ` ANN@x.test` is `ann@x.test`), is `repeated` — skipped,
// counted, never sent, never a reject; when any other row has the key, every row of it that is not a repeat is a
// `duplicate`, the first included (the trial: the first row's values were written, a guess). Decided over random
// files against random records (the plan of a dry run, and each row's action in --plan FILE).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import type { ApiRecord } from '../../../src/api/envelopes.js';
import { paginatePages } from '../../../src/http/paginate.js';
import type { HttpClient } from '../../../src/http/types.js';
import { runImport } from '../../../src/import/engine.js';
import { matchReader } from '../../../src/import/match/read.js';
import { matchKey } from '../../../src/import/match/key.js';
import { inFile, seeRow, type FirstLines, type InFile } from '../../../src/import/match/plan-rows.js';
import { FirstSeen } from '../../../src/util/first-seen.js';
import { HashTable } from '../../../src/util/hash-table.js';
import type { MatchPlan } from '../../../src/import/types.js';
import { runs } from '../../helpers/property.js';
import { tempDir } from '../../helpers/temp.js';

/** A client listing `records` on one page. */
function lister(records: ApiRecord[]): HttpClient {
  const stats = { requests: 0, retries: 0 };
  const pages: HttpClient['pages'] = (_path, opts) =>
    paginatePages(async () => {
      const body = { object: 'list', data: records, page_info: { end_cursor: null, has_next_page: false }, meta: {} };
      return { status: 200, headers: {}, body, retries: 0 };
    }, opts);
  return { baseUrl: 'http://fake', stats, pages } as unknown as HttpClient;
}

/** The plan of `--match email --dry-run --plan FILE`, and each row's action in that file. */
async function plan(csv: string, records: ApiRecord[]): Promise<{ plan: MatchPlan; actions: string[] }> {
  const dir = tempDir('crm-match-repeated-');
  const input = join(dir, 'in.csv');
  const planPath = join(dir, 'plan.csv');
  writeFileSync(input, csv);
  let got: MatchPlan | undefined;
  await runImport(
    {
      resource: 'contacts',
      input,
      baseUrl: 'http://fake/api/v2',
      dryRun: true,
      match: { fields: ['email'] },
      planPath,
    },
    {
      send: () => Promise.reject(new Error('a dry run sends nothing')),
      journalDir: join(dir, 'imports'),
      clock: { now: () => 1_000 },
      cwd: dir,
      readIndex: matchReader(lister(records), 'contacts', { now: () => 1_000 }),
      onPlan: (p) => void (got = p),
      knownFields: async () => new Set(['email', 'title', 'score']),
    },
  );
  const rows = parse<Record<string, string>>(readFileSync(planPath, 'utf8'), { columns: true });
  return { plan: got!, actions: rows.map((r) => r._action!) };
}

// few values, so keys and whole rows repeat often; an email in other letters is the same key, another record
const row = fc.record({
  email: fc.constantFrom('ann@x.test', 'ANN@x.test', 'bob@x.test', ' bob@x.test'),
  title: fc.constantFrom('', 'CEO', 'CTO'),
  score: fc.constantFrom('', '1', '01'),
});

describe('a later row with an earlier row’s key', () => {
  it('is repeated when it is its key’s first row exactly, else a duplicate; repeated rows are neither sent nor rejects', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(row, { minLength: 1, maxLength: 8 }),
        fc.subarray(['ann@x.test', 'bob@x.test']),
        async (rows, held) => {
          const csv = `email,title,score:number\n${rows.map((r) => `${r.email},${r.title},${r.score}`).join('\n')}\n`;
          const records = held.map((email, i) => ({ id: `c${i}`, email, title: 'CEO' }));
          const { plan: p, actions } = await plan(csv, records);
          // the model: the first row of each key (trimmed, lower-cased), and what it held (`01` is the number 1)
          const firsts = new Map<string, string>();
          const disagree = new Set<string>();
          const seen = rows.map((r) => {
            const key = r.email.trim().toLowerCase();
            const record = JSON.stringify([key, r.title, r.score === '' ? '' : Number(r.score)]);
            const first = firsts.get(key);
            if (first === undefined) return void firsts.set(key, record);
            if (first !== record) disagree.add(key);
            return first === record ? 'repeated' : 'other';
          });
          const expected = seen.map((s, i) =>
            s === 'repeated' ? s : disagree.has(rows[i]!.email.trim().toLowerCase()) ? 'duplicate' : undefined,
          );
          expected.forEach((want, i) => {
            if (want) expect(actions[i]).toBe(want);
            else expect(['create', 'update', 'unchanged']).toContain(actions[i]);
          });
          const count = (a: string) => expected.filter((x) => x === a).length;
          expect(p).toMatchObject({ repeated: count('repeated'), duplicate: count('duplicate'), invalid: 0 });
          // every row has one action; the requests are the creates' chunk and the updates only
          expect(p.create + p.update + p.unchanged + p.repeated + p.duplicate).toBe(rows.length);
          expect(p.requests).toBe(Math.ceil(p.create / 100) + p.update);
        },
      ),
      runs(60),
    );
  });
});

describe('inFile (the decision, per row)', () => {
  it('the first row with its key, that row again exactly, a row of a key whose rows disagree, or a row without one', () => {
    const cell = fc.option(fc.constantFrom('ann@x.test', 'ANN@x.test', ' ann@x.test', 'bob@x.test', ' '), {
      nil: undefined,
    });
    const record = fc.record({ email: cell, title: fc.option(fc.constantFrom('CEO', 'CTO'), { nil: undefined }) });
    fc.assert(
      fc.property(fc.array(record, { maxLength: 10 }), (records) => {
        const rows = records.map((r, i) => ({
          line: i + 2,
          record: Object.fromEntries(Object.entries(r).filter(([, v]) => v !== undefined)),
        }));
        const dir = tempDir('crm-in-file-');
        const seen: FirstLines = { first: new FirstSeen(dir, new HashTable(2)), records: new FirstSeen(dir) };
        try {
          // the first pass: each key's first line, and the keys whose rows disagree
          for (const r of rows) {
            const key = matchKey(['email'], r.record);
            if (key !== undefined) seeRow(['email'], r, key, seen);
          }
          // the model: a row as the match sees it is its record with the key trimmed and lower-cased
          const text = (r: (typeof rows)[number]) =>
            JSON.stringify({ ...r.record, ...(r.record.email ? { email: r.record.email.trim().toLowerCase() } : {}) });
          const lines = new Map<string, number[]>();
          const firsts = new Map<string, { line: number; json: string }>();
          for (const r of rows) {
            const key = r.record.email?.trim().toLowerCase();
            if (!key) continue;
            const first = firsts.get(key);
            if (!first) firsts.set(key, { line: r.line, json: text(r) });
            else if (first.json !== text(r)) {
              const at = lines.get(key) ?? [first.line];
              if (at.length < 5 && !at.includes(r.line)) at.push(r.line);
              lines.set(key, at);
            }
          }
          for (const r of rows) {
            const key = r.record.email?.trim().toLowerCase();
            const first = key ? firsts.get(key) : undefined;
            const want: InFile = !key
              ? { noKey: true }
              : first!.line !== r.line && first!.json === text(r)
                ? { repeats: first!.line }
                : lines.has(key)
                  ? { conflicts: lines.get(key)! }
                  : { first: key };
            expect(inFile(['email'], r, seen)).toEqual(want);
          }
        } finally {
          seen.first.close();
          seen.records.close();
        }
      }),
      runs(200),
    );
  });
});
