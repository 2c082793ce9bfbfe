import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createClient } from '../../../src/http/client.js';
import { ForbiddenError, ServerError } from '../../../src/http/errors.js';
import { parseDocument } from '../../../src/http/link.js';
import type { LinkOptions } from '../../../src/http/types.js';
import { Pacer, type PacerTicket } from '../../../src/http/pacer.js';
import { systemClock } from '../../../src/http/clock.js';
import { shouldRetry } from '../../../src/http/retry.js';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

let server: http.Server;
let origin: string;
let seen: Seen[] = [];
let handler: Handler = (_req, res) => res.end('{}');

beforeAll(async () => {
  server = http.createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  seen = [];
});

const TRANSCRIPT = {
  recording_id: 'rec_1',
  language: 'en',
  segments: [{ speaker: 'A', start_ms: 0, end_ms: 10, text: 'hi' }],
};

function json(status: number, body: unknown, headers: Record<string, string> = {}): Handler {
  return (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  };
}

const KEY = 'service_live_0123456789abcdef';
type Opts = Partial<LinkOptions> & { timeoutMs?: number };

/**
 * client.getLink on a client whose API is this very server: a link on the API's own origin gets
 * no key either. The old outcome kinds, from the answer and the retry rules of the client.
 */
async function fetchTranscript(url: string, o: Opts = {}) {
  const { timeoutMs = 5_000, ...link } = o;
  const client = createClient({
    baseUrl: `${origin}/api/v2`,
    apiKey: KEY,
    authHeader: 'x-api-key',
    clock: systemClock,
    timeoutMs,
  });
  const got = await client.getLink(url, { what: 'transcript', ...link });
  if (got.ok)
    return 'body' in got.value
      ? { kind: 'ok' as const, body: got.value.body }
      : { kind: 'expired' as const, status: got.value.gone };
  const f = got.failure;
  const retryable = shouldRetry({
    method: 'GET',
    status: f.status,
    errorCode: f.errorCode,
    hasIdempotencyKey: false,
    attempt: 0,
    maxRetries: 1,
  });
  if (f.status === 429) return { kind: 'rateLimited' as const, retryAfter: f.retryAfter, retryable };
  return { kind: 'failed' as const, error: f.error, retryable };
}
const opts = (extra: Opts = {}): Opts => extra;

describe('client.getLink (transcript downloads)', () => {
  it('returns the parsed transcript and sends no credential of any kind', async () => {
    handler = json(200, TRANSCRIPT, {
      'x-ratelimit-limit': '20',
      'x-ratelimit-remaining': '19',
      'x-ratelimit-reset': '0.5',
    });
    const out = await fetchTranscript(`${origin}/transcripts/download/tok_abc`, opts());
    expect(out.kind).toBe('ok');
    if (out.kind !== 'ok') return;
    expect(out.body).toEqual(TRANSCRIPT);
    expect(seen).toHaveLength(1);
    const h = seen[0]!.headers;
    expect(h['x-service-api-key']).toBeUndefined();
    expect(h.authorization).toBeUndefined();
    expect(h.cookie).toBeUndefined();
    expect(h['proxy-authorization']).toBeUndefined();
    expect(h.accept).toBe('application/json');
    expect(h['user-agent']).toMatch(/^crm-cli\//);
    // nothing beyond what HTTP itself needs
    expect(Object.keys(h).sort()).toEqual(expect.arrayContaining(['accept', 'host', 'user-agent']));
    for (const name of Object.keys(h)) expect(['accept', 'host', 'user-agent', 'connection']).toContain(name);
  });

  it('uses the URL exactly as given, query and encoding included', async () => {
    handler = json(200, TRANSCRIPT);
    const path = '/transcripts/download/a%2Fb%3D%3D?sig=x%20y&v=1';
    await fetchTranscript(`${origin}${path}`, opts());
    expect(seen[0]!.url).toBe(path);
    expect(seen[0]!.method).toBe('GET');
  });

  it('accepts a JSON array', async () => {
    handler = json(200, [1, 2, 3]);
    const out = await fetchTranscript(`${origin}/t`, opts());
    expect(out).toMatchObject({ kind: 'ok', body: [1, 2, 3] });
  });

  it('reads 404 as an expired link', async () => {
    handler = json(404, { object: 'error', error: { code: 'LINK_EXPIRED', message: 'expired', details: [] } });
    expect(await fetchTranscript(`${origin}/t`, opts())).toEqual({ kind: 'expired', status: 404 });
  });

  it('reads 429 as rate limited with Retry-After (decimals) and blocks the pacer', async () => {
    handler = json(
      429,
      { object: 'error' },
      { 'retry-after': '0.25', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '0.25' },
    );
    const pacer = new Pacer(systemClock);
    const before = Date.now();
    const out = await fetchTranscript(`${origin}/t`, opts({ pacer }));
    expect(out).toMatchObject({ kind: 'rateLimited', retryAfter: '0.25', retryable: true });
    expect(pacer.snapshot()).toMatchObject({ remaining: 0, inFlight: 0 });
    // the retry layer blocks the pacer for the wait (client.retry, test/unit/recordings/transcript-source.test.ts)
    expect(before).toBeLessThanOrEqual(Date.now());
  });

  it('feeds the pacer the rate-limit headers of each answer', async () => {
    handler = json(200, TRANSCRIPT, {
      'x-ratelimit-limit': '20',
      'x-ratelimit-remaining': '7',
      'x-ratelimit-reset': '0.9',
    });
    const pacer = new Pacer(systemClock);
    await fetchTranscript(`${origin}/t`, opts({ pacer }));
    expect(pacer.snapshot()).toMatchObject({ limit: 20, remaining: 7, inFlight: 0 });
    expect(pacer.stats.admitted).toBe(1);
  });

  it('fails, retryably, on a truncated JSON body', async () => {
    const full = JSON.stringify(TRANSCRIPT);
    handler = json(200, full.slice(0, Math.floor(full.length / 2)));
    const out = await fetchTranscript(`${origin}/t`, opts());
    expect(out.kind).toBe('failed');
    if (out.kind !== 'failed') return;
    expect(out.retryable).toBe(true);
    expect(out.error).toBeInstanceOf(ServerError);
    expect(out.error.message).toMatch(/not valid JSON/);
  });

  it('fails, retryably, when the connection drops mid-body', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"recording_id":"rec_1","segments":[');
      setTimeout(() => res.destroy(), 20);
    };
    const out = await fetchTranscript(`${origin}/t`, opts());
    expect(out).toMatchObject({ kind: 'failed', retryable: true });
  });

  it.each(['42', '"text"', 'null', 'true', '<html>502</html>', ''])('refuses the body %j', async (body) => {
    handler = json(200, body);
    const out = await fetchTranscript(`${origin}/t`, opts());
    expect(out.kind).toBe('failed');
  });

  it('does not follow redirects', async () => {
    handler = (req, res) => {
      if (req.url === '/t') {
        res.writeHead(302, { location: `${origin}/elsewhere` });
        res.end();
      } else json(200, TRANSCRIPT)(req, res);
    };
    const out = await fetchTranscript(`${origin}/t`, opts());
    expect(out).toMatchObject({ kind: 'failed', retryable: false });
    expect(seen.map((s) => s.url)).toEqual(['/t']);
  });

  it('fails retryably on 5xx and for good on other 4xx', async () => {
    handler = json(503, { object: 'error', error: { code: 'X', message: 'busy', details: [] } });
    expect(await fetchTranscript(`${origin}/t`, opts())).toMatchObject({ kind: 'failed', retryable: true });
    handler = json(403, { object: 'error', error: { code: 'FORBIDDEN', message: 'no', details: [] } });
    const out = await fetchTranscript(`${origin}/t`, opts());
    expect(out).toMatchObject({ kind: 'failed', retryable: false });
    if (out.kind === 'failed') expect(out.error).toBeInstanceOf(ForbiddenError);
  });

  it('times out', async () => {
    handler = () => {}; // never answers
    const out = await fetchTranscript(`${origin}/t`, opts({ timeoutMs: 150 }));
    expect(out).toMatchObject({ kind: 'failed', retryable: true });
    if (out.kind === 'failed') expect(out.error.message).toMatch(/no complete answer within 0.15 s \(timeout/);
  });

  it('stops when the signal aborts', async () => {
    const ac = new AbortController();
    handler = () => ac.abort(); // once the request is in: it never gets an answer
    const out = await fetchTranscript(`${origin}/t`, opts({ signal: ac.signal })).catch((e: unknown) => e);
    expect((out as { exitCode: number }).exitCode).toBe(130);
  });

  it('stop ends the wait for the pacer, and nothing is sent', async () => {
    const pacer = new Pacer(systemClock);
    pacer.block(60_000); // a 429 said: a minute
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 30);
    // a path of its own: an earlier test's request may reach the server late, on a loaded machine
    const out = await fetchTranscript(`${origin}/t-never-sent`, opts({ pacer, stop: ac.signal })).catch(
      (e: unknown) => e,
    );
    expect((out as { exitCode: number }).exitCode).toBe(130);
    expect(seen.filter((s) => s.url === '/t-never-sent')).toEqual([]);
  });

  it('with a ticket the caller took, sends at once (no second slot) and hands the ticket back', async () => {
    handler = json(200, TRANSCRIPT, {
      'x-ratelimit-limit': '20',
      'x-ratelimit-remaining': '19',
      'x-ratelimit-reset': '0.5',
    });
    const pacer = new Pacer(systemClock);
    const ticket: PacerTicket = await pacer.acquire();
    pacer.block(60_000); // a wait here would hang the test
    const out = await fetchTranscript(`${origin}/t`, opts({ pacer, ticket }));
    expect(out.kind).toBe('ok');
    expect(pacer.stats.admitted).toBe(1);
    expect(pacer.snapshot()).toMatchObject({ inFlight: 0, remaining: 19 });
  });

  it('hands a ticket back when it refuses the link', async () => {
    const pacer = new Pacer(systemClock);
    const ticket = await pacer.acquire();
    const out = await fetchTranscript('http://example.com/t', opts({ pacer, ticket }));
    expect(out).toMatchObject({ kind: 'failed', retryable: false });
    expect(pacer.snapshot().inFlight).toBe(0);
    expect(seen).toHaveLength(0);
  });

  it('refuses links it must not fetch, without sending anything', async () => {
    for (const url of [
      'http://example.com/t',
      'ftp://127.0.0.1/t',
      `http://user:pw@127.0.0.1/t`,
      'not a url',
      '/relative/t',
    ]) {
      const out = await fetchTranscript(url, opts());
      expect(out).toMatchObject({ kind: 'failed', retryable: false });
    }
    expect(seen).toHaveLength(0);
  });
});

describe('link refusals', () => {
  it('allows https anywhere and http on loopback only', async () => {
    handler = json(200, TRANSCRIPT);
    for (const url of [`${origin}/t`, `${origin.replace('127.0.0.1', 'localhost')}/t`]) {
      expect(await fetchTranscript(url)).toMatchObject({ kind: 'ok' });
    }
    for (const url of ['http://files.example.com/t', 'http://127.example.com/t', 'http://app.localhost/t']) {
      const out = await fetchTranscript(url);
      expect(out).toMatchObject({ kind: 'failed', retryable: false });
      if (out.kind === 'failed') expect(out.error.message).toMatch(/not https/);
    }
  });
});

describe('parseDocument', () => {
  it('accepts objects and arrays only', () => {
    expect(parseDocument('{"a":1}', 'transcript')).toEqual({ a: 1 });
    expect(parseDocument('[]', 'transcript')).toEqual([]);
    expect(parseDocument('\ufeff{"a":1}', 'transcript')).toEqual({ a: 1 });
    expect(parseDocument('{"a":', 'transcript')).toMatch(/the transcript is not valid JSON \(truncated\?\)/);
    expect(typeof parseDocument('1', 'transcript')).toBe('string');
  });
});
