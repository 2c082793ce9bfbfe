// End to end (issue 18, CONTRACT §7b): `crm batch RESOURCE FILE --match FIELD` against the sandbox. Every action,
// the plan, the way back, and the guarantee over time: a rerun writes nothing, a colleague's change is seen and
// sent again, faults after the write and kill -9 at seeded points never apply a create or a PATCH twice — counted
// from the sandbox's request log and state, not from crm's word.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  appliedPerId,
  appliedPerKey,
  getRecord,
  logLength,
  makeContacts,
  prng,
  requestLog,
  stopAfter,
} from '../helpers/bulk.js';
import { runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';

let t: TestSandbox;
let dir: string;
beforeAll(async () => {
  t = await startTestSandbox({ seed: 7, rateLimit: 1_000_000, orgRateLimit: 1_000_000 });
  dir = tempDir('crm-reconcile-');
});
/** the requests the sandbox saw in each test (crm's and the test's own set-up), printed at the end */
const sent: Array<[string, number]> = [];
let before = 0;
beforeEach(async () => {
  before = await logLength(t);
});
afterAll(async () => {
  console.info(
    `requests per test (sandbox log):\n${sent.map(([name, n]) => `  ${String(n).padStart(5)}  ${name}`).join('\n')}`,
  );
  await t?.close();
});
afterEach(async () => {
  sent.push([expect.getState().currentTestName ?? '?', (await logLength(t)) - before]);
  await t.control('/faults', { fail_rate: 0, latency_ms: 0, faults: {}, next: [] });
});

const crm = (args: string[]) => runCrm(args, { env: t.env('admin'), timeoutMs: 120_000, cwd: dir });
const json = async (args: string[]) => {
  const r = await crm(['-o', 'json', ...args]);
  return { ...r, out: r.stdout ? (JSON.parse(r.stdout) as Record<string, unknown>) : undefined };
};
const file = (name: string, text: string): string => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

async function api(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${t.sb.baseUrl}${path}`, {
    method,
    headers: {
      'X-Service-Api-Key': t.sb.keys.admin,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(res.status, `${method} ${path}`).toBeLessThan(300);
  return ((await res.json()) as { data: Record<string, unknown> }).data;
}
const make = (record: Record<string, unknown>) => api('POST', '/contacts', record).then((r) => r.id as string);
const writes = (log: Awaited<ReturnType<typeof requestLog>>) => log.filter((e) => e.method !== 'GET');

describe('crm batch --match: one action per row', () => {
  it('creates, updates only what differs, leaves the rest, and never guesses', async () => {
    const ann = await make({ email: 'Rec.Ann@Example.com', first_name: 'Ann', title: 'CTO', score: 5 });
    const bob = await make({ email: 'rec.bob@example.com', first_name: 'Bob', title: 'Buyer', phone: '+1555' });
    const twin1 = await make({ email: 'rec.twin@example.com', first_name: 'T1' });
    const twin2 = await make({ email: ' REC.TWIN@example.com ', first_name: 'T2' });
    const path = file(
      'people.csv',
      [
        'email,first_name,title,score:number,phone',
        '  rec.ann@example.com ,Ann,CEO,5,', // case and spaces: matches Ann; title differs; score same by value; empty phone left
        'rec.bob@example.com,Bob,Buyer,,', // nothing differs
        'rec.twin@example.com,Tw,CTO,,', // two records share the key
        'rec.new@example.com,New,Eng,3,', // no record: created
        'REC.NEW@example.com,New,Eng,3,', // the same row, its key in other letters: skipped
        'rec.dup@example.com,Dup,Eng,,', // the file's rows of a key disagree: neither is sent
        'REC.DUP@example.com,Dup again,Eng,,',
        ',Nobody,x,,', // no key
      ].join('\n') + '\n',
    );
    const since = await logLength(t);
    const r = await json(['batch', 'contacts', path, '--match', 'email']);
    expect(r.code, r.stderr).toBe(9);
    expect(r.out).toMatchObject({
      rows: 8,
      created: 1,
      updated: 1,
      unchanged: 1,
      ambiguous: 1,
      duplicate: 2,
      invalid: 1,
      failed: 0,
    });
    expect(r.out).toMatchObject({
      ambiguous_file: `${path}.ambiguous.csv`,
      undo_file: `${path}.undo.csv`,
      created_file: `${path}.created.csv`,
    });
    const log = writes(await requestLog(t, since));
    expect(log.map((e) => `${e.method} ${e.path.replace(/\?.*/, '')}`).sort()).toEqual([
      'PATCH /api/v2/contacts/' + ann,
      'POST /api/v2/contacts/batch',
    ]);
    expect(await getRecord(t, 'contacts', ann)).toMatchObject({ title: 'CEO', score: 5, email: 'Rec.Ann@Example.com' });
    expect(await getRecord(t, 'contacts', bob)).toMatchObject({ phone: '+1555' });
    expect((await getRecord(t, 'contacts', twin1))?.first_name).toBe('T1');
    const ambiguous = readFileSync(`${path}.ambiguous.csv`, 'utf8');
    expect(ambiguous).toContain([twin1, twin2].sort().join(';'));
    const rejects = readFileSync(`${path}.rejects.csv`, 'utf8');
    expect(rejects).toMatch(/DUPLICATE_KEY,line 8 has the same email with other values: no row of it was sent/);
    expect(rejects).toMatch(/DUPLICATE_KEY,line 7 has the same email/);
    expect((await t.countByEmail('rec')).get('rec.dup@example.com')).toBeUndefined();
    expect(rejects).toMatch(/MISSING_KEY/);
    expect((await t.countByEmail('rec')).get('rec.new@example.com')).toBe(1);
  });

  it('a rerun after success reads and writes nothing; a colleague change in between is seen and sent again', async () => {
    const id = await make({ email: 'again.1@example.com', title: 'Old' });
    const path = file('again.csv', 'email,title\nagain.1@example.com,New\nagain.2@example.com,Made\n');
    const first = await json(['batch', 'contacts', path, '--match', 'email']);
    expect(first.out).toMatchObject({ created: 1, updated: 1, unchanged: 0 });
    const since = await logLength(t);
    const second = await json(['batch', 'contacts', path, '--match', 'email']);
    expect(second.code, second.stderr).toBe(0);
    expect(second.out).toMatchObject({ created: 0, updated: 0, unchanged: 2 });
    expect(writes(await requestLog(t, since))).toEqual([]);
    // a colleague changes the record back; the file still says New: sent again, under a new key, and applied
    await api('PATCH', `/contacts/${id}`, { title: 'Colleague' });
    const since2 = await logLength(t);
    const third = await json(['batch', 'contacts', path, '--match', 'email']);
    expect(third.out).toMatchObject({ created: 0, updated: 1, unchanged: 1 });
    expect(appliedPerId(await requestLog(t, since2), 'PATCH', 'contacts').get(id)).toBe(1);
    expect((await getRecord(t, 'contacts', id))?.title).toBe('New');
    // the way back is this run's, under a name of its own: the first run's undo file is left as it is, where the
    // command it printed names it (issue 29's re-trial)
    expect(readFileSync(`${path}.undo.csv`, 'utf8')).toMatch(/"""Old"""/);
    expect(readFileSync(`${path}.undo.csv`, 'utf8')).not.toMatch(/Colleague/);
    const own = readdirSync(dir).filter((n) => /^again\.csv\.undo\.\d{8}T\d{6}Z\.csv$/.test(n));
    expect(own).toHaveLength(1);
    expect(third.out).toMatchObject({ undo_file: join(dir, own[0]!) });
    expect(readFileSync(join(dir, own[0]!), 'utf8')).toMatch(/"""Colleague"""/);
    expect(await t.countByEmail('again')).toEqual(
      new Map([
        ['again.1@example.com', 1],
        ['again.2@example.com', 1],
      ]),
    );
  });

  it('runs of the same second: each undo file its own, none replaced, each where its run said (issues 27, 29)', async () => {
    const id = await make({ email: 'second.1@example.com', title: 'Orig' });
    const path = file('second.csv', 'email,title\nsecond.1@example.com,New\n');
    const said: string[] = [];
    for (const colleague of ['X', 'Y', 'Z']) {
      const r = await json(['batch', 'contacts', path, '--match', 'email']);
      expect(r.out, r.stderr).toMatchObject({ updated: 1 });
      said.push(r.out!.undo_file as string);
      await api('PATCH', `/contacts/${id}`, { title: colleague });
    }
    // three runs, three files, each holding the value before its own run
    expect(new Set(said).size).toBe(3);
    expect(said[0]).toBe(`${path}.undo.csv`);
    expect(said.map((f) => /"""(\w+)"""/.exec(readFileSync(f, 'utf8'))?.[1])).toEqual(['Orig', 'X', 'Y']);
    expect(readdirSync(dir).filter((n) => /^second\.csv\.undo\./.test(n))).toHaveLength(3);
  });

  it('the undo file puts every changed value back, nulls included; the created file deletes what was added', async () => {
    const id = await make({ email: 'undo.1@example.com', title: 'Before', phone: '+1' });
    const path = file(
      'undo.csv',
      'email,title,nickname,phone:json\nundo.1@example.com,After,Nick,null\nundo.2@example.com,Fresh,,\n',
    );
    const r = await json(['batch', 'contacts', path, '--match', 'email']);
    expect(r.out).toMatchObject({ created: 1, updated: 1 });
    expect(await getRecord(t, 'contacts', id)).toMatchObject({ title: 'After', nickname: 'Nick', phone: null });
    const back = await json(['batch', 'contacts', `${path}.undo.csv`, '--update']);
    expect(back.code, back.stderr).toBe(0);
    const restored = await getRecord(t, 'contacts', id);
    expect(restored).toMatchObject({ title: 'Before', phone: '+1' });
    expect(restored?.nickname ?? null).toBeNull();
    const del = await json(['batch', 'contacts', `${path}.created.csv`, '--delete', '--yes']);
    expect(del.code, del.stderr).toBe(0);
    expect((await t.countByEmail('undo')).get('undo.2@example.com')).toBeUndefined();
    expect(await getRecord(t, 'contacts', id)).toBeDefined();
  });

  it('--dry-run reads and sends nothing; --plan lists every row, and the run does what it says', async () => {
    const ids = await Promise.all([1, 2, 3].map((i) => make({ email: `plan.${i}@example.com`, title: 'T' })));
    const path = file('plan.csv', 'email,title\nplan.1@example.com,T\nplan.2@example.com,U\nplan.4@example.com,V\n');
    const since = await logLength(t);
    const dry = await json([
      'batch',
      'contacts',
      path,
      '--match',
      'email',
      '--dry-run',
      '--plan',
      join(dir, 'plan.out.csv'),
    ]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.out).toMatchObject({
      rows: 3,
      create: 1,
      update: 1,
      unchanged: 1,
      ambiguous: 0,
      requests: 2,
      changes: { title: 1 },
      dry_run: true,
    });
    expect(writes(await requestLog(t, since))).toEqual([]);
    const plan = readFileSync(join(dir, 'plan.out.csv'), 'utf8').trim().split(/\r?\n/);
    expect(plan[0]).toBe('_line,_action,id,_changes,email,title');
    expect(plan.slice(1).map((l) => l.split(',').slice(0, 3).join(','))).toEqual([
      `2,unchanged,${ids[0]}`,
      `3,update,${ids[1]}`,
      '4,create,',
    ]);
    expect(plan[2]).toContain('title: ""T"" → ""U""');
    const run = await json(['batch', 'contacts', path, '--match', 'email']);
    expect(run.out).toMatchObject({ created: 1, updated: 1, unchanged: 1 });
    expect([...appliedPerId(await requestLog(t, since), 'PATCH', 'contacts').keys()]).toEqual([ids[1]]);
  });

  it('a column near a field the records have is refused before anything is sent, naming the --map to use', async () => {
    await make({ email: 'cols.1@example.com', title: 'T' });
    const path = file('cols.csv', 'email,titel\ncols.1@example.com,New\ncols.2@example.com,Made\n');
    const since = await logLength(t);
    const r = await crm(['batch', 'contacts', path, '--match', 'email']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/did you mean title\? use --map "titel=title"/);
    expect(writes(await requestLog(t, since))).toEqual([]);
    const mapped = await json(['batch', 'contacts', path, '--match', 'email', '--map', 'titel=title']);
    expect(mapped.out).toMatchObject({ created: 1, updated: 1 });
  });

  it('usage errors: a match field the file lacks (did you mean), --match with --update, --plan without --match', async () => {
    const path = file('usage.csv', 'E-mail,title\na@example.com,x\n');
    const lacking = await crm(['batch', 'contacts', path, '--match', 'email']);
    expect(lacking.code).toBe(2);
    expect(lacking.stderr).toMatch(/no column for "email"/);
    expect((await crm(['batch', 'contacts', path, '--match', 'email', '--update'])).code).toBe(2);
    expect((await crm(['batch', 'contacts', path, '--plan', 'p.csv'])).code).toBe(2);
  });
});

describe('crm batch --match: jobs, ids and files', () => {
  it('--match id reads one record per row, keeps the id, and never creates a row whose id no record has', async () => {
    const id = await make({ email: 'byid.1@example.com', title: 'Old' });
    await makeContacts(t, 'byidfill', 101); // more than one page: listing would not be one request
    const path = file('byid.csv', `id,title\n${id},New\ncon_nosuchrecord,Made\n`);
    const since = await logLength(t);
    const r = await json(['batch', 'contacts', path, '--match', 'id']);
    expect(r.code, r.stderr).toBe(9);
    expect(r.out).toMatchObject({ rows: 2, created: 0, updated: 1, invalid: 1, read_requests: 3 });
    const log = await requestLog(t, since);
    // one list page first (the collection might have fitted in it), then one GET per id
    expect(log.filter((e) => e.method === 'GET').map((e) => e.path.replace(/\?.*/, '').split('/').pop())).toEqual([
      'contacts',
      id,
      'con_nosuchrecord',
    ]);
    expect(writes(log).map((e) => e.method)).toEqual(['PATCH']);
    expect(readFileSync(`${path}.rejects.csv`, 'utf8')).toMatch(/NOT_FOUND,"?no contacts record has id/);
  });

  it('a reconcile and a create of the same file are two jobs: neither answers for the other', async () => {
    const path = file('twojobs.csv', 'email,title\ntwojobs.1@example.com,A\n');
    expect((await json(['batch', 'contacts', path])).out).toMatchObject({ created: 1 });
    expect((await json(['batch', 'contacts', path, '--match', 'email'])).out).toMatchObject({
      created: 0,
      unchanged: 1,
    });
    // the create's journal is still its own: the same create again sends nothing
    const since = await logLength(t);
    const again = await json(['batch', 'contacts', path]);
    expect(again.stderr).toMatch(/already imported/);
    expect(writes(await requestLog(t, since))).toEqual([]);
    expect((await t.countByEmail('twojobs')).get('twojobs.1@example.com')).toBe(1);
  });

  it('an exported list matched back: text cells of number and boolean fields created as the CRM holds them; owner_id updated', async () => {
    const id = await make({ email: 'typed.1@example.com', score: 7, vip: true });
    const path = file(
      'typed.csv',
      'email,score,vip,owner_id\ntyped.1@example.com,7,true,usr_user\ntyped.2@example.com,20,false,usr_user\n',
    );
    const r = await json(['batch', 'contacts', path, '--match', 'email']);
    expect(r.out).toMatchObject({ created: 1, updated: 1, unchanged: 0 });
    expect(await getRecord(t, 'contacts', id)).toMatchObject({ score: 7, vip: true, owner_id: 'usr_user' });
    const made = readFileSync(`${path}.created.csv`, 'utf8').split(/\r?\n/)[1]!.split(',')[0]!;
    expect(await getRecord(t, 'contacts', made)).toMatchObject({ email: 'typed.2@example.com', score: 20, vip: false });
  });

  it('Ctrl-C while sending: the summary says what was done and what is left, and the same command finishes it', async () => {
    const ids: string[] = [];
    for (let i = 1; i <= 40; i++) ids.push(await make({ email: `stop.${i}@example.com`, title: 'Old' }));
    const rows = ids.map((_, i) => `stop.${i + 1}@example.com,${i < 30 ? 'New' : 'Old'}`);
    const path = file('stop.csv', `email,title\n${rows.join('\n')}\n`);
    await t.control('/faults', { latency_ms: 20 });
    const since = await logLength(t);
    const args = ['batch', 'contacts', path, '--match', 'email', '--concurrency', '1'];
    const stopped = await stopAfter(t, args, {
      env: t.env('admin'),
      cwd: dir,
      method: 'PATCH',
      after: 5,
      since,
      signal: 'SIGINT',
    });
    expect(stopped.code, stopped.stderr).toBe(130);
    expect(stopped.stderr).toMatch(
      /Interrupted: created 0, updated \d+, 10 unchanged, \d+ not sent yet \(40 rows of contacts\)/,
    );
    const again = await json(args);
    expect(again.code, again.stderr).toBe(0);
    expect(Math.max(...appliedPerId(await requestLog(t, since), 'PATCH', 'contacts').values())).toBe(1);
    expect(appliedPerId(await requestLog(t, since), 'PATCH', 'contacts').size).toBe(30);
  });

  it('stopped by a server that fails every PATCH: the error gives the command that resumes, and it finishes the run', async () => {
    const ids: string[] = [];
    for (let i = 1; i <= 12; i++) ids.push(await make({ email: `down.${i}@example.com`, title: 'Old' }));
    const path = file(
      'down file.csv',
      `email,title\n${ids.map((_, i) => `down.${i + 1}@example.com,New`).join('\n')}\n`,
    );
    await t.control('/faults', { fail_rate: 1, faults: { '500': 1 }, paths: '/contacts/con_' });
    const since = await logLength(t);
    const args = ['batch', 'contacts', path, '--match', 'email', '--concurrency', '1'];
    const stopped = await crm(['--max-retries', '0', ...args]);
    expect(stopped.code, stopped.stderr).toBe(8);
    expect(stopped.stderr).toMatch(/Stopped: created 0, updated 0, .*not sent yet \(12 rows of contacts\)/);
    // the command as typed, the path quoted as a shell reads it back
    expect(stopped.stderr).toContain(
      `to resume, run: crm --max-retries 0 batch contacts '${path}' --match email --concurrency 1`,
    );
    await t.control('/faults', { fail_rate: 0, faults: {} });
    const again = await json(args);
    expect(again.code, again.stderr).toBe(0);
    expect(appliedPerId(await requestLog(t, since), 'PATCH', 'contacts').size).toBe(12);
  });

  it('--plan never replaces the input or a file the run writes', async () => {
    const path = file('self.csv', 'email,title\nself.1@example.com,A\n');
    const r = await crm(['batch', 'contacts', path, '--match', 'email', '--dry-run', '--plan', path]);
    expect(r.code).toBe(2);
    expect(readFileSync(path, 'utf8')).toBe('email,title\nself.1@example.com,A\n');
    expect((await crm(['batch', 'contacts', path, '--match', 'email', '--plan', `${path}.undo.csv`])).code).toBe(2);
  });
});

describe('crm batch --match: exactly once under faults and kill -9', () => {
  it('faults after the write on POST and PATCH: each create and each PATCH applied once', async () => {
    const ids = await Promise.all([1, 2, 3].map((i) => make({ email: `fault.${i}@example.com`, title: 'Old' })));
    const rows = [
      ...[1, 2, 3].map((i) => `fault.${i}@example.com,New`),
      ...[4, 5].map((i) => `fault.${i}@example.com,Made`),
    ];
    const path = file('fault.csv', `email,title\n${rows.join('\n')}\n`);
    await t.control('/faults', {
      next: [
        { kind: '500-after-write', method: 'POST', path: '/contacts/batch' },
        { kind: 'drop-after-write', method: 'PATCH', path: `/contacts/${ids[1]}` },
      ],
    });
    const since = await logLength(t);
    const r = await json(['batch', 'contacts', path, '--match', 'email']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.out).toMatchObject({ created: 2, updated: 3 });
    const log = await requestLog(t, since);
    expect([...appliedPerId(log, 'PATCH', 'contacts').values()]).toEqual([1, 1, 1]);
    expect([...appliedPerKey(log, 'POST').values()]).toEqual([1]);
    expect([...(await t.countByEmail('fault')).values()]).toEqual([1, 1, 1, 1, 1]);
  });

  it.each([11, 23, 37])(
    'kill -9 at a seeded point (seed %i), then the same command: nothing applied twice, the file agrees',
    async (seed) => {
      const tag = `kill${seed}`;
      const n = 60;
      const ids: string[] = [];
      for (let i = 1; i <= n; i++) ids.push(await make({ email: `${tag}.${i}@example.com`, title: 'Old' }));
      // every existing record changes; 150 more are created (two chunks)
      const rows = [
        ...ids.map((_, i) => `${tag}.${i + 1}@example.com,New`),
        ...Array.from({ length: 150 }, (_, i) => `${tag}.${n + i + 1}@example.com,Made`),
      ];
      const path = file(`${tag}.csv`, `email,title\n${rows.join('\n')}\n`);
      await t.control('/faults', { latency_ms: 5 });
      const since = await logLength(t);
      const random = prng(seed);
      const after = 1 + Math.floor(random() * (n - 5));
      const args = ['batch', 'contacts', path, '--match', 'email', '--concurrency', '4'];
      const killed = await stopAfter(t, args, {
        env: t.env('admin'),
        cwd: dir,
        method: 'PATCH',
        after,
        since,
        signal: 'SIGKILL',
      });
      expect(killed.child.signalCode).toBe('SIGKILL');
      const again = await json(args);
      expect(again.code, again.stderr).toBe(0);
      const log = await requestLog(t, since);
      const patched = appliedPerId(log, 'PATCH', 'contacts');
      expect(Math.max(...patched.values())).toBe(1);
      expect(patched.size).toBe(n);
      expect([...appliedPerKey(log, 'POST').values()].every((v) => v <= 1)).toBe(true);
      const counts = await t.countByEmail(tag);
      expect(counts.size).toBe(n + 150);
      expect([...counts.values()].every((v) => v === 1)).toBe(true);
      // the created file lists each of the 150 records once (a create replayed by the rerun is not listed again)
      const listed = readFileSync(`${path}.created.csv`, 'utf8').split(/\r?\n/).slice(1).filter(Boolean);
      expect(new Set(listed.map((l) => l.split(',')[0])).size).toBe(150);
      expect(listed.length).toBe(150);
      // and the next run finds nothing to do
      const third = await json(args);
      expect(third.out).toMatchObject({ created: 0, updated: 0, unchanged: n + 150 });
    },
  );

  it('kill -9, then --no-resume: a new plan from a new read (nothing twice), not the interrupted one', async () => {
    const ids: string[] = [];
    for (let i = 1; i <= 30; i++) ids.push(await make({ email: `fresh.${i}@example.com`, title: 'Old' }));
    const path = file('fresh.csv', `email,title\n${ids.map((_, i) => `fresh.${i + 1}@example.com,New`).join('\n')}\n`);
    await t.control('/faults', { latency_ms: 5 });
    const since = await logLength(t);
    const args = ['batch', 'contacts', path, '--match', 'email', '--concurrency', '2'];
    await stopAfter(t, args, { env: t.env('admin'), cwd: dir, method: 'PATCH', after: 10, since, signal: 'SIGKILL' });
    const r = await json([...args, '--no-resume']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/resuming the job/);
    expect((r.out!.updated as number) + (r.out!.unchanged as number)).toBe(30);
    expect(Math.max(...appliedPerId(await requestLog(t, since), 'PATCH', 'contacts').values())).toBe(1);
  });
});

describe('why rows failed (issue 29, from the trial)', () => {
  it('a reconcile names the server’s reasons, grouped, as a plain import does', async () => {
    const path = file('why.csv', 'email,title\nbroken.example.com,X\nwhy-ok@reconcile.test,Y\n');
    const r = await crm(['batch', 'contacts', path, '--match', 'email']);
    expect(r.code, r.stderr).toBe(9);
    expect(r.stderr).toMatch(/^Why rows failed:\n {2}1 × VALIDATION_FAILED {2}email: invalid email$/m);
  });
});
