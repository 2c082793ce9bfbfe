import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../helpers/clock.js';
import { createClient, type CrmHttpClient } from '../../../src/http/client.js';
import { ServerError } from '../../../src/http/errors.js';
import { type TestServer, list, sendJson, startServer } from './helpers.js';

const KEY = 'service_live_abcdefghijklmnopqrstuvwxf3a9';
let server: TestServer;
let client: CrmHttpClient;

afterEach(async () => {
  await client?.close();
  await server?.close();
});

/** 3 pages of 2 records: c1,c2 | c3,c4 | c5,c6, cursors "p2", "p3". */
async function threePages(): Promise<void> {
  const pages: Record<string, [string[], string | null, boolean]> = {
    '': [['c1', 'c2'], 'p2', true],
    p2: [['c3', 'c4'], 'p3', true],
    p3: [['c5', 'c6'], 'p3end', false],
  };
  server = await startServer((req, res) => {
    const cursor = new URL(req.url, 'http://x').searchParams.get('cursor') ?? '';
    const [ids, end, more] = pages[cursor]!;
    sendJson(
      res,
      200,
      list(
        ids.map((id) => ({ id })),
        end,
        more,
      ),
    );
  });
  client = createClient({ baseUrl: server.baseUrl, apiKey: KEY, authHeader: 'x-api-key', clock: new FakeClock() });
}

const cursors = () => server.requests.map((r) => new URL(r.url, 'http://x').searchParams.get('cursor'));

describe('paginate', () => {
  it('follows end_cursor across 3 pages until has_next_page is false', async () => {
    await threePages();
    const ids: unknown[] = [];
    for await (const record of client.paginate('/contacts')) ids.push(record.id);
    expect(ids).toEqual(['c1', 'c2', 'c3', 'c4', 'c5', 'c6']);
    expect(cursors()).toEqual([null, 'p2', 'p3']);
  });

  it('stops early on break: no further page is requested', async () => {
    await threePages();
    const ids: unknown[] = [];
    for await (const record of client.paginate('/contacts')) {
      ids.push(record.id);
      if (record.id === 'c3') break;
    }
    expect(ids).toEqual(['c1', 'c2', 'c3']);
    expect(server.requests).toHaveLength(2);
  });

  it('honors max', async () => {
    await threePages();
    const ids: unknown[] = [];
    for await (const record of client.paginate('/contacts', { max: 3 })) ids.push(record.id);
    expect(ids).toEqual(['c1', 'c2', 'c3']);
    expect(server.requests).toHaveLength(2);
  });

  it('sends limit as the page size, the starting cursor and extra query parameters', async () => {
    await threePages();
    const got: unknown[] = [];
    for await (const r of client.paginate('/contacts', { limit: 2, cursor: 'p2', query: { owner_id: 'usr_1' } }))
      got.push(r.id);
    expect(got).toEqual(['c3', 'c4', 'c5', 'c6']);
    const q = new URL(server.requests[0]!.url, 'http://x').searchParams;
    expect(q.get('limit')).toBe('2');
    expect(q.get('owner_id')).toBe('usr_1');
    expect(cursors()).toEqual(['p2', 'p3']);
  });

  it('asks for no more than max when both are given', async () => {
    await threePages();
    for await (const _ of client.paginate('/contacts', { limit: 50, max: 3 })) void _;
    const limits = server.requests.map((r) => new URL(r.url, 'http://x').searchParams.get('limit'));
    expect(limits).toEqual(['3', '1']);
  });
});

describe('pages', () => {
  it('yields pages with their cursor and next-page flag', async () => {
    await threePages();
    const seen = [];
    for await (const page of client.pages('/contacts')) seen.push([page.data.length, page.endCursor, page.hasNextPage]);
    expect(seen).toEqual([
      [2, 'p2', true],
      [2, 'p3', true],
      [2, 'p3end', false],
    ]);
  });

  it('stops after the first page when the caller breaks', async () => {
    await threePages();
    for await (const page of client.pages('/contacts')) {
      expect(page.hasNextPage).toBe(true);
      break;
    }
    expect(server.requests).toHaveLength(1);
  });

  it('refuses a server whose cursor does not advance', async () => {
    server = await startServer((_req, res) => sendJson(res, 200, list([{ id: 'x' }], 'same', true)));
    client = createClient({ baseUrl: server.baseUrl, apiKey: KEY, authHeader: 'x-api-key', clock: new FakeClock() });
    const run = async () => {
      for await (const _ of client.paginate('/contacts')) void _;
    };
    await expect(run()).rejects.toBeInstanceOf(ServerError);
    expect(server.requests).toHaveLength(2);
  });

  it('checks each page is a list envelope', async () => {
    server = await startServer((_req, res) =>
      sendJson(res, 200, { object: 'success', data: {}, meta: { api_version: '2', request_id: 'r', timestamp: 't' } }),
    );
    client = createClient({ baseUrl: server.baseUrl, apiKey: KEY, authHeader: 'x-api-key', clock: new FakeClock() });
    const run = async () => {
      for await (const _ of client.pages('/contacts')) void _;
    };
    await expect(run()).rejects.toThrow(/not a list envelope/);
  });
});
