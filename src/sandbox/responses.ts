// Builders of the response envelopes (spec: "Response envelope (version 2)", "Version 1 shapes";
// src/api/envelopes.ts has the zod schemas they must satisfy).
import { API_VERSION_V1, API_VERSION_V2 } from '../api/resources.js';
import type { ApiRecord, Meta } from '../api/envelopes.js';
import type { ApiError } from './errors.js';
import type { SandboxResponse } from './types.js';

export type ApiVersion = typeof API_VERSION_V1 | typeof API_VERSION_V2;

/** Per-request facts every envelope needs. */
export interface RequestMeta {
  requestId: string;
  now: number;
  version: ApiVersion;
  /** when set, meta.timestamp is read from it as the envelope is built (the time of the response) */
  clock?: () => number;
}

export function meta(rm: RequestMeta): Meta {
  return { api_version: rm.version, request_id: rm.requestId, timestamp: new Date(rm.clock ? rm.clock() : rm.now).toISOString() };
}

export function success(rm: RequestMeta, data: unknown, status = 200, headers: Record<string, string> = {}): SandboxResponse {
  return { status, headers, body: { object: 'success', data, meta: meta(rm) } };
}

export interface PageInfo {
  end_cursor: string | null;
  has_next_page: boolean;
}

export function list(rm: RequestMeta, data: ApiRecord[], pageInfo: PageInfo): SandboxResponse {
  return { status: 200, headers: {}, body: { object: 'list', data, page_info: pageInfo, meta: meta(rm) } };
}

export function v1Success(rm: RequestMeta, data: unknown, extra: Record<string, unknown> = {}): SandboxResponse {
  return { status: 200, headers: {}, body: { success: true, ...extra, data, meta: meta(rm) } };
}

/** The error envelope of the request's version: `{object: "error", …}` or `{success: false, …}`. */
export function errorResponse(rm: RequestMeta, err: ApiError): SandboxResponse {
  const error = { code: err.code, message: err.message, details: err.details };
  const body = rm.version === API_VERSION_V1 ? { success: false, error, meta: meta(rm) } : { object: 'error', error, meta: meta(rm) };
  return { status: err.status, headers: { ...err.headers }, body };
}
