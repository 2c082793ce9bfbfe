// Issue 17, "clocks": a server whose clock is ahead (its `Date` header) with X-RateLimit-Reset as a
// Unix time turned a 2-second wait into 7 minutes, and crm gave up saying "HTTP 429" though no 429
// came. An absolute time a server sends (a Unix-time Reset, a Retry-After HTTP-date) is read against
// the server's own clock (its Date), ahead or behind; and giving up on a window's reset never claims a 429.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCrm } from '../helpers/run-crm.js';
import { contact, errorEnvelope, json, listPage, offClock, startHostile, type Hostile } from './server.js';

let h: Hostile;
beforeAll(async () => {
  h = await startHostile();
});
afterAll(async () => h?.close());
beforeEach(() => h.reset());

const SEVEN_MIN = 7 * 60_000;
const listAll = (extra: string[] = []) =>
  runCrm(['-o', 'ndjson', ...extra, 'contacts', 'list', '--all'], { env: h.env(), timeoutMs: 15_000 });

/** Two pages; the first says the window is used up for 2 s, by the server's clock. Returns when each page was asked for. */
function twoPages(offsetMs: number): number[] {
  const clock = offClock(offsetMs);
  const at: number[] = [];
  h.route('GET', '/contacts', (req, res) => {
    at.push(Date.now());
    if (req.query.get('cursor') === 'p2') {
      json(res, 200, listPage([contact(2)], null, false), clock.date());
      return;
    }
    json(res, 200, listPage([contact(1)], 'p2', true), {
      ...clock.date(),
      'x-ratelimit-limit': '100',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': clock.unixIn(2),
    });
  });
  return at;
}

/** A 429 whose Retry-After is an HTTP-date 2 s ahead by the server's clock, then the page. */
function retryAfterDate(offsetMs: number): number[] {
  const clock = offClock(offsetMs);
  const at: number[] = [];
  h.route('GET', '/contacts', (_req, res, ctx) => {
    at.push(Date.now());
    if (ctx.count === 0) {
      json(res, 429, errorEnvelope('RATE_LIMITED', 'slow down'), {
        ...clock.date(),
        'retry-after': clock.httpDateIn(2),
      });
      return;
    }
    json(res, 200, listPage([contact(1)], null, false), clock.date());
  });
  return at;
}

describe('a server whose clock is off', () => {
  it.each([
    ['ahead', SEVEN_MIN],
    ['behind', -SEVEN_MIN],
  ])(
    '%s by 7 min: a Unix-time X-RateLimit-Reset 2 s away by its clock is a wait of about 2 s',
    async (_how, offset) => {
      const at = twoPages(offset);
      const r = await listAll(['-v']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout.trim().split('\n')).toHaveLength(2);
      expect(at).toHaveLength(2);
      const gap = at[1]! - at[0]!;
      expect(gap).toBeGreaterThan(900); // waited (behind: the Reset looked past, no wait)
      expect(gap).toBeLessThan(4_500); // not 7 minutes
      expect(r.stderr).not.toMatch(/HTTP 429/);
    },
  );

  it.each([
    ['ahead', SEVEN_MIN],
    ['behind', -SEVEN_MIN],
  ])('%s by 7 min: a Retry-After HTTP-date 2 s away by its clock is a wait of about 2 s', async (_how, offset) => {
    const at = retryAfterDate(offset);
    const r = await runCrm(['-o', 'json', 'contacts', 'list'], { env: h.env(), timeoutMs: 15_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(at).toHaveLength(2);
    const gap = at[1]! - at[0]!;
    expect(gap).toBeGreaterThan(900);
    expect(gap).toBeLessThan(4_500);
  });

  it('giving up on a window that resets days away says so, and not "HTTP 429" (none came)', async () => {
    const clock = offClock(SEVEN_MIN);
    h.route('GET', '/contacts', (req, res) => {
      if (req.query.get('cursor') === 'p2') return json(res, 200, listPage([contact(2)], null, false));
      json(res, 200, listPage([contact(1)], 'p2', true), {
        ...clock.date(),
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset': clock.unixIn(3 * 86_400),
      });
    });
    const r = await runCrm(['-o', 'json', 'contacts', 'list', '--all'], { env: h.env(), timeoutMs: 15_000 });
    expect(r.code, r.stderr).toBe(7);
    expect(r.stderr).toMatch(/the rate limit is used up until the window resets in 3 days/);
    expect(r.stderr).not.toMatch(/HTTP 429|"status":429/);
    expect(h.log).toHaveLength(1);
  });
});
