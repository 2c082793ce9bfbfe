// Spec "Limits" table and rules 1–3 (X-RateLimit-* on success; 429 + Retry-After; same limits in
// v1 and v2) and docs/sandbox.md "Rate limits" (fixed window per key and per organization; every
// counted request uses one unit of both; 401 not counted; Remaining the lesser of the two).
import { describe, expect, test } from 'vitest';
import { allScopes } from '../../../src/api/resources.js';
import {
  call,
  createBody,
  expectError,
  expectStatus,
  expectV1Error,
  startSandbox,
  testClock,
  withSandbox,
  writeKeysFile,
  type CallResult,
  type SandboxHandle,
} from '../helpers.js';

const K = Array.from({ length: 4 }, (_, i) => `service_live_conformance_rate_key_${i}_abcdefgh`);
const keysFile = writeKeysFile([
  ...K.map((key, i) => ({
    key,
    version: 2 as const,
    scopes: allScopes(),
    access: 'organization' as const,
    user: `usr_rate${i}`,
  })),
  { key: 'service_pk_conformance_rate_v1_extra', version: 1 as const },
]);
const LONG = 60_000;

function expectRateHeaders(res: CallResult): { limit: number; remaining: number; reset: number } {
  const limit = res.headers.get('x-ratelimit-limit');
  const remaining = res.headers.get('x-ratelimit-remaining');
  const reset = res.headers.get('x-ratelimit-reset');
  expect(limit, 'X-RateLimit-Limit').toMatch(/^\d+$/);
  expect(remaining, 'X-RateLimit-Remaining').toMatch(/^\d+$/);
  expect(reset, 'X-RateLimit-Reset').toMatch(/^\d+(\.\d{1,3})?$/);
  return { limit: Number(limit), remaining: Number(remaining), reset: Number(reset) };
}

function expect429(res: CallResult, maxRetryAfterSeconds: number, v1 = false): number {
  if (v1) expectV1Error(res, 429, 'RATE_LIMITED');
  else expectError(res, 429, 'RATE_LIMITED');
  const ra = res.headers.get('retry-after');
  expect(ra, 'Retry-After').toMatch(/^\d+(\.\d+)?$/);
  const seconds = Number(ra);
  expect(seconds).toBeGreaterThan(0);
  expect(seconds).toBeLessThanOrEqual(maxRetryAfterSeconds);
  expectRateHeaders(res);
  return seconds;
}

const get = (sb: SandboxHandle, key?: string) => call(sb, 'GET', '/contacts', { key, query: { limit: 1 } });
const v1Query = (sb: SandboxHandle, key?: string) =>
  call(sb, 'POST', '/api/v1/people/query', { key: key ?? sb.keys.v1, body: { limit: 1 } });

describe('headers (Limits rule 1)', () => {
  test("successful responses carry X-RateLimit-Limit (the key's), -Remaining (decreasing), -Reset (seconds ≤ window)", async () => {
    await withSandbox({ rateLimit: 50, orgRateLimit: 1000, rateWindowMs: LONG }, async (sb) => {
      const seen: number[] = [];
      for (let i = 0; i < 5; i++) {
        const res = await get(sb);
        expectStatus(res, 200);
        const h = expectRateHeaders(res);
        expect(h.limit).toBe(50);
        expect(h.reset).toBeGreaterThan(0);
        expect(h.reset).toBeLessThanOrEqual(60);
        seen.push(h.remaining);
      }
      expect(seen).toEqual([49, 48, 47, 46, 45]);
    });
  });

  test('writes, v1 responses and errors carry the headers too', async () => {
    await withSandbox({ rateLimit: 50, orgRateLimit: 1000, rateWindowMs: LONG }, async (sb) => {
      const post = await call(sb, 'POST', '/contacts', { body: createBody('contacts') });
      expectStatus(post, 201);
      expectRateHeaders(post);
      const v1 = await v1Query(sb);
      expectStatus(v1, 200);
      expect(expectRateHeaders(v1).limit).toBe(50);
    });
  });

  test("Remaining is the lesser of the key's and the organization's remaining", async () => {
    await withSandbox({ keysFile, rateLimit: 10, orgRateLimit: 12, rateWindowMs: LONG }, async (sb) => {
      for (let i = 0; i < 8; i++) expectStatus(await get(sb, K[0]), 200);
      const res = await get(sb, K[1]);
      expectStatus(res, 200);
      const h = expectRateHeaders(res);
      expect(h.limit).toBe(10);
      expect(h.remaining).toBe(3); // key: 9 left, organization: 12 - 9 = 3
    });
  });
});

describe('429 (Limits rule 2)', () => {
  test('over the key limit → 429 RATE_LIMITED + Retry-After; other keys unaffected', async () => {
    await withSandbox({ keysFile, rateLimit: 5, orgRateLimit: 1000, rateWindowMs: LONG }, async (sb) => {
      for (let i = 0; i < 5; i++) expectStatus(await get(sb, K[0]), 200);
      const res = await get(sb, K[0]);
      expect429(res, 60);
      expect(Number(res.headers.get('x-ratelimit-remaining'))).toBe(0);
      expectStatus(await get(sb, K[1]), 200);
    });
  });

  test('a 429 on a write does not perform the write', async () => {
    await withSandbox({ rateLimit: 1, orgRateLimit: 1000, rateWindowMs: LONG }, async (sb) => {
      expectStatus(await get(sb), 200);
      const body = createBody('contacts');
      expect429(await call(sb, 'POST', '/contacts', { body }), 60);
      const stats = await call(sb, 'GET', `${sb.controlUrl}/stats`, { key: null });
      expect(stats.body.records.contacts).toBe(40);
    });
  });

  test('over the organization limit with several keys → 429 for a key that has used nothing', async () => {
    await withSandbox({ keysFile, rateLimit: 5, orgRateLimit: 8, rateWindowMs: LONG }, async (sb) => {
      for (let i = 0; i < 4; i++) expectStatus(await get(sb, K[0]), 200);
      for (let i = 0; i < 4; i++) expectStatus(await get(sb, K[1]), 200);
      expect429(await get(sb, K[2]), 60);
      expect429(await get(sb, K[3]), 60);
      expect429(await get(sb, sb.keys.admin), 60);
    });
  });

  test('errors (404, 422, 403) count; 401s do not', async () => {
    await withSandbox({ rateLimit: 6, orgRateLimit: 1000, rateWindowMs: LONG }, async (sb) => {
      for (let i = 0; i < 10; i++) expectError(await call(sb, 'GET', '/contacts', { key: null }), 401);
      for (let i = 0; i < 10; i++)
        expectError(await call(sb, 'GET', '/contacts', { key: 'service_live_nobodynobody' }), 401);
      const first = await get(sb);
      expectStatus(first, 200);
      expect(expectRateHeaders(first).remaining).toBe(5);
      expectError(await call(sb, 'GET', '/contacts/con_missing'), 404);
      expectError(await call(sb, 'POST', '/contacts', { body: {} }), 422);
      expectError(await call(sb, 'POST', '/contacts', { key: sb.keys.readonly, body: createBody('contacts') }), 403);
      const after = await get(sb);
      expectStatus(after, 200);
      expect(expectRateHeaders(after).remaining).toBe(2); // admin key: get + 404 + 422 + this = 4 of 6
    });
  });
});

describe('windows reset', () => {
  test('after Retry-After (a short window) the key may send again', async () => {
    const clock = testClock(); // the burst in one window, however long a loaded machine takes to send it
    await withSandbox({ rateLimit: 3, orgRateLimit: 1000, rateWindowMs: 200, now: clock.now }, async (sb) => {
      const burst = await Promise.all(Array.from({ length: 12 }, () => get(sb)));
      for (const x of burst) expect([200, 429]).toContain(x.status);
      const limited = burst.find((x) => x.status === 429);
      expect(limited, 'a 429 in a burst of 12 over a limit of 3').toBeTruthy();
      const seconds = expect429(limited!, 0.2);
      clock.pass(seconds * 1000 + 30);
      const again = await get(sb);
      expectStatus(again, 200);
      const h = expectRateHeaders(again);
      expect(h.remaining).toBeGreaterThanOrEqual(1);
      expect(h.reset).toBeLessThanOrEqual(0.2);
    });
  });

  test('the organization window resets too', async () => {
    const clock = testClock(); // the burst in one window (on a loaded machine it spanned two: the 429 read was the first's)
    await withSandbox({ keysFile, rateLimit: 100, orgRateLimit: 3, rateWindowMs: 200, now: clock.now }, async (sb) => {
      const burst = await Promise.all(Array.from({ length: 12 }, (_, i) => get(sb, K[i % 4])));
      const limited = burst.find((x) => x.status === 429);
      expect(limited, 'a 429 in a burst of 12 over an organization limit of 3').toBeTruthy();
      const seconds = expect429(limited!, 0.2);
      clock.pass(seconds * 1000 + 30);
      expectStatus(await get(sb, K[0]), 200);
    });
  });
});

describe('version 1 and version 2 share the limits (Limits rule 3, Versioning rule 4)', () => {
  test('the v1 key has the same per-key limit and gets 429 + Retry-After on /api/v1', async () => {
    await withSandbox({ rateLimit: 4, orgRateLimit: 1000, rateWindowMs: LONG }, async (sb) => {
      for (let i = 0; i < 4; i++) {
        const res = await v1Query(sb);
        expectStatus(res, 200);
        expect(expectRateHeaders(res).limit).toBe(4);
      }
      expect429(await v1Query(sb), 60, true);
      expectStatus(await get(sb), 200); // the admin key is a different key
    });
  });

  test('v1 and v2 requests use one organization limit', async () => {
    await withSandbox({ keysFile, rateLimit: 100, orgRateLimit: 6, rateWindowMs: LONG }, async (sb) => {
      for (let i = 0; i < 3; i++) expectStatus(await v1Query(sb), 200);
      for (let i = 0; i < 3; i++) expectStatus(await get(sb, K[0]), 200);
      expect429(await get(sb, K[1]), 60);
      expect429(await v1Query(sb, 'service_pk_conformance_rate_v1_extra'), 60, true);
    });
  });

  test('v1 PATCH counts like any request', async () => {
    await withSandbox({ rateLimit: 2, orgRateLimit: 1000, rateWindowMs: LONG }, async (sb) => {
      const people = await v1Query(sb);
      expectStatus(people, 200);
      const companies = await call(sb, 'GET', '/companies', { query: { limit: 1 } });
      const id = companies.body.data[0].id;
      expectStatus(
        await call(sb, 'PATCH', `/api/v1/companies/${id}`, { key: sb.keys.v1, body: { city: 'Oslo' } }),
        200,
      );
      expect429(
        await call(sb, 'PATCH', `/api/v1/companies/${id}`, { key: sb.keys.v1, body: { city: 'Bergen' } }),
        60,
        true,
      );
    });
  });
});

describe('defaults (spec Limits table)', () => {
  test('the default organization limit is 1000 per window, across keys', async () => {
    const sb = await startSandbox({ seed: 1, keysFile });
    try {
      const keys = [sb.keys.admin, sb.keys.readonly, sb.keys.user, K[0]!, K[1]!];
      for (const key of keys) {
        for (let wave = 0; wave < 4; wave++) {
          const res = await Promise.all(Array.from({ length: 50 }, () => get(sb, key)));
          for (const r of res) expectStatus(r, 200);
        }
      }
      // 5 keys × 200 = 1000: the organization is spent, though K[2] has sent nothing
      expect429(await get(sb, K[2]), 60);
    } finally {
      await sb.close();
    }
  });

  test('without options the key limit is 200 and the organization limit 1000', async () => {
    const sb = await startSandbox({ seed: 1 });
    try {
      const res = await get(sb);
      const h = expectRateHeaders(res);
      expect(h.limit).toBe(200);
      expect(h.remaining).toBe(199);
      expect(h.reset).toBeGreaterThan(1);
      expect(h.reset).toBeLessThanOrEqual(60);
    } finally {
      await sb.close();
    }
  });
});

describe('header forms (docs/sandbox.md "Rate limits")', () => {
  test('Retry-After is whole delta-seconds (rounded up) when the wait is 1 s or more', async () => {
    await withSandbox({ rateLimit: 1, rateWindowMs: 2_500, now: testClock().now }, async (sb) => {
      expectStatus(await get(sb), 200);
      const res = await get(sb);
      const ra = res.headers.get('retry-after');
      expect(ra).toMatch(/^[1-9]\d*$/);
      expect(Number(ra)).toBe(3); // ceil of 2.5 s
      expect429(res, 3);
    });
  });

  test('Retry-After keeps decimals only below 1 s (tiny test windows)', async () => {
    await withSandbox({ rateLimit: 1, rateWindowMs: 400, now: testClock().now }, async (sb) => {
      expectStatus(await get(sb), 200);
      const ra = (await get(sb)).headers.get('retry-after');
      expect(ra).toMatch(/^0\.\d{1,3}$/);
      expect(Number(ra)).toBeGreaterThan(0);
      expect(Number(ra)).toBeLessThan(1);
    });
  });

  test('the download limit follows the same rule', async () => {
    await withSandbox({ downloadRateLimit: 1, downloadWindowMs: 1_500, now: testClock().now }, async (sb) => {
      const rec = (await call(sb, 'GET', '/recordings', { query: { has_transcript: 'true', limit: 1 } })).body.data[0];
      const url = (await call(sb, 'GET', `/recordings/${rec.id}`)).body.data.transcript_url;
      expectStatus(await call(sb, 'GET', url, { key: null }), 200);
      const limited = await call(sb, 'GET', url, { key: null });
      expectError(limited, 429, 'RATE_LIMITED');
      expect(limited.headers.get('retry-after')).toBe('2');
    });
  });

  test('default: X-RateLimit-Reset is seconds until the reset, Retry-After delta-seconds', async () => {
    await withSandbox({ rateLimit: 1, rateWindowMs: LONG }, async (sb) => {
      const ok = await get(sb);
      const reset = Number(ok.headers.get('x-ratelimit-reset'));
      expect(reset).toBeGreaterThan(50);
      expect(reset).toBeLessThanOrEqual(60);
      expect(Number((await get(sb)).headers.get('retry-after'))).toBeLessThanOrEqual(60);
    });
  });

  test('rateResetFormat "epoch": X-RateLimit-Reset is the Unix time (seconds) of the reset', async () => {
    await withSandbox({ rateLimit: 1, rateWindowMs: LONG, rateResetFormat: 'epoch' }, async (sb) => {
      const t0 = Date.now() / 1000;
      const ok = await get(sb);
      expectStatus(ok, 200);
      const reset = ok.headers.get('x-ratelimit-reset');
      expect(reset).toMatch(/^\d{10}$/);
      expect(Number(reset)).toBeGreaterThanOrEqual(Math.floor(t0 + 59));
      expect(Number(reset)).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000 + 61));
      const limited = await get(sb);
      expectError(limited, 429, 'RATE_LIMITED');
      expect(limited.headers.get('x-ratelimit-reset')).toMatch(/^\d{10}$/);
      expect(Math.abs(Number(limited.headers.get('x-ratelimit-reset')) - Number(reset))).toBeLessThanOrEqual(1);
      expect(limited.headers.get('retry-after')).toMatch(/^\d+$/); // Retry-After keeps its own form
    });
  });

  test('retryAfterFormat "date": Retry-After is an HTTP-date at or after the reset', async () => {
    await withSandbox({ rateLimit: 1, rateWindowMs: 3_000, retryAfterFormat: 'date' }, async (sb) => {
      expectStatus(await get(sb), 200);
      const t0 = Date.now();
      const limited = await get(sb);
      expectError(limited, 429, 'RATE_LIMITED');
      const ra = limited.headers.get('retry-after')!;
      expect(ra).toMatch(
        /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/,
      );
      const at = Date.parse(ra);
      expect(at).toBeGreaterThanOrEqual(t0 + 1_000);
      expect(at).toBeLessThanOrEqual(t0 + 5_000);
      expect(limited.headers.get('x-ratelimit-reset')).toMatch(/^\d+(\.\d{1,3})?$/); // still delta
    });
  });

  test('the injected 429 fault and the download limit use the chosen forms too', async () => {
    await withSandbox(
      { downloadRateLimit: 1, downloadWindowMs: LONG, rateResetFormat: 'epoch', retryAfterFormat: 'date' },
      async (sb) => {
        const rec = (await call(sb, 'GET', '/recordings', { query: { has_transcript: 'true', limit: 1 } })).body
          .data[0];
        const url = (await call(sb, 'GET', `/recordings/${rec.id}`)).body.data.transcript_url;
        const ok = await call(sb, 'GET', url, { key: null });
        expectStatus(ok, 200);
        expect(ok.headers.get('x-ratelimit-reset')).toMatch(/^\d{10}$/);
        const limited = await call(sb, 'GET', url, { key: null });
        expectError(limited, 429, 'RATE_LIMITED');
        expect(Number.isNaN(Date.parse(limited.headers.get('retry-after')!))).toBe(false);
        const { queueFaults } = await import('../helpers.js');
        await queueFaults(sb, [{ kind: '429', method: 'GET', path: '/contacts' }]);
        const injected = await get(sb);
        expectError(injected, 429, 'RATE_LIMITED');
        expect(Number.isNaN(Date.parse(injected.headers.get('retry-after')!))).toBe(false);
        expect(injected.headers.get('x-ratelimit-reset')).toMatch(/^\d{10}$/);
      },
    );
  });
});

test('POST /__sandbox/limits switches the header forms at run time', async () => {
  const { control } = await import('../helpers.js');
  await withSandbox({ rateLimit: 1, rateWindowMs: LONG }, async (sb) => {
    const bad = await control(sb, 'POST', '/limits', { rate_reset_format: 'unix' });
    expect(bad.status).toBe(422);
    const set = await control(sb, 'POST', '/limits', { rate_reset_format: 'epoch', retry_after_format: 'date' });
    expectStatus(set, 200);
    expect(set.body).toMatchObject({ rate_reset_format: 'epoch', retry_after_format: 'date' });
    expect((await get(sb)).headers.get('x-ratelimit-reset')).toMatch(/^\d{10}$/);
    expect(Number.isNaN(Date.parse((await get(sb)).headers.get('retry-after')!))).toBe(false);
    await control(sb, 'POST', '/limits', { rate_reset_format: 'delta', retry_after_format: 'seconds' }); // also resets the windows
    expect((await get(sb)).headers.get('x-ratelimit-reset')).toMatch(/^\d+(\.\d{1,3})?$/);
    expect((await get(sb)).headers.get('retry-after')).toMatch(/^\d+$/);
  });
});

describe('other rate limiters (docs/sandbox.md "Rate limits": --rate-limit-kind, --rate-reset-format)', () => {
  test('rateResetFormat "seconds": X-RateLimit-Reset in whole seconds, rounded up', async () => {
    const clock = testClock();
    await withSandbox({ rateLimit: 2, rateWindowMs: 2_500, rateResetFormat: 'seconds', now: clock.now }, async (sb) => {
      const ok = await get(sb);
      expect(ok.headers.get('x-ratelimit-reset')).toBe('3'); // ceil of 2.5 s
      clock.pass(600);
      expect(expectRateHeaders(await get(sb)).reset).toBe(2);
      const limited = await get(sb);
      expect(limited.headers.get('x-ratelimit-reset')).toBe('2');
      expect(limited.headers.get('retry-after')).toBe('2');
    });
  });

  test('rateResetFormat "none": no X-RateLimit-* header at all, a 429 carries only Retry-After', async () => {
    await withSandbox({ rateLimit: 1, rateWindowMs: LONG, rateResetFormat: 'none' }, async (sb) => {
      const ok = await get(sb);
      expectStatus(ok, 200);
      const limited = await get(sb);
      expectError(limited, 429, 'RATE_LIMITED');
      for (const res of [ok, limited])
        expect([...res.headers.keys()].filter((h) => h.startsWith('x-ratelimit-'))).toEqual([]);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(55);
    });
  });

  test('rateLimitKind "sliding": each request counts for a window after it; Reset is when every unit is free, Retry-After when the next one is', async () => {
    const clock = testClock();
    await withSandbox(
      { rateLimit: 2, orgRateLimit: 1000, rateWindowMs: 600, rateLimitKind: 'sliding', now: clock.now },
      async (sb) => {
        expectStatus(await get(sb), 200);
        clock.pass(300);
        const second = await get(sb);
        expect(expectRateHeaders(second)).toMatchObject({ remaining: 0 });
        expect(expectRateHeaders(second).reset).toBeGreaterThan(0.5); // the newest request leaves in a whole window
        const limited = await get(sb);
        const retry = expect429(limited, 0.35); // the first one leaves 300 ms from now
        expect(Number(limited.headers.get('x-ratelimit-reset'))).toBeGreaterThan(0.45);
        clock.pass(retry * 1000 + 30);
        expect(expectRateHeaders(await get(sb)).remaining).toBe(0); // one unit was free: the second still counts
        expect429(await get(sb), 0.35);
      },
    );
  });

  test('POST /__sandbox/limits switches the kind (and starts fresh windows)', async () => {
    const { control } = await import('../helpers.js');
    await withSandbox({ rateLimit: 5, rateWindowMs: LONG }, async (sb) => {
      expect((await control(sb, 'GET', '/limits')).body.rate_limit_kind).toBe('fixed');
      expect((await control(sb, 'POST', '/limits', { rate_limit_kind: 'leaky' })).status).toBe(422);
      const set = await control(sb, 'POST', '/limits', { rate_limit_kind: 'sliding', rate_reset_format: 'none' });
      expect(set.body).toMatchObject({ rate_limit_kind: 'sliding', rate_reset_format: 'none' });
      expect((await get(sb)).headers.get('x-ratelimit-remaining')).toBeNull();
    });
  });
});
