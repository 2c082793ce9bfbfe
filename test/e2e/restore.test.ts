// `crm restore DIR` (CONTRACT §10, issue 31) against sandboxes: a bad delete restored into the organization the
// snapshot was taken of, a copy into another, empty one, the same command after a kill -9 and after faults after the
// write, and a rerun that sends only reads — each judged by what the target holds, record by record, through the id map.
import { appendFileSync, cpSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allIds, logLength, requestLog, stopAfter } from '../helpers/bulk.js';
import { runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';

type Rec = Record<string, unknown> & { id: string };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const COLLECTIONS = ['companies', 'pipelines', 'contacts', 'deals', 'tasks', 'notes', 'segments', 'interactions'];
const SERVER_SET = ['id', 'created_at', 'updated_at', 'owner_id'];
const REFERS: Record<string, string> = {
  company: 'companies',
  contact: 'contacts',
  pipeline: 'pipelines',
  deal: 'deals',
};

/** A CSV crm wrote whose cells hold no comma or quote (ids, actions): its rows, split. */
const csvRows = (file: string): string[][] =>
  readFileSync(file, 'utf8')
    .trim()
    .split(/\r?\n/)
    .map((l) => l.split(','));

const readNdjson = (file: string): Rec[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Rec);

/** The id map of DIR for the one target restored into (`resource/snapshot id` → target id), and its lines. */
function idMap(dir: string, target: TestSandbox): { map: Map<string, string>; lines: string[][] } {
  const file = readdirSync(join(dir, 'restore')).find(
    (f) => f.endsWith('.ids.csv') && f.includes(String(new URL(target.sb.baseUrl).port)),
  );
  const lines = readFileSync(join(dir, 'restore', file!), 'utf8')
    .trim()
    .split(/\r?\n/)
    .slice(1)
    .map((l) => l.split(','));
  return { map: new Map(lines.map(([r, s, t]) => [`${r}/${s}`, t!])), lines };
}

async function records(t: TestSandbox, resource: string): Promise<Map<string, Rec>> {
  const out = new Map<string, Rec>();
  for (let cursor: string | undefined; ;) {
    const url = `${t.sb.baseUrl}/${resource}?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const res = await fetch(url, { headers: { 'X-Service-Api-Key': t.sb.keys.admin } });
    const page = (await res.json()) as { data: Rec[]; page_info: { end_cursor: string; has_next_page: boolean } };
    for (const r of page.data) out.set(r.id, r);
    if (!page.page_info.has_next_page) return out;
    cursor = page.page_info.end_cursor;
  }
}

/**
 * Every snapshot record of DIR has its record in the target, through the id map, holding the snapshot's fields; a
 * record the restore created holds its references translated (`created`: the snapshot ids it created). Each target
 * record is one snapshot record's at most. Returns how many were checked.
 */
async function expectRestored(
  dir: string,
  target: TestSandbox,
  created: ReadonlySet<string>,
  /** each record's owner: the snapshot's own (the same organization), or through --owners's map */
  owners: (snapshotOwner: unknown) => unknown = (o) => o,
): Promise<number> {
  // interactions cannot be updated: a created one stays the key's user's (the sandbox's admin key: usr_admin)
  const ownerOf = (resource: string, o: unknown) => (resource === 'interactions' ? 'usr_admin' : owners(o));
  const { map } = idMap(dir, target);
  let checked = 0;
  for (const resource of COLLECTIONS) {
    const there = await records(target, resource);
    const snapshot = readNdjson(join(dir, `${resource}.ndjson`));
    const targets = snapshot.map((s) => map.get(`${resource}/${s.id}`));
    expect(new Set(targets).size, `${resource}: one target record per snapshot record`).toBe(snapshot.length);
    snapshot.forEach((s, i) => {
      const got = there.get(targets[i]!);
      expect(got, `${resource} ${s.id} → ${targets[i]}`).toBeDefined();
      expect(got!.owner_id, `${resource} ${s.id}.owner_id`).toBe(
        created.has(`${resource}/${s.id}`) ? ownerOf(resource, s.owner_id) : s.owner_id,
      );
      for (const [field, value] of Object.entries(s)) {
        if (SERVER_SET.includes(field)) continue;
        const refers = REFERS[/^(.+?)_ids?$/.exec(field)?.[1] ?? ''];
        const tr = (v: unknown) => (refers && map.get(`${refers}/${String(v)}`)) ?? v;
        const want =
          refers && created.has(`${resource}/${s.id}`)
            ? Array.isArray(value)
              ? value.map(tr)
              : value === null
                ? null
                : tr(value)
            : value;
        expect(got![field], `${resource} ${s.id}.${field}`).toEqual(want);
      }
      checked++;
    });
  }
  return checked;
}

const createdOf = (dir: string, target: TestSandbox): Set<string> =>
  new Set(
    idMap(dir, target)
      .lines.filter((l) => l[3] === 'created')
      .map(([r, s]) => `${r}/${s}`),
  );

let org: TestSandbox;
let dir: string;
beforeAll(async () => {
  org = await startTestSandbox({
    seed: 7,
    seedRecords: { contacts: 260, deals: 130 },
    rateLimit: 1_000_000,
    orgRateLimit: 1_000_000,
  });
  dir = tempDir('crm-restore-');
  const snap = await runCrm(['snapshot', dir, '-o', 'json'], { env: org.env() });
  expect(snap.code, snap.stderr).toBe(0);
});
afterAll(() => org.close());

async function deleteIds(t: TestSandbox, resource: string, ids: readonly string[]): Promise<void> {
  const file = join(tempDir('crm-restore-del-'), `${resource}.csv`);
  const { writeFileSync } = await import('node:fs');
  writeFileSync(file, `id\n${ids.join('\n')}\n`);
  const r = await runCrm(['batch', resource, file, '--delete', '--yes', '--no-backup', '-o', 'json'], { env: t.env() });
  expect(r.code, r.stderr).toBe(0);
}

describe('crm restore into the organization the snapshot was taken of', () => {
  it('brings back a bad delete: the dry run plans what the run does, every record is there once, a rerun only reads', async () => {
    const contacts = readNdjson(join(dir, 'contacts.ndjson'));
    const deals = readNdjson(join(dir, 'deals.ndjson'));
    const companies = readNdjson(join(dir, 'companies.ndjson'));
    // 150 contacts (among them ones sharing an email with a contact still there), 40 deals, 2 companies
    await deleteIds(
      org,
      'contacts',
      contacts.slice(0, 150).map((c) => c.id),
    );
    await deleteIds(
      org,
      'deals',
      deals.slice(10, 50).map((d) => d.id),
    );
    await deleteIds(
      org,
      'companies',
      companies.slice(0, 2).map((c) => c.id),
    );

    // --links on a snapshot taken without it: said, not silently nothing (the third trial)
    const noLinks = await runCrm(['restore', dir, '--links', '--dry-run'], { env: org.env() });
    expect(noLinks.code, noLinks.stderr).toBe(0);
    expect(noLinks.stderr.replace(/\s+/g, ' ')).toContain(
      'holds no links (crm snapshot DIR --links keeps them): --links restores none',
    );

    const planCsv = join(tempDir('crm-restore-plan-'), 'plan.csv');
    const dry = await runCrm(['restore', dir, '--dry-run', '-o', 'json', '--plan', planCsv], { env: org.env() });
    expect(dry.code, dry.stderr).toBe(0);
    // --plan: every snapshot record's decision, in file order, as the JSON plan counts them
    const rows = csvRows(planCsv);
    expect(rows[0]).toEqual(['resource', '_line', '_action', 'id', 'target_id', '_candidates', '_note']);
    const contactRows = rows.filter((r) => r[0] === 'contacts');
    expect(contactRows.map((r) => r[3])).toEqual(contacts.map((c) => c.id));
    expect(contactRows.map((r) => r[1])).toEqual(contacts.map((_, i) => String(i + 1)));
    expect(contactRows.slice(0, 150).every((r) => r[2] === 'create' && r[4] === '')).toBe(true);
    expect(contactRows.slice(150).every((r) => r[2] === 'found' && r[4] === r[3])).toBe(true);
    const plan = JSON.parse(dry.stdout) as {
      same_organization: boolean;
      collections: Array<Record<string, number | string>>;
      requests: number;
    };
    expect(plan.same_organization).toBe(true);
    const by = Object.fromEntries(plan.collections.map((c) => [c.resource, c]));
    expect([by.contacts!.create, by.contacts!.found, by.contacts!.ambiguous]).toEqual([150, contacts.length - 150, 0]);
    expect([by.deals!.create, by.companies!.create, by.tasks!.create]).toEqual([40, 2, 0]);
    expect([by.contacts!.target_records, by.deals!.target_records]).toEqual([contacts.length - 150, deals.length - 40]);
    expect(plan.requests).toBe(2 + 1 + 1); // contacts 150 → 2 chunks, deals 40, companies 2
    // the contacts still there naming a deleted company: left as they are, and said
    const gone = new Set(companies.slice(0, 2).map((c) => c.id));
    const stale = contacts.slice(150).filter((c) => gone.has(c.company_id as string)).length;
    expect(stale).toBeGreaterThan(0);
    expect(by.contacts!.references_stale).toBe(stale);

    // deals have no match fields: in their own organization, a deal created again since (its backup imported) would be
    // made twice; without a terminal that needs --yes, and nothing is sent before it is given
    const asked = await logLength(org);
    const refused = await runCrm(['restore', dir, '-o', 'json'], { env: org.env() });
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toMatch(
      /refusing to create 40 deals looked for by their id only, in a target that holds records of them already, without --yes: nothing was sent/,
    );
    // two commands to paste, each aimed at this organization: by the deals' fields, or as planned
    const flat = refused.stderr.replace(/\s+/g, ' ');
    expect(flat).toContain(`by their fields: crm --base-url ${org.sb.baseUrl} restore ${dir} --match deals=name;`);
    expect(flat).toContain(`as planned: crm --base-url ${org.sb.baseUrl} restore ${dir} --yes (`);
    expect(refused.stdout).toBe('');
    expect((await requestLog(org, asked)).filter((e) => e.method !== 'GET')).toEqual([]);

    const since = await logLength(org);
    const run = await runCrm(['restore', dir, '--yes', '-o', 'json'], { env: org.env() });
    expect(run.code, run.stderr).toBe(0);
    const runLog = await requestLog(org, since);
    const sent = runLog.filter((e) => e.method !== 'GET');
    // the owners are set from what the creates answered (the key's user): no collection is listed after the first write
    const firstWrite = runLog.findIndex((e) => e.method !== 'GET');
    const listings = runLog.filter((e) => e.method === 'GET' && /^\/api\/v2\/[a-z]+(\?|$)/.test(e.path));
    expect(listings.length).toBeGreaterThan(0);
    expect(listings.every((e) => e.index < runLog[firstWrite]!.index)).toBe(true);
    const posts = sent.filter((e) => e.method === 'POST');
    expect(posts.map((e) => new URL(e.path, 'http://x').pathname.replace(/^\/api\/v2/, '')).sort()).toEqual(
      ['/companies/batch', '/contacts/batch', '/contacts/batch', '/deals/batch'].sort(),
    );
    // a PATCH per created record the key's user (usr_admin) does not own in the snapshot: its owner given back
    const deleted = [...contacts.slice(0, 150), ...deals.slice(10, 50), ...companies.slice(0, 2)];
    const owned = deleted.filter((r) => r.owner_id !== 'usr_admin').length;
    expect(sent.filter((e) => e.method === 'PATCH')).toHaveLength(owned);
    expect(owned).toBeGreaterThan(0);
    const summary = JSON.parse(run.stdout) as { collections: Array<{ resource: string; created: number }> };
    expect(Object.fromEntries(summary.collections.map((c) => [c.resource, c.created]))).toMatchObject({
      contacts: 150,
      deals: 40,
      companies: 2,
    });
    expect(await expectRestored(dir, org, createdOf(dir, org))).toBe(
      COLLECTIONS.reduce((n, r) => n + readNdjson(join(dir, `${r}.ndjson`)).length, 0),
    );

    // the same command again, and a week later after someone else's change: only reads, nothing created
    const mapBefore = idMap(dir, org).lines.length;
    const again = await logLength(org);
    const rerun = await runCrm(['restore', dir, '-o', 'json'], { env: org.env() });
    expect(rerun.code, rerun.stderr).toBe(0);
    expect((await requestLog(org, again)).filter((e) => e.method !== 'GET')).toEqual([]);
    expect(idMap(dir, org).lines.length).toBe(mapBefore);
  });

  it('a record deleted after it was restored is created again, not taken at the id map’s word', async () => {
    const { map } = idMap(dir, org);
    const contact = readNdjson(join(dir, 'contacts.ndjson'))[0]!;
    await deleteIds(org, 'contacts', [map.get(`contacts/${contact.id}`)!]);
    const run = await runCrm(['restore', dir, '--resources', 'contacts', '-o', 'json'], { env: org.env() });
    expect(run.code, run.stderr).toBe(0);
    const now = idMap(dir, org).map.get(`contacts/${contact.id}`)!;
    expect(now).not.toBe(map.get(`contacts/${contact.id}`));
    expect((await records(org, 'contacts')).get(now)?.email).toBe(contact.email);
  });

  it('a week later the same records are deleted again: the same restore creates them again (not "already imported")', async () => {
    // the deals the bad delete's restore created, deleted again: the plan is the same text as that restore's
    const { lines } = idMap(dir, org);
    const latest = new Map(lines.filter((l) => l[0] === 'deals').map((l) => [l[1]!, l]));
    const made = [...latest.values()].filter((l) => l[3] === 'created').map((l) => l[2]!);
    expect(made.length).toBe(40);
    await deleteIds(org, 'deals', made);
    const since = await logLength(org);
    const run = await runCrm(['restore', dir, '--resources', 'deals', '--yes', '-o', 'json'], { env: org.env() });
    expect(run.code, run.stderr).toBe(0);
    const summary = JSON.parse(run.stdout) as { collections: Array<{ resource: string; created: number }> };
    expect(summary.collections[0]).toMatchObject({ resource: 'deals', created: 40 });
    expect((await requestLog(org, since)).filter((e) => e.method === 'POST')).toHaveLength(1);
    const deals = [...(await records(org, 'deals')).values()];
    expect(deals).toHaveLength(readNdjson(join(dir, 'deals.ndjson')).length);
  });
});

/** `test` on a fresh, empty sandbox (another organization), closed after. */
async function onEmptySandbox(test: (copy: TestSandbox) => Promise<void>): Promise<void> {
  const copy = await startTestSandbox({ rateLimit: 1_000_000, orgRateLimit: 1_000_000 });
  try {
    await test(copy);
  } finally {
    await copy.close();
  }
}

/** The same command, to the end: then each collection holds exactly the snapshot's records, each once. */
/** `--owners FILE` for the copy: the snapshot's admin's records to its user, and the user's kept */
function usersFile(): string {
  const users = join(tempDir('crm-restore-owners-'), 'users.csv');
  writeFileSync(users, 'old_id,new_id\nusr_admin,usr_user\nusr_user,usr_user\n');
  return users;
}

async function expectWhole(copy: TestSandbox, users = usersFile()): Promise<void> {
  const run = await runCrm(['restore', dir, '--owners', users, '-o', 'json'], { env: copy.env() });
  expect(run.code, run.stderr).toBe(0);
  for (const resource of COLLECTIONS)
    expect((await allIds(copy, `/${resource}`)).length, resource).toBe(
      readNdjson(join(dir, `${resource}.ndjson`)).length,
    );
  await expectRestored(dir, copy, createdOf(dir, copy), (o) => (o === undefined ? undefined : 'usr_user'));
}

describe('crm restore into another organization', () => {
  it('copies the snapshot into an empty sandbox, references translated; a second run sends nothing', () =>
    onEmptySandbox(async (copy) => {
      // the dry run: every reference is to a record the restore maps (the last collection, interactions, reads the
      // earlier ones' too: a trial's dry run said its 60 contact references were "kept")
      const dry = await runCrm(['restore', dir, '--dry-run', '-o', 'json'], { env: copy.env() });
      expect(dry.code, dry.stderr).toBe(0);
      const planned = (JSON.parse(dry.stdout) as { collections: Array<{ resource: string; references_kept: number }> })
        .collections;
      expect(planned.at(-1)!.resource).toBe('interactions');
      expect(planned.map((c) => [c.resource, c.references_kept])).toEqual(planned.map((c) => [c.resource, 0]));
      await expectWhole(copy);
      expect(createdOf(dir, copy).size).toBe(
        COLLECTIONS.reduce((n, r) => n + readNdjson(join(dir, `${r}.ndjson`)).length, 0),
      );
      // a contact's company: the copy's own id
      const contact = [...(await records(copy, 'contacts')).values()].find((c) => c.company_id)!;
      expect((await records(copy, 'companies')).has(contact.company_id as string)).toBe(true);
      const since = await logLength(copy);
      expect((await runCrm(['restore', dir], { env: copy.env() })).code).toBe(0);
      expect((await requestLog(copy, since)).filter((e) => e.method !== 'GET')).toEqual([]);
    }));

  it('kill -9 during the creates, then the same command: each record created once', () =>
    onEmptySandbox(async (copy) => {
      await copy.control('/faults', { latency_ms: 20 });
      // killed after the 2nd, then the 5th batch POST the server saw (contacts; then deals, which have no key)
      const users = usersFile();
      for (const after of [2, 5]) {
        const since = await logLength(copy);
        const args = ['restore', dir, '--owners', users];
        const r = await stopAfter(copy, args, { env: copy.env(), method: 'POST', after, since, signal: 'SIGKILL' });
        expect(r.signal, r.stderr).toBe('SIGKILL');
      }
      await copy.control('/faults', { latency_ms: 0 });
      // another key (perhaps another organization at the same URL: the third trial pasted a hint into a shell holding
      // another organization's key) is refused before anything is read: the key the target was begun with (masked),
      // and the file to remove if it is the same organization; never the engine's --no-resume
      const asked = await logLength(copy);
      const other = await runCrm(['restore', dir, '--owners', users], { env: copy.env('user') });
      expect(other.code, other.stderr).toBe(2);
      expect(other.stderr).toMatch(/this restore's target was begun with the API key \S+, and this run's is \S+/);
      expect(other.stderr).toMatch(/remove \S+key\.json'? and run again/);
      expect(other.stderr).not.toContain(copy.sb.keys.user);
      expect(other.stderr).not.toContain(copy.sb.keys.admin);
      expect(other.stderr).not.toMatch(/--no-resume/);
      expect(await requestLog(copy, asked)).toEqual([]);
      await expectWhole(copy, users);
      // the killed runs' temporary files (a plan, an index, a create file not committed) are gone
      const left = readdirSync(join(dir, 'restore'), { recursive: true }).map(String);
      expect(left.filter((f) => f.includes('.tmp-'))).toEqual([]);
    }));

  it('a first run with a key the server refuses (401) does not tie the target to that key', () =>
    onEmptySandbox(async (copy) => {
      const wrong = { ...copy.env(), CRM_API_KEY: `service_live_${'w'.repeat(40)}` };
      const bad = await runCrm(['restore', dir], { env: wrong });
      expect(bad.code, bad.stderr).toBe(3);
      const keys = readdirSync(join(dir, 'restore'), { recursive: true }).map(String);
      expect(keys.filter((f) => f.endsWith('key.json') && f.includes(String(new URL(copy.sb.baseUrl).port)))).toEqual(
        [],
      );
      const good = await runCrm(['restore', dir], { env: copy.env() });
      expect(good.code, good.stderr).toBe(0);
    }));

  it('faults after the write: answers lost, the records made once', () =>
    onEmptySandbox(async (copy) => {
      await copy.control('/faults', {
        next: [
          { kind: '500-after-write', path: '/contacts/batch', count: 2 },
          { kind: 'drop-after-write', path: '/deals/batch', count: 1 },
        ],
      });
      await expectWhole(copy);
    }));

  it('never guesses: a key two records of the target share is ambiguous, nothing created for it (exit 9)', () =>
    onEmptySandbox(async (copy) => {
      const contact = readNdjson(join(dir, 'contacts.ndjson')).at(-1)!;
      for (const first of ['One', 'Two'])
        await fetch(`${copy.sb.baseUrl}/contacts`, {
          method: 'POST',
          headers: { 'X-Service-Api-Key': copy.sb.keys.admin, 'content-type': 'application/json' },
          body: JSON.stringify({ email: contact.email, first_name: first }),
        });
      const planCsv = join(tempDir('crm-restore-plan-'), 'plan.csv');
      const args = ['--base-url', copy.sb.baseUrl, 'restore', dir, '--resources', 'companies,contacts', '-o', 'json'];
      const run = await runCrm([...args, '--plan', planCsv], { env: copy.env() });
      expect(run.code, run.stderr).toBe(9);
      // the hint's command keeps the organization it was given (the trial's pasted hint went to the default profile's)
      expect(run.stderr).toContain(`crm --base-url ${copy.sb.baseUrl} restore ${dir} --resources companies,contacts`);
      const row = csvRows(planCsv).find((r) => r[3] === contact.id)!;
      expect([row[0], row[2], row[4], row[5]!.split(';').length]).toEqual(['contacts', 'ambiguous', '', 2]);
      const port = String(new URL(copy.sb.baseUrl).port);
      const file = readdirSync(join(dir, 'restore'), { recursive: true })
        .map(String)
        .find((f) => f.includes(port) && f.endsWith('contacts.ambiguous.csv'));
      expect(readFileSync(join(dir, 'restore', file!), 'utf8')).toContain(contact.id);
      const emails = [...(await records(copy, 'contacts')).values()].filter((c) => c.email === contact.email);
      expect(emails).toHaveLength(2);
      // settled as the hint says (the third trial found no way to): a line naming the one it is, appended by hand (LF)
      const flat = run.stderr.replace(/\s+/g, ' ');
      expect(flat).toMatch(
        /append the line contacts,SNAPSHOT_ID,CANDIDATE_ID,matched \(from \S+contacts\.ambiguous\.csv\) to \S+\.ids\.csv/,
      );
      const mapFile = /to (\S+\.ids\.csv)/.exec(flat)![1]!.replace(/^'|'$/g, '');
      const chosen = row[5]!.split(';')[1]!;
      appendFileSync(mapFile, `contacts,${contact.id},${chosen},matched\n`);
      const since = await logLength(copy);
      const again = await runCrm(args, { env: copy.env() });
      expect(again.code, again.stderr).toBe(0);
      expect((await requestLog(copy, since)).filter((e) => e.method !== 'GET')).toEqual([]);
      expect(idMap(dir, copy).map.get(`contacts/${contact.id}`)).toBe(chosen);
    }));
});

describe('crm restore, one at a time and from a whole snapshot', () => {
  it('a second restore into the same organization, from another folder, is refused while one runs', () =>
    onEmptySandbox(async (copy) => {
      const other = tempDir('crm-restore-copy-');
      cpSync(dir, other, { recursive: true, filter: (f) => !f.includes('/restore') });
      await copy.control('/faults', { latency_ms: 40 });
      const first = runCrm(['restore', dir], { env: copy.env() });
      while ((await requestLog(copy)).filter((e) => e.method === 'POST').length === 0) await sleep(5);
      const second = await runCrm(['restore', other], { env: copy.env() });
      expect(second.code, second.stderr).toBe(2);
      expect(second.stderr).toContain('is restoring a snapshot into');
      // the hint never says another folder's restore finds what this one created (its id map is its own)
      expect(second.stderr.replace(/\s+/g, ' ')).toContain('each folder keeps its own id map');
      expect((await first).code).toBe(0);
    }));

  it('an interrupted snapshot is said: only the collections it holds whole are restored', async () => {
    const partial = tempDir('crm-restore-partial-');
    cpSync(dir, partial, { recursive: true, filter: (f) => !f.includes('/restore') });
    const manifest = JSON.parse(readFileSync(join(partial, 'manifest.json'), 'utf8')) as Record<string, any>;
    manifest.complete = false;
    manifest.collections.deals.complete = false;
    writeFileSync(join(partial, 'manifest.json'), JSON.stringify(manifest));
    const r = await runCrm(['restore', partial, '--dry-run', '-o', 'json'], { env: org.env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('is not complete');
    expect(r.stderr).toContain('not deals, which it holds only in part');
    expect(
      (JSON.parse(r.stdout) as { collections: Array<{ resource: string }> }).collections.map((c) => c.resource),
    ).not.toContain('deals');
  });
});

describe('crm restore refuses', () => {
  it.each([
    [['restore', '/nonexistent-crm-folder'], 'manifest.json: not found'],
    [['restore', 'DIR', '--resources', 'meetings'], 'read-only'],
    [['restore', 'DIR', '--match', 'deals'], 'expected RES=FIELDS'],
    [['restore', 'DIR', '--match', 'contacts=emial'], 'has a field "emial"; did you mean email?'],
    [['restore', 'DIR', '--owners', '/nonexistent-users.csv'], '--owners /nonexistent-users.csv'],
  ])('%j: exit 2, nothing sent', async (args, text) => {
    const since = await logLength(org);
    const r = await runCrm(
      args.map((a) => (a === 'DIR' ? dir : a)),
      { env: org.env() },
    );
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(text);
    expect((await requestLog(org, since)).length).toBe(0);
  });
});
