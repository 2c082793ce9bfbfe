// The recovery policy of one transcript: fresh links on 404 (3 at most), Retry-After on 429,
// backoff on transient failures, each bounded; with a fake clock, so no test waits for real.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../helpers/clock.js';
import {
  MAX_LINK_REFRESHES,
  getTranscript,
  noTranscriptReason,
  recordingPath,
  type TranscriptSourceDeps,
} from '../../../src/commands/recordings/transcript-source.js';
import { NotFoundError, RateLimitError, ServerError, UsageError } from '../../../src/http/errors.js';
import { Pacer } from '../../../src/http/pacer.js';
import type { ApiResponse, HttpClient, RequestOptions } from '../../../src/http/types.js';
import { withLinks } from '../../helpers/link-client.js';

let server: http.Server;
let origin: string;
/** answers of the transcript server, in order; the last one repeats */
let answers: Array<{ status: number; body?: string; headers?: Record<string, string> }> = [];
let served = 0;
/** the paths the transcript server was asked for, in order */
let paths: string[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    paths.push(req.url ?? '');
    const a = answers[Math.min(served, answers.length - 1)]!;
    served += 1;
    res.writeHead(a.status, { 'content-type': 'application/json', ...a.headers });
    res.end(a.body ?? '{}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

let gets = 0;
/** called on each `GET /recordings/{id}` of the fake client */
let onGet: () => void = () => {};
let clock: FakeClock;

beforeEach(() => {
  served = 0;
  paths = [];
  gets = 0;
  onGet = () => {};
  clock = new FakeClock();
});

function client(
  recording: Record<string, unknown> = { id: 'rec_1', has_transcript: true },
  limits: { maxRetries?: number; rateLimitBudgetMs?: number } = { maxRetries: 3 },
): HttpClient {
  return withLinks(
    {
      baseUrl: 'http://127.0.0.1:1/api/v2',
      stats: { requests: 0, retries: 0 },
      async request<T>(_opts: RequestOptions): Promise<ApiResponse<T>> {
        gets += 1;
        onGet();
        const data = { ...recording, transcript_url: recording.has_transcript ? `${origin}/t/${gets}` : null };
        return { status: 200, headers: {}, body: { data } as T, retries: 0 };
      },
      async *paginate() {},
      async *pages() {},
    },
    clock,
    limits,
  );
}

const deps = (c: HttpClient, extra: Partial<TranscriptSourceDeps> = {}): TranscriptSourceDeps => ({
  client: c,
  clock,
  ...extra,
});

const OK = { status: 200, body: JSON.stringify({ recording_id: 'rec_1', segments: [] }) };
const EXPIRED = { status: 404, body: '{"object":"error"}' };

describe('getTranscript', () => {
  it('gets a fresh link after a 404 and succeeds', async () => {
    answers = [EXPIRED, EXPIRED, OK];
    const out = await getTranscript('rec_1', deps(client()));
    expect(out).toMatchObject({ kind: 'ok', linkRefreshes: 2, body: { recording_id: 'rec_1' } });
    expect(gets).toBe(3);
    expect(served).toBe(3);
  });

  it(`stops after ${MAX_LINK_REFRESHES} fresh links`, async () => {
    answers = [EXPIRED];
    const err = await getTranscript('rec_1', deps(client())).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect(served).toBe(MAX_LINK_REFRESHES + 1);
    expect(gets).toBe(MAX_LINK_REFRESHES + 1);
  });

  it('waits Retry-After on 429, then gets a fresh link (the old one may have expired meanwhile)', async () => {
    answers = [{ status: 429, headers: { 'retry-after': '1.5' } }, OK];
    const out = await getTranscript('rec_1', deps(client()));
    expect(out).toMatchObject({ kind: 'ok', retries: 1, linkRefreshes: 0 });
    expect(clock.sleeps).toEqual([1500]);
    expect(gets).toBe(2);
    expect(paths).toEqual(['/t/1', '/t/2']);
  });

  it('gets a fresh link after a back-off too', async () => {
    answers = [{ status: 503 }, OK];
    await getTranscript('rec_1', deps(client()));
    expect(paths).toEqual(['/t/1', '/t/2']);
  });

  it('takes the download slot before it gets the recording, so the link is fresh when sent', async () => {
    answers = [OK];
    const pacer = new Pacer(clock);
    pacer.block(2_000); // e.g. a 429 of another download said: 2 s
    const blockedUntil = clock.now() + 2_000;
    const seen: Array<{ at: number; inFlight: number }> = [];
    onGet = () => seen.push({ at: clock.now(), inFlight: pacer.snapshot().inFlight });
    const out = await getTranscript('rec_1', deps(client(), { pacer }));
    expect(out.kind).toBe('ok');
    // the GET came after the wait, with the slot already held
    expect(seen).toEqual([{ at: blockedUntil, inFlight: 1 }]);
    expect(pacer.snapshot().inFlight).toBe(0);
  });

  it('hands the slot back when getting the recording fails, or it has no transcript', async () => {
    const pacer = new Pacer(clock);
    const failing: HttpClient = {
      ...client(),
      async request() {
        throw new ServerError('boom', { status: 500 });
      },
    };
    await expect(getTranscript('rec_1', deps(failing, { pacer }))).rejects.toBeInstanceOf(ServerError);
    expect(pacer.snapshot().inFlight).toBe(0);
    await getTranscript('rec_1', deps(client({ id: 'rec_1', has_transcript: false }), { pacer }));
    expect(pacer.snapshot().inFlight).toBe(0);
    expect(served).toBe(0);
  });

  it('waits out 429s with Retry-After past maxRetries until the total wait budget is spent (exit 7)', async () => {
    answers = [{ status: 429, headers: { 'retry-after': '2' } }];
    const c = client(undefined, { maxRetries: 2, rateLimitBudgetMs: 7_000 });
    const err = await getTranscript('rec_1', deps(c)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitError);
    expect((err as RateLimitError).exitCode).toBe(7);
    expect((err as Error).message).toMatch(/gave up after 3 retries: the rate-limit budget is spent/);
    expect((err as RateLimitError).hint).toMatch(
      /after 3 waits for Retry-After \(6 s\), the server asks to wait 2 s \(Retry-After\) and only 1 s is left of the rate-limit budget for one request \(7 s in all/,
    );
    expect(clock.sleeps).toEqual([2000, 2000, 2000]);
  });

  it('gives up after maxRetries 429s without Retry-After (exit 7)', async () => {
    answers = [{ status: 429 }];
    const err = await getTranscript('rec_1', deps(client(undefined, { maxRetries: 2 }))).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitError);
    expect(clock.sleeps).toHaveLength(2); // backed off, as the API client does
  });

  it('does not wait out a Retry-After longer than the client would (5 minutes)', async () => {
    answers = [{ status: 429, headers: { 'retry-after': '3600' } }];
    const err = await getTranscript('rec_1', deps(client())).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitError);
    expect((err as RateLimitError).hint).toMatch(/in 60 min \(at .*Z\)/);
    expect(clock.sleeps).toEqual([]);
  });

  it('backs off on 5xx and truncated bodies, then succeeds', async () => {
    answers = [{ status: 503 }, { status: 200, body: '{"recording_id":' }, OK];
    const out = await getTranscript('rec_1', deps(client()));
    expect(out.kind).toBe('ok');
    expect(clock.sleeps).toHaveLength(2);
    for (const ms of clock.sleeps) expect(ms).toBeLessThan(30_000);
  });

  it('backs off with a clock whose methods use `this` (a class, not a bag of closures)', async () => {
    // FakeClock is a class: its methods use `this`
    const classClock = new FakeClock();
    answers = [{ status: 503 }, OK];
    const out = await getTranscript('rec_1', deps(withLinks(client(), classClock), { clock: classClock }));
    expect(out.kind).toBe('ok');
    expect(classClock.sleeps).toHaveLength(1);
  });

  it('gives up after maxRetries transient failures (exit 8)', async () => {
    answers = [{ status: 500 }];
    const err = await getTranscript('rec_1', deps(client(undefined, { maxRetries: 2 }))).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServerError);
    expect(served).toBe(3);
  });

  it('does not retry a 403', async () => {
    answers = [{ status: 403, body: '{"object":"error","error":{"code":"FORBIDDEN","message":"no","details":[]}}' }];
    const err = await getTranscript('rec_1', deps(client())).catch((e: unknown) => e);
    expect((err as { exitCode: number }).exitCode).toBe(4);
    expect(served).toBe(1);
  });

  it('reports a recording without a transcript, with the reason', async () => {
    const out = await getTranscript(
      'rec_1',
      deps(client({ id: 'rec_1', has_transcript: false, transcript_status: 'processing' })),
    );
    expect(out).toMatchObject({ kind: 'none', reason: 'it is still being transcribed, try again later' });
    expect(served).toBe(0);
  });

  it('stops waiting when the signal aborts', async () => {
    answers = [{ status: 429, headers: { 'retry-after': '30' } }];
    const ac = new AbortController();
    ac.abort();
    const err = await getTranscript('rec_1', deps(client(), { signal: ac.signal })).catch((e: unknown) => e);
    expect((err as { exitCode: number }).exitCode).toBe(130);
  });
});

describe('noTranscriptReason', () => {
  it('tells processing from no audio', () => {
    expect(noTranscriptReason({ transcript_status: 'processing' })).toMatch(/still being transcribed, try again later/);
    expect(noTranscriptReason({ transcript_status: 'no_audio' })).toMatch(/produced no audio/);
    expect(noTranscriptReason({})).toMatch(/produced no audio/);
  });
});

describe('recordingPath', () => {
  it('encodes the id as one segment and refuses . and ..', () => {
    expect(recordingPath('rec_1')).toBe('/recordings/rec_1');
    expect(recordingPath('../../contacts?x=1#y')).toBe('/recordings/..%2F..%2Fcontacts%3Fx%3D1%23y');
    for (const id of ['.', '..', '']) expect(() => recordingPath(id)).toThrow(UsageError);
  });
});
