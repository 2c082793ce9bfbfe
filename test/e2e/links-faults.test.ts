// End to end: `crm links import` and `crm links add --file` against the sandbox through faults (issue 12).
// Each row is one POST carrying its own `crm-link-…` Idempotency-Key (or one PUT for a meeting
// association): through 500s before and after the write, dropped connections, 429s, kill -9 at seeded
// random points, Ctrl-C and reruns, every link is made exactly once (the sandbox's request log: a POST
// carried out by the handler, or written before an injected failure; a replay is not counted), none is
// lost; a rerun with another key or on a changed file is refused with nothing sent; one file of ids
// linked to two parents is two jobs.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { allScopes } from '../../src/api/resources.js';
import {
  appliedPerKey,
  getRecord,
  listIds,
  logLength,
  makeContacts,
  prng,
  requestLog,
  stopAfter,
  type LogEntry,
} from '../helpers/bulk.js';
import { runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';

const OTHER_KEY = 'service_live_r0tat3dK3yZyXwVuTsRqPoNmLkJiHgFeDc5432';

let t: TestSandbox;
let dir: string;
const seeded: Record<string, string[]> = {};
beforeAll(async () => {
  t = await startTestSandbox({
    seed: 12,
    rateLimit: 1_000_000,
    orgRateLimit: 1_000_000,
    rateWindowMs: 1000,
    extraKeys: [{ key: OTHER_KEY, version: 2, scopes: allScopes(), access: 'organization', user: 'usr_admin' }],
  });
  dir = mkdtempSync(join(tmpdir(), 'crm-links-faults-'));
  for (const r of ['companies', 'deals', 'notes', 'segments', 'meetings']) seeded[r] = await listIds(t, `/${r}`);
});
afterAll(async () => {
  await t?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});
afterEach(async () => {
  await t.control('/faults', { fail_rate: 0, latency_ms: 0, faults: {}, next: [] });
});

const crm = (args: string[], env = t.env('admin')) => runCrm(args, { env, cwd: dir, timeoutMs: 60_000 });
const file = (name: string, text: string) => (writeFileSync(join(dir, name), text), join(dir, name));
const pairs = (name: string, header: string, rows: Array<[string, string]>) =>
  file(name, `${header}\n${rows.map((r) => r.join(',')).join('\n')}\n`);

/** Every POST of the log carried a `crm-link-` key; `rows` keys, each applied exactly once. */
function expectEachKeyOnce(log: LogEntry[], rows: number): void {
  const counts = appliedPerKey(log, 'POST');
  expect(
    [...counts.keys()].filter((k) => !k.startsWith('crm-link-')),
    'POSTs without a crm-link- key',
  ).toEqual([]);
  expect(
    [...counts].filter(([, n]) => n !== 1).map(([k, n]) => `${k}: ${n}`),
    'keys not applied exactly once',
  ).toEqual([]);
  expect(counts.size).toBe(rows);
}

/** Each parent → child pair linked, and each child listed once under its parent. */
async function expectLinked(parent: string, relation: string, rows: Array<[string, string]>): Promise<void> {
  for (const p of new Set(rows.map(([p]) => p))) {
    const children = await listIds(t, `/${parent}/${p}/${relation}`);
    expect(children.length, `${parent}/${p}/${relation} lists a child twice`).toBe(new Set(children).size);
    expect(children).toEqual(expect.arrayContaining(rows.filter(([q]) => q === p).map(([, c]) => c)));
  }
}

const FAULTS = ['500', '500-after-write', 'drop', 'drop-after-write', '429'];

describe('crm links import through faults', () => {
  const cases = () => {
    const [co, d, n, s] = [seeded.companies!, seeded.deals!, seeded.notes!, seeded.segments!];
    return [
      { parent: 'deals', relation: 'contacts', header: 'deal_id,contact_id', parents: d.slice(0, 6), children: 'new' },
      {
        parent: 'deals',
        relation: 'companies',
        header: 'deal_id,company_id',
        parents: d.slice(6, 12),
        children: co.slice(0, 6),
      },
      { parent: 'notes', relation: 'records', header: 'note_id,record_id', parents: n.slice(0, 6), children: 'new' },
      {
        parent: 'segments',
        relation: 'members',
        header: 'segment_id,contact_id',
        parents: [...s, ...s].slice(0, 6),
        children: 'new',
      },
    ] as const;
  };

  for (const i of [0, 1, 2, 3])
    it(`link POSTs (case ${i}): 500 before and after the write, drops before and after, 429s: exit 0, every link made once under its own key`, async () => {
      const c = cases()[i]!;
      const children = c.children === 'new' ? await makeContacts(t, `lf${i}`, 6) : c.children;
      const rows = c.parents.map((p, j): [string, string] => [p, children[j]!]);
      const path = pairs(`faults-${i}.csv`, c.header, rows);
      const since = await logLength(t);
      const at = `/${c.parent}/[^/]+/${c.relation}$`;
      await t.control('/faults', {
        next: FAULTS.map((kind) => ({ kind, method: 'POST', path: at, count: kind === '429' ? 2 : 1 })),
      });
      const r = await crm(['-o', 'json', 'links', 'import', c.parent, c.relation, path, '--concurrency', '2']);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({
        rows: 6,
        operation: 'link',
        linked: 6,
        failed: 0,
        invalid: 0,
        in_doubt: 0,
      });
      const log = await requestLog(t, since);
      expect(log.flatMap((e) => e.fault ?? []).sort()).toEqual([...FAULTS, '429'].sort());
      // the rows written before their failure were answered by a replay of the same key
      expect(log.filter((e) => e.replayed).length).toBeGreaterThanOrEqual(2);
      expectEachKeyOnce(log, 6);
      await expectLinked(c.parent, c.relation, rows);
    });

  it('meeting PUTs through the same faults: exit 0, each meeting holds the deal or company asked', async () => {
    const [co, d, m] = [seeded.companies!, seeded.deals!, seeded.meetings!];
    for (const [relation, children, meetings] of [
      ['deal', d.slice(6, 12), m.slice(0, 6)],
      ['company', co.slice(6, 12), m.slice(6, 12)],
    ] as const) {
      const rows = meetings.map((mid, j): [string, string] => [mid, children[j]!]);
      const path = pairs(`meetings-${relation}.csv`, `meeting_id,${relation}_id`, rows);
      const since = await logLength(t);
      await t.control('/faults', {
        next: FAULTS.map((kind) => ({
          kind,
          method: 'PUT',
          path: `/meetings/[^/]+/${relation}$`,
          count: kind === '429' ? 2 : 1,
        })),
      });
      const r = await crm(['-o', 'json', 'links', 'import', 'meetings', relation, path, '--concurrency', '2']);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ rows: 6, linked: 6, failed: 0, invalid: 0, in_doubt: 0 });
      const log = await requestLog(t, since);
      expect(log.flatMap((e) => e.fault ?? []).sort()).toEqual([...FAULTS, '429'].sort());
      expect(log.filter((e) => e.method !== 'PUT' && e.method !== 'GET')).toEqual([]);
      for (const [mid, child] of rows)
        expect(await getRecord(t, 'meetings', `${mid}/${relation}`)).toMatchObject({ id: child });
    }
  });
});

describe('crm links import: kill -9 and a rerun', () => {
  const jobs = () => [
    { parent: 'deals', relation: 'contacts', header: 'deal_id,contact_id', id: seeded.deals![12]! },
    { parent: 'notes', relation: 'records', header: 'note_id,record_id', id: seeded.notes![8]! },
    { parent: 'segments', relation: 'members', header: 'segment_id,contact_id', id: seeded.segments![1]! },
  ];
  for (const seed of [1, 2, 3])
    it(`kill -9 at a random point (seed ${seed}), then a rerun: every link there once, none lost`, async () => {
      const rnd = prng(seed);
      const job = jobs()[seed - 1]!;
      const rows = (await makeContacts(t, `lk${seed}`, 15)).map((c): [string, string] => [job.id, c]);
      const path = pairs(`kill-${seed}.csv`, job.header, rows);
      const args = ['links', 'import', job.parent, job.relation, path, '--concurrency', '3'];
      const since = await logLength(t);
      await t.control('/faults', { latency_ms: 10 + Math.floor(rnd() * 20) });
      const after = 1 + Math.floor(rnd() * 10);
      const killed = await stopAfter(t, args, {
        env: t.env('admin'),
        cwd: dir,
        method: 'POST',
        after,
        since,
        signal: 'SIGKILL',
      });
      expect(killed.signal).toBe('SIGKILL');
      expect((await requestLog(t, since)).filter((e) => e.method === 'POST').length).toBeLessThan(15);
      await t.control('/faults', { latency_ms: 0 });
      const rerun = await crm(['-o', 'json', ...args]);
      expect(rerun.code, rerun.stderr).toBe(0);
      const s = JSON.parse(rerun.stdout) as Record<string, number>;
      expect(s).toMatchObject({ rows: 15, failed: 0, invalid: 0, in_doubt: 0 });
      expect(s.linked! + s.skipped!).toBe(15);
      expectEachKeyOnce(await requestLog(t, since), 15);
      await expectLinked(job.parent, job.relation, rows);
    });
});

describe('crm links import: Ctrl-C under a low rate limit', () => {
  let slow: TestSandbox;
  beforeAll(async () => {
    slow = await startTestSandbox({ seed: 12, rateLimit: 4, orgRateLimit: 1_000_000, rateWindowMs: 250 });
  });
  afterAll(async () => slow?.close());

  it('exit 130 naming the command to resume; that command finishes, sending no link answered before', async () => {
    const deal = (await listIds(slow, '/deals'))[0]!;
    const rows = (await makeContacts(slow, 'lc', 24)).map((c): [string, string] => [deal, c]);
    const path = pairs('ctrl-c.csv', 'deal_id,contact_id', rows);
    const since = await logLength(slow);
    const stopped = await stopAfter(slow, ['links', 'import', 'deals', 'contacts', path, '--concurrency', '2'], {
      ...{ env: slow.env('admin'), cwd: dir, method: 'POST', after: 6, since, signal: 'SIGINT' },
    });
    expect(stopped.code, stopped.stderr).toBe(130);
    expect(stopped.stderr).toMatch(/interrupted after \d+ of 24 rows: \d+ rows? linked; \d+ rows? of 24 left/);
    const resume = /Hint: to resume, run: (.*)$/m.exec(stopped.stderr)?.[1];
    expect(resume).toBe(`crm links import deals contacts ${path} --concurrency 2`);
    const mid = await logLength(slow);
    const keysBefore = new Set(
      (await requestLog(slow, since)).filter((e) => e.method === 'POST').map((e) => e.headers['idempotency-key']),
    );
    expect(keysBefore.size).toBeGreaterThan(0);
    expect(keysBefore.size).toBeLessThan(24);

    const again = await runCrm(['-o', 'json', ...resume!.split(' ').slice(1)], {
      env: slow.env('admin'),
      cwd: dir,
      timeoutMs: 60_000,
    });
    expect(again.code, again.stderr).toBe(0);
    const s = JSON.parse(again.stdout) as Record<string, number>;
    expect(s.linked! + s.skipped!).toBe(24);
    expect(s.skipped).toBe(keysBefore.size);
    const rest = (await requestLog(slow, mid)).filter((e) => e.method === 'POST');
    expect(rest.filter((e) => keysBefore.has(e.headers['idempotency-key']))).toEqual([]);
    expectEachKeyOnce(await requestLog(slow, since), 24);
    await slow.control('/limits', { rate_limit: 1_000_000 }); // the check's GET must not meet the window crm just spent
    const children = await listIds(slow, `/deals/${deal}/contacts`);
    expect(children).toEqual(expect.arrayContaining(rows.map(([, c]) => c)));
    expect(children.length).toBe(new Set(children).size);
  });
});

describe('crm links import: a rotated key, a changed file', () => {
  it('killed, then rerun with another key: exit 2, nothing sent; a changed file: exit 2, nothing sent; the same file and key finish it', async () => {
    const seg = seeded.segments![0]!;
    const rows = (await makeContacts(t, 'lo', 16)).map((c): [string, string] => [seg, c]);
    const path = pairs('rotated.csv', 'segment_id,contact_id', rows);
    const args = ['links', 'import', 'segments', 'members', path, '--concurrency', '1'];
    const since = await logLength(t);
    await t.control('/faults', { latency_ms: 20 });
    const killed = await stopAfter(t, args, {
      env: t.env('admin'),
      cwd: dir,
      method: 'POST',
      after: 4,
      since,
      signal: 'SIGKILL',
    });
    expect(killed.signal).toBe('SIGKILL');
    await t.control('/faults', { latency_ms: 0 });
    await new Promise((r) => setTimeout(r, 100)); // the request left in flight lands

    const before = await logLength(t);
    const rotated = await crm(args, t.env('admin', { CRM_API_KEY: OTHER_KEY }));
    expect(rotated.code, rotated.stderr).toBe(2);
    expect(rotated.stderr).toMatch(/with another API key \(service_live_…\w{4}, /);
    expect(rotated.stderr).toMatch(/nothing was sent/);
    expect(rotated.stderr).not.toContain(OTHER_KEY);
    expect(rotated.stderr).not.toContain(t.sb.keys.admin);
    expect(await logLength(t)).toBe(before);

    const original = readFileSync(path, 'utf8');
    writeFileSync(path, original.replace(`${seg},${rows[9]![1]}`, `${seg},${rows[10]![1]}`));
    const changed = await crm(args);
    expect(changed.code, changed.stderr).toBe(2);
    expect(changed.stderr).toMatch(/has changed since it was .*nothing was sent/);
    expect(await logLength(t)).toBe(before);

    writeFileSync(path, original);
    const done = await crm(['-o', 'json', ...args]);
    expect(done.code, done.stderr).toBe(0);
    expectEachKeyOnce(await requestLog(t, since), 16);
    await expectLinked('segments', 'members', rows);
  });
});

describe('crm links add --file: one file of ids, two parents', () => {
  it('links the ids to both segments under distinct keys; each rerun sends nothing', async () => {
    const [s1, s2] = seeded.segments!.slice(2, 4) as [string, string];
    const contacts = await makeContacts(t, 'l2', 5);
    const ids = file('ids.txt', `${contacts.join('\n')}\n`);
    const since = await logLength(t);
    for (const seg of [s1, s2]) {
      const r = await crm(['-o', 'json', 'links', 'add', 'segments', seg, 'members', '--file', ids]);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({
        resource: `segments/${seg}/members`,
        rows: 5,
        linked: 5,
        skipped: 0,
        failed: 0,
      });
    }
    expectEachKeyOnce(await requestLog(t, since), 10);
    for (const seg of [s1, s2])
      await expectLinked(
        'segments',
        'members',
        contacts.map((c): [string, string] => [seg, c]),
      );
    for (const seg of [s1, s2]) {
      const mark = await logLength(t);
      const r = await crm(['-o', 'json', 'links', 'add', 'segments', seg, 'members', '--file', ids]);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ linked: 0, skipped: 5, requests: 0 });
      // only the check that the parent exists (a GET): no link sent
      expect((await requestLog(t, mark)).filter((e) => e.method !== 'GET')).toEqual([]);
    }
  });
});
