// The least pacing a client can do, for the benchmarks' bare undici loops (bench/reconcile-floor.mjs,
// bench/snapshot-floor.mjs): one undici Pool, and a gate that reads X-RateLimit-Remaining and -Reset
// from each answer and, when the window's requests are spent (those in flight counted), waits for
// the reset; a 429 waits for its Retry-After and is sent again. Nothing else.
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';

/** A paced JSON client of the API at `base` with `key`: `send(method, path, body)` resolves with the parsed answer. */
export function pacedClient(base, key) {
  const url = new URL(base);
  const prefix = url.pathname.replace(/\/$/, '');
  const pool = new Pool(url.origin, { keepAliveTimeout: 4_000 });
  const headers = { 'x-service-api-key': key, accept: 'application/json', 'content-type': 'application/json' };
  const counts = { requests: 0, rate_limited: 0 };
  let [remaining, resetAt, limit, inFlight] = [Infinity, 0, Infinity, 0];

  /** Waits while the window's requests are spent (those in flight counted), then counts this one in. */
  async function gate() {
    while (remaining - inFlight <= 0) {
      const wait = resetAt - Date.now();
      if (wait > 0) await sleep(wait);
      else remaining = limit; // a fresh window
    }
    inFlight++;
  }

  async function send(method, path, body) {
    for (;;) {
      await gate();
      counts.requests++;
      const res = await pool.request({ path: `${prefix}${path}`, method, headers, body: body && JSON.stringify(body) });
      const text = await res.body.text();
      inFlight--;
      const h = res.headers;
      if (h['x-ratelimit-limit'] !== undefined) limit = Number(h['x-ratelimit-limit']);
      if (h['x-ratelimit-remaining'] !== undefined) remaining = Number(h['x-ratelimit-remaining']);
      if (h['x-ratelimit-reset'] !== undefined) resetAt = Date.now() + Number(h['x-ratelimit-reset']) * 1000;
      if (res.statusCode === 429) {
        counts.rate_limited++;
        remaining = 0;
        resetAt = Date.now() + Number(h['retry-after'] ?? 1) * 1000;
        continue;
      }
      if (res.statusCode >= 300) throw new Error(`${method} ${path}: HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
      return JSON.parse(text);
    }
  }

  return { send, counts, close: () => pool.close() };
}
