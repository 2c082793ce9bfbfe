import { describe, expect, it } from 'vitest';
import { IdempotencyCache, canonicalJson, fingerprint, isValidIdempotencyKey } from '../../../src/sandbox/idempotency.js';
import type { SandboxResponse } from '../../../src/sandbox/types.js';

describe('fingerprint', () => {
  it('ignores whitespace and key order of the JSON body', () => {
    const a = fingerprint('POST', '/api/v2/contacts', '{"email":"a@b.c","tags":[1,2],"x":{"b":1,"a":2}}');
    const b = fingerprint('post', '/api/v2/contacts', ' {\n "x": {"a": 2, "b": 1},\n "tags": [1, 2], "email": "a@b.c" }');
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

  it('misses, then replays, per API key; a different fingerprint conflicts', () => {
    const cache = new IdempotencyCache(() => 0);
    const first = cache.lookup('apikey', 'k1', 'fp');
    expect(first.kind).toBe('miss');
    if (first.kind === 'miss') first.claim.store(response);
    expect(cache.lookup('apikey', 'k1', 'fp')).toEqual({ kind: 'replay', response });
    expect(cache.replays).toBe(1);
    const other = cache.lookup('apikey', 'k1', 'fp2');
    expect(other.kind).toBe('conflict');
    if (other.kind === 'conflict') expect(other.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(cache.lookup('another-apikey', 'k1', 'fp2').kind).toBe('miss');
  });

  it('a twin waits for the one in flight and then replays; a released claim lets it run', async () => {
    const cache = new IdempotencyCache(() => 0);
    const first = cache.lookup('a', 'k', 'fp');
    const twin = cache.lookup('a', 'k', 'fp');
    expect(twin.kind).toBe('wait');
    if (first.kind !== 'miss' || twin.kind !== 'wait') throw new Error('unexpected');
    first.claim.store(response);
    await twin.done;
    expect(cache.lookup('a', 'k', 'fp').kind).toBe('replay');

    const again = cache.lookup('a', 'k2', 'fp');
    const waiting = cache.lookup('a', 'k2', 'fp');
    if (again.kind !== 'miss' || waiting.kind !== 'wait') throw new Error('unexpected');
    again.claim.release();
    await waiting.done;
    expect(cache.lookup('a', 'k2', 'fp').kind).toBe('miss');
  });

  it('forgets keys after the TTL and on clear', () => {
    let now = 0;
    const cache = new IdempotencyCache(() => now, 1000);
    const first = cache.lookup('a', 'k', 'fp');
    if (first.kind === 'miss') first.claim.store(response);
    now = 999;
    expect(cache.lookup('a', 'k', 'fp').kind).toBe('replay');
    now = 1000;
    const expired = cache.lookup('a', 'k', 'other');
    expect(expired.kind).toBe('miss');
    if (expired.kind === 'miss') expired.claim.store(response);
    cache.clear();
    expect(cache.lookup('a', 'k', 'fp').kind).toBe('miss');
  });
});
