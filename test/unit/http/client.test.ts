import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../helpers/clock.js';
import { createClient, type CrmHttpClient } from '../../../src/http/client.js';
import {
  AuthError,
  ForbiddenError,
  InterruptedError,
  NotFoundError,
  RateLimitError,
  ServerError,
  UsageError,
  ValidationError,
} from '../../../src/http/errors.js';
import type { ClientConfig } from '../../../src/http/types.js';
import { formatError } from '../../../src/output/errors.js';
import { USER_AGENT } from '../../../src/version.js';
import { type Handler, type TestServer, errorBody, list, sendJson, startServer, success } from './helpers.js';

const KEY = 'service_live_abcdefghijklmnopqrstuvwxf3a9';
const servers: TestServer[] = [];
const clients: CrmHttpClient[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(handler: Handler): Promise<TestServer> {
  const s = await startServer(handler);
  servers.push(s);
  return s;
}

function client(
  server: TestServer,
  over: Partial<ClientConfig> = {},
): { c: CrmHttpClient; clock: FakeClock; lines: string[] } {
  const clock = (over.clock as FakeClock | undefined) ?? new FakeClock();
  const lines: string[] = [];
  const c = createClient({
    baseUrl: server.baseUrl,
    apiKey: KEY,
    authHeader: 'x-api-key',
    clock,
    log: (l) => lines.push(l),
    ...over,
  });
  clients.push(c);
  return { c, clock, lines };
}

/** Answers from a script, one entry per request; the last one repeats. */
function scripted(...steps: Array<(res: ServerResponse) => void>): Handler {
  return (_req, res, i) => steps[Math.min(i, steps.length - 1)]!(res);
}
const ok =
  (data: unknown = { id: 'con_1' }) =>
  (res: ServerResponse) =>
    sendJson(res, 200, success(data));
const fail =
  (status: number, code = 'INTERNAL_ERROR', headers: Record<string, string> = {}) =>
  (res: ServerResponse) =>
    sendJson(res, status, errorBody(code, `failed with ${status}`, `req_${status}`), headers);
const drop = () => (res: ServerResponse) => res.socket?.destroy();

describe('headers', () => {
  it('sends exactly one auth header, Accept and User-Agent', async () => {
    const s = await serve(scripted(ok()));
    const { c } = client(s);
    await c.request({ method: 'GET', path: '/contacts/con_1' });
    const r = s.requests[0]!;
    expect(r.headers['x-service-api-key']).toBe(KEY);
    expect(r.headers.authorization).toBeUndefined();
    expect(r.rawHeaderNames.filter((h) => h === 'x-service-api-key' || h === 'authorization')).toHaveLength(1);
    expect(r.headers.accept).toBe('application/json');
    expect(r.headers['user-agent']).toBe(USER_AGENT);
    expect(r.headers['content-type']).toBeUndefined();
    expect(r.headers['idempotency-key']).toBeUndefined();
  });

  it('sends Authorization: Bearer in bearer mode, and nothing else', async () => {
    const s = await serve(scripted(ok()));
    const { c } = client(s, { authHeader: 'bearer' });
    await c.request({ method: 'GET', path: '/contacts', expect: 'success' });
    const r = s.requests[0]!;
    expect(r.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(r.headers['x-service-api-key']).toBeUndefined();
  });

  it('sends a JSON body with Content-Type, and a generated Idempotency-Key', async () => {
    const s = await serve((_req, res) => sendJson(res, 201, success({ id: 'con_9' })));
    const { c } = client(s);
    const res = await c.request({ method: 'POST', path: '/contacts', body: { email: 'a@b.c' }, idempotencyKey: true });
    const r = s.requests[0]!;
    expect(res.status).toBe(201);
    expect(r.headers['content-type']).toBe('application/json');
    expect(JSON.parse(r.body)).toEqual({ email: 'a@b.c' });
    expect(r.headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('builds the URL from the base path, the path and the query', async () => {
    const s = await serve(scripted(ok()));
    const { c } = client(s);
    await c.request({
      method: 'GET',
      path: 'contacts?x=1',
      query: { limit: 5, cursor: undefined, has_transcript: true },
    });
    expect(s.requests[0]!.url).toBe('/api/v2/contacts?x=1&limit=5&has_transcript=true');
  });
});

describe('retries', () => {
  it('retries a GET on 503, then succeeds', async () => {
    const s = await serve(scripted(fail(503), ok()));
    const { c, clock } = client(s);
    const res = await c.request({ method: 'GET', path: '/contacts/con_1' });
    expect(res.retries).toBe(1);
    expect(s.requests).toHaveLength(2);
    expect(clock.sleeps).toEqual([250]); // backoff(0) with random 0.5
    expect(c.stats).toEqual({ requests: 2, retries: 1 });
  });

  it('does not retry a POST without an Idempotency-Key on 500', async () => {
    const s = await serve(scripted(fail(500), ok()));
    const { c } = client(s);
    const err = await c.request({ method: 'POST', path: '/contacts', body: {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServerError);
    expect((err as ServerError).exitCode).toBe(8);
    expect(s.requests).toHaveLength(1);
  });

  it('retries a POST with an Idempotency-Key, reusing the same key', async () => {
    const s = await serve(scripted(fail(500), fail(502), ok()));
    const { c } = client(s);
    const res = await c.request({ method: 'POST', path: '/contacts', body: { email: 'a@b.c' }, idempotencyKey: true });
    expect(res.retries).toBe(2);
    const keys = s.requests.map((r) => r.headers['idempotency-key']);
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]).toBeTruthy();
  });

  it('sends a chosen Idempotency-Key as given on every attempt', async () => {
    const s = await serve(scripted(fail(503), ok()));
    const { c } = client(s);
    await c.request({ method: 'PATCH', path: '/contacts/con_1', body: { a: 1 }, idempotencyKey: 'my-key-1' });
    expect(s.requests.map((r) => r.headers['idempotency-key'])).toEqual(['my-key-1', 'my-key-1']);
  });

  it('waits Retry-After on 429 (on the injected clock) and retries, even a bare POST', async () => {
    const s = await serve(scripted(fail(429, 'RATE_LIMITED', { 'retry-after': '1.5' }), ok()));
    const { c, clock } = client(s);
    const res = await c.request({ method: 'POST', path: '/contacts', body: {} });
    expect(res.retries).toBe(1);
    expect(clock.sleeps.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(1500);
    expect(clock.sleeps).toContain(1500);
    expect(s.requests).toHaveLength(2);
  });

  it('waits out 429s with Retry-After beyond --max-retries, within the total wait budget (exit 7 after it)', async () => {
    const s = await serve(scripted(fail(429, 'RATE_LIMITED', { 'retry-after': '0.05' })));
    const { c, clock } = client(s, { maxRetries: 1, rateLimitBudgetMs: 260 });
    const err = (await c.request({ method: 'GET', path: '/contacts' }).catch((e: unknown) => e)) as RateLimitError;
    expect(err).toBeInstanceOf(RateLimitError);
    expect(err.exitCode).toBe(7);
    expect(err.status).toBe(429);
    expect(err.code).toBe('RATE_LIMITED');
    expect(err.message).toContain('gave up after 2 retries: the rate-limit budget is spent');
    // each wait costs at least 100 ms of the budget: a third would pass it
    expect(err.hint).toMatch(
      /after 2 waits for Retry-After \(0\.2 s\), the server asks to wait 0\.1 s \(Retry-After\) and less than 0\.1 s is left of the rate-limit budget for one request \(0\.3 s in all; CRM_RATE_LIMIT_BUDGET/,
    );
    expect(err.hint).not.toMatch(/--concurrency/);
    expect(clock.sleeps).toEqual([50, 50]);
    expect(s.requests).toHaveLength(3);
  });

  it('counts a 429 with Retry-After: 0 as a retry (it does not say "later")', async () => {
    const s = await serve(scripted(fail(429, 'RATE_LIMITED', { 'retry-after': '0' })));
    const { c } = client(s, { maxRetries: 1 });
    await expect(c.request({ method: 'GET', path: '/contacts' })).rejects.toBeInstanceOf(RateLimitError);
    expect(s.requests).toHaveLength(2);
  });

  it('counts a 429 without Retry-After against --max-retries (backoff)', async () => {
    const s = await serve(scripted(fail(429, 'RATE_LIMITED')));
    const { c, clock } = client(s, { maxRetries: 2 });
    const err = (await c.request({ method: 'GET', path: '/contacts' }).catch((e: unknown) => e)) as RateLimitError;
    expect(err).toBeInstanceOf(RateLimitError);
    expect(err.message).toContain('gave up after 2 retries');
    expect(clock.sleeps).toEqual([250, 500]);
  });

  it('says the retries after a 429 with Retry-After were not counted when the total is over --max-retries (trial: "15 retries: --max-retries 8")', async () => {
    const rateLimited = fail(429, 'RATE_LIMITED', { 'retry-after': '0.01' });
    const s = await serve(scripted(rateLimited, rateLimited, fail(503, 'UNAVAILABLE')));
    const { c } = client(s, { maxRetries: 1 });
    const err = (await c.request({ method: 'GET', path: '/contacts' }).catch((e: unknown) => e)) as ServerError;
    expect(err).toBeInstanceOf(ServerError);
    expect(err.message).toContain(
      "gave up after 3 retries: --max-retries 1 (the 2 after a 429's Retry-After not counted)",
    );
  });

  it('gives ServerError (exit 8) with the server code and request id when 5xx outlasts the retries', async () => {
    const s = await serve(scripted(fail(503, 'UNAVAILABLE')));
    const { c, clock } = client(s, { maxRetries: 3 });
    const err = (await c.request({ method: 'GET', path: '/contacts' }).catch((e: unknown) => e)) as ServerError;
    expect(err).toBeInstanceOf(ServerError);
    expect(err.exitCode).toBe(8);
    expect(err.status).toBe(503);
    expect(err.code).toBe('UNAVAILABLE');
    expect(err.requestId).toBe('req_503');
    expect(s.requests).toHaveLength(4);
    expect(clock.sleeps).toEqual([250, 500, 1000]); // exponential, half of each ceiling with random 0.5
    expect(c.stats).toEqual({ requests: 4, retries: 3 });
  });

  it('does not retry other 4xx', async () => {
    const s = await serve(scripted(fail(404, 'NOT_FOUND')));
    const { c } = client(s);
    await expect(c.request({ method: 'GET', path: '/contacts/x' })).rejects.toBeInstanceOf(NotFoundError);
    expect(s.requests).toHaveLength(1);
  });

  it('retries a GET whose connection is dropped', async () => {
    const s = await serve(scripted(drop(), ok()));
    const { c, lines } = client(s);
    const res = await c.request({ method: 'GET', path: '/contacts/con_1' });
    expect(res.retries).toBe(1);
    expect(s.requests).toHaveLength(2);
    expect(lines[0]).toMatch(
      /^GET http:\/\/127\.0\.0\.1:\d+\/api\/v2\/contacts\/con_1 (UND_ERR_SOCKET|ECONNRESET) \d+ ms$/,
    );
  });

  it('does not retry a bare POST whose connection is dropped, and says why it failed', async () => {
    const s = await serve(scripted(drop(), ok()));
    const { c } = client(s);
    const err = (await c
      .request({ method: 'POST', path: '/contacts', body: {} })
      .catch((e: unknown) => e)) as ServerError;
    expect(err).toBeInstanceOf(ServerError);
    expect(err.message).toContain('connection');
    expect(s.requests).toHaveLength(1);
  });

  it('times out (exit 8) and retries a GET that gets no answer', async () => {
    const s = await serve(() => {
      /* never answers */
    });
    const { c } = client(s, { timeoutMs: 150, maxRetries: 1 });
    const err = (await c.request({ method: 'GET', path: '/contacts' }).catch((e: unknown) => e)) as ServerError;
    expect(err).toBeInstanceOf(ServerError);
    expect(err.exitCode).toBe(8);
    expect(err.message).toMatch(/timeout/);
    expect(s.requests).toHaveLength(2);
  });

  it('retries a truncated 200 for a GET', async () => {
    const s = await serve(
      scripted((res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"object":"success","data":{"id":"con');
      }, ok()),
    );
    const { c } = client(s);
    const res = await c.request({ method: 'GET', path: '/contacts/con_1' });
    expect(res.retries).toBe(1);
  });
});

describe('bodies that are not the expected envelope', () => {
  it('HTML 502 from a proxy → ServerError quoting the body start', async () => {
    const html =
      '<html>\r\n<head><title>502 Bad Gateway</title></head>\n<body>\u001b[31m' + 'x'.repeat(500) + '</body></html>';
    const s = await serve((_req, res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end(html);
    });
    const { c } = client(s, { maxRetries: 1 });
    const err = (await c.request({ method: 'GET', path: '/contacts' }).catch((e: unknown) => e)) as ServerError;
    expect(err).toBeInstanceOf(ServerError);
    expect(err.exitCode).toBe(8);
    expect(err.status).toBe(502);
    expect(err.message).toContain('<html> <head><title>502 Bad Gateway</title></head> <body>');
    expect(err.message).not.toMatch(/[\r\n\t]/); // one line; the rest is escaped where it is printed
    expect(formatError(err)).toContain('<body>\\x1b[31m');
    expect(err.message).not.toContain('x'.repeat(200));
    expect(s.requests).toHaveLength(2); // a 502 is retried
  });

  it('truncated JSON → ServerError quoting it (a POST without a key is not retried)', async () => {
    const s = await serve((_req, res) => {
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end('{"object":"success","data":{"id":"con_1","email":"a@');
    });
    const { c } = client(s);
    const err = (await c
      .request({ method: 'POST', path: '/contacts', body: {} })
      .catch((e: unknown) => e)) as ServerError;
    expect(err).toBeInstanceOf(ServerError);
    expect(err.message).toContain('{"object":"success","data":{"id":"con_1","email":"a@');
    expect(s.requests).toHaveLength(1);
  });

  it('a list where a success was expected → ServerError, not retried', async () => {
    const s = await serve((_req, res) => sendJson(res, 200, list([], null, false)));
    const { c } = client(s);
    const err = await c.request({ method: 'GET', path: '/contacts/con_1', expect: 'success' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServerError);
    expect(s.requests).toHaveLength(1);
  });

  it('keeps fields the schema does not name', async () => {
    const s = await serve((_req, res) => sendJson(res, 200, { ...success({ id: 1 }), extra: 'kept' }));
    const { c } = client(s);
    const res = await c.request<{ extra: string }>({ method: 'GET', path: '/x', expect: 'success' });
    expect(res.body.extra).toBe('kept');
    expect(res.requestId).toBe('req_test');
  });
});

describe('error envelopes', () => {
  it.each([
    [401, 'UNAUTHENTICATED', AuthError, 3],
    [403, 'INSUFFICIENT_SCOPE', ForbiddenError, 4],
    [404, 'NOT_FOUND', NotFoundError, 5],
    [422, 'VALIDATION_FAILED', ValidationError, 6],
  ] as const)('%i maps to its class with code, message, details, request id', async (status, code, Cls, exit) => {
    const details = [{ field: 'email', issue: 'required' }];
    const s = await serve((_req, res) => sendJson(res, status, errorBody(code, 'nope', 'req_abc', details)));
    const { c } = client(s);
    const err = (await c.request({ method: 'GET', path: '/contacts' }).catch((e: unknown) => e)) as InstanceType<
      typeof Cls
    >;
    expect(err).toBeInstanceOf(Cls);
    expect(err.exitCode).toBe(exit);
    expect(err.status).toBe(status);
    expect(err.code).toBe(code);
    expect(err.message).toBe('nope');
    expect(err.details).toEqual(details);
    expect(err.requestId).toBe('req_abc');
  });

  it('maps a v1 error body {success:false, error}', async () => {
    const s = await serve((_req, res) =>
      sendJson(res, 422, { success: false, error: { code: 'VALIDATION_FAILED', message: 'bad year' } }),
    );
    const clock = new FakeClock();
    const c = createClient({
      baseUrl: `${s.origin}/api/v1`,
      apiKey: 'service_pk_abcdefghijklmnop1234',
      authHeader: 'x-api-key',
      clock,
    });
    clients.push(c);
    const err = (await c
      .request({ method: 'PATCH', path: '/companies/c1', body: { foundedYear: 'x' } })
      .catch((e: unknown) => e)) as ValidationError;
    expect(err).toBeInstanceOf(ValidationError);
    expect(err.code).toBe('VALIDATION_FAILED');
    expect(err.message).toBe('bad year');
  });

  it('checks v1 success bodies', async () => {
    const s = await serve((_req, res) => sendJson(res, 200, { success: true, nextCursor: null, data: { people: [] } }));
    const c = createClient({
      baseUrl: `${s.origin}/api/v1`,
      apiKey: 'service_pk_x',
      authHeader: 'x-api-key',
      clock: new FakeClock(),
    });
    clients.push(c);
    const res = await c.request<{ data: { people: unknown[] } }>({
      method: 'POST',
      path: '/people/query',
      body: { limit: 1 },
    });
    expect(res.body.data.people).toEqual([]);
  });
});

describe('the key stays with its origin', () => {
  it('does not follow a redirect to another origin; the other server never sees the key', async () => {
    const other = await serve(scripted(ok()));
    const s = await serve((_req, res) => {
      res.writeHead(302, { location: `${other.origin}/steal` });
      res.end();
    });
    const { c } = client(s);
    const err = (await c.request({ method: 'GET', path: '/contacts' }).catch((e: unknown) => e)) as ServerError;
    expect(err).toBeInstanceOf(ServerError);
    expect(err.status).toBe(302);
    expect(err.message).toContain('redirect');
    expect(other.requests).toHaveLength(0);
    expect(s.requests).toHaveLength(1);
  });

  it('refuses an absolute URL to another origin before sending anything', async () => {
    const other = await serve(scripted(ok()));
    const s = await serve(scripted(ok()));
    const { c } = client(s);
    const err = await c.request({ method: 'GET', path: `${other.origin}/api/v2/contacts` }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect(other.requests).toHaveLength(0);
    expect(s.requests).toHaveLength(0);
  });

  it('accepts an absolute URL on its own origin', async () => {
    const s = await serve(scripted(ok()));
    const { c } = client(s);
    await c.request({ method: 'GET', path: `${s.origin}/api/v2/contacts/con_1` });
    expect(s.requests[0]!.url).toBe('/api/v2/contacts/con_1');
  });

  it('refuses plain http to a non-loopback host', () => {
    expect(() =>
      createClient({ baseUrl: 'http://crm.example.com/api/v2', apiKey: KEY, authHeader: 'x-api-key' }),
    ).toThrow(UsageError);
  });
});

describe('--verbose lines', () => {
  it('one line per attempt: method, URL, status, ms, retry; never the key', async () => {
    const s = await serve((req, res, i) => {
      // a server that echoes the key back must not leak it either
      if (i === 0) return sendJson(res, 503, errorBody('X', `bad key ${String(req.headers['x-service-api-key'])}`));
      sendJson(res, 200, success({ key: req.headers['x-service-api-key'] }));
    });
    const { c, lines } = client(s);
    await c.request({ method: 'GET', path: `/contacts?q=${KEY}` });
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^GET http:\/\/127\.0\.0\.1:\d+\/api\/v2\/contacts\?q=service_live_…f3a9 503 \d+ ms$/);
    expect(lines[1]).toMatch(/ 200 \d+ ms \(retry 1\)$/);
    for (const line of lines) expect(line).not.toContain(KEY);
  });

  it('error messages quoting a body never contain the key', async () => {
    const s = await serve((req, res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end(`<p>${String(req.headers['x-service-api-key'])}</p>`);
    });
    const { c } = client(s, { maxRetries: 0 });
    const err = (await c.request({ method: 'GET', path: '/x' }).catch((e: unknown) => e)) as Error;
    expect(err.message).toContain('service_live_…f3a9');
    expect(err.message).not.toContain(KEY);
  });
});

describe('a DELETE whose lost answer had deleted the record', () => {
  it('a 404 on the retry is success (goneOnRetry)', async () => {
    const s = await serve(scripted(fail(500), fail(404, 'NOT_FOUND')));
    const { c } = client(s);
    const res = await c.request({ method: 'DELETE', path: '/contacts/con_1' });
    expect(res.goneOnRetry).toBe(true);
    expect(res.retries).toBe(1);
  });

  it('a 404 on the first attempt is still not found', async () => {
    const s = await serve(scripted(fail(404, 'NOT_FOUND')));
    const { c } = client(s);
    await expect(c.request({ method: 'DELETE', path: '/contacts/con_1' })).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe('abort', () => {
  it('stops waiting for a retry when the signal aborts', async () => {
    const s = await serve(scripted(fail(503)));
    const ac = new AbortController();
    const clock = new FakeClock();
    clock.sleep = async (_ms, signal) => {
      ac.abort();
      signal?.throwIfAborted();
    };
    const { c } = client(s, { clock, signal: ac.signal });
    const err = await c.request({ method: 'GET', path: '/x' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InterruptedError);
    expect(s.requests).toHaveLength(1);
  });

  it('finishInDoubt: a sent write finishes its retries after Ctrl-C, so its answer is learned', async () => {
    const s = await serve(scripted(fail(500), ok()));
    const ac = new AbortController();
    const clock = new FakeClock();
    clock.sleep = async (_ms, signal) => {
      ac.abort();
      signal?.throwIfAborted();
    };
    const { c } = client(s, { clock, signal: ac.signal });
    const res = await c.request({
      method: 'POST',
      path: '/x/batch',
      body: [],
      idempotencyKey: 'k1',
      finishInDoubt: true,
    });
    expect(res.status).toBe(200);
    expect(s.requests).toHaveLength(2);
    // without it, the same abort stops the retry
    const s2 = await serve(scripted(fail(500), ok()));
    const ac2 = new AbortController();
    const clock2 = new FakeClock();
    clock2.sleep = async (_ms, signal) => {
      ac2.abort();
      signal?.throwIfAborted();
    };
    const { c: c2 } = client(s2, { clock: clock2, signal: ac2.signal });
    await expect(
      c2.request({ method: 'POST', path: '/x/batch', body: [], idempotencyKey: 'k1' }),
    ).rejects.toBeInstanceOf(InterruptedError);
  });

  it('sends nothing once aborted', async () => {
    const s = await serve(scripted(ok()));
    const ac = new AbortController();
    ac.abort();
    const { c } = client(s, { signal: ac.signal });
    await expect(c.request({ method: 'GET', path: '/x' })).rejects.toBeInstanceOf(InterruptedError);
    expect(s.requests).toHaveLength(0);
  });

  it('opts.signal cancels a request in flight', async () => {
    const s = await serve(() => {
      /* never answers */
    });
    const { c } = client(s);
    const ac = new AbortController();
    const p = c.request({ method: 'GET', path: '/x', signal: ac.signal });
    setTimeout(() => ac.abort(), 50);
    await expect(p).rejects.toBeInstanceOf(InterruptedError);
  });
});

describe('pacing', () => {
  it('feeds the pacer: a 429 holds back the next request too', async () => {
    const s = await serve(scripted(fail(429, 'RATE_LIMITED', { 'retry-after': '2' }), ok()));
    const { c } = client(s);
    await c.request({ method: 'GET', path: '/x' });
    expect(c.pacer.stats.rateLimited).toBe(1);
  });

  it('waits for the window reset the server announces', async () => {
    const s = await serve((_req, res) =>
      sendJson(res, 200, success({}), {
        'x-ratelimit-limit': '10',
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset': '2.5',
      }),
    );
    const { c, clock } = client(s);
    await c.request({ method: 'GET', path: '/x' });
    const before = clock.now();
    await c.request({ method: 'GET', path: '/x' });
    expect(clock.now() - before).toBeGreaterThanOrEqual(2500);
  });
});

describe('edges', () => {
  it('does not wait out a Retry-After beyond 5 minutes', async () => {
    const s = await serve(scripted(fail(429, 'RATE_LIMITED', { 'retry-after': '3600' })));
    const { c, clock } = client(s);
    const err = (await c.request({ method: 'GET', path: '/x' }).catch((e: unknown) => e)) as RateLimitError;
    expect(err).toBeInstanceOf(RateLimitError);
    expect(err.hint).toMatch(/in 60 min \(at .*Z\)/);
    expect(clock.sleeps).toEqual([]);
    expect(s.requests).toHaveLength(1);
  });

  it('says why a bare POST on 500 was not retried', async () => {
    const s = await serve(scripted(fail(500)));
    const { c } = client(s);
    const err = (await c.request({ method: 'POST', path: '/x', body: {} }).catch((e: unknown) => e)) as ServerError;
    expect(err.hint).toMatch(/Idempotency-Key/);
  });

  it('a body that cannot be JSON is a usage error, nothing sent', async () => {
    const s = await serve(scripted(ok()));
    const { c } = client(s);
    const body: Record<string, unknown> = {};
    body.self = body;
    await expect(c.request({ method: 'POST', path: '/x', body })).rejects.toBeInstanceOf(UsageError);
    expect(s.requests).toHaveLength(0);
  });

  it('a 200 error envelope is still an error', async () => {
    const s = await serve((_req, res) => sendJson(res, 200, errorBody('WEIRD', 'odd')));
    const { c } = client(s);
    await expect(c.request({ method: 'GET', path: '/x' })).rejects.toBeInstanceOf(ServerError);
  });

  it('ignores the stale rate-limit headers of an idempotent replay', async () => {
    const s = await serve((_req, res) =>
      sendJson(res, 201, success({}), {
        'idempotent-replayed': 'true',
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset': '30',
      }),
    );
    const { c, clock } = client(s);
    await c.request({ method: 'POST', path: '/x', body: {}, idempotencyKey: 'k1' });
    await c.request({ method: 'POST', path: '/x', body: {}, idempotencyKey: 'k1' });
    expect(clock.sleeps).toEqual([]);
    expect(c.pacer.snapshot().remaining).toBeUndefined();
  });
});
