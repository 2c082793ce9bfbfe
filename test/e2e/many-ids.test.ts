// End to end: `get` and `delete` with many ids in one process (issue 13): ids from standard input,
// output in input order, a missing id named and exit 9, several deletes, and a 429 mid-run.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';

let t: TestSandbox;
let ids: string[];
beforeAll(async () => {
  t = await startTestSandbox({ seed: 5, rateLimit: 1_000_000, orgRateLimit: 1_000_000 });
  ids = [];
  for (let i = 0; i < 50; i++) ids.push(await create(`many${i}@example.com`));
});
afterAll(async () => t?.close());

const crm = (args: string[], input?: string) => runCrm(args, { env: t.env('admin'), input });

async function create(email: string): Promise<string> {
  const res = await fetch(`${t.sb.baseUrl}/contacts`, {
    method: 'POST',
    headers: { 'X-Service-Api-Key': t.sb.keys.admin, 'content-type': 'application/json' },
    body: JSON.stringify({ email }),
  });
  return ((await res.json()) as { data: { id: string } }).data.id;
}

type Logged = { index: number; method: string; path: string; status: number | null };
async function requestsSince(index: number): Promise<Logged[]> {
  return (await t.control(`/requests?since=${index}`)) as Logged[];
}
const lastIndex = async (): Promise<number> => ((await t.control('/stats')) as { requests: number }).requests;

const idsOf = (ndjson: string): string[] =>
  ndjson
    .trim()
    .split('\n')
    .map((l) => (JSON.parse(l) as { id: string }).id);

describe('many ids in one process', () => {
  it('50 ids from standard input (blank lines, CRLF): NDJSON, one record per id, in input order', async () => {
    const input = ids.map((id, i) => (i % 10 === 0 ? `\n  ${id}\r\n` : `${id}\n`)).join('');
    const r = await crm(['-o', 'ndjson', 'contacts', 'get', '-', '--concurrency', '8'], input);
    expect(r.code, r.stderr).toBe(0);
    expect(idsOf(r.stdout)).toEqual(ids);
    expect(r.stderr).toBe('');
  });

  it('a missing id is named on stderr, the others are printed, exit 9; -o json is one array', async () => {
    const asked = [...ids.slice(0, 10), 'con_missing1', ...ids.slice(10)];
    const r = await crm(['-o', 'json', 'contacts', 'get', '-'], asked.join('\n'));
    expect(r.code, r.stderr).toBe(9);
    expect((JSON.parse(r.stdout) as Array<{ id: string }>).map((c) => c.id)).toEqual(ids);
    expect(r.stderr).toMatch(/^contact con_missing1: .*\(HTTP 404\)$/m);
    expect(r.stderr).toMatch(/1 of 51 contacts not fetched/);
  });

  it('every id missing: the error of them all (exit 5); one id as an argument keeps the single-record output', async () => {
    const r = await crm(['contacts', 'get', 'con_gone1', 'con_gone2']);
    expect(r.code).toBe(5);
    expect(r.stderr).toMatch(/contact con_gone1: /);
    expect(r.stderr).toMatch(/contact con_gone2: /);
    const one = await crm(['-o', 'json', 'contacts', 'get', ids[0]!]);
    expect(one.code, one.stderr).toBe(0);
    expect(JSON.parse(one.stdout)).toMatchObject({ id: ids[0] });
  });

  it('delete of several ids with --yes; without --yes and without a terminal nothing is deleted', async () => {
    const doomed = [
      await create('doomed1@example.com'),
      await create('doomed2@example.com'),
      await create('doomed3@example.com'),
    ];
    const refused = await crm(['contacts', 'delete', ...doomed, '--no-backup']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/refusing to delete 3 contacts without confirmation/);
    const r = await crm(['-o', 'json', 'contacts', 'delete', ...doomed, '--yes', '--no-backup']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(doomed.map((id) => ({ id, deleted: true })));
    const after = await crm(['contacts', 'get', ...doomed]);
    expect(after.code).toBe(5);
    const table = await crm([
      '-o',
      'table',
      'contacts',
      'delete',
      await create('doomed4@example.com'),
      'con_nothere',
      '--yes',
      '--no-backup',
    ]);
    expect(table.code).toBe(9);
    expect(table.stdout).toMatch(/^Deleted contact con_\w+\.\n$/);
  });

  it('a 429 mid-run is waited out: every id fetched once, in order', async () => {
    await t.control('/faults', { next: [{ kind: '429', method: 'GET', path: '/contacts/con_', count: 3 }] });
    const since = await lastIndex();
    const r = await crm(['-o', 'ndjson', 'contacts', 'get', '-', '--concurrency', '6'], ids.join('\n'));
    expect(r.code, r.stderr).toBe(0);
    expect(idsOf(r.stdout)).toEqual(ids);
    const log = (await requestsSince(since)).filter((e) => e.method === 'GET');
    expect(log.filter((e) => e.status === 429)).toHaveLength(3);
    const ok = log.filter((e) => e.status === 200).map((e) => e.path.split('/').pop());
    expect(ok.sort()).toEqual([...ids].sort());
  });

  // issue 17: 240 MiB of ids died with a V8 heap out-of-memory; the ids are now read line by line.
  // 19 MB of ids (a million lines, the 50 ids over and over) under a 48 MB heap: the old whole-text
  // read (a 19 MB string, a million-string array and as many paths) cannot fit; a stream can.
  it('a million lines of ids under a 48 MB heap: streamed, each id fetched once, in first-seen order', async () => {
    const input = Buffer.from(Array.from({ length: 1_000_000 }, (_, i) => ids[i % ids.length]).join('\n'));
    expect(input.length).toBeGreaterThan(18_000_000);
    const since = await lastIndex();
    const r = await runCrm(['-o', 'ndjson', 'contacts', 'get', '-'], {
      env: { ...t.env('admin'), NODE_OPTIONS: '--max-old-space-size=48' },
      input,
      timeoutMs: 60_000,
    });
    expect(r.code, r.stderr.slice(0, 2000)).toBe(0);
    expect(idsOf(r.stdout)).toEqual(ids);
    const gets = (await requestsSince(since)).filter((e) => e.method === 'GET');
    expect(gets).toHaveLength(ids.length);
    expect(r.stderr).toMatch(/given more than once/i);
  });

  it('delete - --dry-run with a million lines under a 48 MB heap: one planned DELETE per id, nothing sent', async () => {
    const input = Buffer.from(Array.from({ length: 1_000_000 }, (_, i) => `con_dry${i % 7}`).join('\n'));
    const since = await lastIndex();
    const r = await runCrm(['contacts', 'delete', '-', '--dry-run'], {
      env: { ...t.env('admin'), NODE_OPTIONS: '--max-old-space-size=48' },
      input,
      timeoutMs: 60_000,
    });
    expect(r.code, r.stderr.slice(0, 2000)).toBe(0);
    expect(r.stdout.match(/^ {2}"method": "DELETE",$/gm)).toHaveLength(7);
    expect(await requestsSince(since)).toEqual([]);
  });
});

// issue 17: `delete A B A --yes` deleted A and B, then reported the repeated A as a failure (exit 9).
describe('repeated ids', () => {
  it('delete A B A --yes: each sent once, exit 0, the repeat said once on stderr', async () => {
    const [a, b] = [await create('rep-a@example.com'), await create('rep-b@example.com')];
    const since = await lastIndex();
    const r = await crm(['-o', 'json', 'contacts', 'delete', a, b, a, '--yes', '--no-backup']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([a, b].map((id) => ({ id, deleted: true })));
    const deletes = (await requestsSince(since)).filter((e) => e.method === 'DELETE');
    expect(deletes.map((e) => e.path.split('/').pop())).toEqual([a, b]);
    expect(r.stderr).toBe(`Given more than once, deleted once: contact ${a}.\n`);
    expect((await crm(['contacts', 'get', a, b])).code).toBe(5);
  });

  it('get A B A: each fetched once, printed once', async () => {
    const since = await lastIndex();
    const r = await crm(['-o', 'ndjson', 'contacts', 'get', ids[0]!, ids[1]!, ids[0]!]);
    expect(r.code, r.stderr).toBe(0);
    expect(idsOf(r.stdout)).toEqual([ids[0], ids[1]]);
    expect((await requestsSince(since)).filter((e) => e.method === 'GET')).toHaveLength(2);
    expect(r.stderr).toMatch(/^Given more than once, fetched once: contact con_\w+\.$/m);
  });
});
