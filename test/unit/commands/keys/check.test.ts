import { describe, expect, it } from 'vitest';
import { keysCheck } from '../../../../src/commands/keys/check.js';
import { allScopes, RESOURCES } from '../../../../src/api/resources.js';
import type { ResolvedProfile } from '../../../../src/config/types.js';
import { AuthError, errorClassForStatus, ServerError } from '../../../../src/http/errors.js';
import type { ApiResponse, HttpClient, RequestOptions } from '../../../../src/http/types.js';
import { fakeCtx, type FakeCtxOptions } from '../../../helpers/fake-ctx.js';

const V2 = 'service_live_CheckSecret0123456789ab12';
const V1 = 'service_pk_CheckV1Secret0123456789cd34';
const BASE = 'http://127.0.0.1:4010/api/v2';
const V1BASE = 'http://127.0.0.1:4010/api/v1';
const READABLE = RESOURCES.filter((r) => r.verbs.includes('list')).map((r) => r.name);
const NOT_CHECKED = allScopes().filter((s) => !s.endsWith(':read'));

/** `error`: the client's error for an answer that is not the API's (its code), whatever the status */
type Answer = {
  status: number;
  headers?: Record<string, string>;
  code?: string;
  error?: 'INVALID_RESPONSE' | 'REDIRECT';
};

/** A client that answers each request with `answer(opts)`, throwing the error class the real client would. */
function fakeClient(baseUrl: string, answer: (o: RequestOptions) => Answer) {
  const calls: RequestOptions[] = [];
  const client: HttpClient = {
    baseUrl,
    stats: { requests: 0, retries: 0 },
    getLink: () => Promise.reject(new Error('no links here')),
    retry: () => Promise.reject(new Error('no links here')),
    async request<T>(o: RequestOptions): Promise<ApiResponse<T>> {
      calls.push(o);
      await new Promise((r) => setImmediate(r));
      const a = answer(o);
      if (a.error) throw new ServerError(`unexpected response (HTTP ${a.status})`, { status: a.status, code: a.error });
      if (a.status >= 400) {
        const Cls = errorClassForStatus(a.status);
        throw new Cls(`HTTP ${a.status}`, { status: a.status, code: a.code, requestId: 'req_test' });
      }
      return { status: a.status, headers: a.headers ?? {}, body: {} as T, retries: 0 };
    },
    paginate: () => {
      throw new Error('not used');
    },
    pages: () => {
      throw new Error('not used');
    },
  };
  return { client, calls };
}

const profile = (p: Partial<ResolvedProfile> = {}): ResolvedProfile => ({
  name: 'dev',
  baseUrl: BASE,
  v1BaseUrl: V1BASE,
  apiKey: V2,
  authHeader: 'x-api-key',
  ...p,
});

const rl = (remaining: number) => ({
  'x-ratelimit-limit': '200',
  'x-ratelimit-remaining': String(remaining),
  'x-ratelimit-reset': '59.5',
});

function run(answer: (o: RequestOptions) => Answer, o: FakeCtxOptions & { v1?: true } = {}) {
  const v2 = fakeClient(BASE, answer);
  const v1 = fakeClient(V1BASE, answer);
  const ctx = fakeCtx({
    profile: profile(),
    client: { v2: v2.client, v1: v1.client },
    globals: { output: 'json' },
    ...o,
  });
  return { ctx, v2calls: v2.calls, v1calls: v1.calls, done: keysCheck({ v1: o.v1 }, ctx) };
}

describe('keys-check, version 2', () => {
  it('probes every readable collection with GET ?limit=1 and reports scopes, rate limit, masked key', async () => {
    let remaining = 190;
    const forbidden = new Set(['deals', 'recordings']);
    const { ctx, v2calls, done } = run((o) => {
      const name = o.path.slice(1);
      return forbidden.has(name)
        ? { status: 403, code: 'INSUFFICIENT_SCOPE' }
        : { status: 200, headers: rl(remaining--) };
    });
    await done;
    expect(v2calls.map((c) => [c.method, c.path, c.query])).toEqual(
      READABLE.map((n) => ['GET', `/${n}`, { limit: 1 }]),
    );
    expect(v2calls.every((c) => c.method === 'GET')).toBe(true);
    const out = JSON.parse(ctx.stdoutText());
    expect(out).toEqual({
      profile: 'dev',
      base_url: BASE,
      key_kind: 'v2',
      key: 'service_live_…ab12',
      authenticated: true,
      scopes: Object.fromEntries(READABLE.map((n) => [`${n}:read`, !forbidden.has(n)])),
      rate_limit: { limit: 200, remaining: 190 - (READABLE.length - forbidden.size) + 1, reset: 59.5 },
      scopes_not_checked: NOT_CHECKED,
      note: expect.stringMatching(
        /^Only read scopes were checked .*Write and delete scopes cannot be checked without creating or deleting data/,
      ),
    });
    expect(ctx.stdoutText() + ctx.stderrText()).not.toContain(V2);
  });

  it('401 on the first probe: authenticated false, exit 3, no more requests', async () => {
    const { ctx, v2calls, done } = run(() => ({ status: 401, code: 'UNAUTHENTICATED' }));
    const err = await done.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AuthError);
    expect((err as AuthError).exitCode).toBe(3);
    expect((err as AuthError).message).toContain('service_live_…ab12');
    expect((err as AuthError).message).not.toContain(V2);
    expect((err as AuthError).code).toBe('UNAUTHENTICATED');
    expect(v2calls).toHaveLength(1);
    const out = JSON.parse(ctx.stdoutText());
    expect(out.authenticated).toBe(false);
    expect(out.scopes).toEqual(Object.fromEntries(READABLE.map((n) => [`${n}:read`, null])));
    expect(out.rate_limit).toEqual({ limit: null, remaining: null, reset: null });
  });

  it('a key without any read scope still authenticates (403 everywhere)', async () => {
    const { ctx, done } = run(() => ({ status: 403, code: 'INSUFFICIENT_SCOPE' }));
    await done;
    const out = JSON.parse(ctx.stdoutText());
    expect(out.authenticated).toBe(true);
    expect(Object.values(out.scopes).every((v) => v === false)).toBe(true);
  });

  it('a server that fails on the first probe ends the check with its error (exit 8)', async () => {
    const { v2calls, done } = run(() => ({ status: 503 }));
    await expect(done).rejects.toBeInstanceOf(ServerError);
    expect(v2calls).toHaveLength(1);
  });

  it('a later probe that cannot tell gives null and a reason', async () => {
    const { ctx, done } = run((o) => (o.path === '/tasks' ? { status: 500, code: 'INTERNAL_ERROR' } : { status: 200 }));
    await done;
    const out = JSON.parse(ctx.stdoutText());
    expect(out.scopes['tasks:read']).toBeNull();
    expect(out.errors).toEqual({ 'tasks:read': 'HTTP 500 INTERNAL_ERROR: HTTP 500' });
    expect(out.scopes['contacts:read']).toBe(true);
  });

  it('names the write and delete scopes it did not check', async () => {
    const { ctx, v2calls, done } = run(() => ({ status: 200 }));
    await done;
    const out = JSON.parse(ctx.stdoutText());
    expect(out.scopes_not_checked).toContain('contacts:write');
    expect(out.scopes_not_checked).toContain('contacts:delete');
    expect(out.scopes_not_checked).toContain('interactions:write');
    expect(out.scopes_not_checked.some((s: string) => s.endsWith(':read'))).toBe(false);
    // every scope of the API is either probed or named as not checked
    expect([...Object.keys(out.scopes), ...out.scopes_not_checked].sort()).toEqual(allScopes().sort());
    expect(v2calls.every((c) => c.method === 'GET')).toBe(true);
  });

  it.each([
    ['404 everywhere (a server address without /api/v2)', { status: 404, code: 'NOT_FOUND' }],
    ['a page that is not the API (200, not an envelope)', { status: 200, error: 'INVALID_RESPONSE' }],
    ['a redirect', { status: 302, error: 'REDIRECT' }],
  ] as const)('%s: "did not answer as the CRM API", exit 8, never "authenticated"', async (_, answer) => {
    const { ctx, v2calls, done } = run(() => answer);
    const err = (await done.catch((e: unknown) => e)) as ServerError;
    expect(err).toBeInstanceOf(ServerError);
    expect(err.exitCode).toBe(8);
    expect(err.code).toBe('NOT_THE_API');
    expect(err.message).toContain(`The server at ${BASE} did not answer as the CRM API`);
    expect(err.hint).toMatch(/base URL.*\/api\/v2/);
    expect(err.details).toHaveLength(READABLE.length);
    expect(v2calls).toHaveLength(READABLE.length);
    expect(ctx.stdoutText()).toBe(''); // no report that could read as "authenticated"
  });

  it('one collection missing (404) among answers is not a wrong server', async () => {
    const { ctx, done } = run((o) => (o.path === `/${READABLE[0]}` ? { status: 404 } : { status: 200 }));
    await done;
    const out = JSON.parse(ctx.stdoutText());
    expect(out.authenticated).toBe(true);
    expect(out.scopes[`${READABLE[0]}:read`]).toBeNull();
  });

  it('no errors key when every probe answered', async () => {
    const { ctx, done } = run(() => ({ status: 200 }));
    await done;
    expect(JSON.parse(ctx.stdoutText())).not.toHaveProperty('errors');
  });

  it('no key configured: AuthError before any request', async () => {
    const { v2calls, done } = run(() => ({ status: 200 }), { profile: profile({ apiKey: undefined }) });
    await expect(done).rejects.toBeInstanceOf(AuthError);
    expect(v2calls).toHaveLength(0);
  });

  it('a readable table by default on a terminal', async () => {
    const { ctx, done } = run((o) => (o.path === '/deals' ? { status: 403 } : { status: 200, headers: rl(150) }), {
      globals: {},
      stdoutTTY: true,
    });
    await done;
    const text = ctx.stdoutText();
    expect(text).toMatch(/authenticated\s*│\s*yes/);
    expect(text).toMatch(/contacts:read\s*│\s*yes/);
    expect(text).toMatch(/deals:read\s*│\s*no/);
    expect(text).toMatch(/150 of 200 left, resets in 59\.5 s/);
    expect(text).toContain('service_live_…ab12 (version 2)');
    expect(text).toMatch(/not_checked\s*│\s*contacts:write, contacts:delete,/);
    expect(text).toMatch(/note\s*│\s*Only read scopes were checked/);
    expect(text).not.toContain(V2);
  });
});

describe('keys-check, version 1', () => {
  it('a profile with only a v1 key is checked with POST {v1}/people/query {limit: 1}', async () => {
    const { ctx, v1calls, v2calls, done } = run(() => ({ status: 200, headers: rl(10) }), {
      profile: profile({ apiKey: undefined, v1ApiKey: V1 }),
    });
    await done;
    expect(v2calls).toHaveLength(0);
    expect(v1calls.map((c) => [c.method, c.path, c.body])).toEqual([['POST', '/people/query', { limit: 1 }]]);
    expect(JSON.parse(ctx.stdoutText())).toEqual({
      profile: 'dev',
      base_url: V1BASE,
      key_kind: 'v1',
      key: 'service_pk_…cd34',
      authenticated: true,
      scopes: {},
      rate_limit: { limit: 200, remaining: 10, reset: 59.5 },
    });
  });

  it('--v1 checks the v1 key even when a v2 key is there', async () => {
    const { v1calls, v2calls, done } = run(() => ({ status: 200 }), { profile: profile({ v1ApiKey: V1 }), v1: true });
    await done;
    expect(v1calls).toHaveLength(1);
    expect(v2calls).toHaveLength(0);
  });

  it('401 from version 1 is exit 3', async () => {
    const { ctx, done } = run(() => ({ status: 401, code: 'WRONG_API_VERSION' }), {
      profile: profile({ apiKey: undefined, v1ApiKey: V1 }),
    });
    const err = await done.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AuthError);
    expect((err as AuthError).code).toBe('WRONG_API_VERSION');
    expect(JSON.parse(ctx.stdoutText()).authenticated).toBe(false);
  });

  it('a v1 key configured as the v2 key is told by its form and checked against version 1', async () => {
    const { ctx, v2calls, v1calls, done } = run(() => ({ status: 200 }), {
      profile: profile({ apiKey: V1, v1ApiKey: undefined }),
    });
    await done;
    expect(v2calls).toHaveLength(0);
    expect(v1calls).toHaveLength(1);
    expect(JSON.parse(ctx.stdoutText())).toMatchObject({ key_kind: 'v1', authenticated: true });
  });
});
