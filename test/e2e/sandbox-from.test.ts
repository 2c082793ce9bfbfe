// `crm sandbox --from DIR` (docs/sandbox.md, "Serving a snapshot"): the records of a folder in the
// format `crm snapshot DIR` writes (manifest.json, one <resource>.ndjson per collection) are served
// with their ids and fields, new records get fresh ids, the rate limit and faults still apply, and a
// folder the sandbox cannot serve is refused at start (exit 2) naming the file and the line.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { collect, startCrm, startSandboxProcess, type SandboxProcess } from '../helpers/run-crm.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'crm-e2e-sandbox-from-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const at = (s: number) => new Date(Date.UTC(2025, 0, 1, 0, 0, s)).toISOString();
const CONTACTS = [
  {
    id: 'con_snapA1',
    email: 'ada@example.test',
    first_name: 'Ada',
    score: 91,
    vip: true,
    owner_id: 'usr_admin',
    created_at: at(1),
    updated_at: at(5),
  },
  {
    id: 'con_snapB2',
    email: 'grace@example.test',
    first_name: 'Grace',
    title: null,
    owner_id: 'usr_user',
    created_at: at(2),
    updated_at: at(2),
  },
  {
    id: 'con_snapC3',
    email: 'linus@example.test',
    first_name: 'Linus',
    tags: ['x', 'y'],
    owner_id: 'usr_admin',
    created_at: at(3),
    updated_at: at(3),
  },
];
const COMPANIES = [
  {
    id: 'cmp_snapA1',
    name: 'Analytical Engines',
    founded_year: 1837,
    owner_id: 'usr_admin',
    created_at: at(4),
    updated_at: at(4),
  },
  {
    id: 'cmp_snapB2',
    name: 'Cobol Ltd',
    founded_year: 1959,
    owner_id: 'usr_admin',
    created_at: at(6),
    updated_at: at(6),
  },
];
const DEALS = [
  {
    id: 'deal_snapA1',
    name: 'Difference engine',
    amount: 1200.5,
    company_id: 'cmp_snapA1',
    owner_id: 'usr_admin',
    created_at: at(7),
    updated_at: at(8),
  },
  {
    id: 'deal_snapB2',
    name: 'Compiler',
    amount: 99,
    company_id: 'cmp_snapB2',
    owner_id: 'usr_user',
    created_at: at(9),
    updated_at: at(9),
  },
];
const RECORDS: Record<string, Array<Record<string, unknown>>> = {
  contacts: CONTACTS,
  companies: COMPANIES,
  deals: DEALS,
};

/** A snapshot folder as `crm snapshot` writes it; `files` adds or replaces files (name → content). */
function writeSnapshot(name: string, opts: { complete?: boolean; files?: Record<string, string> } = {}): string {
  const dir = path.join(root, name);
  fs.mkdirSync(dir, { recursive: true });
  const collections = Object.fromEntries(
    Object.entries(RECORDS).map(([r, rows]) => [r, { file: `${r}.ndjson`, records: rows.length, complete: true }]),
  );
  const manifest = {
    base_url: 'https://crm.example.com/api/v2',
    started_at: at(10),
    finished_at: at(11),
    complete: opts.complete ?? true,
    collections,
  };
  fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(manifest));
  for (const [r, rows] of Object.entries(RECORDS))
    fs.writeFileSync(path.join(dir, `${r}.ndjson`), rows.map((x) => `${JSON.stringify(x)}\n`).join(''));
  for (const [file, content] of Object.entries(opts.files ?? {})) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), content);
  }
  return dir;
}

/** a line of a links file as `crm snapshot --links` writes it */
const line = (parentId: string, record: Record<string, unknown>, link: Record<string, unknown> = {}) =>
  JSON.stringify({ parent_id: parentId, record: { ...record, link } });

const get = (sb: SandboxProcess, p: string) =>
  fetch(`${sb.baseUrl}${p}`, { headers: { 'x-service-api-key': sb.admin } });

async function serve<T>(args: string[], use: (sb: SandboxProcess) => Promise<T>): Promise<T> {
  const sb = await startSandboxProcess(['--port', '0', ...args]);
  try {
    return await use(sb);
  } finally {
    await sb.stop();
  }
}

describe('crm sandbox --from DIR', () => {
  it('lists exactly the records of the snapshot, field by field, and GET by id returns each', async () => {
    const dir = writeSnapshot('good');
    await serve(['--from', dir], async (sb) => {
      for (const [resource, rows] of Object.entries(RECORDS)) {
        const list = (await (await get(sb, `/${resource}?limit=100`)).json()) as { data: unknown[] };
        expect(list.data, resource).toEqual(rows);
        for (const row of rows) {
          const one = await get(sb, `/${resource}/${String(row.id)}`);
          expect(one.status).toBe(200);
          expect(((await one.json()) as { data: unknown }).data).toEqual(row);
        }
      }
      expect(((await (await get(sb, '/tasks')).json()) as { data: unknown[] }).data).toEqual([]);
    });
  }, 30_000);

  it('serves the links and meeting associations of links/*.ndjson; a link to a record it does not hold is left out, with a warning', async () => {
    const link = { id: 'lnk_snap1', created_at: at(20), type: 'CHAMPION', supervisor: 'Grace' };
    const meeting = {
      id: 'mtg_snap1',
      title: 'Kick-off',
      deal_id: null,
      company_id: null,
      owner_id: 'usr_admin',
      created_at: at(21),
    };
    const dir = writeSnapshot('links', {
      files: {
        'meetings.ndjson': `${JSON.stringify(meeting)}\n`,
        'links/deals.contacts.ndjson': [
          line('deal_snapA1', CONTACTS[1]!, link),
          line('deal_snapA1', { id: 'con_gone', email: 'gone@example.test' }),
          line('deal_snapA1', CONTACTS[0]!),
        ].join('\n'),
        'links/notes.records.ndjson': '',
        'links/meetings.deal.ndjson': `${line('mtg_snap1', DEALS[1]!)}\n`,
      },
    });
    const child = startCrm(['sandbox', '--port', '0', '--from', dir]);
    let stderr = '';
    const started = new Promise<string>((resolve) =>
      child.stdout!.setEncoding('utf8').once('data', (d: string) => resolve(d)),
    );
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const info = JSON.parse((await started).split('\n')[0]!) as { base_url: string; keys: { admin: string } };
    try {
      const sb = { baseUrl: info.base_url, admin: info.keys.admin } as SandboxProcess;
      const linked = (await (await get(sb, '/deals/deal_snapA1/contacts')).json()) as {
        data: Array<Record<string, unknown>>;
      };
      expect(linked.data.map((c) => c.id)).toEqual(['con_snapB2', 'con_snapA1']);
      expect(linked.data[0]).toEqual({
        ...CONTACTS[1],
        link: {
          ...link,
          parent_type: 'deals',
          parent_id: 'deal_snapA1',
          relation: 'contacts',
          child_type: 'contacts',
          child_id: 'con_snapB2',
        },
      });
      expect(((await (await get(sb, '/meetings/mtg_snap1/deal')).json()) as { data: unknown }).data).toEqual(DEALS[1]);
      expect(((await (await get(sb, '/meetings/mtg_snap1/company')).json()) as { data: unknown }).data).toBeNull();
      expect(stderr).toContain('links/deals.contacts.ndjson: 1 link to a record the snapshot does not hold, left out');
    } finally {
      child.kill('SIGTERM');
      await collect(child, { timeoutMs: 20_000 });
    }
  }, 30_000);

  it('a record created later gets a fresh id and is listed after the loaded ones; a reset goes back to the snapshot', async () => {
    const dir = writeSnapshot('create');
    await serve(['--from', dir, '--control'], async (sb) => {
      const created = await fetch(`${sb.baseUrl}/contacts`, {
        method: 'POST',
        headers: { 'x-service-api-key': sb.admin, 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'new@example.test', first_name: 'New' }),
      });
      expect(created.status).toBe(201);
      const id = ((await created.json()) as { data: { id: string } }).data.id;
      expect(id).toMatch(/^con_/);
      expect(CONTACTS.map((c) => c.id)).not.toContain(id);
      const list = (await (await get(sb, '/contacts?limit=100')).json()) as { data: Array<{ id: string }> };
      expect(list.data.map((c) => c.id)).toEqual([...CONTACTS.map((c) => c.id), id]);
      // /__sandbox/reset goes back to the snapshot as loaded
      expect((await fetch(`${sb.controlUrl}/reset`, { method: 'POST' })).status).toBe(200);
      expect(((await (await get(sb, '/contacts?limit=100')).json()) as { data: unknown[] }).data).toEqual(CONTACTS);
    });
  }, 30_000);

  it("the sandbox's rate limit and faults still apply", async () => {
    const dir = writeSnapshot('limits');
    await serve(['--from', dir, '--rate-limit', '2', '--rate-window-ms', '60000'], async (sb) => {
      expect((await get(sb, '/contacts')).status).toBe(200);
      expect((await get(sb, '/companies')).status).toBe(200);
      expect((await get(sb, '/deals')).status).toBe(429);
    });
    await serve(['--from', dir, '--faults', '500:1'], async (sb) =>
      expect((await get(sb, '/contacts')).status).toBe(500),
    );
  }, 30_000);

  it('an incomplete snapshot (complete: false) is served as it is, with a warning', async () => {
    const dir = writeSnapshot('partial', { complete: false });
    const child = startCrm(['sandbox', '--port', '0', '--from', dir]);
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      if (stderr.includes('Press Ctrl-C')) child.kill('SIGTERM');
    });
    const r = await collect(child, { timeoutMs: 20_000 });
    expect(stderr).toContain(`snapshot ${dir} is not complete`);
    expect(stderr).toContain('serving the 7 records it holds');
    expect(r.stdout).toMatch(/"base_url"/);
  }, 30_000);

  const refused: Array<[string, Record<string, string>, RegExp]> = [
    [
      'a malformed line',
      { 'contacts.ndjson': `${JSON.stringify(CONTACTS[0])}\n{"id": "con_x", oops\n` },
      /contacts\.ndjson line 2: not valid JSON/,
    ],
    [
      'a record without an id',
      { 'deals.ndjson': `${JSON.stringify(DEALS[0])}\n\n${JSON.stringify({ name: 'no id' })}\n` },
      /deals\.ndjson line 3: not a record with a string "id"/,
    ],
    [
      'the same id twice',
      { 'companies.ndjson': `${JSON.stringify(COMPANIES[0])}\n${JSON.stringify(COMPANIES[0])}\n` },
      /companies\.ndjson line 2: id "cmp_snapA1" is already on line 1/,
    ],
    [
      'a file of an unknown resource',
      { 'widgets.ndjson': '{"id":"w_1"}\n' },
      /widgets\.ndjson: "widgets" is not a resource/,
    ],
    [
      'a links file of an unknown kind',
      { 'links/deals.widgets.ndjson': '{"parent_id":"deal_snapA1","record":{"id":"con_snapA1"}}\n' },
      /links\/deals\.widgets\.ndjson: not a kind of link \(deals\.contacts\.ndjson, /,
    ],
    [
      'a links line that is not {parent_id, record}',
      {
        'links/deals.contacts.ndjson': `${line('deal_snapA1', CONTACTS[0]!)}\n{"parent":"deal_snapA1","record":{"id":"con_snapA1"}}\n`,
      },
      /links\/deals\.contacts\.ndjson line 2: not \{"parent_id": "<id>", "record": \{"id": "<id>", …\}\}/,
    ],
    [
      'a link whose parent the snapshot does not hold',
      { 'links/deals.companies.ndjson': `${line('deal_nowhere', COMPANIES[0]!)}\n` },
      /links\/deals\.companies\.ndjson line 1: parent "deal_nowhere" is not in deals\.ndjson/,
    ],
    [
      'a manifest that is not one',
      { 'manifest.json': '{"collections": {}}' },
      /manifest\.json: "complete" must be true or false/,
    ],
  ];
  for (const [what, files, message] of refused) {
    it(`refuses ${what} at start, exit 2, naming the file and line`, async () => {
      const dir = writeSnapshot(what.replaceAll(' ', '-'), { files });
      const r = await collect(startCrm(['sandbox', '--port', '0', '--from', dir]), { timeoutMs: 20_000 });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stdout).toBe('');
    }, 30_000);
  }

  it('refuses a folder without manifest.json, and --from with --seed or --data-file', async () => {
    const empty = path.join(root, 'empty');
    fs.mkdirSync(empty);
    const none = await collect(startCrm(['sandbox', '--port', '0', '--from', empty]), { timeoutMs: 20_000 });
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/manifest\.json: not found \(is it a folder written by crm snapshot\?\)/);
    const dir = writeSnapshot('combined');
    const both = await collect(
      startCrm(['sandbox', '--port', '0', '--from', dir, '--seed', '1', '--data-file', path.join(root, 'f.json')]),
      {
        timeoutMs: 20_000,
      },
    );
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/--from serves the snapshot as it is: it cannot be combined with --seed, --data-file/);
  }, 30_000);
});
