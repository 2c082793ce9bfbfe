// Every example of every --help runs as written, against a seeded sandbox. The command tree is walked
// (every command's --help, as `crm … --help` prints it), each `$ …` line of its Examples section is
// run with bash (-e, -o pipefail), with `crm` on PATH, in a throw-away HOME and folder, against a
// seeded sandbox (reset before each example) saved as the default profile `work`. An example must
// exit 0; a batch, links or delete example must also have done its work on the server (rows created,
// updated, deleted, linked: read back from the sandbox, not taken from crm's word).
//
// What a user would fill in is filled in from the sandbox: ids (IDS: con_123 is a real contact), the
// example URL (https://crm.example.com/api/v2 is the sandbox's), a key typed at the prompt, and the
// files an example names are written with the columns it implies (FIXTURES: for `--map
// "E-mail=email"` a file with an E-mail column). A delete that asks first runs in a terminal (tmux)
// and is answered yes. An example that cannot run here would be listed in NOT_RUN with its reason;
// every other example runs, so a new example is run too (and fails if it names a file or an id this
// test cannot make up).
import { spawn } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LINK_KINDS } from '../../src/api/snapshot-links.js';
import { main } from '../../src/cli/main.js';
import { allCommands, buildProgram, commandPath } from '../../src/cli/program.js';
import { fakeIO } from '../helpers/fake-io.js';
import { CRM_BIN, cleanEnv, runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';
import { HAS_TMUX, startTmux, type Tmux } from '../helpers/tmux.js';

/** example line → why it is not run (none: a new entry needs a reason a reviewer accepts) */
const NOT_RUN: Record<string, string> = {};

/**
 * A delete without --yes asks on a terminal (and refuses without one): it runs in tmux, answered yes. So does a restore
 * creating deals (no match fields) into the sandbox, which holds deals, unless --match deals=… finds them by name.
 */
const asks = (line: string) =>
  (/^crm \w+ delete \w+$|--delete\b/.test(line) ||
    (/^crm restore /.test(line) && !/--dry-run\b|--match deals=/.test(line))) &&
  !/--yes\b/.test(line);

/** The examples of every command's --help: line → the commands whose help shows it. */
async function helpExamples(): Promise<Map<string, string[]>> {
  const program = buildProgram({
    io: fakeIO().io,
    env: {},
    signal: new AbortController().signal,
    jsonErrors: false,
    verbose: false,
  });
  const found = new Map<string, string[]>();
  for (const cmd of allCommands(program)) {
    const path = commandPath(cmd);
    const f = fakeIO();
    const code = await main([...path.split(' ').slice(1), '--help'], { io: f.io, env: {}, handleSignals: false });
    if (code !== 0) throw new Error(`${path} --help: exit ${code}\n${f.err()}`);
    // an example's comment may stand on the line above it (`  # …`)
    const section = /^Examples:\n((?: {2}[$#] .*\n?)+)/m.exec(f.out())?.[1] ?? '';
    for (const line of section.split('\n').filter((l) => l.startsWith('  $ '))) {
      const example = line.replace(/^ {2}\$ /, '').trim();
      found.set(example, [...(found.get(example) ?? []), path]);
    }
  }
  return found;
}

const examples = await helpExamples();

/** What the seeded sandbox holds, by resource: the ids examples stand for. */
interface Seeded {
  t: TestSandbox;
  ids: Record<string, string[]>;
}

const PREFIXES: Record<string, string> = {
  con: 'contacts',
  cmp: 'companies',
  deal: 'deals',
  pipe: 'pipelines',
  task: 'tasks',
  note: 'notes',
  seg: 'segments',
  int: 'interactions',
  mtg: 'meetings',
  rec: 'recordings',
  bkg: 'bookings',
};
/** an example id's number → which seeded record it stands for (the first, the second) */
const IDS: Record<string, number> = { '123': 0, '1': 0, '456': 1, '9': 1 };
const EXAMPLE_URL = 'https://crm.example.com/api/v2';

/** The example with its placeholders filled in; throws on an id this test does not know. */
function fillIn(line: string, s: Seeded): string {
  return line
    .replaceAll(EXAMPLE_URL, s.t.sb.baseUrl)
    .replace(/\b(con|cmp|deal|pipe|task|note|seg|int|mtg|rec|bkg)_(\d+)\b/g, (whole, prefix: string, n: string) => {
      const index = IDS[n];
      const id = index === undefined ? undefined : s.ids[PREFIXES[prefix]!]![index];
      if (id === undefined) throw new Error(`no seeded record for ${whole} (add its number to IDS)`);
      return id;
    });
}

const api = async (s: Seeded, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> => {
  const res = await fetch(`${s.t.sb.baseUrl}${path}`, {
    method,
    headers: {
      'X-Service-Api-Key': s.t.sb.keys.admin,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
};

async function listAll(s: Seeded, path: string): Promise<Array<Record<string, unknown>>> {
  const all: Array<Record<string, unknown>> = [];
  let cursor: string | null = null;
  for (;;) {
    const sep = path.includes('?') ? '&' : '?';
    const r = await api(s, 'GET', `${path}${sep}limit=100${cursor ? `&cursor=${cursor}` : ''}`);
    if (r.status !== 200) throw new Error(`GET ${path}: HTTP ${r.status}`);
    all.push(...(r.json.data as Array<Record<string, unknown>>));
    if (!r.json.page_info?.has_next_page) return all;
    cursor = r.json.page_info.end_cursor as string;
  }
}

const EMAIL = (n: number) => `help.example.${n}@example.com`;
/** contacts whose email is one of this test's, email → first_name */
async function exampleContacts(s: Seeded): Promise<Map<string, unknown>> {
  const found = new Map<string, unknown>();
  for (const c of await listAll(s, '/contacts'))
    if (String(c.email).startsWith('help.example.')) found.set(String(c.email), c.first_name);
  return found;
}
const gone = async (s: Seeded, resource: string, ids: string[]) => {
  for (const id of ids)
    expect((await api(s, 'GET', `/${resource}/${id}`)).status, `${resource}/${id} still there`).toBe(404);
};
const linked = async (s: Seeded, path: string, child: string) => {
  expect((await listAll(s, path)).map((r) => r.id)).toContain(child);
};

/** A batch contacts CSV of two new people, its email column named as --map says. */
function peopleCsv(line: string): string {
  const header = (field: string) =>
    [...line.matchAll(/--map "([^"=]+)=([^"]*)"/g)].find((m) => m[2] === field)?.[1] ?? field;
  return `${header('email')},${header('first_name')}\n${EMAIL(1)},Ada\n${EMAIL(2)},Grace\n`;
}

interface Fixture {
  /** the files the example reads, in its folder */
  files?: (s: Seeded, m: RegExpExecArray) => Record<string, string | Buffer>;
  /** state to set up on the server first (a link to remove) */
  before?: (s: Seeded) => Promise<void>;
  /** what must be true on the server afterwards */
  after?: (s: Seeded, m: RegExpExecArray, dir: string) => Promise<void>;
}

const BODIES: Record<string, Record<string, unknown>> = {
  contact: { email: EMAIL(9), first_name: 'Ada' },
  company: { name: 'Example' },
  deal: { name: 'Example' },
  pipeline: { name: 'Example' },
  task: { title: 'Example' },
  note: { body: 'Example' },
  segment: { name: 'Example' },
  interaction: { type: 'call' },
};

/** A folder as `crm snapshot` writes it (docs/sandbox.md, "Serving a snapshot"): a manifest and a file per collection. */
function snapshotFolder(
  name: string,
  collections: Record<string, Array<Record<string, unknown>>>,
  links: Record<string, Array<Record<string, unknown>>> = {},
): Record<string, string> {
  const manifest = {
    base_url: EXAMPLE_URL,
    started_at: '2025-01-01T00:00:00.000Z',
    finished_at: '2025-01-01T00:00:01.000Z',
    complete: true,
    collections: Object.fromEntries(
      Object.entries(collections).map(([r, recs]) => [
        r,
        { file: `${r}.ndjson`, records: recs.length, complete: true },
      ]),
    ),
  };
  return {
    [`${name}/manifest.json`]: JSON.stringify(manifest),
    ...Object.fromEntries(
      Object.entries({ ...collections, ...links }).map(([r, recs]) => [
        `${name}/${r}.ndjson`,
        recs.map((x) => `${JSON.stringify(x)}\n`).join(''),
      ]),
    ),
  };
}

/** example (as a pattern) → what it needs and what it must have done; the first match counts */
const FIXTURES: Array<[RegExp, Fixture]> = [
  [
    /^crm snapshot (\S+)(?: --resources (\S+))?( --links)?$/,
    {
      after: async (s, m, dir) => {
        const folder = join(dir, m[1]!);
        const manifest = JSON.parse(readFileSync(join(folder, 'manifest.json'), 'utf8')) as {
          complete: boolean;
          collections: object;
          links?: Record<string, { file: string; records: number }>;
        };
        expect(manifest.complete).toBe(true);
        const names = m[2]?.split(',') ?? Object.keys(manifest.collections);
        expect(Object.keys(manifest.collections)).toEqual(names);
        for (const name of names) {
          const lines = readFileSync(join(folder, `${name}.ndjson`), 'utf8')
            .split('\n')
            .filter(Boolean);
          expect(lines.map((l) => (JSON.parse(l) as { id: string }).id)).toEqual(
            (await listAll(s, `/${name}`)).map((r) => r.id),
          );
        }
        // --links: every kind whose parent was taken, each file holding the lines the manifest counts
        const kinds = LINK_KINDS.filter((k) => names.includes(k.parent)).map((k) => k.key);
        expect(Object.keys(manifest.links ?? {})).toEqual(m[3] ? kinds : []);
        for (const entry of Object.values(manifest.links ?? {}))
          expect(readFileSync(join(folder, entry.file), 'utf8').split('\n').filter(Boolean)).toHaveLength(
            entry.records,
          );
      },
    },
  ],
  [
    // a snapshot of another organization: a contact and a deal the sandbox does not hold, restored once
    /^crm restore (\w+)( --dry-run)?/,
    {
      files: (_, m) => ({
        // --owners users.csv: the snapshot's user to the sandbox's
        'users.csv': 'old_id,new_id\nusr_old,usr_user\n',
        ...snapshotFolder(
          m[1]!,
          {
            contacts: [{ id: 'con_snapshot1', email: EMAIL(8), first_name: 'Ada', owner_id: 'usr_old' }],
            deals: [{ id: 'deal_snapshot1', name: 'Restored deal', amount: 1200 }],
          },
          {
            'links/deals.contacts': [{ parent_id: 'deal_snapshot1', record: { id: 'con_snapshot1', email: EMAIL(8) } }],
          },
        ),
      }),
      after: async (s, m) => {
        const made = m[2] === undefined ? 1 : 0;
        const people = (await listAll(s, '/contacts')).filter((c) => c.email === EMAIL(8));
        expect(people).toHaveLength(made);
        // the owner given back through --owners (without it, the key's user's)
        if (made) expect(people[0]!.owner_id).toBe(m.input.includes('--owners') ? 'usr_user' : 'usr_admin');
        const deals = (await listAll(s, '/deals')).filter((d) => d.name === 'Restored deal');
        expect(deals).toHaveLength(made);
        // --links: the snapshot's link between the two, made between the restored records
        if (m.input.includes('--links'))
          expect((await listAll(s, `/deals/${String(deals[0]!.id)}/contacts`)).map((c) => c.email)).toEqual([EMAIL(8)]);
      },
    },
  ],
  [/^crm (\w+) get - .*< ids\.txt$/, { files: (s, m) => ({ 'ids.txt': `${s.ids[m[1]!]!.slice(0, 2).join('\n')}\n` }) }],
  [
    /^crm (\w+) delete - --yes < ids\.txt$/,
    {
      files: (s, m) => ({ 'ids.txt': `${s.ids[m[1]!]!.slice(2, 4).join('\n')}\n` }),
      after: (s, m) => gone(s, m[1]!, s.ids[m[1]!]!.slice(2, 4)),
    },
  ],
  [/^crm (\w+) delete \w+$/, { after: (s, m) => gone(s, m[1]!, s.ids[m[1]!]!.slice(0, 1)) }],
  [
    /^crm (\w+) delete \w+ --yes --backup kept\.ndjson$/,
    { after: (s, m) => gone(s, m[1]!, s.ids[m[1]!]!.slice(0, 1)) },
  ],
  [/--data @(\w+)\.json/, { files: (_, m) => ({ [`${m[1]}.json`]: JSON.stringify(BODIES[m[1]!]) }) }],
  [/< key\.txt/, { files: (s) => ({ 'key.txt': `${s.t.sb.keys.admin}\n` }) }],
  [
    // a tiny snapshot folder in the format crm snapshot writes (docs/sandbox.md, "Serving a snapshot")
    /^crm sandbox .*--from (\w+)/,
    {
      files: (_, m) =>
        snapshotFolder(m[1]!, {
          contacts: [
            { id: 'con_snapshot1', email: EMAIL(7), first_name: 'Ada', created_at: '2025-01-01T00:00:00.000Z' },
          ],
        }),
    },
  ],
  [
    /^crm batch contacts people\.csv/,
    {
      files: (_, m) => ({ 'people.csv': peopleCsv(m.input) }),
      after: async (s) => {
        expect(await exampleContacts(s)).toEqual(
          new Map([
            [EMAIL(1), 'Ada'],
            [EMAIL(2), 'Grace'],
          ]),
        );
      },
    },
  ],
  [
    /^crm batch contacts trade-show\.csv --match email( --dry-run)?/,
    {
      // one person the CRM holds (another title), one it does not
      files: () => ({
        'trade-show.csv': `email,first_name,title\n${EMAIL(5).toUpperCase()},Ada,CTO\n${EMAIL(6)},Grace,Buyer\n`,
      }),
      before: async (s) =>
        void (await api(s, 'POST', '/contacts', { email: EMAIL(5), first_name: 'Ada', title: 'Engineer' })),
      after: async (s, m) => {
        const dry = m[1] !== undefined;
        const people = (await listAll(s, '/contacts')).filter((c) => String(c.email).startsWith('help.example.'));
        const titles = new Map(people.map((c) => [c.email, c.title]));
        expect(titles).toEqual(
          new Map(
            dry
              ? [[EMAIL(5), 'Engineer']]
              : [
                  [EMAIL(5), 'CTO'],
                  [EMAIL(6), 'Buyer'],
                ],
          ),
        );
      },
    },
  ],
  [
    /^crm batch contacts trade-show\.csv\.undo\.csv --match id/,
    {
      files: (s) => ({ 'trade-show.csv.undo.csv': `id,title:json\n${s.ids.contacts![4]},"""Restored"""\n` }),
      after: async (s) =>
        expect((await api(s, 'GET', `/contacts/${s.ids.contacts![4]}`)).json.data.title).toBe('Restored'),
    },
  ],
  [
    /^crm batch deals deals\.csv --dry-run$/,
    {
      files: () => ({ 'deals.csv': 'name,amount:number\nHelp example deal,1200\n' }),
      after: async (s) =>
        expect((await listAll(s, '/deals')).filter((d) => d.name === 'Help example deal')).toEqual([]),
    },
  ],
  [
    /^cat people\.ndjson \| crm batch contacts -/,
    {
      files: () => ({ 'people.ndjson': `${JSON.stringify({ email: EMAIL(3), first_name: 'Ada' })}\n` }),
      after: async (s) => expect(await exampleContacts(s)).toEqual(new Map([[EMAIL(3), 'Ada']])),
    },
  ],
  [
    /^crm batch contacts excel-export\.csv --encoding windows-1252$/,
    {
      files: () => ({ 'excel-export.csv': Buffer.from(`email,first_name\r\n${EMAIL(4)},Zo\xeb\r\n`, 'latin1') }),
      after: async (s) => expect(await exampleContacts(s)).toEqual(new Map([[EMAIL(4), 'Zoë']])),
    },
  ],
  [
    /^crm batch deals owners\.csv --update/,
    {
      files: (s) => ({ 'owners.csv': `id,owner_id\n${s.ids.deals![0]},usr_user\n${s.ids.deals![1]},usr_user\n` }),
      after: async (s) => {
        for (const id of s.ids.deals!.slice(0, 2))
          expect((await api(s, 'GET', `/deals/${id}`)).json.data.owner_id).toBe('usr_user');
      },
    },
  ],
  [
    /^crm batch contacts test-ids\.txt --delete/,
    {
      files: (s) => ({ 'test-ids.txt': `${s.ids.contacts!.slice(2, 4).join('\n')}\n` }),
      after: (s) => gone(s, 'contacts', s.ids.contacts!.slice(2, 4)),
    },
  ],
  [
    /^crm batch contacts test-ids\.txt\.deleted\.ndjson/,
    {
      // a delete's backup: records as the API returned them, read-only fields and all
      files: () => ({
        'test-ids.txt.deleted.ndjson': `${JSON.stringify({ id: 'ct_gone', email: EMAIL(7), first_name: 'Ada', created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z' })}\n`,
      }),
      after: async (s) => expect(await exampleContacts(s)).toEqual(new Map([[EMAIL(7), 'Ada']])),
    },
  ],
  [
    /^crm batch contacts export\.csv --delete --id-column "Record ID"/,
    {
      files: (s) => ({
        'export.csv': `Record ID,Email\n${s.ids.contacts![2]},a@example.com\n${s.ids.contacts![3]},b@example.com\n`,
      }),
      after: (s) => gone(s, 'contacts', s.ids.contacts!.slice(2, 4)),
    },
  ],
  [
    /^crm links add segments \S+ members --file ids\.csv/,
    {
      files: (s) => ({ 'ids.csv': `${s.ids.contacts![2]}\n${s.ids.contacts![3]}\n` }),
      after: (s) => linked(s, `/segments/${s.ids.segments![0]}/members`, s.ids.contacts![3]!),
    },
  ],
  [
    /^crm links add deals \S+ contacts --file people\.csv/,
    {
      files: (s) => ({ 'people.csv': `contact_id,type\n${s.ids.contacts![2]},CHAMPION\n` }),
      after: (s) => linked(s, `/deals/${s.ids.deals![0]}/contacts`, s.ids.contacts![2]!),
    },
  ],
  [
    /^crm links remove deals (\S+) contacts (\S+)$/,
    {
      before: async (s) => {
        const r = await api(s, 'POST', `/deals/${s.ids.deals![0]}/contacts`, { contact_id: s.ids.contacts![1] });
        expect(r.status, JSON.stringify(r.json)).toBeLessThan(300);
      },
      after: async (s) =>
        expect((await listAll(s, `/deals/${s.ids.deals![0]}/contacts`)).map((r) => r.id)).not.toContain(
          s.ids.contacts![1],
        ),
    },
  ],
  [
    /^crm batch deals deals\.csv --match name\b/,
    {
      // a deal and its contact by email, linked once the deal is created
      before: async (s) => void (await api(s, 'POST', '/contacts', { email: EMAIL(8) })),
      files: () => ({ 'deals.csv': `name,contacts.email\nHelp example linked deal,${EMAIL(8)}\n` }),
      after: async (s) => {
        const deal = (await listAll(s, '/deals')).find((d) => d.name === 'Help example linked deal')!;
        const contact = (await listAll(s, '/contacts')).find((c) => c.email === EMAIL(8))!;
        await linked(s, `/deals/${String(deal.id)}/contacts`, String(contact.id));
      },
    },
  ],
  [
    /^crm links import deals contacts deals\.csv$/,
    {
      // by natural key: a deal's name and a contact's email, records this example makes first
      before: async (s) => {
        await api(s, 'POST', '/deals', { name: 'Help example renewal' });
        await api(s, 'POST', '/contacts', { email: EMAIL(7) });
      },
      files: () => ({ 'deals.csv': `deal.name,contact.email\nHelp example renewal,${EMAIL(7)}\n` }),
      after: async (s) => {
        const deal = (await listAll(s, '/deals')).find((d) => d.name === 'Help example renewal')!;
        const contact = (await listAll(s, '/contacts')).find((c) => c.email === EMAIL(7))!;
        await linked(s, `/deals/${String(deal.id)}/contacts`, String(contact.id));
      },
    },
  ],
  [
    /^crm links import deals contacts deals\.csv\.linked\.csv --remove$/,
    {
      before: async (s) => {
        await api(s, 'POST', `/deals/${s.ids.deals![0]}/contacts`, { contact_id: s.ids.contacts![2] });
      },
      files: (s) => ({
        'deals.csv.linked.csv': `parent,parent_id,relation,child_id\ndeals,${s.ids.deals![0]},contacts,${s.ids.contacts![2]}\n`,
      }),
      after: async (s) =>
        expect((await listAll(s, `/deals/${s.ids.deals![0]}/contacts`)).map((c) => c.id)).not.toContain(
          s.ids.contacts![2],
        ),
    },
  ],
  [
    /^crm links import (\w+) (\w+) pairs\.csv$/,
    {
      files: (s, m) => {
        const [parentKey, parents] = {
          deals: ['deal_id', 'deals'],
          notes: ['note_id', 'notes'],
          segments: ['segment_id', 'segments'],
          meetings: ['meeting_id', 'meetings'],
        }[m[1]!]!;
        const [childKey, children] = {
          contacts: ['contact_id', 'contacts'],
          companies: ['company_id', 'companies'],
          records: ['record_id', 'contacts'],
          members: ['contact_id', 'contacts'],
          deal: ['deal_id', 'deals'],
        }[m[2]!]!;
        return { 'pairs.csv': `${parentKey},${childKey}\n${s.ids[parents!]![0]},${s.ids[children!]![2]}\n` };
      },
      after: async (s, m) => {
        const children = {
          contacts: 'contacts',
          companies: 'companies',
          records: 'contacts',
          members: 'contacts',
          deal: 'deals',
        }[m[2]!]!;
        const child = s.ids[children]![2]!;
        const parent = s.ids[m[1]!]![0]!;
        if (m[1] === 'meetings') expect((await api(s, 'GET', `/meetings/${parent}/deal`)).json.data?.id).toBe(child);
        else await linked(s, `/${m[1]}/${parent}/${m[2]}`, child);
      },
    },
  ],
];

let tmux: Tmux | undefined;
afterAll(async () => tmux?.close());

/** Runs a line in a terminal, answers its question as a person who means it, and reads the screen. */
async function answerYes(line: string, dir: string, env: Record<string, string>): Promise<Run> {
  tmux ??= await startTmux();
  const home = env.HOME!;
  const pane = await tmux.run(line, {
    cwd: dir,
    env: {
      HOME: home,
      PATH: env.PATH,
      XDG_CONFIG_HOME: join(home, '.config'),
      XDG_DATA_HOME: join(home, '.local/share'),
      XDG_CACHE_HOME: join(home, '.cache'),
    },
  });
  const screen = (await pane.waitFor(/\[y\/N\] *$|to confirm: *$/m, { timeoutMs: 20_000 })).join('\n');
  // "Delete …? [y/N]" takes y; "Type 2 or contacts to confirm:" the count
  await pane.type(/Type (\S+) or \S+ to confirm/.exec(screen)?.[1] ?? 'y', { enter: true });
  const { status, lines } = await pane.waitExit(30_000);
  return { code: status, stdout: lines.join('\n'), stderr: '' };
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a line with bash in dir; a server (crm sandbox) is stopped with Ctrl-C once it says where it listens. */
function runLine(
  line: string,
  dir: string,
  env: Record<string, string>,
  server: boolean,
  input?: string,
): Promise<Run> {
  return new Promise((done, fail) => {
    const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', line], {
      cwd: dir,
      env,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    child.stdin.end(input ?? '');
    let stdout = '';
    let stderr = '';
    const signal = (sig: NodeJS.Signals) => {
      try {
        process.kill(-child.pid!, sig);
      } catch {
        // the group is gone already
      }
    };
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      if (server && /"base_url"/.test(stdout)) signal('SIGINT');
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      signal('SIGKILL');
      fail(new Error(`timed out\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, 60_000);
    child.on('error', fail);
    child.on('close', (code) => {
      clearTimeout(timer);
      signal('SIGKILL');
      done({ code, stdout, stderr });
    });
  });
}

/** One seeded sandbox and a HOME whose default profile `work` points at it; examples run 3 at a time. */
interface Lane {
  s: Seeded;
  home: string;
  bin: string;
}
const LANES = 3;
const free: Lane[] = [];
const waiting: Array<(lane: Lane) => void> = [];
let root = '';
let count = 0;

async function makeLane(n: number): Promise<Lane> {
  const t = await startTestSandbox({ seed: 17, rateLimit: 1_000_000, orgRateLimit: 1_000_000 });
  const [home, bin] = [join(root, `home-${n}`), join(root, `bin-${n}`)];
  for (const d of [home, bin, join(home, '.zfunc'), join(home, '.config', 'fish', 'completions')])
    mkdirSync(d, { recursive: true });
  writeFileSync(join(bin, 'crm'), `#!/bin/sh\nexec '${process.execPath}' '${CRM_BIN}' "$@"\n`);
  // the clipboard of `pbpaste | crm keys add …` (macOS) holds the admin key
  writeFileSync(join(bin, 'pbpaste'), `#!/bin/sh\necho '${t.sb.keys.admin}'\n`);
  for (const f of ['crm', 'pbpaste']) chmodSync(join(bin, f), 0o755);
  for (const [args, key] of [
    [['keys', 'add', 'work', '--base-url', t.sb.baseUrl, '--default'], t.sb.keys.admin],
    [['keys', 'add', 'work', '--v1'], t.sb.keys.v1],
    [['keys', 'add', 'old-sandbox', '--base-url', t.sb.baseUrl], t.sb.keys.readonly],
  ] as const) {
    const r = await runCrm([...args], { env: homeEnv(home, bin), input: `${key}\n` });
    if (r.code !== 0) throw new Error(`crm ${args.join(' ')}: ${r.stderr}`);
  }
  const lane: Lane = { s: { t, ids: {} }, home, bin };
  for (const resource of new Set(Object.values(PREFIXES))) {
    const all = await listAll(lane.s, `/${resource}`);
    // a recording stands for one whose transcript can be read
    lane.s.ids[resource] = all
      .filter((r) => resource !== 'recordings' || r.transcript_status === 'ready')
      .map((r) => String(r.id));
  }
  return lane;
}

beforeAll(async () => {
  root = tempDir('crm-help-examples-');
  free.push(...(await Promise.all(Array.from({ length: LANES }, (_, n) => makeLane(n)))));
});
afterAll(async () => {
  await Promise.all(free.splice(0).map((lane) => lane.s.t.close()));
});

function homeEnv(home: string, bin: string): Record<string, string | undefined> {
  return {
    HOME: home,
    PATH: `${bin}:${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
    // the config, data and cache folders follow HOME
    XDG_CONFIG_HOME: undefined,
    XDG_DATA_HOME: undefined,
    XDG_CACHE_HOME: undefined,
  };
}

/** Runs `use` with a lane: its sandbox as seeded, a fresh copy of its HOME and an empty folder to run in. */
async function withLane(use: (s: Seeded, dir: string, env: Record<string, string>) => Promise<void>): Promise<void> {
  const lane = free.pop() ?? (await new Promise<Lane>((resolve) => waiting.push(resolve)));
  try {
    await lane.s.t.control('/reset', {});
    const own = join(root, `example-${++count}`);
    cpSync(lane.home, join(own, 'home'), { recursive: true });
    mkdirSync(join(own, 'work'));
    await use(lane.s, join(own, 'work'), cleanEnv(homeEnv(join(own, 'home'), lane.bin)));
  } finally {
    const next = waiting.shift();
    if (next) next(lane);
    else free.push(lane);
  }
}

describe('every example of every --help runs as written against a seeded sandbox', () => {
  it('finds the examples of the whole command tree, and NOT_RUN names only examples that exist', () => {
    expect(examples.size).toBeGreaterThan(100);
    expect([...examples.keys()].some((l) => l.startsWith('crm batch contacts people.csv --map'))).toBe(true);
    for (const line of Object.keys(NOT_RUN))
      expect(examples.has(line), `NOT_RUN lists an example no help shows: ${line}`).toBe(true);
  });

  const serves = (line: string) => /^crm sandbox\b/.test(line);
  const run =
    (line: string, where: string[]) =>
    async ({ skip }: { skip: () => void }) => {
      // .ci/run installs tmux and sets CRM_REQUIRE_SHELLS; elsewhere a question without tmux is skipped
      if (asks(line) && !HAS_TMUX && process.env.CRM_REQUIRE_SHELLS !== '1') skip();
      await withLane(async (s, dir, env) => {
        const hit = FIXTURES.map(([re, fx]) => [re.exec(line), fx] as const).find(([m]) => m !== null);
        const none: Fixture = {};
        const [m, fx] = hit ?? [null, none];
        for (const [name, content] of Object.entries(fx.files && m ? fx.files(s, m) : {})) {
          mkdirSync(dirname(join(dir, name)), { recursive: true });
          writeFileSync(join(dir, name), content);
        }
        await fx.before?.(s);
        // a key the example does not redirect in is typed at the prompt
        const typed = /^crm keys add [^<|]*$/.test(line) ? `${s.t.sb.keys.admin}\n` : undefined;
        const filled = fillIn(line, s);
        const r = asks(line) ? await answerYes(filled, dir, env) : await runLine(filled, dir, env, serves(line), typed);
        const report = `\`${line}\` (in ${where.join(', ')} --help) exit ${r.code}\n--- stdout\n${r.stdout.slice(0, 3000)}\n--- stderr\n${r.stderr.slice(0, 3000)}`;
        if (serves(line)) {
          expect(r.stdout, report).toMatch(/"base_url"/);
          expect([0, 130], report).toContain(r.code);
        } else expect(r.code, report).toBe(0);
        if (fx.after && m) await fx.after(s, m, dir);
        if (/--results ids\.csv/.test(line)) expect(readdirSync(dir)).toContain('ids.csv');
      });
    };
  const runnable = [...examples].filter(([line]) => NOT_RUN[line] === undefined);
  describe.concurrent('against the API', () => {
    for (const [line, where] of runnable.filter(([l]) => !serves(l)))
      it(`${line}   (${where[0]} --help)`, run(line, where), 90_000);
  });
  // one at a time: two of them listen on the default port
  describe('crm sandbox', () => {
    for (const [line, where] of runnable.filter(([l]) => serves(l)))
      it(`${line}   (${where[0]} --help)`, run(line, where), 90_000);
  });
});
