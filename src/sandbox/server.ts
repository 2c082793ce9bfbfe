// The node:http front: reads the body, dispatches to the API, the transcript links or the
// control endpoint, logs the request, and writes (or drops) the answer. The same front serves
// the second listener (`download`), which answers only transcript links.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { handleApiRequest, type Outcome } from './api-request.js';
import { CONTROL_PREFIX, handleControl } from './control.js';
import { handleDownloadRequest } from './downloads.js';
import { newRequestId } from './random.js';
import { redactHeaders } from './request-log.js';
import { ApiError, errorResponse, type RequestMeta } from './responses.js';
import type { SandboxState } from './state.js';
import { DOWNLOAD_PATH } from './transcripts.js';
import type { SandboxResponse } from './types.js';

const MAX_BODY_BYTES = 16 * 1024 * 1024;

export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  return address === '::1' || address === 'localhost' || /^127\./.test(address) || /^::ffff:127\./.test(address);
}

async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function send(res: ServerResponse, response: SandboxResponse, requestId: string): void {
  const payload = response.raw ?? JSON.stringify(response.body ?? null);
  const headers: Record<string, string> = {
    'Content-Type': 'application/json; charset=utf-8',
    'X-Request-Id': requestId,
    ...response.headers,
    'Content-Length': String(Buffer.byteLength(payload)),
  };
  res.writeHead(response.status, headers);
  res.end(payload);
}

function drop(req: IncomingMessage, res: ServerResponse): void {
  res.destroy();
  req.socket.destroy();
}

/** Which listener a server is: the API's origin, or the transcript download origin. */
export type Listener = 'api' | 'download';

/** With `tls` (a PEM key and certificate), https on the same port instead of http. */
export function createSandboxServer(
  state: SandboxState,
  control: boolean,
  listener: Listener = 'api',
  tls?: { key: string; cert: string },
): Server {
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    handle(state, control && listener === 'api', listener, req, res).catch((err: unknown) => {
      if (!res.headersSent) {
        const rm: RequestMeta = { requestId: newRequestId(), now: state.now(), version: '2' };
        send(res, errorResponse(rm, new ApiError(500, 'INTERNAL_ERROR', `Internal error: ${(err as Error).message}`)), rm.requestId);
      } else res.destroy();
    });
  };
  const server = tls ? createTlsServer(tls, handler) : createServer(handler);
  server.keepAliveTimeout = 5000;
  return server;
}

async function handle(state: SandboxState, control: boolean, listener: Listener, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const method = (req.method ?? 'GET').toUpperCase();
  const url = new URL(req.url ?? '/', 'http://sandbox.invalid');
  const path = url.pathname;
  const rawBody = await readBody(req);
  if (path.startsWith(`${CONTROL_PREFIX}/`) && control && isLoopback(req.socket.remoteAddress)) {
    const rm: RequestMeta = { requestId: newRequestId(), now: state.now(), version: '2' };
    let response: SandboxResponse;
    try {
      if (rawBody === undefined) throw new ApiError(422, 'INVALID_BODY', 'The body is too large');
      response = handleControl(state, method, path.slice(CONTROL_PREFIX.length), url.searchParams, rawBody);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      response = errorResponse(rm, err);
    }
    return send(res, response, rm.requestId);
  }
  const outcome = await route(state, listener, method, url, req, rawBody);
  state.log.add({
    method,
    path,
    query: Object.fromEntries(url.searchParams),
    headers: redactHeaders(req.headers),
    status: outcome.response?.status ?? null,
    fault: outcome.fault ?? null,
    replayed: outcome.replayed ?? false,
    request_id: outcome.requestId,
    listener,
  });
  if (!outcome.response) return drop(req, res);
  send(res, outcome.response, outcome.requestId);
}

/** The API (on the API's listener), a transcript link, or 404. */
function route(
  state: SandboxState,
  listener: Listener,
  method: string,
  url: URL,
  req: IncomingMessage,
  rawBody?: string,
): Promise<Outcome> | Outcome {
  const path = url.pathname;
  const version = listener !== 'api' ? undefined : /^\/api\/v2(\/|$)/.test(path) ? 2 : /^\/api\/v1(\/|$)/.test(path) ? 1 : undefined;
  const refuse = (err: ApiError): Outcome => {
    const rm: RequestMeta = { requestId: newRequestId(), now: state.now(), version: version === 1 ? '1' : '2' };
    return { requestId: rm.requestId, response: errorResponse(rm, err) };
  };
  if (rawBody === undefined) return refuse(new ApiError(422, 'INVALID_BODY', `The body is larger than ${MAX_BODY_BYTES} bytes`));
  if (version !== undefined) {
    const { headers, headersDistinct } = req;
    return handleApiRequest(
      state,
      { method, path, url: path + url.search, query: url.searchParams, headers, headersDistinct, rawBody },
      version,
    );
  }
  const token = path.startsWith(DOWNLOAD_PATH) ? path.slice(DOWNLOAD_PATH.length) : '';
  if (token !== '' && !token.includes('/')) return handleDownloadRequest(state, method, token, req.headersDistinct);
  return refuse(new ApiError(404, 'NOT_FOUND', `No such path: ${method} ${path}`));
}
