// The node:http front of both listeners: reads the body, dispatches to the API, the transcript links or
// the control endpoint (the `download` listener: transcript links only), logs, writes or drops the answer.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { handleApiRequest, type Outcome } from './api-request.js';
import { CONTROL_PREFIX, handleControl, redactHeaders } from './control.js';
import { DOWNLOAD_PATH, handleDownloadRequest } from './downloads.js';
import { newRequestId } from './random.js';
import { ApiError, errorResponse, responseText } from './responses.js';
import type { LogEntry, SandboxState } from './state.js';

const MAX_BODY_BYTES = 16 * 1024 * 1024;

export function isLoopback(address: string | undefined): boolean {
  return address !== undefined && (address === '::1' || address === 'localhost' || /^(::ffff:)?127\./.test(address));
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

/** Writes the answer, or drops the connection when there is none. */
function send(req: IncomingMessage, res: ServerResponse, { response, requestId }: Outcome): void {
  if (!response) {
    res.destroy();
    req.socket.destroy();
    return;
  }
  const payload = responseText(response);
  res.writeHead(response.status, {
    'Content-Type': 'application/json; charset=utf-8',
    'X-Request-Id': requestId,
    ...response.headers,
    'Content-Length': String(Buffer.byteLength(payload)),
  });
  res.end(payload);
}

/** An error answer with a request id of its own (outside the API's counted path). */
function refusal(state: SandboxState, err: ApiError, version: '1' | '2' = '2'): Outcome {
  const rm = { requestId: newRequestId(), now: state.now(), version };
  return { requestId: rm.requestId, response: errorResponse(rm, err) };
}

/** Which listener a server is: the API's origin, or the transcript download origin. */
type Listener = LogEntry['listener'];
type Front = { state: SandboxState; listener: Listener; control: boolean };

/** With `tls` (a PEM key and certificate), https on the same port instead of http. */
export function createSandboxServer(
  state: SandboxState,
  control: boolean,
  listener: Listener,
  tls?: { key: string; cert: string },
): Server {
  const front: Front = { state, listener, control };
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    handle(front, req, res).catch((err: unknown) => {
      if (res.headersSent) res.destroy();
      else
        send(
          req,
          res,
          refusal(state, new ApiError(500, 'INTERNAL_ERROR', `Internal error: ${(err as Error).message}`)),
        );
    });
  };
  const server = tls ? createTlsServer(tls, handler) : createServer(handler);
  server.keepAliveTimeout = 5000;
  return server;
}

async function handle({ state, listener, control }: Front, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const method = (req.method ?? 'GET').toUpperCase();
  const url = new URL(req.url ?? '/', 'http://sandbox.invalid');
  const path = url.pathname;
  const rawBody = await readBody(req);
  if (path.startsWith(`${CONTROL_PREFIX}/`) && control && isLoopback(req.socket.remoteAddress)) {
    try {
      if (rawBody === undefined) throw new ApiError(422, 'INVALID_BODY', 'The body is too large');
      return send(req, res, {
        requestId: newRequestId(),
        response: handleControl(state, method, path.slice(CONTROL_PREFIX.length), url.searchParams, rawBody),
      });
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      return send(req, res, refusal(state, err));
    }
  }
  const outcome = await route(state, listener, method, url, req, rawBody);
  const query = Object.fromEntries(url.searchParams);
  const { fault = null, replayed = false, applied = false, requestId: request_id } = outcome;
  const status = outcome.response?.status ?? null;
  state.log.add({
    method,
    path,
    query,
    headers: redactHeaders(req.headers),
    status,
    fault,
    replayed,
    applied,
    request_id,
    listener,
  });
  send(req, res, outcome);
}

/** The API (on the API's listener), a transcript link, or 404. */
function route(
  state: SandboxState,
  listener: Listener,
  method: string,
  url: URL,
  req: IncomingMessage,
  rawBody?: string,
) {
  const path = url.pathname;
  const version =
    listener !== 'api' ? undefined : /^\/api\/v2(\/|$)/.test(path) ? 2 : /^\/api\/v1(\/|$)/.test(path) ? 1 : undefined;
  const refuse = (err: ApiError) => refusal(state, err, version === 1 ? '1' : '2');
  if (rawBody === undefined)
    return refuse(new ApiError(422, 'INVALID_BODY', `The body is larger than ${MAX_BODY_BYTES} bytes`));
  if (version !== undefined) {
    return handleApiRequest(
      state,
      { method, url, headers: req.headers, headersDistinct: req.headersDistinct, rawBody },
      version,
    );
  }
  const token = path.startsWith(DOWNLOAD_PATH) ? path.slice(DOWNLOAD_PATH.length) : '';
  if (token !== '' && !token.includes('/')) return handleDownloadRequest(state, method, token, req.headersDistinct);
  return refuse(new ApiError(404, 'NOT_FOUND', `No such path: ${method} ${path}`));
}
