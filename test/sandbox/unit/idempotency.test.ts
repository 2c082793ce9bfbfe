import { describe, expect, it } from 'vitest';
import {
  IdempotencyCache,
  canonicalJson,
  type Claim,
  fingerprint,
  isValidIdempotencyKey,
} from '../../../src/sandbox/idempotency.js';
import type { SandboxResponse } from '../../../src/sandbox/types.js';

describe('fingerprint', () => {
  it('ignores whitespace and key order of the JSON body', () => {
    const a = fingerprint('POST', '/api/v2/contacts', '{"email":"a@b.c","tags":[1,2],"x":{"b":1,"a":2}}');
    const b = fingerprint(
      'post',
      '/api/v2/contacts',
      ' {\n "x": {"a": 2, "b": 1},\n "tags": [1, 2], "email": "a@b.c" }',
    );
    expect(a).toBe(b);
  });

  it('differs by method, path, body and array order', () => {
    const base = fingerprint('POST', '/api/v2/contacts', '{"a":1}');
    expect(fingerprint('PATCH', '/api/v2/contacts', '{"a":1}')).not.toBe(base);
    expect(fingerprint('POST', '/api/v2/deals', '{"a":1}')).not.toBe(base);
    expect(fingerprint('POST', '/api/v2/contacts', '{"a":2}')).not.toBe(base);
    expect(fingerprint('POST', '/x', '[1,2]')).not.toBe(fingerprint('POST', '/x', '[2,1]'));
  });

  it('compares malformed bodies as raw text', () => {
    expect(fingerprint('POST', '/x', '{oops')).toBe(fingerprint('POST', '/x', '{oops'));
    expect(fingerprint('POST', '/x', '{oops')).not.toBe(fingerprint('POST', '/x', '{oops }'));
  });

  it('canonicalJson sorts keys recursively', () => {
    expect(canonicalJson({ b: [{ d: 1, c: 2 }], a: null })).toBe('{"a":null,"b":[{"c":2,"d":1}]}');
  });
});

describe('isValidIdempotencyKey', () => {
  it.each([
    ['k', true],
    ['a'.repeat(255), true],
    ['with space ~', true],
    ['', false],
    ['a'.repeat(256), false],
    ['tab\there', false],
    ['ünï', false],
  ])('%j → %s', (key, ok) => {
    expect(isValidIdempotencyKey(key)).toBe(ok);
  });
});

describe('IdempotencyCache', () => {
  const response: SandboxResponse = { status: 201, headers: { 'X-Request-Id': 'req_1' }, body: { ok: true } };
  const settle = (claim: Claim, ran?: SandboxResponse) => {
    if (!('settle' in claim)) throw new Error(`expected a fresh claim, got ${JSON.stringify(claim)}`);
    claim.settle(ran);
  };

  it('claims, then replays, per API key; a different fingerprint conflicts', async () => {
    const cache = new IdempotencyCache(() => 0);
    settle(await cache.claim('apikey', 'k1', 'fp'), response);
    expect(await cache.claim('apikey', 'k1', 'fp')).toEqual({ replay: response });
    expect(cache.replays).toBe(1);
    const other = await cache.claim('apikey', 'k1', 'fp2');
    expect('error' in other && other.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect('settle' in (await cache.claim('another-apikey', 'k1', 'fp2'))).toBe(true);
  });

  it('an answer of 500 or more, or none, is not stored', async () => {
    const cache = new IdempotencyCache(() => 0);
    settle(await cache.claim('a', 'k', 'fp'), { ...response, status: 503 });
    settle(await cache.claim('a', 'k', 'fp'));
    settle(await cache.claim('a', 'k', 'fp'), { ...response, status: 499 });
    expect(await cache.claim('a', 'k', 'fp')).toEqual({ replay: { ...response, status: 499 } });
  });

  it('a twin waits for the one in flight and then replays; a released claim lets it run', async () => {
    const cache = new IdempotencyCache(() => 0);
    const first = await cache.claim('a', 'k', 'fp');
    let twinDone = false;
    const twin = cache.claim('a', 'k', 'fp').finally(() => (twinDone = true));
    await Promise.resolve();
    expect(twinDone).toBe(false);
    settle(first, response);
    expect(await twin).toEqual({ replay: response });

    const again = await cache.claim('a', 'k2', 'fp');
    const waiting = cache.claim('a', 'k2', 'fp');
    settle(again);
    expect('settle' in (await waiting)).toBe(true);
  });

  it('forgets keys after the TTL and on clear; a twin of a forgotten key runs for real', async () => {
    let now = 0;
    const cache = new IdempotencyCache(() => now, 1000);
    settle(await cache.claim('a', 'k', 'fp'), response);
    now = 999;
    expect(await cache.claim('a', 'k', 'fp')).toEqual({ replay: response });
    now = 1000;
    const expired = await cache.claim('a', 'k', 'other');
    const twin = cache.claim('a', 'k', 'other');
    cache.clear();
    const fresh = await twin;
    settle(expired, response); // forgotten meanwhile: not stored
    settle(fresh, response);
    expect(await cache.claim('a', 'k', 'other')).toEqual({ replay: response });
    cache.clear();
    expect('settle' in (await cache.claim('a', 'k', 'fp'))).toBe(true);
  });

  it('snapshot and restore keep the answered keys within the retention', async () => {
    let now = 0;
    const cache = new IdempotencyCache(() => now, 1000);
    settle(await cache.claim('a', 'k', 'fp'), response);
    void cache.claim('a', 'inflight', 'fp');
    const saved = cache.snapshot();
    expect(saved).toEqual([expect.objectContaining({ key: 'k', fingerprint: 'fp', stored_at: 0, response })]);
    const restored = new IdempotencyCache(() => now, 1000);
    now = 500;
    restored.restore(saved);
    expect(await restored.claim('a', 'k', 'fp')).toEqual({ replay: response });
    now = 1000;
    expect(cache.snapshot()).toEqual([]);
    const late = new IdempotencyCache(() => now, 1000);
    late.restore(saved);
    expect('settle' in (await late.claim('a', 'k', 'fp'))).toBe(true);
  });
});
