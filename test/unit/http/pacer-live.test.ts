// The pacer through the real client and real time, against a fixed-window server on loopback,
// scaled down (30 per 500 ms) so the run takes under two seconds.
import { afterEach, describe, expect, it } from 'vitest';
import { createClient, type CrmHttpClient } from '../../../src/http/client.js';
import { Pacer } from '../../../src/http/pacer.js';
import { systemClock } from '../../../src/http/clock.js';
import { type TestServer, errorBody, sendJson, startServer, success } from './helpers.js';

let server: TestServer | undefined;
let client: CrmHttpClient | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
});

describe('pacer, live', () => {
  it('100 requests, 30 per 500 ms window, 4 workers: ≥ 90% of the best time, few 429s', async () => {
    const limit = 30;
    const windowMs = 500;
    const total = 100;
    const best = Math.floor((total - 1) / limit) * windowMs; // every window used in full at once
    /** One run against a fresh server and client: its time, and the 429s it met. */
    const measure = async (): Promise<{ elapsed: number; tooMany: number }> => {
      await client?.close();
      await server?.close();
      let windowStart: number | undefined;
      let used = 0;
      let tooMany = 0;
      server = await startServer((req, res) => {
        if (req.url.endsWith('/warm-up')) return sendJson(res, 200, success({})); // not counted
        const now = performance.now();
        windowStart ??= now;
        while (now >= windowStart + windowMs) {
          windowStart += windowMs;
          used = 0;
        }
        const reset = ((windowStart + windowMs - now) / 1000).toFixed(3);
        const headers = { 'x-ratelimit-limit': String(limit), 'x-ratelimit-reset': reset };
        if (used >= limit) {
          tooMany++;
          return sendJson(res, 429, errorBody('RATE_LIMITED', 'slow down'), {
            ...headers,
            'x-ratelimit-remaining': '0',
            'retry-after': reset,
          });
        }
        used++;
        sendJson(res, 200, success({}), { ...headers, 'x-ratelimit-remaining': String(limit - used) });
      });
      client = createClient({
        baseUrl: server.baseUrl,
        apiKey: 'service_live_0123456789abcdefghij',
        authHeader: 'x-api-key',
        pacer: new Pacer(systemClock),
      });
      // connection set-up and the first zod parse are not what is measured
      await Promise.all(Array.from({ length: 4 }, () => client!.request({ method: 'GET', path: '/warm-up' })));
      let next = 0;
      const started = performance.now();
      const worker = async () => {
        while (next < total) {
          next++;
          await client!.request({ method: 'GET', path: '/contacts' });
        }
      };
      await Promise.all(Array.from({ length: 4 }, worker));
      const elapsed = performance.now() - started;
      if (process.env.PACER_DEBUG) console.log({ elapsed, tooMany, sent: server.requests.length - 4 });
      expect(server.requests.length - tooMany - 4).toBe(total);
      return { elapsed, tooMany };
    };
    // real time on a shared machine: a burst of load elsewhere slows one run, not the pacer, so the best
    // of up to three runs is judged (a pacer that wastes time does so in every run)
    const ok = (r: { elapsed: number; tooMany: number }) => best / r.elapsed >= 0.9 && r.tooMany <= 3;
    const runs: Array<{ elapsed: number; tooMany: number }> = [];
    while (runs.length < 3 && !runs.some(ok)) runs.push(await measure());
    const judged = runs.find(ok) ?? runs.reduce((a, b) => (b.elapsed < a.elapsed ? b : a));
    expect(judged.tooMany).toBeLessThanOrEqual(3);
    expect(best / judged.elapsed).toBeGreaterThanOrEqual(0.9);
  });
});
