// End to end (issue 17): what makes a batch job, its keys and its order. The help's first --map example
// creates; a corrected mapping sends the rows again; keys belong to one run of one job (a later run
// applies the same change again, as the sandbox's state shows); rows for one record land in file
// order; one run of a job at a time.
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../helpers/temp.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { appliedPerId, getRecord, listIds, makeContacts, requestLog, logLength, stopAfter } from '../helpers/bulk.js';
import { collect, runCrm, startCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { holdAnswers } from '../helpers/held-answers.js';

let t: TestSandbox;
let dir: string;
beforeAll(async () => {
  t = await startTestSandbox({ seed: 7, rateLimit: 1_000_000, orgRateLimit: 1_000_000 });
  dir = tempDir('crm-batch-job-');
});
afterAll(async () => t?.close());
afterEach(async () => {
  await t.control('/faults', { fail_rate: 0, latency_ms: 0, faults: {}, next: [] });
});

const crm = (args: string[], opts: { cwd?: string } = {}) =>
  runCrm(args, { env: t.env('admin'), timeoutMs: 120_000, cwd: opts.cwd ?? dir });
const json = async (args: string[]) => {
  const r = await crm(['-o', 'json', ...args]);
  return { ...r, summary: r.stdout ? (JSON.parse(r.stdout) as Record<string, unknown>) : undefined };
};

/** A request with the admin key, as a colleague would make it in the CRM; the answer's data. */
async function api(method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${t.sb.baseUrl}${path}`, {
    method,
    headers: {
      'X-Service-Api-Key': t.sb.keys.admin,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(res.status, `${method} ${path}`).toBeLessThan(300);
  return ((await res.json()) as { data: unknown }).data;
}
const firstIds = async (resource: string, n: number) => (await listIds(t, `/${resource}`)).slice(0, n);

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe('crm batch: the job', () => {
  it('the help\'s example `crm batch contacts m.csv --map "E-mail=email"` creates every row', async () => {
    const sub = mkdtempSync(join(dir, 'help-'));
    writeFileSync(join(sub, 'm.csv'), 'E-mail,First Name\nhelpmap.1@example.com,Ann\nhelpmap.2@example.com,Bob\n');
    const r = await crm(['batch', 'contacts', 'm.csv', '--map', 'E-mail=email'], { cwd: sub });
    expect(r.code, r.stderr).toBe(0);
    const counts = await t.countByEmail('helpmap');
    expect([...counts.entries()].sort()).toEqual([
      ['helpmap.1@example.com', 1],
      ['helpmap.2@example.com', 1],
    ]);
  });

  it('after a run whose every row failed (no --map), the same file with the right --map sends every row again', async () => {
    // a column near no field the contacts have (`E-mail` would be refused before sending: did you mean email?)
    const path = file('nomap.csv', 'Mail To,First Name\nnomap.1@example.com,Ann\nnomap.2@example.com,Bob\n');
    const first = await crm(['batch', 'contacts', path]);
    expect(first.code, first.stderr).toBe(9);
    expect((await t.countByEmail('nomap')).size).toBe(0);
    const fixed = await json(['batch', 'contacts', path, '--map', 'Mail To=email']);
    expect(fixed.code, fixed.stderr).toBe(0);
    expect(fixed.stderr).not.toMatch(/already imported|nothing will be sent/);
    expect(fixed.summary).toMatchObject({ created: 2, failed: 0 });
    expect([...(await t.countByEmail('nomap')).values()]).toEqual([1, 1]);
    // the first command again: its rejected rows were created by the other mapping, so it is refused, not resent
    const since = await logLength(t);
    const back = await crm(['batch', 'contacts', path]);
    expect(back.code, back.stderr).toBe(2);
    expect(back.stderr).toMatch(/with other options .*rows were created then; nothing was sent/);
    // nothing that writes (a header not a field's name reads the fields the records have, one page)
    expect((await requestLog(t, since)).filter((e) => e.method !== 'GET')).toEqual([]);
  });

  it('a mapping that created rows is not silently redone by another mapping: refused, nothing sent, --no-resume does it knowingly', async () => {
    const path = file('twomaps.csv', 'E-mail,Name\ntwomaps.1@example.com,Ann\n');
    expect((await crm(['batch', 'contacts', path, '--map', 'E-mail=email', '--map', 'Name=first_name'])).code).toBe(0);
    const other = await crm(['batch', 'contacts', path, '--map', 'E-mail=email', '--map', 'Name=last_name']);
    expect(other.code, other.stderr).toBe(2);
    expect(other.stderr).toMatch(/with other options .*nothing was sent/);
    expect([...(await t.countByEmail('twomaps')).values()]).toEqual([1]);
  });
});

describe('the same change again in a later run, after the record changed, is applied (keys belong to one run)', () => {
  it('batch --update: a colleague changed the field; the same file with --no-resume, and another file with the same row, set it again', async () => {
    const [id] = await makeContacts(t, 'later-update', 1);
    const path = file('upd.csv', `id,first_name\n${id},Mine\n`);
    expect((await crm(['batch', 'contacts', path, '--update'])).code).toBe(0);
    expect(await getRecord(t, 'contacts', id!)).toMatchObject({ first_name: 'Mine' });
    await api('PATCH', `/contacts/${id}`, { first_name: 'Theirs' });
    const again = await json(['batch', 'contacts', path, '--update', '--no-resume']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.summary).toMatchObject({ updated: 1, skipped: 0 });
    expect(await getRecord(t, 'contacts', id!)).toMatchObject({ first_name: 'Mine' });
    await api('PATCH', `/contacts/${id}`, { first_name: 'Theirs' });
    const [other] = await makeContacts(t, 'later-update-b', 1);
    const second = await json([
      'batch',
      'contacts',
      file('upd2.csv', `id,first_name\n${id},Mine\n${other},Mine\n`),
      '--update',
    ]);
    expect(second.code, second.stderr).toBe(0);
    expect(await getRecord(t, 'contacts', id!)).toMatchObject({ first_name: 'Mine' });
  });

  it('batch create: the record created was deleted since; a new run (--no-resume) creates it again, and says created', async () => {
    const path = file('recreate.csv', 'email,first_name\nrecreate.1@example.com,Ann\n');
    expect((await crm(['batch', 'contacts', path])).code).toBe(0);
    const [[email]] = [[...(await t.countByEmail('recreate')).keys()]];
    expect(email).toBe('recreate.1@example.com');
    const id = (
      (await api('GET', '/contacts?limit=100&email=recreate.1@example.com')) as Array<{ id: string; email: string }>
    ).find((c) => c.email === email)!.id;
    await api('DELETE', `/contacts/${id}`);
    expect((await t.countByEmail('recreate')).size).toBe(0);
    const again = await json(['batch', 'contacts', path, '--no-resume']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.summary).toMatchObject({ created: 1, skipped: 0 });
    expect([...(await t.countByEmail('recreate')).values()]).toEqual([1]);
  });

  it('batch --delete: a later run with another file deletes what it names (the sandbox state), a row already gone is not reported deleted', async () => {
    const [a, b] = await makeContacts(t, 'later-delete', 2);
    expect((await crm(['batch', 'contacts', file('del1.txt', `${a}\n`), '--delete', '--yes'])).code).toBe(0);
    expect(await getRecord(t, 'contacts', a!)).toBeUndefined();
    const again = await json(['batch', 'contacts', file('del2.txt', `${a}\n${b}\n`), '--delete', '--yes']);
    expect(again.code, again.stderr).toBe(9);
    expect(again.summary).toMatchObject({ deleted: 1, failed: 1 });
    expect(await getRecord(t, 'contacts', b!)).toBeUndefined();
  });

  it('links import: the link was removed since; the same file with --no-resume links it again', async () => {
    const [deal] = await firstIds('deals', 1);
    const [, , , contact] = await firstIds('contacts', 4);
    const path = file('links.csv', `deal_id,contact_id\n${deal},${contact}\n`);
    expect((await crm(['links', 'import', 'deals', 'contacts', path])).code).toBe(0);
    const linked = async () =>
      ((await api('GET', `/deals/${deal}/contacts?limit=100`)) as Array<{ id: string }>).map((c) => c.id);
    expect(await linked()).toContain(contact);
    await api('DELETE', `/deals/${deal}/contacts/${contact}`);
    expect(await linked()).not.toContain(contact);
    const again = await json(['links', 'import', 'deals', 'contacts', path, '--no-resume']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.summary).toMatchObject({ linked: 1, skipped: 0 });
    expect(await linked()).toContain(contact);
  });

  it('links add --file: the member was removed since; the same file with --no-resume adds it again', async () => {
    const [seg] = await firstIds('segments', 1);
    const [, , , , contact] = await firstIds('contacts', 5);
    const path = file('members.txt', `${contact}\n`);
    expect((await crm(['links', 'add', 'segments', seg!, 'members', '--file', path])).code).toBe(0);
    const members = async () =>
      ((await api('GET', `/segments/${seg}/members?limit=100`)) as Array<{ id: string }>).map((c) => c.id);
    expect(await members()).toContain(contact);
    await api('DELETE', `/segments/${seg}/members/${contact}`);
    const again = await json(['links', 'add', 'segments', seg!, 'members', '--file', path, '--no-resume']);
    expect(again.code, again.stderr).toBe(0);
    expect(await members()).toContain(contact);
  });

  it('meeting association (PUT): a colleague set another deal; the same file with --no-resume sets this one again', async () => {
    const [meeting] = await firstIds('meetings', 1);
    const [d1, d2] = await firstIds('deals', 2);
    const path = file('assoc.csv', `meeting_id,deal_id\n${meeting},${d1}\n`);
    expect((await crm(['links', 'import', 'meetings', 'deal', path])).code).toBe(0);
    expect(await api('GET', `/meetings/${meeting}/deal`)).toMatchObject({ id: d1 });
    await api('PUT', `/meetings/${meeting}/deal`, { deal_id: d2 });
    const again = await json(['links', 'import', 'meetings', 'deal', path, '--no-resume']);
    expect(again.code, again.stderr).toBe(0);
    expect(await api('GET', `/meetings/${meeting}/deal`)).toMatchObject({ id: d1 });
  });
});

describe('rows for one record are applied in file order', () => {
  it('batch --update: a correction appended to the file wins though the first row is retried (500, then backoff)', async () => {
    const [id, ...others] = await makeContacts(t, 'order', 4);
    const rows = [`${id},Old`, ...others.map((o) => `${o},Other`), `${id},New`];
    const path = file('order.csv', `id,first_name\n${rows.join('\n')}\n`);
    await t.control('/faults', { next: [{ kind: '500', method: 'PATCH', path: `/contacts/${id}$`, count: 1 }] });
    const r = await json(['batch', 'contacts', path, '--update', '--concurrency', '4']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.summary).toMatchObject({ updated: 5, failed: 0, retries: 1 });
    expect(await getRecord(t, 'contacts', id!)).toMatchObject({ first_name: 'New' });
  });

  it('a meeting association set twice in one file: the later row wins though the first is retried', async () => {
    const [, meeting] = await firstIds('meetings', 2);
    const [d1, d2] = await firstIds('deals', 2);
    const path = file('assoc-order.csv', `meeting_id,deal_id\n${meeting},${d1}\n${meeting},${d2}\n`);
    await t.control('/faults', {
      next: [{ kind: '500', method: 'PUT', path: `/meetings/${meeting}/deal$`, count: 1 }],
    });
    const r = await json(['links', 'import', 'meetings', 'deal', path, '--concurrency', '4']);
    expect(r.code, r.stderr).toBe(0);
    expect(await api('GET', `/meetings/${meeting}/deal`)).toMatchObject({ id: d2 });
  });

  it('A, B, A again: the third row is sent (not a repeat of the first) and A wins', async () => {
    const [id] = await makeContacts(t, 'aba', 1);
    const path = file('aba.csv', `id,first_name\n${id},A\n${id},B\n${id},A\n`);
    const r = await json(['batch', 'contacts', path, '--update', '--concurrency', '4']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.summary).toMatchObject({ updated: 3, skipped: 0 });
    expect(await getRecord(t, 'contacts', id!)).toMatchObject({ first_name: 'A' });
  });
});

describe('one run of a job at a time', () => {
  it('a second run of the same job while the first runs is refused (exit 2, naming the process), nothing sent twice', async () => {
    const ids = await makeContacts(t, 'lock', 12);
    const path = file('lock.csv', `id,first_name\n${ids.map((id) => `${id},Locked`).join('\n')}\n`);
    // the first run held (1 s a row) until the second has been refused: a loaded machine's slow start of
    // the second cannot outlast it; then let it finish
    await t.control('/faults', { latency_ms: 1000 });
    const since = await logLength(t);
    const first = startCrm(['batch', 'contacts', path, '--update', '--concurrency', '1'], {
      env: t.env('admin'),
      cwd: dir,
    });
    const firstDone = collect(first, { timeoutMs: 60_000 });
    for (let i = 0; i < 400 && (await requestLog(t, since)).filter((e) => e.method === 'PATCH').length === 0; i++)
      await sleep(10);
    const second = await crm(['batch', 'contacts', path, '--update', '--concurrency', '1']);
    await t.control('/faults', { latency_ms: 0 });
    expect(second.code, second.stderr).toBe(2);
    expect(second.stderr).toContain(`another crm (process ${first.pid}) is running this same job`);
    const done = await firstDone;
    expect(done.code, done.stderr).toBe(0);
    const applied = appliedPerId(await requestLog(t, since), 'PATCH', 'contacts');
    expect(ids.map((id) => applied.get(id))).toEqual(ids.map(() => 1));
  });

  it('a second reconcile of the same file while the first sends is refused before it reads the CRM or writes a file', async () => {
    await makeContacts(t, 'rlock', 6);
    const rows = Array.from({ length: 6 }, (_, i) => `rlock.${i + 1}@example.com,Matched`);
    const path = file('rlock.csv', `email,first_name\n${rows.join('\n')}\n`);
    const args = ['batch', 'contacts', path, '--match', 'email', '--concurrency', '1'];
    // the first run's PATCH answers are held until the second has been refused: its read is over, its plan pinned
    const front = await holdAnswers(t, (req) => req.method === 'PATCH');
    try {
      const first = startCrm(args, { env: front.env, cwd: dir });
      const firstDone = collect(first, { timeoutMs: 60_000 });
      await front.firstHeld;
      const before = await logLength(t);
      const second = await runCrm([...args, '--plan', 'rlock.plan.csv'], {
        env: front.env,
        timeoutMs: 60_000,
        cwd: dir,
      });
      const during = await requestLog(t, before);
      front.release();
      expect(second.code, second.stderr).toBe(2);
      expect(second.stderr).toContain(`another crm (process ${first.pid}) is running this same job`);
      expect(second.stderr).not.toContain('resuming the job');
      // the refused run read nothing (the first one only waits for a PATCH's answer) and wrote no --plan file
      expect(during.filter((e) => e.method === 'GET')).toEqual([]);
      expect(existsSync(join(dir, 'rlock.plan.csv'))).toBe(false);
      const done = await firstDone;
      expect(done.code, done.stderr).toBe(0);
    } finally {
      await front.close();
    }
  });

  it('the lock of a run killed with -9 is taken over by the rerun, which finishes without applying a row twice', async () => {
    const ids = await makeContacts(t, 'stale', 12);
    const path = file('stale.csv', `id,first_name\n${ids.map((id) => `${id},Stale`).join('\n')}\n`);
    await t.control('/faults', { latency_ms: 50 });
    const since = await logLength(t);
    const args = ['batch', 'contacts', path, '--update', '--concurrency', '2'];
    const killed = await stopAfter(t, args, {
      env: t.env('admin'),
      cwd: dir,
      method: 'PATCH',
      after: 4,
      since,
      signal: 'SIGKILL',
    });
    expect(killed.signal).toBe('SIGKILL');
    const rerun = await crm(args);
    expect(rerun.code, rerun.stderr).toBe(0);
    const applied = appliedPerId(await requestLog(t, since), 'PATCH', 'contacts');
    expect(ids.map((id) => applied.get(id))).toEqual(ids.map(() => 1));
  });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
