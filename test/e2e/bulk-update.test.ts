// End to end: `crm batch contacts FILE --update` against the sandbox (issue 12). Each row is one PATCH
// with its own Idempotency-Key: through faults before and after the write, kill -9 at random points,
// Ctrl-C and reruns, every row is applied exactly once (the sandbox's request log: a PATCH carried
// out by the handler, or written before an injected failure; a replay says Idempotent-Replayed and
// is not counted), none is lost; a fed-back rejects file updates its rows; a rerun with another key
// or on a changed file is refused with nothing sent.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { allScopes } from '../../src/api/resources.js';
import {
  appliedPerId,
  getRecord,
  logLength,
  makeContacts,
  prng,
  requestLog,
  sentIds,
  stopAfter,
  rowFaults,
} from '../helpers/bulk.js';
import { runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';

const OTHER_KEY = 'service_live_r0tat3dK3yZyXwVuTsRqPoNmLkJiHgFeDc9876';

let t: TestSandbox;
let dir: string;
beforeAll(async () => {
  t = await startTestSandbox({
    rateLimit: 1_000_000,
    orgRateLimit: 1_000_000,
    rateWindowMs: 1000,
    extraKeys: [{ key: OTHER_KEY, version: 2, scopes: allScopes(), access: 'organization', user: 'usr_admin' }],
  });
  dir = mkdtempSync(join(tmpdir(), 'crm-bulk-update-'));
});
afterAll(async () => {
  await t?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});
afterEach(async () => {
  await t.control('/faults', { fail_rate: 0, latency_ms: 0, faults: {}, next: [] });
});

const crm = (args: string[], env = t.env('admin')) => runCrm(args, { env, cwd: dir, timeoutMs: 60_000 });

/** An update file: id,first_name,last_name with `After <tag> <i>` for each id (`ids[i] === ''`: a row without an id). */
function updateFile(tag: string, ids: string[]): string {
  const path = join(dir, `${tag}.csv`);
  writeFileSync(path, `id,first_name,last_name\n${ids.map((id, i) => `${id},After ${tag} ${i},L${i}`).join('\n')}\n`);
  return path;
}

/** Every id updated exactly once over the log since `since`, and its record holding the row's values. */
async function expectUpdatedOnce(tag: string, ids: string[], since: number): Promise<void> {
  const counts = appliedPerId(await requestLog(t, since), 'PATCH', 'contacts');
  expect(
    ids.filter((id) => counts.get(id) !== 1).map((id) => `${id}: ${counts.get(id) ?? 0}`),
    'ids not applied exactly once',
  ).toEqual([]);
  expect(
    [...counts.keys()].filter((id) => !ids.includes(id)),
    'PATCHes of other records',
  ).toEqual([]);
  for (const [i, id] of ids.entries())
    expect(await getRecord(t, 'contacts', id)).toMatchObject({ first_name: `After ${tag} ${i}`, last_name: `L${i}` });
}

describe('crm batch --update', () => {
  it('500 before and after the write, dropped connections before and after, 429s: every row applied once, exit 0, counts right', async () => {
    const ids = await makeContacts(t, 'uf', 12);
    const path = updateFile('uf', ids);
    const since = await logLength(t);
    const at = (i: number) => `/contacts/${ids[i]}$`;
    await t.control('/faults', {
      next: [...rowFaults('PATCH', at), { kind: 'html-502', method: 'PATCH', path: at(0) }],
    });
    const r = await crm(['-o', 'json', 'batch', 'contacts', path, '--update', '--concurrency', '2']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      rows: 12,
      operation: 'update',
      updated: 12,
      failed: 0,
      invalid: 0,
      in_doubt: 0,
      rejects_file: null,
    });
    const log = await requestLog(t, since);
    // every fault was met, and the rows written before one were answered by a replay
    const faults = log.filter((e) => e.fault !== null).map((e) => e.fault);
    expect(faults.sort()).toEqual([
      '429',
      '429',
      '500',
      '500-after-write',
      '500-after-write',
      'drop',
      'drop-after-write',
      'html-502',
    ]);
    for (const i of [3, 7, 11])
      expect(
        log.some((e) => e.path.endsWith(`/${ids[i]}`) && e.replayed),
        `row ${i} replayed`,
      ).toBe(true);
    // one Idempotency-Key per row, the same on every attempt of that row
    const keys = new Map<string, Set<string>>();
    for (const e of log.filter((e) => e.method === 'PATCH')) {
      const id = e.path.split('/').pop()!;
      keys.set(id, (keys.get(id) ?? new Set()).add(e.headers['idempotency-key']!));
    }
    expect([...keys.values()].every((k) => k.size === 1 && /^crm-update-/.test([...k][0]!))).toBe(true);
    expect(new Set([...keys.values()].map((k) => [...k][0])).size).toBe(12);
    await expectUpdatedOnce('uf', ids, since);
  });

  for (const seed of [1, 2, 3]) {
    it(`kill -9 at a random point (seed ${seed}), then a rerun: no row applied twice, none lost`, async () => {
      const rnd = prng(seed);
      const tag = `uk${seed}`;
      const ids = await makeContacts(t, tag, 15);
      const path = updateFile(tag, ids);
      const since = await logLength(t);
      await t.control('/faults', { latency_ms: 10 + Math.floor(rnd() * 20) });
      const after = 1 + Math.floor(rnd() * 10);
      const killed = await stopAfter(t, ['batch', 'contacts', path, '--update', '--concurrency', '3'], {
        ...{ env: t.env('admin'), cwd: dir, method: 'PATCH', after, since, signal: 'SIGKILL' },
      });
      expect(killed.signal).toBe('SIGKILL');
      // killed part-way: not every row had reached the server
      expect(sentIds(await requestLog(t, since), 'PATCH', 'contacts').length).toBeLessThan(15);
      await t.control('/faults', { latency_ms: 0 });
      const rerun = await crm(['-o', 'json', 'batch', 'contacts', path, '--update', '--concurrency', '3']);
      expect(rerun.code, rerun.stderr).toBe(0);
      const s = JSON.parse(rerun.stdout) as Record<string, number>;
      expect(s).toMatchObject({ rows: 15, failed: 0, invalid: 0, in_doubt: 0 });
      expect(s.updated! + s.skipped!).toBe(15);
      await expectUpdatedOnce(tag, ids, since);
    });
  }

  it('Ctrl-C mid-run: exit 130 naming the command to resume; that command finishes, sending no row answered before', async () => {
    const ids = await makeContacts(t, 'uc', 30);
    const path = updateFile('uc', ids);
    const since = await logLength(t);
    await t.control('/faults', { latency_ms: 30 });
    const stopped = await stopAfter(t, ['batch', 'contacts', path, '--update', '--concurrency', '2'], {
      ...{ env: t.env('admin'), cwd: dir, method: 'PATCH', after: 6, since, signal: 'SIGINT' },
    });
    expect(stopped.code, stopped.stderr).toBe(130);
    expect(stopped.stderr).toMatch(/interrupted after \d+ of 30 rows: \d+ rows? updated; \d+ rows? of 30 left/);
    const resume = /Hint: to resume, run: (.*)$/m.exec(stopped.stderr)?.[1];
    expect(resume).toBe(`crm batch contacts ${path} --update --concurrency 2`);
    const mid = await logLength(t);
    const answered = new Set(sentIds(await requestLog(t, since), 'PATCH', 'contacts'));
    expect(answered.size).toBeGreaterThan(0);
    expect(answered.size).toBeLessThan(30);

    await t.control('/faults', { latency_ms: 0 });
    const again = await crm(['-o', 'json', ...resume!.split(' ').slice(1)]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).not.toMatch(/without an answer/);
    const s = JSON.parse(again.stdout) as Record<string, number>;
    expect(s.updated! + s.skipped!).toBe(30);
    expect(s.skipped).toBe(answered.size);
    // the work in flight at Ctrl-C was answered and journaled: the rerun sends only the rest
    expect(sentIds(await requestLog(t, mid), 'PATCH', 'contacts').filter((id) => answered.has(id))).toEqual([]);
    await expectUpdatedOnce('uc', ids, since);
  });

  it('a row without an id and one whose record is gone (404) go to the rejects file; fixed and fed back as printed, they are updated, nothing twice', async () => {
    const ids = await makeContacts(t, 'ur', 6);
    const given = ids.map((id, i) => (i === 2 ? '' : i === 4 ? 'con_doesnotexist' : id));
    const path = updateFile('ur', given);
    const since = await logLength(t);
    const first = await crm(['-o', 'json', 'batch', 'contacts', path, '--update']);
    expect(first.code, first.stderr).toBe(9);
    expect(JSON.parse(first.stdout)).toMatchObject({ rows: 6, updated: 4, failed: 1, invalid: 1, in_doubt: 0 });
    // the same command (its global flags kept) on the rejects file
    const command = /run `crm ([^`]+)`/.exec(first.stderr)?.[1];
    expect(command, first.stderr).toBe(`-o json batch contacts ${path}.update.rejects.csv --update`);
    const rejectsPath = `${path}.update.rejects.csv`;
    const rejects = parse<Record<string, string>>(readFileSync(rejectsPath, 'utf8'), { columns: true });
    expect(rejects.map((r) => [r._line, r.id, r._error_code])).toEqual([
      ['4', '', 'MISSING_ID'],
      ['6', 'con_doesnotexist', 'NOT_FOUND'],
    ]);
    // fixed: the right ids filled in
    const fixed = readFileSync(rejectsPath, 'utf8')
      .replace(/^,After ur 2,/m, `${ids[2]},After ur 2,`)
      .replace('con_doesnotexist', ids[4]!);
    writeFileSync(rejectsPath, fixed);
    const fed = await crm(command!.split(' '));
    expect(fed.code, fed.stderr).toBe(0);
    expect(JSON.parse(fed.stdout)).toMatchObject({ rows: 2, updated: 2, failed: 0, invalid: 0 });
    await expectUpdatedOnce('ur', ids, since);
  });

  it('killed, then rerun with another key: exit 2 with the reason, nothing sent; a changed file: exit 2, nothing sent; the same file and key finish it', async () => {
    const ids = await makeContacts(t, 'uo', 20);
    const path = updateFile('uo', ids);
    const since = await logLength(t);
    await t.control('/faults', { latency_ms: 20 });
    const killed = await stopAfter(t, ['batch', 'contacts', path, '--update', '--concurrency', '1'], {
      ...{ env: t.env('admin'), cwd: dir, method: 'PATCH', after: 4, since, signal: 'SIGKILL' },
    });
    expect(killed.signal).toBe('SIGKILL');
    await t.control('/faults', { latency_ms: 0 });
    // let the request the killed run left in flight land before counting
    await new Promise((r) => setTimeout(r, 100));

    const before = await logLength(t);
    const rotated = await crm(['batch', 'contacts', path, '--update'], t.env('admin', { CRM_API_KEY: OTHER_KEY }));
    expect(rotated.code, rotated.stderr).toBe(2);
    expect(rotated.stderr).toMatch(
      /was partly used to update contacts \(that run did not finish\) at .* with another API key \(service_live_…[\w]{4}, /,
    );
    expect(rotated.stderr).toMatch(/nothing was sent/);
    expect(rotated.stderr).toMatch(/every row done then would be sent again/);
    expect(rotated.stderr).toMatch(/--no-resume/);
    expect(rotated.stderr).not.toContain(OTHER_KEY);
    expect(rotated.stderr).not.toContain(t.sb.keys.admin);
    // nothing that writes (an update reads the kinds its fields' records hold, one page, before the journal refuses)
    const writes = async () => (await requestLog(t, before)).filter((e) => e.method !== 'GET');
    expect(await writes()).toEqual([]);

    const original = readFileSync(path, 'utf8');
    writeFileSync(path, original.replace('After uo 10,', 'After uo ten,'));
    const changed = await crm(['batch', 'contacts', path, '--update']);
    expect(changed.code, changed.stderr).toBe(2);
    expect(changed.stderr).toMatch(/has changed since it was .*nothing was sent/);
    expect(await writes()).toEqual([]);

    writeFileSync(path, original);
    const done = await crm(['-o', 'json', 'batch', 'contacts', path, '--update']);
    expect(done.code, done.stderr).toBe(0);
    await expectUpdatedOnce('uo', ids, since);
  });
});
