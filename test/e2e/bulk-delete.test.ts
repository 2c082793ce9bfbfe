// End to end: `crm batch contacts FILE --delete` against the sandbox (issue 12). One DELETE per row
// (no Idempotency-Key: the server ignores it there): through faults before and after the write,
// kill -9 at random points, Ctrl-C and reruns, every id ends gone and counted deleted (or skipped),
// never a reject; and the confirmation: without a terminal --yes is required, on a terminal (tmux)
// the count has to be typed back.
import { mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
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
import { HAS_TMUX, sh, startTmux, type Tmux } from '../helpers/tmux.js';

// .ci/run installs tmux and sets CRM_REQUIRE_SHELLS; elsewhere a missing tmux skips those tests
const required = process.env.CRM_REQUIRE_SHELLS === '1';

let t: TestSandbox;
let dir: string;
let tm: Tmux | undefined;
beforeAll(async () => {
  t = await startTestSandbox({ rateLimit: 1_000_000, orgRateLimit: 1_000_000, rateWindowMs: 1000 });
  dir = mkdtempSync(join(tmpdir(), 'crm-bulk-delete-'));
});
afterAll(async () => {
  await tm?.close();
  await t?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});
afterEach(async () => {
  await t.control('/faults', { fail_rate: 0, latency_ms: 0, faults: {}, next: [] });
});

/** 30 contacts, their delete (--yes) stopped by Ctrl-C after 6 DELETEs were seen (exit 130 checked). */
async function deleteInterrupted(tag: string) {
  const ids = await makeContacts(t, tag, 30);
  const path = deleteFile(tag, ids, true);
  const since = await logLength(t);
  await t.control('/faults', { latency_ms: 30 });
  const stopped = await stopAfter(t, ['batch', 'contacts', path, '--delete', '--yes'], {
    ...{ env: t.env('admin'), cwd: dir, method: 'DELETE', after: 6, since, signal: 'SIGINT' },
  });
  expect(stopped.code, stopped.stderr).toBe(130);
  return { ids, path, since, stopped };
}

const crm = (args: string[]) => runCrm(args, { env: t.env('admin'), cwd: dir, timeoutMs: 60_000 });

/** A delete file: one id per line (`bare`), or a CSV with an id column and another one. */
function deleteFile(tag: string, ids: string[], bare = false): string {
  const path = join(dir, bare ? `${tag}.txt` : `${tag}.csv`);
  writeFileSync(
    path,
    bare
      ? `${ids.join('\n')}\n`
      : `Record ID,Email\n${ids.map((id, i) => `${id},${tag}.${i}@example.com`).join('\n')}\n`,
  );
  return path;
}

async function expectGone(ids: string[]): Promise<void> {
  const left: string[] = [];
  for (const id of ids) if ((await getRecord(t, 'contacts', id)) !== undefined) left.push(id);
  expect(left, 'records not deleted').toEqual([]);
}

const deletesSince = async (since: number) => sentIds(await requestLog(t, since), 'DELETE', 'contacts');

describe('crm batch --delete', () => {
  it('500 before and after the write, dropped connections before and after, 429s (a file of bare ids): every id gone, exit 0, deleted = rows', async () => {
    const ids = await makeContacts(t, 'df', 12);
    const path = deleteFile('df', ids, true);
    const since = await logLength(t);
    const at = (i: number) => `/contacts/${ids[i]}$`;
    await t.control('/faults', {
      next: [...rowFaults('DELETE', at)],
    });
    const r = await crm(['-o', 'json', 'batch', 'contacts', path, '--delete', '--yes', '--concurrency', '2']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      rows: 12,
      operation: 'delete',
      deleted: 12,
      failed: 0,
      invalid: 0,
      in_doubt: 0,
      rejects_file: null,
    });
    const log = await requestLog(t, since);
    expect(
      log
        .filter((e) => e.fault !== null)
        .map((e) => e.fault)
        .sort(),
    ).toEqual(['429', '429', '500', '500-after-write', '500-after-write', 'drop', 'drop-after-write']);
    // the retries after a write met the 404 that means done
    for (const i of [3, 7, 11])
      expect(
        log
          .filter((e) => e.path.endsWith(`/${ids[i]}`))
          .map((e) => e.status)
          .at(-1),
        `row ${i}`,
      ).toBe(404);
    expect(existsSync(`${path}.delete.rejects.csv`)).toBe(false);
    await expectGone(ids);
  });

  for (const seed of [4, 5, 6]) {
    it(`kill -9 at a random point (seed ${seed}), then a rerun: every id gone, every row deleted or skipped, no rejects`, async () => {
      const rnd = prng(seed);
      const tag = `dk${seed}`;
      const ids = await makeContacts(t, tag, 15);
      const path = deleteFile(tag, ids);
      const args = ['batch', 'contacts', path, '--delete', '--id-column', 'Record ID', '--yes', '--concurrency', '3'];
      const since = await logLength(t);
      await t.control('/faults', { latency_ms: 10 + Math.floor(rnd() * 20) });
      const killed = await stopAfter(t, args, {
        env: t.env('admin'),
        cwd: dir,
        method: 'DELETE',
        after: 1 + Math.floor(rnd() * 10),
        since,
        signal: 'SIGKILL',
      });
      expect(killed.signal).toBe('SIGKILL');
      // killed part-way: not every row had reached the server
      expect(sentIds(await requestLog(t, since), 'DELETE', 'contacts').length).toBeLessThan(15);
      await t.control('/faults', { latency_ms: 0 });
      const rerun = await crm(['-o', 'json', ...args]);
      expect(rerun.code, rerun.stderr).toBe(0);
      const s = JSON.parse(rerun.stdout) as Record<string, number>;
      expect(s).toMatchObject({ rows: 15, failed: 0, invalid: 0, in_doubt: 0, rejects_file: null });
      expect(s.deleted! + s.skipped!).toBe(15);
      expect(existsSync(`${path}.delete.rejects.csv`)).toBe(false);
      await expectGone(ids);
    });
  }

  it('Ctrl-C mid-run: exit 130 naming the command to resume; that command deletes the rest, sending no row answered before', async () => {
    const { ids, path, since, stopped } = await deleteInterrupted('dc');
    expect(stopped.stderr).toMatch(/interrupted after \d+ of 30 rows: \d+ rows? deleted; \d+ rows? of 30 left/);
    const resume = /Hint: to resume, run: (.*)$/m.exec(stopped.stderr)?.[1];
    expect(resume).toBe(`crm batch contacts ${path} --delete --yes`);
    const mid = await logLength(t);
    const answered = new Set(await deletesSince(since));
    await t.control('/faults', { latency_ms: 0 });
    const again = await crm(['-o', 'json', ...resume!.split(' ').slice(1)]);
    expect(again.code, again.stderr).toBe(0);
    const s = JSON.parse(again.stdout) as Record<string, number>;
    expect(s).toMatchObject({ skipped: answered.size, deleted: 30 - answered.size, failed: 0 });
    expect((await deletesSince(mid)).filter((id) => answered.has(id))).toEqual([]);
    await expectGone(ids);
  });

  it('without --yes and without a terminal: exit 2, nothing deleted', async () => {
    const ids = await makeContacts(t, 'dn', 3);
    const path = deleteFile('dn', ids, true);
    const since = await logLength(t);
    const r = await crm(['batch', 'contacts', path, '--delete']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/refusing to delete 3 contacts without confirmation: nothing was deleted/);
    expect(r.stderr).toMatch(/--yes/);
    expect(await deletesSince(since)).toEqual([]);
    for (const id of ids) expect(await getRecord(t, 'contacts', id)).toBeDefined();
  });

  describe.skipIf(!HAS_TMUX && !required)('on a terminal (tmux)', () => {
    it('the wrong answer deletes nothing (exit 2); the count typed back deletes every row', async () => {
      tm ??= await startTmux();
      const ids = await makeContacts(t, 'dt', 3);
      const path = deleteFile('dt', ids, true);
      const since = await logLength(t);
      const command = `crm batch contacts ${sh(path)} --delete`;

      const wrong = await tm.run(command, { env: t.env('admin', { NO_COLOR: '1' }) });
      await wrong.waitFor(/Type 3 or contacts to confirm:$/m);
      // wrapped at 80 columns, at spaces
      expect((await wrong.capture({ joinWrapped: true })).join(' ').replace(/\s+/g, ' ')).toMatch(
        /This deletes 3 contacts listed in .*dt\.txt\. It cannot be undone\./,
      );
      await wrong.type('yes', { enter: true });
      const no = await wrong.waitExit();
      expect(no.status, no.lines.join('\n')).toBe(2);
      expect(no.lines.join('\n')).toMatch(/not confirmed \("yes"\): nothing was deleted/);
      expect(await deletesSince(since)).toEqual([]);
      for (const id of ids) expect(await getRecord(t, 'contacts', id)).toBeDefined();

      const right = await tm.run(command, { env: t.env('admin', { NO_COLOR: '1' }) });
      await right.waitFor(/Type 3 or contacts to confirm:$/m);
      await right.type('3', { enter: true });
      const yes = await right.waitExit();
      expect(yes.status, yes.lines.join('\n')).toBe(0);
      expect(yes.lines.join('\n')).toMatch(/│ deleted +│ 3 /);
      expect((await deletesSince(since)).sort()).toEqual([...ids].sort());
      await expectGone(ids);
    });

    it('a rerun after Ctrl-C asks about the rows left: the number to type is theirs, as the cost says', async () => {
      tm ??= await startTmux();
      const { ids, path } = await deleteInterrupted('dr');
      await t.control('/faults', { latency_ms: 0 });

      const rerun = await tm.run(`crm batch contacts ${sh(path)} --delete`, { env: t.env('admin', { NO_COLOR: '1' }) });
      const typed = Number(
        /Type (\d+) or contacts to confirm:$/m.exec(
          (await rerun.waitFor(/Type \d+ or contacts to confirm:$/m)).join('\n'),
        )![1],
      );
      const said = (await rerun.capture({ joinWrapped: true })).join(' ').replace(/\s+/g, ' ');
      const earlier = Number(/\(of 30: an earlier run deleted (\d+)\)/.exec(said)?.[1]);
      expect(earlier, said).toBeGreaterThan(0);
      expect(typed).toBe(30 - earlier);
      expect(said).toContain(`This deletes ${typed} contacts (of 30: an earlier run deleted ${earlier}) listed in`);
      expect(said).toContain(`${typed} DELETEs, for the rows an earlier run did not finish (it did ${earlier} of 30)`);
      await rerun.type(String(typed), { enter: true });
      const done = await rerun.waitExit();
      expect(done.status, done.lines.join('\n')).toBe(0);
      await expectGone(ids);
    });
  });
});
