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
    const doomed = [await create('doomed1@example.com'), await create('doomed2@example.com'), await create('doomed3@example.com')];
    const refused = await crm(['contacts', 'delete', ...doomed]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/refusing to delete 3 contacts without confirmation/);
    const r = await crm(['-o', 'json', 'contacts', 'delete', ...doomed, '--yes']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(doomed.map((id) => ({ id, deleted: true })));
    const after = await crm(['contacts', 'get', ...doomed]);
    expect(after.code).toBe(5);
    const table = await crm(['-o', 'table', 'contacts', 'delete', await create('doomed4@example.com'), 'con_nothere', '--yes']);
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
});
