// Equality is never decided by a hash alone (issue 28): keys crafted to share the 64-bit hash of the tables in
// src/util/hash-table.ts (a test hook swaps the hash) are told apart by their full text — in the reconcile's file
// keys (a duplicate row), in its index of what the CRM holds (an update, not a create), and in a plain import's
// repeated-rows check (a distinct row is sent, not skipped as a repeat).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ApiRecord } from '../../../src/api/envelopes.js';
import { paginatePages } from '../../../src/http/paginate.js';
import type { HttpClient } from '../../../src/http/types.js';
import { runImport, type ImportDeps } from '../../../src/import/engine.js';
import type { MatchPlan } from '../../../src/import/types.js';
import { matchReader } from '../../../src/import/match/read.js';
import { hash64, setHashForTests } from '../../../src/util/hash-table.js';
import { FirstSeen } from '../../../src/util/first-seen.js';
import { parseJson } from '../../../src/json/exact-json.js';
import { tempDir } from '../../helpers/temp.js';

/** every text containing `clash` hashes alike */
const weak = (text: string): [number, number] => (text.includes('clash') ? [7, 7] : hash64(text));
beforeEach(() => setHashForTests(weak));
afterEach(() => setHashForTests());

/** A client listing `records` on one page. */
function lister(records: ApiRecord[]): HttpClient {
  const stats = { requests: 0, retries: 0 };
  const pages: HttpClient['pages'] = (_path, opts) =>
    paginatePages(async () => {
      stats.requests++;
      const body = { object: 'list', data: records, page_info: { end_cursor: null, has_next_page: false }, meta: {} };
      return { status: 200, headers: {}, body, retries: 0 };
    }, opts);
  return { baseUrl: 'http://fake', stats, pages } as unknown as HttpClient;
}

async function dryRun(csv: string, records: ApiRecord[] | undefined): Promise<{ plan?: MatchPlan; summary: unknown }> {
  const dir = tempDir('crm-hash-clash-');
  const input = join(dir, 'in.csv');
  writeFileSync(input, csv);
  const client = lister(records ?? []);
  let plan: MatchPlan | undefined;
  const deps: ImportDeps = {
    send: () => Promise.reject(new Error('a dry run sends nothing')),
    journalDir: join(dir, 'imports'),
    clock: { now: () => 1_000 },
    cwd: dir,
    readIndex: matchReader(client, 'contacts', { now: () => 1_000 }),
    onPlan: (p) => void (plan = p),
    // the fields the records have (one page): a header naming one as written is that field
    knownFields: async () => new Set((records ?? []).flatMap((r) => Object.keys(r))),
  };
  const summary = await runImport(
    {
      resource: 'contacts',
      input,
      baseUrl: 'http://fake/api/v2',
      dryRun: true,
      ...(records ? { match: { fields: ['email'] } } : {}),
    },
    deps,
  );
  return { plan, summary };
}

describe('keys sharing a hash are told apart by their text', () => {
  it('the hook works: the crafted keys share one hash', () => {
    expect(weak('a@clash.x')).toEqual(weak('b@clash.x'));
  });

  it('reconcile: a planted record whose key shares the real one’s hash neither hides it nor makes a duplicate row', async () => {
    const records = [
      { id: 'c_real', email: 'ada@clash.x', title: 'Old' },
      { id: 'c_planted', email: 'planted@clash.x', title: 'Old' },
    ];
    const csv = 'email,title\nada@clash.x,New\nbob@clash.x,New\nADA@clash.x,New\n';
    const { plan } = await dryRun(csv, records);
    // ada is updated (not created a second time), bob is new, the third row repeats line 2 (its key in other letters)
    expect(plan).toMatchObject({ create: 1, update: 1, unchanged: 0, repeated: 1, duplicate: 0, ambiguous: 0 });
    expect(plan!.changes).toEqual({ title: 1 });
  });

  it('a plain import sends a distinct row that shares an earlier one’s hash, and skips only a true repeat', async () => {
    const { summary } = await dryRun('email\nx@clash.x\ny@clash.x\nx@clash.x\n', undefined);
    // two rows sent in one chunk, the third skipped as a repeat of line 2
    expect(summary).toMatchObject({ plan: { rows: 3, valid: 3, repeated: 1, chunks: 1 } });
  });

  it('FirstSeen: each distinct text once, with its first value, whatever the hashes', () => {
    const f = new FirstSeen(tempDir('crm-first-seen-'));
    expect(f.seen('a@clash', 1)).toBeUndefined();
    expect(f.seen('b@clash', 2)).toBeUndefined();
    expect(f.seen('a@clash', 3)).toBe(1);
    expect(f.seen('b@clash', 4)).toBe(2);
    expect(f.get('c@clash')).toBeUndefined();
    expect(f.size).toBe(2);
    f.close();
  });
});

describe('a field named __proto__ in a reconcile (issue 28)', () => {
  it('is read from the records as a field, compared as one, and its change counted (the undo file’s column)', async () => {
    setHashForTests();
    const records = [parseJson('{"id":"c1","email":"a@x.io","__proto__":{"p":1},"big":1e400}') as ApiRecord];
    // unedited (the object's JSON, 1e400): nothing to change; edited: one change of __proto__, counted by name
    const same = await dryRun('email,__proto__,big\na@x.io,"{""p"":1}",1e400\n', records);
    expect(same.plan).toMatchObject({ unchanged: 1, update: 0, changes: {} });
    const edited = await dryRun('email,__proto__\na@x.io,"{""p"":2}"\n', records);
    expect(edited.plan).toMatchObject({ update: 1 });
    expect(Object.entries(edited.plan!.changes)).toEqual([['__proto__', 1]]);
  });
});
