// Shared helpers of the sandbox conformance suite: start a sandbox per test file, and speak to it
// over real loopback HTTP (global fetch, or node:http for the raw cases such as dropped connections).
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import type * as z from 'zod/mini';
import type { SandboxOptions } from '../../src/sandbox/types.js';
import { startSandbox, type Sandbox } from '../helpers/sandbox.js';
import { errorEnvelope, v1ErrorEnvelope, v2Envelope } from '../../src/api/envelopes.js';

export type { SandboxKeys, SandboxOptions } from '../../src/sandbox/types.js';

/** What `startSandbox` resolves to (docs/sandbox.md, "Starting it"). */
export type SandboxHandle = Sandbox;
export { startSandbox };

/** Generous limits by default so that only the rate-limit tests meet a 429. */
export const ROOMY: SandboxOptions = { rateLimit: 1_000_000, orgRateLimit: 1_000_000 };

/**
 * Starts one sandbox for the enclosing test file (beforeAll) and closes it afterwards (afterAll).
 * Defaults: seed 42 (so meetings and recordings exist), limits far out of the way.
 */
export function useSandbox(options: SandboxOptions = {}): { readonly sb: SandboxHandle } {
  let handle: SandboxHandle | undefined;
  beforeAll(async () => {
    handle = await startSandbox({ seed: 42, ...ROOMY, ...options });
  });
  afterAll(async () => {
    await handle?.close();
  });
  return {
    get sb(): SandboxHandle {
      if (!handle) throw new Error('sandbox not started');
      return handle;
    },
  };
}

export interface CallOptions {
  /** the API key; default the admin key (or the v1 key with `v1`); `null` sends no key */
  key?: string | null;
  /** how the key is sent; default `x-api-key` */
  auth?: 'x-api-key' | 'bearer';
  /** a JSON value (serialized) or a raw string sent as is */
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
  /** resolve a relative path against the version 1 root */
  v1?: boolean;
  query?: Record<string, string | number | boolean>;
}

export interface CallResult<T = any> {
  status: number;
  headers: Headers;
  /** the parsed JSON body, or undefined when the body is not JSON */
  body: T;
  text: string;
  url: string;
}

/** Resolves a path: absolute URLs as is, `/api/…`, `/transcripts/…` and `/__sandbox…` on the origin, the rest on the v2 (or v1) root. */
export function resolveUrl(sb: SandboxHandle, path: string, v1 = false): string {
  if (/^https?:\/\//.test(path)) return path;
  if (path.startsWith('/api/') || path.startsWith('/transcripts') || path.startsWith('/__sandbox')) {
    return origin(sb) + path;
  }
  return (v1 ? sb.v1BaseUrl : sb.baseUrl) + path;
}

export function origin(sb: SandboxHandle): string {
  return new URL(sb.baseUrl).origin;
}

export async function call<T = any>(
  sb: SandboxHandle,
  method: string,
  path: string,
  opts: CallOptions = {},
): Promise<CallResult<T>> {
  const url = new URL(resolveUrl(sb, path, opts.v1));
  for (const [k, v] of Object.entries(opts.query ?? {})) url.searchParams.set(k, String(v));
  const headers: Record<string, string> = { accept: 'application/json' };
  const key = opts.key === undefined ? (opts.v1 ? sb.keys.v1 : sb.keys.admin) : opts.key;
  if (key !== null) {
    if (opts.auth === 'bearer') headers['authorization'] = `Bearer ${key}`;
    else headers['x-service-api-key'] = key;
  }
  let body: string | undefined;
  if (opts.rawBody !== undefined) body = opts.rawBody;
  else if (opts.body !== undefined) body = JSON.stringify(opts.body);
  if (body !== undefined) headers['content-type'] = 'application/json';
  Object.assign(headers, opts.headers ?? {});
  const res = await fetch(url, { method, headers, body });
  const text = await res.text();
  let parsed: any;
  try {
    parsed = text.length ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed as T, text, url: url.toString() };
}

/** Checks a version 2 body against the zod envelopes of src/api/envelopes.ts and returns it. */
export function expectV2Envelope<S extends z.ZodMiniType>(
  res: CallResult,
  schema: S = v2Envelope as unknown as S,
): z.infer<S> {
  const parsed = schema.safeParse(res.body);
  if (!parsed.success) {
    throw new Error(
      `body of ${res.status} ${res.url} does not match the envelope: ${parsed.error.message}\n${res.text.slice(0, 500)}`,
    );
  }
  return parsed.data;
}

/** An error response: the status, the error envelope, and the code. */
export function expectError(res: CallResult, status: number, code?: string): void {
  expect(res.status, `${res.url}: ${res.text.slice(0, 300)}`).toBe(status);
  expectV2Envelope(res, errorEnvelope);
  if (code !== undefined) expect(res.body.error.code).toBe(code);
}

export function expectV1Error(res: CallResult, status: number, code?: string): void {
  expect(res.status, `${res.url}: ${res.text.slice(0, 300)}`).toBe(status);
  const parsed = v1ErrorEnvelope.safeParse(res.body);
  if (!parsed.success) throw new Error(`v1 error body does not match: ${parsed.error.message}\n${res.text}`);
  if (code !== undefined) expect(res.body.error.code).toBe(code);
}

export function expectStatus(res: CallResult, status: number): void {
  expect(res.status, `${res.url}: ${res.text.slice(0, 300)}`).toBe(status);
}

/** The control endpoint (no key). */
export async function control<T = any>(
  sb: SandboxHandle,
  method: string,
  path: string,
  body?: unknown,
): Promise<CallResult<T>> {
  return call<T>(sb, method, sb.controlUrl + path, { key: null, body });
}

export interface NextFault {
  kind: string;
  method?: string;
  path?: string;
  count?: number;
}

/** Queues deterministic one-shot faults (`POST /__sandbox/faults` with `next`); clears the random ones. */
export async function queueFaults(sb: SandboxHandle, next: NextFault[]): Promise<void> {
  const res = await control(sb, 'POST', '/faults', { next });
  expect(res.status).toBeLessThan(300);
}

export async function clearFaults(sb: SandboxHandle): Promise<void> {
  const res = await control(sb, 'POST', '/faults', { fail_rate: 0, latency_ms: 0, faults: {}, next: [] });
  expect(res.status).toBeLessThan(300);
}

export async function setLimits(sb: SandboxHandle, limits: Record<string, number>): Promise<void> {
  const res = await control(sb, 'POST', '/limits', limits);
  expect(res.status).toBeLessThan(300);
}

export interface RawResult {
  status?: number;
  headers?: http.IncomingHttpHeaders;
  text?: string;
  /** set when the connection failed (destroyed, reset) before a full answer */
  error?: Error;
}

/** One request over node:http, reporting a destroyed connection instead of throwing. */
export function rawRequest(
  url: string,
  method: string,
  headers: Record<string, string | string[]> = {},
  body?: string,
): Promise<RawResult> {
  return new Promise((resolve) => {
    const req = http.request(url, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', (error) =>
        resolve({ status: res.statusCode, headers: res.headers, text: Buffer.concat(chunks).toString('utf8'), error }),
      );
      res.on('aborted', () =>
        resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString('utf8'), error: new Error('aborted') }),
      );
    });
    req.on('error', (error) => resolve({ error }));
    req.setTimeout(5_000, () => req.destroy(new Error('timeout')));
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/** An API request with the admin key over node:http (`rawRequest`), for a connection a fault drops. */
export function rawApi(
  sb: SandboxHandle,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const h = {
    'x-service-api-key': sb.keys.admin,
    'content-type': 'application/json',
    accept: 'application/json',
    ...headers,
  };
  return rawRequest(resolveUrl(sb, path), method, h, body === undefined ? undefined : JSON.stringify(body));
}

let counter = 0;
/** A unique email (contacts need one containing `@`). */
export function uniqueEmail(tag = 'c'): string {
  counter += 1;
  return `${tag}-${process.pid}-${Date.now()}-${counter}@example.test`;
}

export function uniqueKey(tag = 'idem'): string {
  counter += 1;
  return `${tag}-${process.pid}-${Date.now()}-${counter}`;
}

/** A valid create body for a writable resource, from the required fields of the resource table. */
export function createBody(resource: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  counter += 1;
  const n = counter;
  const bodies: Record<string, Record<string, unknown>> = {
    contacts: { email: uniqueEmail(), first_name: `First${n}` },
    companies: { name: `Company ${n}` },
    deals: { name: `Deal ${n}` },
    pipelines: { name: `Pipeline ${n}` },
    tasks: { title: `Task ${n}` },
    notes: { body: `Note ${n}` },
    segments: { name: `Segment ${n}` },
    interactions: { type: 'call' },
  };
  const base = bodies[resource];
  if (!base) throw new Error(`no create body for ${resource}`);
  return { ...base, ...extra };
}

/** Creates a record with the admin key (or the given one) and returns its data. */
export async function create(
  sb: SandboxHandle,
  resource: string,
  extra: Record<string, unknown> = {},
  key?: string,
): Promise<Record<string, any>> {
  const res = await call(sb, 'POST', `/${resource}`, { body: createBody(resource, extra), key: key ?? sb.keys.admin });
  expect(res.status, res.text.slice(0, 300)).toBe(201);
  return res.body.data;
}

/** Every record of a v2 list, following the cursors. */
export async function listAll(
  sb: SandboxHandle,
  resource: string,
  opts: { key?: string; limit?: number; query?: Record<string, string> } = {},
): Promise<Array<Record<string, any>>> {
  const out: Array<Record<string, any>> = [];
  let cursor: string | null = null;
  for (let i = 0; i < 1000; i++) {
    const query: Record<string, string | number> = { limit: opts.limit ?? 100, ...(opts.query ?? {}) };
    if (cursor) query.cursor = cursor;
    const res = await call(sb, 'GET', `/${resource}`, { key: opts.key, query });
    expect(res.status, res.text.slice(0, 300)).toBe(200);
    out.push(...res.body.data);
    if (!res.body.page_info.has_next_page) return out;
    cursor = res.body.page_info.end_cursor;
  }
  throw new Error('pagination did not end');
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * A sandbox clock (`now`) moved only by the test (`pass`): where a check needs requests in one short
 * window, or a wait of a known length between them, a loaded machine cannot stretch the time between them.
 */
export function testClock(): { now: () => number; pass: (ms: number) => void } {
  let at = Date.parse('2026-01-05T12:00:00.000Z');
  return { now: () => at, pass: (ms) => void (at += ms) };
}

export interface ExtraKey {
  key: string;
  version: 1 | 2;
  scopes?: string[];
  access?: 'organization' | 'user';
  user?: string;
}

const tempDirs: string[] = [];
// Registered while a test file imports this module: runs after that file's tests.
afterAll(() => {
  for (const dir of tempDirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** Writes a `--keys` file (docs/sandbox.md "Starting it") into a fresh temp folder and returns its path. */
export function writeKeysFile(keys: ExtraKey[]): string {
  const dir = tempDir('crm-conf-keys-');
  const file = path.join(dir, 'keys.json');
  fs.writeFileSync(file, JSON.stringify(keys, null, 2));
  return file;
}

/** A fresh temp folder, removed when the test process exits. */
export function tempDir(tag = 'crm-conf-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), tag));
  tempDirs.push(dir);
  return dir;
}

/** Starts a sandbox for one test and closes it afterwards. */
export async function withSandbox<T>(options: SandboxOptions, fn: (sb: SandboxHandle) => Promise<T>): Promise<T> {
  const sb = await startSandbox({ seed: 42, ...ROOMY, ...options });
  try {
    return await fn(sb);
  } finally {
    await sb.close();
  }
}

/**
 * The version 2 resources the spec names, written out here rather than read from src/api: the
 * conformance tests check the sandbox against the spec, not against our own table.
 */
export const SPEC_RESOURCES = [
  'contacts',
  'companies',
  'deals',
  'pipelines',
  'tasks',
  'notes',
  'segments',
  'interactions',
  'meetings',
  'recordings',
  'bookings',
] as const;
