// `crm recordings download` at a low download limit, on a fake clock: a transcript server with the
// sandbox's fixed window (a window opens at the first request after the last one ended), a few
// milliseconds of latency per request, and links that expire. 14 downloads at 2 per second need
// 6 s at least (the 7th window opens 6 s after the first). Checked: no 429, no expired link,
// throughput (a unit held to a window's edge lands in the next one: one download per second).
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../helpers/clock.js';
import type { ApiRecord } from '../../../src/api/envelopes.js';
import { downloadAll } from '../../../src/commands/recordings/download-engine.js';
import { Pacer } from '../../../src/http/pacer.js';
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
/** how long a link lives (the `GET /recordings/{id}` puts its issue time in it) */
let ttlMs = 300_000;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    clock.advance(LATENCY_MS); // the request on its way
    const now = clock.now();
    if (!window || now >= window.start + WINDOW_MS) window = { start: now, used: 0 };
    const resetS = String(Math.ceil(window.start + WINDOW_MS - now) / 1000);
    const headers = {
      'content-type': 'application/json',
      'x-ratelimit-limit': String(LIMIT),
      'x-ratelimit-reset': resetS,
    };
    const [, issued, rawId] = /^\/t\/(\d+)\/(.*)$/.exec(req.url ?? '')!;
    const id = decodeURIComponent(rawId!);
    if (now - Number(issued) > ttlMs) {
      log.push({ at: now, status: 404 });
      res.writeHead(404, headers);
      res.end('{}');
    } else if (window.used >= LIMIT) {
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
  ttlMs = 300_000;
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
    const data = { id, has_transcript: true, transcript_url: `${origin}/t/${clock.now()}/${encodeURIComponent(id)}` };
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
  const count = (status: number) => log.filter((e) => e.status === status).length;
  return { report, elapsed: report.summary.elapsed_ms, rateLimited: count(429), expired: count(404) };
}

/** the least time the limit allows: the last window opens (ceil(N/L) - 1) windows after the first */
const LEAST_MS = (Math.ceil(records.length / LIMIT) - 1) * WINDOW_MS;

describe('download pacing at a low limit (14 at 2/s)', () => {
  it('--concurrency 1 uses both units of every window: efficiency ≥ 0.95, no 429', async () => {
    const { report, elapsed, rateLimited } = await run(new Pacer(clock));
    expect(report.summary).toMatchObject({ downloaded: 14, failed: 0 });
    expect(rateLimited).toBe(0);
    expect(LEAST_MS / elapsed).toBeGreaterThanOrEqual(0.95);
    // two downloads at the start of each window, one window after the other
    const ok = log.filter((e) => e.status === 200).map((e) => e.at);
    for (let i = 1; i < ok.length; i += 2) expect(ok[i]! - ok[i - 1]!).toBeLessThan(50);
    for (let i = 2; i < ok.length; i += 2) expect(ok[i]! - ok[i - 2]!).toBeLessThan(WINDOW_MS + 50);
  });

  // (--concurrency 4 is measured by bench/transcripts.mjs: workers on one fake clock jump it for each other)
  it('links that live 300 ms never expire waiting a second for the next window', async () => {
    ttlMs = 300;
    const { report, rateLimited, expired } = await run(new Pacer(clock));
    expect(report.summary).toMatchObject({ downloaded: 14, failed: 0 });
    expect({ rateLimited, expired, linkRefreshes: report.linkRefreshes }).toEqual({
      rateLimited: 0,
      expired: 0,
      linkRefreshes: 0,
    });
  });
});
