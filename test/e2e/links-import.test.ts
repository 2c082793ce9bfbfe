// End to end: `crm links import` (files of pairs, meeting associations) and `crm links add --file`
// (one parent, a file of ids) against the sandbox: what is linked, what is sent (the request log),
// already-linked rows, the rejects file fixed and fed back, reruns.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';

let t: TestSandbox;
let dir: string;
const ids: Record<string, string[]> = {};
beforeAll(async () => {
  t = await startTestSandbox({ seed: 12 });
  dir = mkdtempSync(join(tmpdir(), 'crm-links-import-'));
  for (const r of ['contacts', 'companies', 'deals', 'notes', 'segments', 'meetings']) {
    const data = (await get(`/${r}?limit=4`)) as Array<{ id: string }>;
    ids[r] = data.map((x) => x.id);
  }
});
afterAll(async () => {
  await t?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function get(path: string): Promise<unknown> {
  const res = await fetch(`${t.sb.baseUrl}${path}`, { headers: { 'X-Service-Api-Key': t.sb.keys.admin } });
  return ((await res.json()) as { data: unknown }).data;
}
/** the children linked to a parent, an id once per link */
const linked = async (parent: string, id: string | undefined, relation: string) =>
  ((await get(`/${parent}/${id}/${relation}?limit=100`)) as Array<{ id: string; link: { type?: string } }>).map(
    (c) => c.id,
  );
const crm = (args: string[], input?: string) =>
  runCrm(['-o', 'json', ...args], { env: t.env('admin'), cwd: dir, input });
const file = (name: string, text: string) => (writeFileSync(join(dir, name), text), join(dir, name));

type Logged = { method: string; path: string };
/** the API requests logged from `since` on (the request log's index) */
const requests = async (since = 0) =>
  ((await t.control(`/requests?since=${since}`)) as Logged[]).filter((r) => r.path.startsWith('/api/'));
const logEnd = async () => ((await t.control('/requests')) as unknown[]).length;
const writes = (log: Logged[]) =>
  log.filter((r) => r.method !== 'GET').map((r) => `${r.method} ${r.path.replace('/api/v2', '')}`);

describe('crm links import: files of pairs', () => {
  const of = (r: string) => (): string[] => ids[r]!;
  const [c, co, d, n, s, m] = [
    of('contacts'),
    of('companies'),
    of('deals'),
    of('notes'),
    of('segments'),
    of('meetings'),
  ];
  const jobs = () => [
    {
      pair: ['deals', 'contacts'],
      text: `deal_id,contact_id,type,supervisor\n${d()[0]},${c()[0]},champion,\n${d()[0]},${c()[1]},Decision-Maker,${c()[0]}\n${d()[1]},${c()[0]},,\n`,
      sent: [`POST /deals/${d()[0]}/contacts`, `POST /deals/${d()[0]}/contacts`, `POST /deals/${d()[1]}/contacts`],
    },
    {
      pair: ['deals', 'companies'],
      text: `deal_id,company_id\n${d()[0]},${co()[0]}\n${d()[1]},${co()[0]}\n`,
      sent: [`POST /deals/${d()[0]}/companies`, `POST /deals/${d()[1]}/companies`],
    },
    {
      pair: ['notes', 'records'],
      text: `note_id,record_id,record_type\n${n()[0]},${c()[2]},\n${n()[0]},${co()[1]},company\n${n()[0]},${d()[2]},deal\n`,
      sent: [`POST /notes/${n()[0]}/records`, `POST /notes/${n()[0]}/records`, `POST /notes/${n()[0]}/records`],
    },
    {
      pair: ['segments', 'members'],
      text: `segment_id,contact_id\n${s()[0]},${c()[0]}\n${s()[0]},${c()[3]}\n`,
      sent: [`POST /segments/${s()[0]}/members`, `POST /segments/${s()[0]}/members`],
    },
    {
      pair: ['meetings', 'deal'],
      text: `meeting_id,deal_id\n${m()[0]},${d()[2]}\n${m()[1]},${d()[3]}\n`,
      sent: [`PUT /meetings/${m()[0]}/deal`, `PUT /meetings/${m()[1]}/deal`],
    },
  ];

  it('links every pair of the four relations and sets meeting deals, one request per row', async () => {
    for (const job of jobs()) {
      const path = file(`${job.pair.join('-')}.csv`, job.text);
      const since = await logEnd();
      const r = await crm(['links', 'import', ...job.pair, path]);
      expect(r.code, r.stderr).toBe(0);
      const rows = job.sent.length;
      expect(JSON.parse(r.stdout)).toMatchObject({
        resource: job.pair.join('/'),
        operation: 'link',
        rows,
        linked: rows,
        failed: 0,
        invalid: 0,
      });
      expect(writes(await requests(since)).sort()).toEqual([...job.sent].sort());
    }
    const dealContacts = (await get(`/deals/${d()[0]}/contacts?limit=100`)) as Array<{
      id: string;
      link: { type?: string; supervisor?: string };
    }>;
    expect(dealContacts.find((x) => x.id === c()[0])?.link).toMatchObject({ type: 'CHAMPION' });
    expect(dealContacts.find((x) => x.id === c()[1])?.link).toMatchObject({
      type: 'DECISION_MAKER',
      supervisor: c()[0],
    });
    expect(await linked('deals', d()[1], 'contacts')).toContain(c()[0]);
    expect(await linked('deals', d()[1], 'companies')).toContain(co()[0]);
    expect(await linked('notes', n()[0], 'records')).toEqual(expect.arrayContaining([c()[2], co()[1], d()[2]]));
    expect(await linked('segments', s()[0], 'members')).toEqual(expect.arrayContaining([c()[0], c()[3]]));
    expect(await get(`/meetings/${m()[0]}/deal`)).toMatchObject({ id: d()[2] });
    expect(await get(`/meetings/${m()[1]}/deal`)).toMatchObject({ id: d()[3] });
  });

  it('a rerun of the same command sends nothing', async () => {
    for (const job of jobs()) {
      const since = await logEnd();
      const r = await crm(['links', 'import', ...job.pair, join(dir, `${job.pair.join('-')}.csv`)]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/nothing will be sent/);
      expect(JSON.parse(r.stdout)).toMatchObject({ linked: 0, skipped: job.sent.length, requests: 0 });
      expect(await requests(since)).toEqual([]);
    }
  });

  it('already linked is success: --no-resume with the server keys forgotten relinks every row, exit 0, nothing twice', async () => {
    await t.control('/forget-idempotency', {});
    for (const job of jobs()) {
      const since = await logEnd();
      const r = await crm(['links', 'import', ...job.pair, join(dir, `${job.pair.join('-')}.csv`), '--no-resume']);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ linked: job.sent.length, failed: 0 });
      expect(writes(await requests(since))).toHaveLength(job.sent.length);
    }
    const once = (list: string[]) => expect(list.length).toBe(new Set(list).size);
    once(await linked('deals', d()[0], 'contacts'));
    once(await linked('deals', d()[0], 'companies'));
    once(await linked('notes', n()[0], 'records'));
    once(await linked('segments', s()[0], 'members'));
  });
});

describe('crm links add --file: one parent, a file of ids', () => {
  it('links each id of a bare list (and standard input), exit 0', async () => {
    const [seg] = ids.segments!.slice(1);
    const [a, b, c] = ids.contacts!;
    const since = await logEnd();
    const r = await crm(['links', 'add', 'segments', seg!, 'members', '--file', file('ids.txt', `${a}\n${b}\n`)]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ resource: `segments/${seg}/members`, rows: 2, linked: 2 });
    expect(writes(await requests(since))).toEqual([`POST /segments/${seg}/members`, `POST /segments/${seg}/members`]);
    const piped = await crm(['links', 'add', 'segments', seg!, 'members', '--file', '-'], `contact_id\n${c}\n`);
    expect(piped.code, piped.stderr).toBe(0);
    expect(await linked('segments', seg, 'members')).toEqual(expect.arrayContaining([a, b, c]));
  });
});

describe('rejects: fixed and fed back', () => {
  it('an invalid role and a missing child go to the rejects file (exit 9); fed back fixed, they link and nothing is doubled', async () => {
    const deal = ids.deals![3]!;
    const [c1, c2, c3, c4] = ids.contacts!;
    const before = await linked('deals', deal, 'contacts');
    const input = file(
      'roles.csv',
      `deal_id,contact_id,type\n${deal},${c1},champion\n${deal},${c2},BOSS\n${deal},,coach\n${deal},${c3},coach\n`,
    );
    const since = await logEnd();
    const r = await crm(['links', 'import', 'deals', 'contacts', input]);
    expect(r.code, r.stderr).toBe(9);
    expect(JSON.parse(r.stdout)).toMatchObject({
      rows: 4,
      linked: 2,
      invalid: 2,
      rejects_file: `${input}.link-deals-contacts.rejects.csv`,
    });
    expect(writes(await requests(since))).toEqual([`POST /deals/${deal}/contacts`, `POST /deals/${deal}/contacts`]);
    expect(r.stderr).toContain(`crm -o json links import deals contacts ${input}.link-deals-contacts.rejects.csv`);
    const rejects = readFileSync(`${input}.link-deals-contacts.rejects.csv`, 'utf8').trim().split(/\r?\n/);
    expect(rejects[0]).toBe('deal_id,contact_id,type,_line,_error_code,_error_message');
    expect(rejects[1]).toMatch(
      new RegExp(`^${deal},${c2},BOSS,3,INVALID_VALUE,"type ""BOSS"" is not one of PRIMARY, `),
    );
    expect(rejects[2]).toBe(`${deal},,coach,4,MISSING_ID,the row has no contact_id`);

    const fixed = readFileSync(`${input}.link-deals-contacts.rejects.csv`, 'utf8')
      .replace(',BOSS,', ',influencer,')
      .replace(`${deal},,coach`, `${deal},${c4},coach`);
    writeFileSync(`${input}.link-deals-contacts.rejects.csv`, fixed);
    const again = await crm(['links', 'import', 'deals', 'contacts', `${input}.link-deals-contacts.rejects.csv`]);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ rows: 2, linked: 2, invalid: 0, failed: 0 });
    const after = await crm(['links', 'import', 'deals', 'contacts', input]);
    expect(after.code).toBe(9); // the original's invalid rows are still invalid; nothing is sent again
    expect(JSON.parse(after.stdout)).toMatchObject({ linked: 0, skipped: 2, requests: 0 });

    const now = (await get(`/deals/${deal}/contacts?limit=100`)) as Array<{ id: string; link: { type?: string } }>;
    expect(now.length).toBe(new Set([...before, c1, c2, c3, c4]).size);
    expect(
      Object.fromEntries(now.filter((x) => [c1, c2, c3, c4].includes(x.id)).map((x) => [x.id, x.link.type])),
    ).toEqual({
      [c1!]: 'CHAMPION',
      [c2!]: 'INFLUENCER',
      [c3!]: 'COACH',
      [c4!]: 'COACH',
    });
  });
});

describe('one parent that does not exist', () => {
  it('stops at the first 404 with one lookup of the parent (exit 5), sends no more rows, leaves no rejects', async () => {
    const children = ids.contacts!.join('\n');
    const input = file('to-nowhere.txt', `${children}\n${children.replace(/con_/g, 'con_x')}\n`);
    const from = await logEnd();
    const r = await runCrm(
      ['-o', 'json', 'links', 'add', 'segments', 'seg_nope', 'members', '--file', input, '--concurrency', '1'],
      {
        env: t.env('admin'),
        cwd: dir,
      },
    );
    expect(r.code, r.stderr).toBe(5);
    expect(r.stderr).toMatch(/segments seg_nope not found: nothing more was linked/);
    expect(r.stderr).toMatch(/crm segments list/);
    const log = await requests(from);
    // one link tried, then the parent looked up: nothing else
    expect(log.map((x) => `${x.method} ${x.path.replace('/api/v2', '')}`)).toEqual([
      'POST /segments/seg_nope/members',
      'GET /segments/seg_nope',
    ]);
    expect(JSON.parse(r.stdout)).toMatchObject({ linked: 0, failed: 0, rejects_file: null });
  });
});
