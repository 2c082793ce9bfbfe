// What the sandbox answers: its error (thrown by any handler), the envelopes of each API version (the
// schemas of src/api/envelopes.ts), and what injected faults send (docs/sandbox.md, "Faults").
import type { ApiRecord, Meta } from '../api/envelopes.js';
import { stringifyJson } from '../json/exact-json.js';
import { refusalHeaders, type HeaderFormat } from './rate-limiter.js';
import type { SandboxResponse } from './types.js';

export type ErrorDetail = Record<string, unknown>;

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: ErrorDetail[] = [],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const notFound = (what: string): ApiError => new ApiError(404, 'NOT_FOUND', `${what} not found`);
export const invalidBody = (message: string): ApiError => new ApiError(422, 'INVALID_BODY', message);
export const invalidParameter = (name: string, message: string): ApiError =>
  new ApiError(422, 'INVALID_PARAMETER', message, [{ field: name, issue: 'invalid' }]);

/** Per-request facts every envelope needs. */
export interface RequestMeta {
  requestId: string;
  now: number;
  version: '1' | '2';
  /** when set, meta.timestamp is read from it as the envelope is built (the time of the response) */
  clock?: () => number;
}

export function meta(rm: RequestMeta): Meta {
  return {
    api_version: rm.version,
    request_id: rm.requestId,
    timestamp: new Date(rm.clock ? rm.clock() : rm.now).toISOString(),
  };
}

export function success(
  rm: RequestMeta,
  data: unknown,
  status = 200,
  headers: Record<string, string> = {},
): SandboxResponse {
  return { status, headers, body: { object: 'success', data, meta: meta(rm) } };
}

export function list(
  rm: RequestMeta,
  data: ApiRecord[],
  page: { endCursor: string | null; hasNextPage: boolean },
): SandboxResponse {
  const pageInfo = { end_cursor: page.endCursor, has_next_page: page.hasNextPage };
  return { status: 200, headers: {}, body: { object: 'list', data, page_info: pageInfo, meta: meta(rm) } };
}

export function v1Success(rm: RequestMeta, data: unknown, extra: Record<string, unknown> = {}): SandboxResponse {
  return { status: 200, headers: {}, body: { success: true, ...extra, data, meta: meta(rm) } };
}

/** The error envelope of the request's version: `{object: "error", …}` or `{success: false, …}`. */
export function errorResponse(rm: RequestMeta, err: ApiError): SandboxResponse {
  const error = { code: err.code, message: err.message, details: err.details };
  const body =
    rm.version === '1' ? { success: false, error, meta: meta(rm) } : { object: 'error', error, meta: meta(rm) };
  return { status: err.status, headers: { ...err.headers }, body };
}

/** What a proxy in front of the API sends when the API is down. */
const NGINX_502 =
  '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n';

/** The answer of a fault that replaces the request: 500, 429, a proxy's HTML 502, or a JSON body cut in half. */
export function faultResponse(
  rm: RequestMeta,
  fault: '500' | '429' | 'html-502' | 'truncated',
  format: HeaderFormat,
): SandboxResponse {
  if (fault === '500')
    return errorResponse(rm, new ApiError(500, 'INTERNAL_ERROR', 'Internal server error (injected fault)'));
  if (fault === '429') {
    const headers = refusalHeaders(50, format); // `Retry-After: 0.05` in the default (seconds) form
    return errorResponse(rm, new ApiError(429, 'RATE_LIMITED', 'Rate limit exceeded (injected fault)', [], headers));
  }
  if (fault === 'html-502')
    return { status: 502, headers: { 'Content-Type': 'text/html; charset=utf-8' }, raw: NGINX_502 };
  const data = { id: 'truncated', note: 'this body was cut in half by an injected fault' };
  return cut({
    status: 200,
    headers: { 'Content-Type': 'application/json; charset=utf-8' },
    body: { object: 'success', data, meta: meta(rm) },
  });
}

/** What goes on the wire: the raw text, or the body as JSON with every number as it came (a RawNumber's digits). */
export function responseText(response: SandboxResponse): string {
  return response.raw ?? stringifyJson(response.body ?? null) ?? 'null';
}

/** A JSON answer whose body stops halfway, as a connection cut mid-body would leave it. */
export function cut(response: SandboxResponse): SandboxResponse {
  const text = responseText(response);
  return { ...response, body: undefined, raw: text.slice(0, Math.floor(text.length / 2)) };
}
