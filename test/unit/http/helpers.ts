// Test doubles for the HTTP core: a node:http server on 127.0.0.1:0 that records what it gets,
// and envelope builders.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Recorded {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  rawHeaderNames: string[];
  body: string;
}

export type Handler = (req: Recorded, res: ServerResponse, index: number) => void | Promise<void>;

export interface TestServer {
  origin: string;
  baseUrl: string;
  requests: Recorded[];
  close(): Promise<void>;
}

export async function startServer(handler: Handler): Promise<TestServer> {
  const requests: Recorded[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rec: Recorded = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        rawHeaderNames: req.rawHeaders.filter((_, i) => i % 2 === 0).map((h) => h.toLowerCase()),
        body: Buffer.concat(chunks).toString('utf8'),
      };
      const index = requests.push(rec) - 1;
      void Promise.resolve(handler(rec, res, index)).catch((err: unknown) => {
        res.statusCode = 599;
        res.end(String(err));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  return {
    origin,
    baseUrl: `${origin}/api/v2`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export const meta = (id = 'req_test') => ({ api_version: '2', request_id: id, timestamp: '2026-01-01T00:00:00Z' });

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

export const success = (data: unknown, id?: string) => ({ object: 'success', data, meta: meta(id) });
export const list = (data: unknown[], end_cursor: string | null, has_next_page: boolean) => ({
  object: 'list',
  data,
  page_info: { end_cursor, has_next_page },
  meta: meta(),
});
export const errorBody = (code: string, message: string, id = 'req_err', details: unknown[] = []) => ({
  object: 'error',
  error: { code, message, details },
  meta: meta(id),
});
