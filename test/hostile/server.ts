// A test server that is NOT the sandbox: it breaks the spec on purpose (odd envelopes, cursor cycles,
// endless bodies, echoed keys, absurd headers, other rate-limiter shapes, a collection that changes
// while it is read), so tests find what our own sandbox, sharing our assumptions, cannot. Behaviour
// is chosen per route (method + path pattern), and a route may answer differently per request
// (`ctx.count`). Everything it sends stays on loopback and every endless answer stops when the
// client goes away or after a bounded amount.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A key of the v2 form that the hostile server "accepts"; tests look for it (or parts) in crm's output. */
export const HOSTILE_KEY = 'service_live_h0st1leK3yAbCdEfGhIjKlMnOpQrStUv9876';

export interface HostileRequest {
  method: string;
  /** path with query, e.g. `/api/v2/contacts?limit=25` */
  url: string;
  path: string;
  query: URLSearchParams;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface RouteContext {
  /** how many requests this route has answered before this one (0 for the first) */
  count: number;
  /** every request the server has seen, in order */
  log: HostileRequest[];
}

export type Handler = (req: HostileRequest, res: ServerResponse, ctx: RouteContext) => void | Promise<void>;

export interface Route {
  method?: string;
  /** matched against the path without the query; a string must equal the path after `/api/v2` */
  path: RegExp | string;
  handler: Handler;
}

export interface Hostile {
  origin: string;
  baseUrl: string;
  v1BaseUrl: string;
  log: HostileRequest[];
  configDir: string;
  /** put a route in front of the others (the newest matching route wins) */
  route(method: string | undefined, path: RegExp | string, handler: Handler): void;
  /** drop every route and the log */
  reset(): void;
  /** env for a spawned `crm` pointing at this server with HOSTILE_KEY and a throw-away config folder */
  env(extra?: Record<string, string | undefined>): Record<string, string | undefined>;
  close(): Promise<void>;
}

export async function startHostile(routes: Route[] = []): Promise<Hostile> {
  let table: Array<Route & { count: number }> = routes.map((r) => ({ ...r, count: 0 }));
  const log: HostileRequest[] = [];
  const sockets = new Set<import('node:net').Socket>();

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const url = new URL(req.url ?? '/', 'http://hostile');
    const entry: HostileRequest = {
      method: req.method ?? 'GET',
      url: req.url ?? '/',
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
      body: Buffer.concat(chunks).toString('utf8'),
    };
    log.push(entry);
    const rel = url.pathname.replace(/^\/api\/v[12]/, '');
    const route = [...table]
      .reverse()
      .find(
        (r) =>
          (r.method === undefined || r.method === entry.method) &&
          (typeof r.path === 'string' ? r.path === rel : r.path.test(url.pathname)),
      );
    if (!route) {
      json(res, 404, errorEnvelope('NOT_FOUND', `hostile: no route for ${entry.method} ${url.pathname}`));
      return;
    }
    const ctx: RouteContext = { count: route.count++, log };
    try {
      await route.handler(entry, res, ctx);
    } catch (err) {
      if (!res.headersSent) json(res, 500, errorEnvelope('HOSTILE_BUG', String(err)));
      else res.destroy();
    }
  };
  // a client that hangs up mid-body makes reading it throw: nothing to answer then
  const server = createServer((req, res) => void handle(req, res).catch(() => res.destroy()));
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  const configDir = mkdtempSync(join(tmpdir(), 'crm-hostile-config-'));

  return {
    origin,
    baseUrl: `${origin}/api/v2`,
    v1BaseUrl: `${origin}/api/v1`,
    log,
    configDir,
    route(method, path, handler) {
      table.push({ method, path, handler, count: 0 });
    },
    reset() {
      table = [];
      log.length = 0;
    },
    env(extra = {}) {
      return {
        CRM_BASE_URL: `${origin}/api/v2`,
        CRM_V1_BASE_URL: `${origin}/api/v1`,
        CRM_API_KEY: HOSTILE_KEY,
        CRM_CONFIG_DIR: configDir,
        ...extra,
      };
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(configDir, { recursive: true, force: true });
    },
  };
}

// ---- answers: spec-shaped pieces to build broken ones from ----

let requestSeq = 0;
export function requestId(): string {
  return `req_hostile_${++requestSeq}`;
}

export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': requestId(), ...headers });
  res.end(text);
}

export function meta(): { api_version: string; request_id: string; timestamp: string } {
  return { api_version: '2', request_id: requestId(), timestamp: new Date().toISOString() };
}

export function success(data: unknown): unknown {
  return { object: 'success', data, meta: meta() };
}

/** A batch answer in which every item was created (`items`: each `{ index, status: 'created', data }`). */
export function batchCreated(items: ReadonlyArray<{ index: number; status: string; data: unknown }>): unknown {
  return {
    object: 'batch',
    data: { items, summary: { total: items.length, succeeded: items.length, failed: 0 } },
    meta: meta(),
  };
}

export function listPage(data: unknown[], endCursor: string | null, hasNextPage: boolean): unknown {
  return { object: 'list', data, page_info: { end_cursor: endCursor, has_next_page: hasNextPage }, meta: meta() };
}

export function errorEnvelope(code: string, message: string, details: unknown = []): unknown {
  return { object: 'error', error: { code, message, details }, meta: meta() };
}

/** A contact record of the spec's shape. */
export function contact(n: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { id: `con_${String(n).padStart(6, '0')}`, email: `c${n}@example.com`, first_name: `C${n}`, ...extra };
}

/**
 * Writes `piece` again and again until the client goes away or `limitBytes` are out (so a test can
 * never fill the machine), and never ends the response properly.
 */
export function endlessBody(res: ServerResponse, piece: string, limitBytes = 2 * 1024 ** 3, status = 200): void {
  res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': requestId() });
  const buf = Buffer.from(piece);
  let sent = 0;
  const pump = (): void => {
    while (!res.destroyed && sent < limitBytes) {
      sent += buf.length;
      if (!res.write(buf)) {
        res.once('drain', pump);
        return;
      }
    }
    if (!res.destroyed) res.destroy();
  };
  res.on('close', () => res.removeAllListeners('drain'));
  pump();
}

/**
 * A server whose clock is off by `offsetMs` (ahead when positive): its `Date` header and the absolute
 * times it puts in headers (a Unix-time X-RateLimit-Reset, a Retry-After HTTP-date) read from it.
 */
export function offClock(offsetMs: number): {
  now(): number;
  date(): Record<string, string>;
  unixIn(seconds: number): string;
  httpDateIn(seconds: number): string;
} {
  const now = () => Date.now() + offsetMs;
  return {
    now,
    date: () => ({ date: new Date(now()).toUTCString() }),
    unixIn: (seconds) => String(Math.floor(now() / 1000) + seconds),
    httpDateIn: (seconds) => new Date(Math.floor(now() / 1000) * 1000 + seconds * 1000).toUTCString(),
  };
}

/** A collection that changes while it is read, and what it served (`shiftingList`). */
export interface ShiftingList {
  handler: Handler;
  /** the collection now, in list order */
  records: Array<Record<string, unknown>>;
  /** every id served, once per time it was served */
  served: string[];
  pages: number;
}

/**
 * A list route over a collection that changes between pages (issue 18): its cursors are offsets (`at_N`),
 * as a server paging by position has, so records added before the cursor push records already served
 * onto the next page (read twice) and records removed before it pull unread ones behind it (never read).
 * `between(page, records)` runs after page `page` (from 1) is served and may change `records` in place;
 * from page `cycleFrom` on, the end cursor is page 1's again (a cycle).
 */
export function shiftingList(
  records: Array<Record<string, unknown>>,
  opts: { between?: (page: number, records: Array<Record<string, unknown>>) => void; cycleFrom?: number } = {},
): ShiftingList {
  const list: ShiftingList = {
    records,
    served: [],
    pages: 0,
    handler: (req, res) => {
      const limit = Number(req.query.get('limit') ?? 25);
      const at = Number(req.query.get('cursor')?.replace(/^at_/, '') ?? 0);
      const data = list.records.slice(at, at + limit);
      list.served.push(...data.map((r) => String(r.id)));
      const page = ++list.pages;
      const end = opts.cycleFrom !== undefined && page >= opts.cycleFrom ? limit : at + data.length;
      json(res, 200, listPage(data, `at_${end}`, at + data.length < list.records.length));
      opts.between?.(page, list.records);
    },
  };
  return list;
}
