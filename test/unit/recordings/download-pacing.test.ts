// Efficiency of `crm recordings download` at a low download limit, on a fake clock: a transcript
// server with the sandbox's fixed window (a window opens at the first request after the last one
// ended) and a few milliseconds of latency per request, both on the fake clock. 14 downloads at
// 2 per second need 6 s at least (the 7th window opens 6 s after the first); the reviewer measured
// 13.6 s. The cause: the pacer spread the window's last unit to just before the reset, and the
// download (sent after the slot's `GET /recordings/{id}`) landed in the next window, wasting a
// unit of each: one download per second.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../helpers/clock.js';
import type { ApiRecord } from '../../../src/api/envelopes.js';
import { downloadAll } from '../../../src/commands/recordings/download-engine.js';
import { downloadPacer } from '../../../src/commands/recordings/transcript-source.js';
import { Pacer, paceDelay } from '../../../src/http/pacer.js';
import type { ApiResponse, RequestOptions } from '../../../src/http/types.js';
import { withLinks } from '../../helpers/link-client.js';

const LIMIT = 2;
const WINDOW_MS = 1_000;
/** each way, for the API's GET and the download alike */
const LATENCY_MS = 3;

let clock: FakeClock;
let server: http.Server;
let origin: string;
let window: { start: number; used: number } | undefined;
const log: Array<{ at: number; status: number }> = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    clock.advance(LATENCY_MS); // the request on its way
    const now = clock.now();
    if (!window || now >= window.start + WINDOW_MS) window = { start: now, used: 0 };
    const resetS = String(Math.ceil(window.start + WINDOW_MS - now) / 1000);
    const headers = { 'content-type': 'application/json', 'x-ratelimit-limit': String(LIMIT), 'x-ratelimit-reset': resetS };
    const id = decodeURIComponent((req.url ?? '').replace(/^\/t\//, ''));
    if (window.used >= LIMIT) {
      log.push({ at: now, status: 429 });
      res.writeHead(429, { ...headers, 'x-ratelimit-remaining': '0', 'retry-after': resetS });
      res.end('{}');
    } else {
      window.used += 1;
      log.push({ at: now, status: 200 });
      res.writeHead(200, { ...headers, 'x-ratelimit-remaining': String(LIMIT - window.used) });
      res.end(JSON.stringify({ recording_id: id, segments: [] }));
    }
    clock.advance(LATENCY_MS); // the answer on its way
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

let dir: string;
beforeEach(() => {
  clock = new FakeClock();
  window = undefined;
  log.length = 0;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'crm-rec-pacing-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const records: ApiRecord[] = Array.from({ length: 14 }, (_, i) => ({ id: `rec_${i + 1}`, has_transcript: true }));

/** The API: each `GET /recordings/{id}` takes a round trip on the fake clock and gives a fresh link. */
const client = {
  baseUrl: 'http://127.0.0.1:1/api/v2',
  stats: { requests: 0, retries: 0 },
  async request<T>(opts: RequestOptions): Promise<ApiResponse<T>> {
    clock.advance(2 * LATENCY_MS);
    const id = decodeURIComponent(opts.path.replace(/^\/recordings\//, ''));
    const data = { id, has_transcript: true, transcript_url: `${origin}/t/${encodeURIComponent(id)}` };
    return { status: 200, headers: {}, body: { data } as T, retries: 0 };
  },
  async *paginate() {
    for (const r of records) yield { ...r, transcript_url: null };
  },
  async *pages() {},
};

async function run(pacer: Pacer, concurrency = 1) {
  const report = await downloadAll(
    { dir, concurrency, overwrite: false },
    { client: withLinks(client, clock), clock, signal: new AbortController().signal, pacer },
  );
  return { report, elapsed: report.summary.elapsed_ms, rateLimited: log.filter((e) => e.status === 429).length };
}

/** the least time the limit allows: the last window opens (ceil(N/L) - 1) windows after the first */
const LEAST_MS = (Math.ceil(records.length / LIMIT) - 1) * WINDOW_MS;

describe('download pacing at a low limit (14 at 2/s, --concurrency 1)', () => {
  it('uses both units of every window at once: efficiency ≥ 0.95, no 429', async () => {
    const { report, elapsed, rateLimited } = await run(downloadPacer(clock));
    expect(report.summary).toMatchObject({ downloaded: 14, failed: 0 });
    expect(rateLimited).toBe(0);
    expect(LEAST_MS / elapsed).toBeGreaterThanOrEqual(0.95);
    // two downloads at the start of each window, one window after the other
    const ok = log.filter((e) => e.status === 200).map((e) => e.at);
    for (let i = 1; i < ok.length; i += 2) expect(ok[i]! - ok[i - 1]!).toBeLessThan(50);
    for (let i = 2; i < ok.length; i += 2) expect(ok[i]! - ok[i - 2]!).toBeLessThan(WINDOW_MS + 50);
  });

  it('(the cause) spreading to the reset, as the API pacer does, lands each window’s last unit in the next: half the rate', async () => {
    const { report, elapsed } = await run(new Pacer(clock));
    expect(report.summary.downloaded).toBe(14);
    expect(LEAST_MS / elapsed).toBeLessThan(0.6);
  });
});

describe("paceDelay with spread: 'none'", () => {
  it('sends whatever budget is left at once, and waits for the reset when none is', () => {
    const base = { now: 1000, blockedUntil: 0, limit: 2, resetAt: 1900, lastSendAt: 990, pending: 0 };
    expect(paceDelay({ ...base, remaining: 1, spread: 'none' })).toBe(0);
    expect(paceDelay({ ...base, remaining: 1 })).toBeGreaterThan(800); // to-reset: the edge
    expect(paceDelay({ ...base, remaining: 1, pending: 1, spread: 'none' })).toBe(900 + 5);
    expect(paceDelay({ ...base, remaining: 2, blockedUntil: 1300, spread: 'none' })).toBe(300);
  });
});

describe('the download pacer probes the window first', () => {
  it('lets one download go alone until an answer tells the budget, then the rest', async () => {
    const c = new FakeClock();
    const pacer = downloadPacer(c);
    const first = await pacer.acquire();
    let second = false;
    const next = pacer.acquire().then(() => (second = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(second).toBe(false);
    pacer.done(first, { 'x-ratelimit-limit': '2', 'x-ratelimit-remaining': '1', 'x-ratelimit-reset': '1' });
    await next;
    expect(second).toBe(true);
  });

  it('stops probing after the first answer even without rate-limit headers', async () => {
    const pacer = downloadPacer(new FakeClock());
    pacer.done(await pacer.acquire());
    await pacer.acquire();
    await pacer.acquire(); // two in flight, nothing known: both go
    expect(pacer.snapshot().inFlight).toBe(2);
  });

  it('the API pacer does not probe', async () => {
    const pacer = new Pacer(new FakeClock());
    await pacer.acquire();
    await pacer.acquire();
    expect(pacer.snapshot().inFlight).toBe(2);
  });
});

describe('slots taken before the recording is got (sendLater)', () => {
  const headers = (remaining: number) => ({ 'x-ratelimit-limit': '2', 'x-ratelimit-remaining': String(remaining), 'x-ratelimit-reset': '1' });

  it('orders requests by when they are sent: an answer does not count a request sent after it', async () => {
    // A and B get the two units of a window (B after a wait for the reset); B's recording comes
    // first, so B is sent first, and its answer (remaining 1) must not be read as counting A.
    const pacer = downloadPacer(new FakeClock());
    pacer.done(await pacer.acquire(), headers(1)); // the probe
    const a = await pacer.acquire(undefined, { sendLater: true });
    expect(pacer.snapshot().inFlight).toBe(1);
    const b = pacer.sending(await pacer.acquire(undefined, { sendLater: true }));
    const aSent = pacer.sending(a);
    pacer.done(b, headers(1));
    expect(pacer.snapshot()).toMatchObject({ remaining: 1, inFlight: 1 }); // A still holds the last unit
    pacer.done(aSent, headers(0));
    expect(pacer.snapshot()).toMatchObject({ remaining: 0, inFlight: 0 });
  });

  it('an answer does not free slots admitted but not sent yet', async () => {
    const pacer = new Pacer(new FakeClock());
    const first = pacer.sending(await pacer.acquire(undefined, { sendLater: true }));
    await pacer.acquire(undefined, { sendLater: true }); // its recording is being got
    pacer.done(first, { 'x-ratelimit-limit': '5', 'x-ratelimit-remaining': '4', 'x-ratelimit-reset': '1' });
    expect(pacer.snapshot()).toMatchObject({ remaining: 4, inFlight: 1 });
  });

  it('a slot handed back unsent frees its unit', async () => {
    const pacer = new Pacer(new FakeClock());
    const t = await pacer.acquire(undefined, { sendLater: true });
    pacer.done(t);
    expect(pacer.snapshot().inFlight).toBe(0);
  });
});
