// The way back of a reconcile (CONTRACT §7b), end to end with the real command: an undo file written by
// UndoFile, fed to `crm batch contacts <input>.undo.csv --update`, puts back every value exactly (each
// JSON type, null for a field that was absent or null) and leaves alone a field its row does not
// touch; a created file, fed to `crm batch contacts <input>.created.csv --delete --yes`, removes
// exactly its records.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreatedFile, UndoFile } from '../../src/import/files/way-back.js';
import { getRecord, makeContacts } from '../helpers/bulk.js';
import { runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';

let t: TestSandbox;
const dir = tempDir('crm-match-way-back-');
beforeAll(async () => {
  t = await startTestSandbox({ rateLimit: 1_000_000, orgRateLimit: 1_000_000, rateWindowMs: 1000 });
});
afterAll(async () => {
  await t?.close();
});

const crm = (args: string[]) => runCrm(args, { env: t.env('admin'), cwd: dir, timeoutMs: 60_000 });

async function patch(id: string, body: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${t.sb.baseUrl}/contacts/${id}`, {
    method: 'PATCH',
    headers: { 'X-Service-Api-Key': t.sb.keys.admin, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status, await res.text()).toBe(200);
}

/** the values each record holds before the change; `nickname` absent on every one */
const BEFORE: Array<Record<string, unknown>> = [
  {
    first_name: 'Ann, "the" =SUM(A1)\nsecond line',
    score: -12.5,
    vip: false,
    notes: null,
    tags: ['a', 'b,c', '"q"'],
    meta: { n: 1, deep: [null, true] },
  },
  { first_name: '=HYPERLINK("x")', score: 0, vip: true, notes: 'plain', tags: [], meta: {} },
  { first_name: '+1 555', score: 1e21, vip: true, notes: '-', tags: [1, 'x'], meta: { '': '' } },
];
const FIELDS = ['first_name', 'score', 'vip', 'notes', 'tags', 'meta', 'nickname'];

describe('the way back of --match', () => {
  it('crm batch contacts <input>.undo.csv --update puts back every JSON type exactly, null for absent; an empty cell leaves the field alone', async () => {
    const ids = await makeContacts(t, 'undo', BEFORE.length);
    for (const [i, id] of ids.entries()) await patch(id, BEFORE[i]!);
    const undo = await UndoFile.open(join(dir, 'people.csv.undo.csv'), FIELDS);
    for (const id of ids) {
      const now = (await getRecord(t, 'contacts', id))!;
      expect(Object.hasOwn(now, 'nickname')).toBe(false);
      // the last record's change does not touch `vip`: its row's cell stays empty
      const changed = id === ids[2] ? FIELDS.filter((f) => f !== 'vip') : FIELDS;
      await undo.add(id, Object.fromEntries(changed.map((f) => [f, now[f]])));
    }
    await undo.close();
    // the reconcile's changes
    for (const id of ids)
      await patch(id, {
        first_name: 'After',
        score: 7,
        vip: 'maybe',
        notes: 'changed',
        tags: ['z'],
        meta: { x: 1 },
        nickname: 'nick',
      });

    const r = await crm(['-o', 'json', 'batch', 'contacts', undo.path, '--update']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ rows: 3, updated: 3, invalid: 0, failed: 0 });
    for (const [i, id] of ids.entries()) {
      const got = (await getRecord(t, 'contacts', id))!;
      const want: Record<string, unknown> = { ...BEFORE[i], nickname: null, ...(i === 2 ? { vip: 'maybe' } : {}) };
      for (const f of FIELDS) expect([f, got[f]]).toEqual([f, want[f]]);
    }
  });

  it('crm batch contacts <input>.created.csv --delete --yes removes exactly the records of the file (id, _line, email)', async () => {
    const ids = await makeContacts(t, 'made', 5);
    const created = await CreatedFile.open(join(dir, 'people.csv.created.csv'), ['email']);
    created.add(ids[0]!, 2, ['made.1@example.com']);
    created.add(ids[2]!, 4, ['made.3@example.com']);
    await created.close();
    const again = await CreatedFile.open(created.path, ['email']); // a later run of the job
    again.add(ids[3]!, 5, ['made.4@example.com']);
    await again.close();

    const r = await crm(['-o', 'json', 'batch', 'contacts', created.path, '--delete', '--yes']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ rows: 3, deleted: 3, invalid: 0, failed: 0 });
    const left = await Promise.all(ids.map(async (id) => (await getRecord(t, 'contacts', id)) !== undefined));
    expect(left).toEqual([false, true, false, false, true]);
  });
});

describe('a rerun that writes nothing leaves the way back it printed', () => {
  it('the same command again, its only row rejected again: the undo and created files stay, and their commands work', async () => {
    const [id] = await makeContacts(t, 'keep', 1);
    await patch(id!, { title: 'Before' });
    const held = (await getRecord(t, 'contacts', id!))!;
    const input = join(dir, 'keep.csv');
    writeFileSync(input, `email,title\n${String(held.email)},Changed\nnew-one@keep.test,New\nnot-an-email,Bad\n`);
    const first = await crm(['batch', 'contacts', input, '--match', 'email', '-o', 'json']);
    expect(first.code, first.stderr).toBe(9); // the bad row rejected
    expect(JSON.parse(first.stdout)).toMatchObject({ created: 1, updated: 1 });
    const files = () =>
      readdirSync(dir)
        .filter((f) => f.startsWith('keep.csv.') && /undo|created/.test(f))
        .sort();
    const [undoBefore, createdBefore] = [input + '.undo.csv', input + '.created.csv'].map((p) =>
      readFileSync(p, 'utf8'),
    );

    // the rerun plans the rejected row again, which fails again: it writes nothing
    const again = await crm(['batch', 'contacts', input, '--match', 'email', '-o', 'json']);
    expect(again.code, again.stderr).toBe(9);
    expect(JSON.parse(again.stdout)).toMatchObject({ created: 0, updated: 0 });
    expect(files()).toEqual(['keep.csv.created.csv', 'keep.csv.undo.csv']);
    expect(readFileSync(input + '.undo.csv', 'utf8')).toBe(undoBefore);
    expect(readFileSync(input + '.created.csv', 'utf8')).toBe(createdBefore);

    // the first run's commands, pasted now, still do what they said
    const undone = await crm(['batch', 'contacts', `${input}.undo.csv`, '--match', 'id', '-o', 'json']);
    expect(undone.code, undone.stderr).toBe(0);
    expect((await getRecord(t, 'contacts', id!))!.title).toBe('Before');
    const removed = await crm(['batch', 'contacts', `${input}.created.csv`, '--delete', '--yes', '-o', 'json']);
    expect(removed.code, removed.stderr).toBe(0);
    expect(JSON.parse(removed.stdout)).toMatchObject({ deleted: 1 });
  });
});
