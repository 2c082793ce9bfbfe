// A way back used as people use it (issue 27, CONTRACT §7c): the undo command a --match run prints, pasted into a
// shell, twice, after the list is applied again, when the records are already back, and a week later after a
// colleague's change; and the rerun of an interrupted --match run, which checks the records that run changed or
// created before it counts them done (after the undo it printed, a colleague's change, a delete of what it created),
// creating exactly once. Judged by what the sandbox holds after each step (and its request log), not by crm's summary.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { appliedPerKey, getRecord, logLength, requestLog, stopAfter } from '../helpers/bulk.js';
import { crmOnPath, paste as pasteIn, printedAfter, runCrm } from '../helpers/run-crm.js';
import { execFileSync } from 'node:child_process';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';

let t: TestSandbox;
let dir: string;
let bin: string;
beforeAll(async () => {
  t = await startTestSandbox({ seed: 3, rateLimit: 1_000_000, orgRateLimit: 1_000_000 });
  dir = tempDir('crm-week-');
  // `crm` on the PATH, as a user has it
  bin = crmOnPath(dir);
});
afterAll(async () => {
  await t?.close();
});
afterEach(async () => {
  await t.control('/faults', { fail_rate: 0, latency_ms: 0, faults: {}, next: [] });
});

const env = () => ({ ...t.env('admin'), PATH: `${bin}:${process.env.PATH ?? ''}` });
const crm = (args: string[]) => runCrm(args, { env: t.env('admin'), cwd: dir, timeoutMs: 120_000 });

/** The command printed after `title` (the line below it), as the user would paste it. */
function printed(stderr: string, title: string): string {
  const command = printedAfter(stderr, title);
  expect(command, stderr).toBeDefined();
  return command!;
}

const paste = (command: string) => pasteIn(command, { cwd: dir, env: env() });

async function api(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${t.sb.baseUrl}${path}`, {
    method,
    headers: { 'X-Service-Api-Key': t.sb.keys.admin, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(res.status, `${method} ${path}`).toBeLessThan(300);
  return res.status === 204 ? {} : ((await res.json()) as { data: Record<string, unknown> }).data;
}

/** the line before the printed undo (of a run, or of a resumed job) */
const UNDO = 'To put back the values this ';

describe('the undo a --match run prints, over a week', () => {
  it('applied, undone, applied again, undone again, undone once more, and a week later after a colleague', async () => {
    const id = (await api('POST', '/contacts', { email: 'week@example.com', title: 'Orig', score: 1 })).id as string;
    const list = join(dir, 'list.csv');
    writeFileSync(list, 'email,title,score:number\nweek@example.com,New,2\n');
    const title = async () => (await getRecord(t, 'contacts', id))?.title;

    const first = await crm(['batch', 'contacts', list, '--match', 'email']);
    expect(first.code, first.stderr).toBe(0);
    expect(await title()).toBe('New');
    const undo = printed(first.stderr, UNDO);
    expect(undo).toMatch(/^crm batch contacts \S+list\.csv\.undo\.csv --match id$/);
    expect((await paste(undo)).code).toBe(0);
    expect(await getRecord(t, 'contacts', id)).toMatchObject({ title: 'Orig', score: 1 });

    // the list applied again: crm rewrites the undo file (the first moved aside); its printed undo works again
    const again = await crm(['batch', 'contacts', list, '--match', 'email']);
    expect(again.code, again.stderr).toBe(0);
    expect(await title()).toBe('New');
    const undo2 = printed(again.stderr, UNDO);
    const second = await paste(undo2);
    expect(second.code, second.stderr).toBe(0);
    expect(await getRecord(t, 'contacts', id)).toMatchObject({ title: 'Orig', score: 1 });

    // already so: nothing is sent, and it says so
    const since = await logLength(t);
    const third = await paste(undo2);
    expect(third.code, third.stderr).toBe(0);
    expect(third.stderr).toMatch(/1 unchanged/);
    expect((await requestLog(t, since)).filter((e) => e.method !== 'GET')).toEqual([]);

    // a week later, after a colleague's change: the file's values, whatever happened in between
    await api('PATCH', `/contacts/${id}`, { title: 'Colleague', score: 9 });
    const later = await paste(undo2);
    expect(later.code, later.stderr).toBe(0);
    expect(await getRecord(t, 'contacts', id)).toMatchObject({ title: 'Orig', score: 1 });
  });
});

/**
 * `n` contacts `tag.i@example.com` titled `Old i`, a file giving each the title `New i`, and its `--match email` run
 * stopped by Ctrl-C once `after` PATCHes went out.
 */
async function interrupted(tag: string, n: number, after: number, o: { stdin?: boolean } = {}) {
  const ids: string[] = [];
  for (let i = 1; i <= n; i++)
    ids.push((await api('POST', '/contacts', { email: `${tag}.${i}@example.com`, title: `Old ${i}` })).id as string);
  const text = `email,title\n${ids.map((_, i) => `${tag}.${i + 1}@example.com,New ${i + 1}`).join('\n')}\n`;
  writeFileSync(join(dir, `${tag}.csv`), text);
  const args = ['batch', 'contacts', o.stdin ? '-' : `${tag}.csv`, '--match', 'email', '--concurrency', '1'];
  const input = o.stdin ? text : undefined;
  const stopped = await stopRun(args, { method: 'PATCH', after, signal: 'SIGINT', input });
  expect(stopped.code, stopped.stderr).toBe(130);
  return { ids, args, stopped, input };
}

/** `args` run with some latency and stopped by `signal` once `after` requests of `method` went out (latency off after). */
async function stopRun(
  args: string[],
  o: { method: string; after: number; signal: NodeJS.Signals; input?: string; latencyMs?: number },
) {
  await t.control('/faults', { latency_ms: o.latencyMs ?? 15 });
  const { latencyMs: _l, ...rest } = o;
  const stopped = await stopAfter(t, args, { env: env(), cwd: dir, since: await logLength(t), ...rest });
  await t.control('/faults', { latency_ms: 0 });
  return stopped;
}

const json = async (args: string[], input?: string) => {
  const r = await runCrm(['-o', 'json', ...args], { env: t.env('admin'), cwd: dir, timeoutMs: 120_000, input });
  return { ...r, out: r.stdout ? (JSON.parse(r.stdout) as Record<string, unknown>) : undefined };
};

const titlesOf = async (ids: string[]) =>
  Promise.all(ids.map(async (id) => (await getRecord(t, 'contacts', id))?.title));

/** The ids a way-back file lists (its first column, below the header). */
const idsOf = (file: string): string[] =>
  readFileSync(join(dir, file), 'utf8')
    .split(/\r?\n/)
    .slice(1)
    .filter(Boolean)
    .map((l) => l.split(',')[0]!);

describe('a --match run resumed after an interruption checks what the interrupted run did', () => {
  it('Ctrl-C, the undo it printed, then the same --match again: every record ends as the file says', async () => {
    const { ids, args, stopped } = await interrupted('undone', 40, 12);
    const undo = printed(stopped.stderr, UNDO);
    expect(undo).toBe('crm batch contacts undone.csv.undo.csv --match id');
    const undone = await paste(undo);
    expect(undone.code, undone.stderr).toBe(0);
    const changed = (await titlesOf(ids)).filter((v, i) => v !== `Old ${i + 1}`).length;
    expect(changed, 'the undo put every record back').toBe(0);

    const again = await json(args);
    expect(again.code, again.stderr).toBe(0);
    expect(await titlesOf(ids)).toEqual(ids.map((_, i) => `New ${i + 1}`));
    // nothing is claimed done that the CRM does not hold: every record was read again and changed again
    expect(again.out).toMatchObject({ updated: 40, created: 0 });
    expect(again.out!.skipped).toBeUndefined();
    expect(again.stderr).toMatch(/resuming the job an interrupted run began/);
    // the job's undo file lists each record once, with the value it had before the job
    expect(idsOf('undone.csv.undo.csv').sort()).toEqual([...ids].sort());
    const back = await paste(printed(again.stderr, UNDO));
    expect(back.code, back.stderr).toBe(0);
    expect(await titlesOf(ids)).toEqual(ids.map((_, i) => `Old ${i + 1}`));
  });

  it("Ctrl-C, a colleague's change to a record the run updated, then the same --match: changed again; the rest done", async () => {
    const { ids, args } = await interrupted('colleague', 30, 10);
    const now = await titlesOf(ids);
    const updated = ids.filter((_, i) => now[i] === `New ${i + 1}`);
    expect(updated.length).toBeGreaterThanOrEqual(10);
    await api('PATCH', `/contacts/${updated[0]}`, { title: 'Changed by a colleague' });

    const mark = await logLength(t);
    const again = await json(args);
    expect(again.code, again.stderr).toBe(0);
    expect(await titlesOf(ids)).toEqual(ids.map((_, i) => `New ${i + 1}`));
    // the colleague's record and the rows not sent yet are updated; what the interrupted run did and still holds is done
    expect(again.out).toMatchObject({ updated: 30 - updated.length + 1, skipped: updated.length - 1 });
    const patched = (await requestLog(t, mark)).filter((e) => e.method === 'PATCH').map((e) => e.path.split('/').pop());
    expect(patched).toContain(updated[0]);
    expect(patched.filter((id) => updated.slice(1).includes(id!))).toEqual([]);
    // the undo keeps the value before the job for every record, the colleague's included, each once
    expect(new Set(idsOf('colleague.csv.undo.csv')).size).toBe(idsOf('colleague.csv.undo.csv').length);
  });

  it('kill -9 while creating, a created record deleted, then the same --match: each email once, the created file each id once', async () => {
    const path = join(dir, 'made.csv');
    writeFileSync(
      path,
      `email,title\n${Array.from({ length: 250 }, (_, i) => `made.${i + 1}@example.com,Made`).join('\n')}\n`,
    );
    const args = ['batch', 'contacts', 'made.csv', '--match', 'email', '--concurrency', '2', '--chunk-size', '10'];
    const since = await logLength(t);
    const killed = await stopRun(args, { method: 'POST', after: 6, signal: 'SIGKILL', latencyMs: 20 });
    expect(killed.child.signalCode).toBe('SIGKILL');
    const made = idsOf('made.csv.created.csv');
    expect(made.length).toBeGreaterThan(0);
    await api('DELETE', `/contacts/${made[0]}`);

    const again = await json(args);
    expect(again.code, again.stderr).toBe(0);
    const counts = await t.countByEmail('made');
    expect(counts.size).toBe(250);
    expect([...counts.values()].every((v) => v === 1)).toBe(true);
    expect([...appliedPerKey(await requestLog(t, since), 'POST').values()].every((v) => v <= 1)).toBe(true);
    const listed = idsOf('made.csv.created.csv');
    expect(new Set(listed).size, 'each id once').toBe(listed.length);
    // every record the job created is listed (the deleted one, and the one made again in its place)
    expect(listed.length).toBe(251);
  });

  it('from standard input: Ctrl-C, then the same pipe again: one undo file holds the whole job, its printed undo all of it', async () => {
    const { ids, args, stopped, input } = await interrupted('piped', 30, 8, { stdin: true });
    const first = printed(stopped.stderr, UNDO);
    const again = await json(args, input);
    expect(again.code, again.stderr).toBe(0);
    expect(await titlesOf(ids)).toEqual(ids.map((_, i) => `New ${i + 1}`));
    // the rerun adds to the interrupted run's file and names it: every update of the job is in the one printed
    expect(printed(again.stderr, UNDO)).toBe(first);
    expect(again.out!.undo_file).toBe(first.split(' ')[3]);
    expect(readdirSync(dir).filter((f) => f.endsWith('.undo.csv') && f.startsWith('crm-rejects-'))).toHaveLength(1);
    const back = await paste(first);
    expect(back.code, back.stderr).toBe(0);
    expect(await titlesOf(ids)).toEqual(ids.map((_, i) => `Old ${i + 1}`));
  });

  it('interrupted twice, then the same --match: every row this job changed is counted updated or done, none unchanged', async () => {
    const { ids, args } = await interrupted('twice', 30, 6);
    const second = await stopRun(args, { method: 'PATCH', after: 6, signal: 'SIGINT' });
    expect(second.code, second.stderr).toBe(130);
    expect(second.stderr).toMatch(
      /To put back the values this job \(this run and what was interrupted before it\) changed:/,
    );
    const third = await json(args);
    expect(third.code, third.stderr).toBe(0);
    expect(await titlesOf(ids)).toEqual(ids.map((_, i) => `New ${i + 1}`));
    expect(third.out!.unchanged).toBe(0);
    expect((third.out!.updated as number) + (third.out!.skipped as number)).toBe(30);
    expect(idsOf('twice.csv.undo.csv').sort()).toEqual([...ids].sort());
  });
});

describe('the created file of each run, removed with the command it prints', () => {
  it("a second job's printed delete runs (its created file its own), with a backup of its own", async () => {
    const rows = Array.from({ length: 4 }, (_, i) => `twice-made.${i + 1}@example.com,Made`);
    writeFileSync(join(dir, 'twice-made.csv'), `email,title\n${rows.join('\n')}\n`);
    const ids: string[][] = [];
    const files: string[] = [];
    for (const round of [1, 2]) {
      const made = await crm(['batch', 'contacts', 'twice-made.csv', '--match', 'email']);
      expect(made.code, made.stderr).toBe(0);
      const remove = printed(made.stderr, 'To remove the records this');
      // the first job's is <input>.created.csv; the second's a name of its own (issue 29's re-trial)
      const created = /batch contacts (\S+) --delete/.exec(remove)![1]!;
      files.push(created);
      ids.push(idsOf(basename(created)));
      const removed = await paste(`${remove} --yes`);
      expect(removed.code, `round ${round}: ${removed.stderr}`).toBe(0);
      expect((await t.countByEmail('twice-made')).size).toBe(0);
    }
    expect(basename(files[0]!)).toBe('twice-made.csv.created.csv');
    expect(basename(files[1]!)).toMatch(/^twice-made\.csv\.created\.\d{8}T\d{6}Z(-\d+)?\.csv$/);
    // each job's backup holds its own records: restoring the last brings back one of each, not two
    const backups = readdirSync(dir).filter((f) => /^twice-made\.csv\.created.*\.deleted\.ndjson$/.test(f));
    expect(backups).toHaveLength(2);
    const held = (f: string) =>
      readFileSync(join(dir, f), 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => (JSON.parse(l) as { id: string }).id)
        .sort();
    const deleted = `${basename(files[1]!)}.deleted.ndjson`;
    expect(held(deleted)).toEqual([...ids[1]!].sort());
    expect(held(`${basename(files[0]!)}.deleted.ndjson`)).toEqual([...ids[0]!].sort());
    const restored = await crm(['batch', 'contacts', deleted]);
    expect(restored.code, restored.stderr).toBe(0);
    const counts = await t.countByEmail('twice-made');
    expect(counts.size).toBe(4);
    expect([...counts.values()].every((v) => v === 1)).toBe(true);
  });
});

/** The id of the contact with this email, read page by page. */
async function contactByEmail(email: string): Promise<string> {
  for (let cursor = ''; ;) {
    const res = await fetch(`${t.sb.baseUrl}/contacts?limit=100${cursor ? `&cursor=${cursor}` : ''}`, {
      headers: { 'X-Service-Api-Key': t.sb.keys.admin },
    });
    const body = (await res.json()) as {
      data: Array<{ id: string; email: string }>;
      page_info: { end_cursor: string | null; has_next_page: boolean };
    };
    const found = body.data.find((c) => c.email === email);
    if (found) return found.id;
    expect(body.page_info.has_next_page, `no contact has ${email}`).toBe(true);
    cursor = body.page_info.end_cursor!;
  }
}

describe('a create left in doubt, whose record was deleted before the resume', () => {
  it('answered from the cache, it is not counted done: exit 9 naming it; the same command again creates it', async () => {
    const rows = Array.from({ length: 5 }, (_, i) => `gone.${i + 1}@example.com,Made`);
    writeFileSync(join(dir, 'gone.csv'), `email,title\n${rows.join('\n')}\n`);
    const args = ['--max-retries', '0', 'batch', 'contacts', 'gone.csv', '--match', 'email'];
    // the create is made, then answered 500: in doubt
    await t.control('/faults', { next: [{ kind: '500-after-write', method: 'POST', path: '/contacts/batch' }] });
    const first = await json(args);
    expect(first.code, first.stderr).toBe(9);
    const made = await t.countByEmail('gone');
    expect(made.size).toBe(5);
    // someone deletes one of them before the resume
    const victim = await contactByEmail('gone.3@example.com');
    await api('DELETE', `/contacts/${victim}`);
    const again = await json(args);
    expect(again.code, again.stderr).toBe(9);
    expect(JSON.stringify(again.out!.reasons)).toContain('DELETED_SINCE');
    const rejects = readFileSync(join(dir, 'gone.csv.rejects.csv'), 'utf8');
    expect(rejects).toMatch(/gone\.3@example\.com.*DELETED_SINCE.*deleted since/);
    const third = await json(args);
    expect(third.code, third.stderr).toBe(0);
    expect(third.out).toMatchObject({ created: 1, unchanged: 4 });
    const counts = await t.countByEmail('gone');
    expect(counts.size).toBe(5);
    expect([...counts.values()].every((v) => v === 1)).toBe(true);
  });
});

// a small tmpfs for the input's folder, where the undo file goes (root only: elsewhere no file system can fill
// under the undo file alone; a limit on every file's size stops the plan's spool first)
const ROOT = process.getuid?.() === 0;

describe.skipIf(!ROOT)('an undo line that cannot be written', () => {
  it('a --match run stops before the PATCH it protects (exit 8 naming the undo file); with room, the same command', async () => {
    const full = join(dir, 'small-disk');
    mkdirSync(full, { recursive: true });
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=12k', 'tmpfs', full]);
    try {
      // a value before of 9 KiB: the undo file's line cannot fit
      const long = 'x'.repeat(9000);
      const id = (await api('POST', '/contacts', { email: 'full.1@example.com', title: long })).id as string;
      writeFileSync(join(full, 'full.csv'), 'email,title\nfull.1@example.com,Short\n');
      const args = ['batch', 'contacts', join(full, 'full.csv'), '--match', 'email'];
      const r = await crm(args);
      expect(r.code, r.stderr).toBe(8);
      expect(r.stderr).toMatch(
        new RegExp(
          `cannot write the undo file ${join(full, 'full.csv.undo.csv')}: the disk is full; \\d+ KiB free in `,
        ),
      );
      expect(r.stderr).not.toMatch(/unexpected failure|a bug in crm/);
      expect((await getRecord(t, 'contacts', id))?.title).toBe(long);
      execFileSync('mount', ['-o', 'remount,size=64k', full]);
      const again = await crm(args);
      expect(again.code, again.stderr).toBe(0);
      expect((await getRecord(t, 'contacts', id))?.title).toBe('Short');
      // the undo file holds the value before, whole: the printed command puts it back
      const back = await paste(printed(again.stderr, UNDO));
      expect(back.code, back.stderr).toBe(0);
      expect((await getRecord(t, 'contacts', id))?.title).toBe(long);
    } finally {
      execFileSync('umount', ['-l', full]);
    }
  });
});
