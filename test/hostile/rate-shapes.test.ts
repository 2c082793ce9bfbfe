// Rate limiters that are not the sandbox's (issue 20), each written here on its own (not
// src/sandbox/rate-limiter.ts), behind a server whose answers take their own time there and back:
// - a sliding log whose X-RateLimit-Reset is the seconds until its OLDEST counted request leaves
//   (rounded up, or with decimals), answers 0-40 ms each way so they come back in another order than
//   crm sent them (the proxy case of issue 20). The pacer once read every Reset as "the window whole
//   again" and sent a window's units into a window that had freed one; and an answer that came first
//   was taken to count every request sent before it (8 of 12 runs met a 429 before the fix).
// - a Reset of 0 with plenty remaining (a server that says so when nothing waits): every request was
//   the one that asks past a reset, so an import went one request at a time.
// Behaviour: no 429, every row once, and requests overlap.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { runCrm } from '../helpers/run-crm.js';
import { tempDir } from '../helpers/temp.js';
import { contact, json, listPage, meta, startHostile, type Hostile } from './server.js';

let h: Hostile;
beforeAll(async () => {
  h = await startHostile();
});
afterAll(async () => h?.close());
beforeEach(() => h.reset());

const LIMIT = 8;
const WINDOW_MS = 1_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Take = () => { ok: boolean; headers: Record<string, string> };

/** A sliding log of LIMIT per WINDOW_MS; Reset: until the oldest counted request leaves. */
function slidingOldest(format: 'seconds' | 'decimal'): Take {
  const log: number[] = [];
  return () => {
    const now = Date.now();
    while (log.length > 0 && log[0]! + WINDOW_MS <= now) log.shift();
    const ok = log.length < LIMIT;
    if (ok) log.push(now);
    const left = log.length === 0 ? 0 : (log[0]! + WINDOW_MS - now) / 1000;
    const reset = format === 'seconds' ? String(Math.ceil(left)) : left.toFixed(3);
    const headers = {
      'x-ratelimit-limit': String(LIMIT),
      'x-ratelimit-remaining': String(LIMIT - log.length),
      'x-ratelimit-reset': reset,
    };
    return { ok, headers: ok ? headers : { ...headers, 'retry-after': String(Math.max(1, Math.ceil(left))) } };
  };
}

/**
 * Serves the column check and batch creates through `take`, each request waiting `there` before it
 * is counted and `back` after; counts the rows created, the 429s and the most requests in flight at once.
 */
function serve(take: Take, there: () => number, back: () => number) {
  const created = new Map<string, number>();
  const replies = new Map<string, unknown>();
  const seen = { refused: 0, inFlight: 0, most: 0 };
  const limited = async (res: Parameters<Parameters<Hostile['route']>[2]>[1], answer: () => unknown) => {
    seen.most = Math.max(seen.most, ++seen.inFlight);
    await sleep(there());
    const { ok, headers } = take();
    await sleep(back());
    seen.inFlight--;
    if (!ok) seen.refused++;
    if (!ok) return json(res, 429, { error: { code: 'RATE_LIMITED', message: 'slow down' } }, headers);
    json(res, 200, answer(), headers);
  };
  h.route('GET', '/contacts', (_req, res) => limited(res, () => listPage([contact(1)], null, false)));
  h.route('POST', '/contacts/batch', (req, res) =>
    limited(res, () => {
      const key = String(req.headers['idempotency-key'] ?? '');
      if (!replies.has(key)) {
        const records = JSON.parse(req.body) as Array<Record<string, unknown>>;
        const items = records.map((r, index) => {
          const email = String(r.email);
          created.set(email, (created.get(email) ?? 0) + 1);
          return { index, status: 'created', data: { id: `con_${email}`, ...r } };
        });
        replies.set(key, {
          object: 'batch',
          data: { items, summary: { total: items.length, succeeded: items.length, failed: 0 } },
          meta: meta(),
        });
      }
      return replies.get(key);
    }),
  );
  return { created, seen };
}

async function importRows(name: string, rows: number) {
  const file = join(tempDir('crm-hostile-rate-'), 'rows.csv');
  writeFileSync(
    file,
    ['email,first_name', ...Array.from({ length: rows }, (_, i) => `${name}.${i}@rate.example,R${i}`)].join('\n') +
      '\n',
  );
  return runCrm(['-q', '-o', 'json', 'batch', 'contacts', file, '--chunk-size', '10', '--concurrency', '4'], {
    env: h.env(),
    timeoutMs: 60_000,
  });
}

it.each(['seconds', 'decimal'] as const)(
  'a sliding window whose Reset (%s) names its oldest request leaving, answers out of order: no 429, every row once',
  async (format) => {
    // each request reaches the limiter 0-40 ms after it came, and its answer leaves 0-40 ms later
    const jitter = () => Math.floor(Math.random() * 40);
    const { created, seen } = serve(slidingOldest(format), jitter, jitter);
    const rows = 300; // 30 chunks of 10 and the column check: 31 requests, 4 windows
    const r = await importRows(format, rows);
    expect(r.code, r.stderr).toBe(0);
    expect(seen.refused).toBe(0);
    expect(created.size).toBe(rows);
    expect([...created.values()].every((n) => n === 1)).toBe(true);
  },
  90_000,
);

it('a Reset of 0 with plenty remaining: requests overlap (--concurrency 4), not one at a time', async () => {
  let used = 0;
  const take: Take = () => ({
    ok: true,
    headers: { 'x-ratelimit-limit': '1000', 'x-ratelimit-remaining': String(1000 - ++used), 'x-ratelimit-reset': '0' },
  });
  const { created, seen } = serve(
    take,
    () => 25,
    () => 25,
  );
  const r = await importRows('reset0', 200);
  expect(r.code, r.stderr).toBe(0);
  expect(created.size).toBe(200);
  expect(seen.most).toBeGreaterThanOrEqual(2); // one at a time before
});
