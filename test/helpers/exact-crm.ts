// A CRM API in this process that keeps every value exactly as it was sent (numbers no double holds,
// `__proto__` keys, any Unicode), for the round-trip properties: what they find wrong is then crm's, not
// a server's. Version 2 only, any collection: lists (cursor = position), GET, POST, batch creates (with
// Idempotency-Key replays), PATCH (fields merged, null kept as null), DELETE, and empty link lists. It
// checks no key and applies no rate limit. Ids are the test's to choose (`idOf`): text or numbers.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ApiRecord } from '../../src/api/envelopes.js';
import { parseJson, stringifyJson } from '../../src/json/exact-json.js';
import { setOwn } from '../../src/util/set-own.js';

export const EXACT_KEY = 'service_live_exactCrmTestKey0000000000001';

export interface ExactCrm {
  baseUrl: string;
  /** the environment pointing `crm` at this server, with `configDir` as its config folder */
  env(configDir: string): Record<string, string>;
  /** a collection's records in order, as held (numbers no double holds are RawNumber) */
  records(resource: string): ApiRecord[];
  /** adds copies of records as they are, their ids included */
  put(resource: string, records: readonly ApiRecord[]): void;
  /** forgets every record and every request */
  clear(): void;
  /** every request that changes something: method, path, and the body as received */
  writes: Array<{ method: string; path: string; body: unknown }>;
  /** while true, every batch item is refused (422 VALIDATION_FAILED), nothing created */
  refuseCreates: boolean;
  /** the ids the next creates get, in order (then `idOf`'s) */
  nextIds: Array<string | number>;
  close(): Promise<void>;
}

const SERVER_SET = {
  created_at: '2026-01-02T03:04:05.000Z',
  updated_at: '2026-01-02T03:04:05.000Z',
  owner_id: 'usr_1',
};

/** `idOf(n)`: the id of the n-th record the server creates (1, 2, …); default `con_<n>`. */
export async function startExactCrm(o: { idOf?: (n: number) => string | number } = {}): Promise<ExactCrm> {
  const idOf = o.idOf ?? ((n: number) => `con_${n}`);
  const collections = new Map<string, Map<string, ApiRecord>>();
  const replies = new Map<string, string>();
  let made = 0;
  let requests = 0;
  const collection = (name: string): Map<string, ApiRecord> => {
    let c = collections.get(name);
    if (!c) collections.set(name, (c = new Map()));
    return c;
  };
  const keyOf = (id: unknown): string => (typeof id === 'string' ? id : stringifyJson(id)!);
  const create = (resource: string, fields: ApiRecord): ApiRecord => {
    const record: ApiRecord = {};
    setOwn(record, 'id', crm.nextIds.shift() ?? idOf(++made));
    for (const [k, v] of Object.entries(fields)) setOwn(record, k, v);
    for (const [k, v] of Object.entries(SERVER_SET)) if (!Object.hasOwn(fields, k)) setOwn(record, k, v);
    collection(resource).set(keyOf(record.id), record);
    return record;
  };
  const crm: ExactCrm = {
    baseUrl: '',
    env: (configDir) => ({ CRM_BASE_URL: crm.baseUrl, CRM_API_KEY: EXACT_KEY, CRM_CONFIG_DIR: configDir }),
    records: (resource) => [...collection(resource).values()],
    put(resource, records) {
      // copies: a PATCH must not change the test's own records, which it compares with
      for (const r of records) collection(resource).set(keyOf(r.id), parseJson(stringifyJson(r)!) as ApiRecord);
    },
    clear() {
      collections.clear();
      replies.clear();
      crm.writes.length = 0;
      crm.nextIds.length = 0;
      crm.refuseCreates = false;
    },
    writes: [],
    refuseCreates: false,
    nextIds: [],
    close: () => new Promise((done) => server.close(() => done()).closeAllConnections()),
  };

  const meta = () => ({ api_version: '2', request_id: `req_${++requests}`, timestamp: SERVER_SET.created_at });
  const send = (res: ServerResponse, status: number, body: unknown): void => {
    const text = stringifyJson(body)!;
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };
  const success = (data: unknown) => ({ object: 'success', data, meta: meta() });
  const error = (code: string, message: string) => ({
    object: 'error',
    error: { code, message, details: [] },
    meta: meta(),
  });

  function handle(req: IncomingMessage, text: string, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://x');
    const [resource, id, relation] = url.pathname
      .replace(/^\/api\/v2\//, '')
      .split('/')
      .map(decodeURIComponent);
    const method = req.method ?? 'GET';
    const body = text === '' ? undefined : parseJson(text);
    if (method !== 'GET') crm.writes.push({ method, path: url.pathname, body });
    if (!resource) return send(res, 404, error('NOT_FOUND', 'no such path'));
    const records = collection(resource);
    if (relation !== undefined) {
      const empty = { object: 'list', data: [], page_info: { end_cursor: null, has_next_page: false }, meta: meta() };
      return send(res, 200, method === 'GET' ? empty : success(null));
    }
    if (id === undefined && method === 'GET') {
      const from = Number(url.searchParams.get('cursor') ?? 0);
      const limit = Number(url.searchParams.get('limit') ?? 25);
      const all = [...records.values()];
      const data = all.slice(from, from + limit);
      const more = from + limit < all.length;
      const page_info = { end_cursor: more ? String(from + limit) : null, has_next_page: more };
      return send(res, 200, { object: 'list', data, page_info, meta: meta() });
    }
    if (id === undefined && method === 'POST') return send(res, 201, success(create(resource, body as ApiRecord)));
    if (id === 'batch' && method === 'POST') {
      const key = `${String(req.headers['idempotency-key'])}\n${text}`;
      const replay = replies.get(key);
      if (replay !== undefined) {
        res.writeHead(200, { 'content-type': 'application/json', 'idempotent-replayed': 'true' });
        return void res.end(replay);
      }
      const items = (body as ApiRecord[]).map((fields, index) =>
        crm.refuseCreates
          ? { index, status: 'error', error: { code: 'VALIDATION_FAILED', message: 'refused by the test' } }
          : { index, status: 'created', data: create(resource, fields) },
      );
      const failed = crm.refuseCreates ? items.length : 0;
      const summary = { total: items.length, succeeded: items.length - failed, failed };
      const answer = stringifyJson({ object: 'batch', data: { items, summary }, meta: meta() })!;
      replies.set(key, answer);
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(answer);
    }
    const record = id === undefined ? undefined : records.get(id);
    if (!record) return send(res, 404, error('NOT_FOUND', `no ${resource} record ${id}`));
    if (method === 'GET') return send(res, 200, success(record));
    if (method === 'PATCH') {
      for (const [k, v] of Object.entries(body as ApiRecord)) setOwn(record, k, v);
      return send(res, 200, success(record));
    }
    if (method === 'DELETE') {
      records.delete(id!);
      return send(res, 200, success({ id: record.id, deleted: true }));
    }
    return send(res, 405, error('METHOD_NOT_ALLOWED', method));
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        handle(req, Buffer.concat(chunks).toString('utf8'), res);
      } catch (err) {
        send(res, 500, error('INTERNAL_ERROR', String(err)));
      }
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  crm.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v2`;
  return crm;
}
