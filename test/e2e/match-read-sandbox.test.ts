// The read stage of reconcile (src/import/match/read.ts) against the sandbox: a few hundred contacts made
// through the API, some sharing an email written in another case or with spaces. In-process (the stage is
// not yet behind a command); the sandbox's request log says what was asked.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type CrmHttpClient } from '../../src/http/client.js';
import { matchKey } from '../../src/import/match/key.js';
import { readByIds, readIndex } from '../../src/import/match/read.js';
import { logLength, makeContacts, requestLog } from '../helpers/bulk.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';

let t: TestSandbox;
let client: CrmHttpClient;
let ids: string[];
/** the sharing records: email as written → id */
const sharing = new Map<string, string>();

beforeAll(async () => {
  t = await startTestSandbox();
  client = createClient({ baseUrl: t.sb.baseUrl, apiKey: t.sb.keys.admin, authHeader: 'x-api-key' });
  ids = await makeContacts(t, 'rd', 300); // rd.1@example.com … rd.300@example.com
  const emails = [' RD.5@Example.com', 'rd.5@example.com  ', 'Rd.7@EXAMPLE.COM'];
  const res = await fetch(`${t.sb.baseUrl}/contacts/batch`, {
    method: 'POST',
    headers: { 'X-Service-Api-Key': t.sb.keys.admin, 'content-type': 'application/json' },
    body: JSON.stringify(emails.map((email) => ({ email, first_name: 'Twin' }))),
  });
  const body = (await res.json()) as { data: { items: Array<{ data: { id: string } }> } };
  emails.forEach((email, i) => sharing.set(email, body.data.items[i]!.data.id));
});
afterAll(async () => {
  await client?.close();
  await t?.close();
});

const key = (email: string) => matchKey(['email'], { email })!;

/** Every contact id the sandbox holds, listed with plain fetch. */
async function allIds(): Promise<Set<string>> {
  const seen = new Set<string>();
  for (let cursor: string | null = null; ;) {
    const res = await fetch(`${t.sb.baseUrl}/contacts?limit=100${cursor ? `&cursor=${cursor}` : ''}`, {
      headers: { 'X-Service-Api-Key': t.sb.keys.admin },
    });
    const page = (await res.json()) as {
      data: Array<{ id: string }>;
      page_info: { end_cursor: string | null; has_next_page: boolean };
    };
    for (const r of page.data) seen.add(r.id);
    if (!page.page_info.has_next_page) return seen;
    cursor = page.page_info.end_cursor;
  }
}

describe('readIndex against the sandbox', () => {
  it('indexes the file’s keys; emails differing in case and spaces are one key, shared by several records', async () => {
    const file = [...Array.from({ length: 300 }, (_, i) => `rd.${i + 1}@example.com`), 'rd.new@example.com'];
    const since = await logLength(t);
    const progress: number[] = [];
    const index = await readIndex({
      ...{ client, resource: 'contacts', fields: ['email'], keep: ['first_name'], wanted: new Set(file.map(key)) },
      onProgress: (p) => progress.push(p.pages),
    });
    const log = (await requestLog(t, since)).filter((e) => e.path.startsWith('/api/v2/contacts'));

    const held = await allIds();
    expect(index.records).toBe(held.size);
    expect(index.kept).toBe(303);
    expect(index.get(key('rd.5@example.com'))).toEqual({
      ids: [ids[4], sharing.get(' RD.5@Example.com'), sharing.get('rd.5@example.com  ')],
    });
    expect(index.get(key('rd.7@example.com'))).toEqual({ ids: [ids[6], sharing.get('Rd.7@EXAMPLE.COM')] });
    expect(index.get(key('rd.1@example.com'))).toEqual({
      one: { id: ids[0], record: { email: 'rd.1@example.com', first_name: 'Before' } },
    });
    expect(index.get(key('rd.new@example.com'))).toBeUndefined();
    expect(index.fieldsSeen).toContain('email');
    expect(index.fieldsSeen).toContain('first_name');
    // one request per 100 records, and the sandbox saw exactly those
    expect(index.requests).toBe(Math.ceil(held.size / 100));
    expect(log.map((e) => `${e.method} ${e.status}`)).toEqual(Array(index.requests).fill('GET 200'));
    expect(progress).toEqual(Array.from({ length: index.requests }, (_, i) => i + 1));
  });

  it('readByIds: one GET per distinct id, an id the sandbox does not have is absent', async () => {
    const since = await logLength(t);
    const index = await readByIds({
      client,
      resource: 'contacts',
      keep: ['email'],
      ids: [ids[0]!, 'con_nothere', ids[1]!, ids[0]!],
    });
    const log = await requestLog(t, since);
    expect(log.map((e) => `${e.method} ${e.path} ${e.status}`)).toEqual([
      `GET /api/v2/contacts/${ids[0]} 200`,
      'GET /api/v2/contacts/con_nothere 404',
      `GET /api/v2/contacts/${ids[1]} 200`,
    ]);
    expect(index.get(matchKey(['id'], { id: ids[1]! })!)).toEqual({
      one: { id: ids[1], record: { id: ids[1], email: 'rd.2@example.com' } },
    });
    expect(index.get(matchKey(['id'], { id: 'con_nothere' })!)).toBeUndefined();
    expect(index).toMatchObject({ records: 2, kept: 2, requests: 3, how: 'get' });
  });
});
