// Issue 20, "a sliding window at its ceiling", against a server that is not the sandbox: a sliding log
// written here on its own (not src/sandbox/rate-limiter.ts), whose X-RateLimit-Reset is the seconds
// until its OLDEST counted request leaves (rounded up, or with decimals), and answers that take a
// random time before and after the request is counted, so that they come back in another order than
// crm sent them (the proxy case of issue 20). The pacer once read every Reset as "the window whole again" and sent a window's
// units into a window that had freed one; and an answer that came first was taken to count every
// request sent before it (8 of 12 runs met a 429 before the fix). Behaviour: no 429, every row once.
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

/** A sliding log of LIMIT per WINDOW_MS; Reset: until the oldest counted request leaves. */
function slidingOldest(format: 'seconds' | 'decimal') {
  const log: number[] = [];
  let refused = 0;
  const take = (): { ok: boolean; headers: Record<string, string> } => {
    const now = Date.now();
    while (log.length > 0 && log[0]! + WINDOW_MS <= now) log.shift();
    const ok = log.length < LIMIT;
    if (ok) log.push(now);
    else refused++;
    const left = log.length === 0 ? 0 : (log[0]! + WINDOW_MS - now) / 1000;
    const reset = format === 'seconds' ? String(Math.ceil(left)) : left.toFixed(3);
    const headers = { 'x-ratelimit-limit': String(LIMIT), 'x-ratelimit-remaining': String(LIMIT - log.length), 'x-ratelimit-reset': reset };
    return { ok, headers: ok ? headers : { ...headers, 'retry-after': String(Math.max(1, Math.ceil(left))) } };
  };
  return { take, refused: () => refused };
}

it.each(['seconds', 'decimal'] as const)(
  'a sliding window whose Reset (%s) names its oldest request leaving, answers out of order: no 429, every row once',
  async (format) => {
    const limiter = slidingOldest(format);
    const created = new Map<string, number>();
    const seen = new Set<string>();
    const replies = new Map<string, unknown>();
    // each request reaches the limiter 0-40 ms after it came, and its answer leaves 0-40 ms later
    const jitter = () => sleep(Math.floor(Math.random() * 40));
    h.route('GET', '/contacts', async (_req, res) => {
      await jitter();
      const { ok, headers } = limiter.take();
      await jitter();
      if (!ok) return json(res, 429, { error: { code: 'RATE_LIMITED', message: 'slow down' } }, headers);
      json(res, 200, listPage([contact(1)], null, false), headers);
    });
    h.route('POST', '/contacts/batch', async (req, res) => {
      await jitter();
      const { ok, headers } = limiter.take();
      await jitter();
      if (!ok) return json(res, 429, { error: { code: 'RATE_LIMITED', message: 'slow down' } }, headers);
      const key = String(req.headers['idempotency-key'] ?? '');
      if (seen.has(key)) return json(res, 200, replies.get(key), { ...headers, 'idempotent-replayed': 'true' });
      const records = JSON.parse(req.body) as Array<Record<string, unknown>>;
      const items = records.map((r, index) => {
        const email = String(r.email);
        created.set(email, (created.get(email) ?? 0) + 1);
        return { index, status: 'created', data: { id: `con_${email}`, ...r } };
      });
      const answer = { object: 'batch', data: { items, summary: { total: items.length, succeeded: items.length, failed: 0 } }, meta: meta() };
      seen.add(key);
      replies.set(key, answer);
      json(res, 200, answer, headers);
    });
    const file = join(tempDir('crm-hostile-sliding-'), 'rows.csv');
    const rows = 300; // 30 chunks of 10 and the column check: 31 requests, 4 windows
    writeFileSync(
      file,
      ['email,first_name', ...Array.from({ length: rows }, (_, i) => `${format}.${i}@sliding.example,R${i}`)].join('\n') + '\n',
    );
    const r = await runCrm(['-q', '-o', 'json', 'batch', 'contacts', file, '--chunk-size', '10', '--concurrency', '4'], {
      env: h.env(),
      timeoutMs: 60_000,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(limiter.refused()).toBe(0);
    expect(created.size).toBe(rows);
    expect([...created.values()].every((n) => n === 1)).toBe(true);
  },
  90_000,
);
