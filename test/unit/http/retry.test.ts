import { describe, expect, it } from 'vitest';
import { BACKOFF_BASE_MS, BACKOFF_CAP_MS, backoffMs, isRepeatable, shouldRetry } from '../../../src/http/retry.js';
import { retryAfterMs } from '../../../src/http/rate-headers.js';
import type { HttpMethod } from '../../../src/http/types.js';

const base = { hasIdempotencyKey: false, attempt: 0, maxRetries: 5 };

describe('shouldRetry', () => {
  const all: HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

  it.each(all)('retries 429 for %s, with or without a key', (method) => {
    expect(shouldRetry({ ...base, method, status: 429 })).toBe(true);
    expect(shouldRetry({ ...base, method, status: 429, hasIdempotencyKey: true })).toBe(true);
  });

  it.each([500, 502, 503, 504])('retries %i for GET, PUT, DELETE', (status) => {
    for (const method of ['GET', 'PUT', 'DELETE'] as const) expect(shouldRetry({ ...base, method, status })).toBe(true);
  });

  it.each([500, 502, 503, 504])('retries %i for POST/PATCH only with an Idempotency-Key', (status) => {
    for (const method of ['POST', 'PATCH'] as const) {
      expect(shouldRetry({ ...base, method, status })).toBe(false);
      expect(shouldRetry({ ...base, method, status, hasIdempotencyKey: true })).toBe(true);
    }
  });

  it.each([400, 401, 403, 404, 405, 409, 410, 422])('never retries %i', (status) => {
    for (const method of all) {
      expect(shouldRetry({ ...base, method, status })).toBe(false);
      expect(shouldRetry({ ...base, method, status, hasIdempotencyKey: true })).toBe(false);
    }
  });

  it.each([501, 505, 599, 200, 201, 301, 302])('does not retry status %i', (status) => {
    expect(shouldRetry({ ...base, method: 'GET', status })).toBe(false);
  });

  it.each([
    'ECONNRESET',
    'UND_ERR_SOCKET',
    'UND_ERR_HEADERS_TIMEOUT',
    'UND_ERR_BODY_TIMEOUT',
    'UND_ERR_CONNECT_TIMEOUT',
    'ETIMEDOUT',
    'EPIPE',
    'TRUNCATED_BODY',
  ])('retries %s for GET and for keyed POST, not for bare POST', (errorCode) => {
    expect(shouldRetry({ ...base, method: 'GET', errorCode })).toBe(true);
    expect(shouldRetry({ ...base, method: 'DELETE', errorCode })).toBe(true);
    expect(shouldRetry({ ...base, method: 'POST', errorCode })).toBe(false);
    expect(shouldRetry({ ...base, method: 'PATCH', errorCode })).toBe(false);
    expect(shouldRetry({ ...base, method: 'POST', errorCode, hasIdempotencyKey: true })).toBe(true);
  });

  it.each([
    'PROXY_TUNNEL_DROPPED',
    'PROXY_TUNNEL_TIMEOUT',
    'PROXY_TUNNEL_GARBAGE',
    'PROXY_TUNNEL_ABANDONED',
    'PROXY_REFUSED',
  ])(
    'retries %s for every method: the tunnel never opened (or the proxy refused the connection), nothing reached the API',
    (errorCode) => {
      for (const method of ['GET', 'POST', 'PATCH'] as const)
        expect(shouldRetry({ ...base, method, errorCode })).toBe(true);
      expect(shouldRetry({ ...base, method: 'POST', errorCode, attempt: 5 })).toBe(false);
    },
  );

  it.each(['ECONNREFUSED', 'ENOTFOUND', 'UND_ERR_ABORTED', 'SOMETHING'])('does not retry %s', (errorCode) => {
    expect(shouldRetry({ ...base, method: 'GET', errorCode })).toBe(false);
  });

  it('stops when the retries are used up', () => {
    expect(shouldRetry({ ...base, method: 'GET', status: 503, attempt: 4 })).toBe(true);
    expect(shouldRetry({ ...base, method: 'GET', status: 503, attempt: 5 })).toBe(false);
    expect(shouldRetry({ ...base, method: 'GET', status: 429, attempt: 5 })).toBe(false);
    expect(shouldRetry({ ...base, method: 'GET', status: 503, maxRetries: 0 })).toBe(false);
  });

  it('does nothing without a status or an error code', () => {
    expect(shouldRetry({ ...base, method: 'GET' })).toBe(false);
  });

  it('isRepeatable follows the idempotency rule', () => {
    expect(isRepeatable('GET', false)).toBe(true);
    expect(isRepeatable('PUT', false)).toBe(true);
    expect(isRepeatable('POST', false)).toBe(false);
    expect(isRepeatable('PATCH', true)).toBe(true);
  });
});

describe('backoffMs', () => {
  it('is 0 with random 0 and just under the ceiling with random near 1', () => {
    expect(backoffMs(0, () => 0)).toBe(0);
    expect(backoffMs(0, () => 0.999999)).toBe(BACKOFF_BASE_MS - 1);
    expect(backoffMs(1, () => 0.999999)).toBe(2 * BACKOFF_BASE_MS - 1);
    expect(backoffMs(3, () => 0.999999)).toBe(8 * BACKOFF_BASE_MS - 1);
  });

  it('scales the jitter with random (full jitter)', () => {
    expect(backoffMs(0, () => 0.5)).toBe(250);
    expect(backoffMs(2, () => 0.5)).toBe(1000);
    expect(backoffMs(2, () => 0.25)).toBe(500);
  });

  it('is capped at 30 s however many attempts', () => {
    expect(backoffMs(6, () => 0.999999)).toBe(BACKOFF_CAP_MS - 1); // 500·64 = 32 000 > cap
    expect(backoffMs(50, () => 0.999999)).toBe(BACKOFF_CAP_MS - 1);
    expect(backoffMs(1000, () => 0.5)).toBe(BACKOFF_CAP_MS / 2);
  });

  it('stays within [0, ceiling) for many random draws', () => {
    let seed = 42;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let attempt = 0; attempt < 10; attempt++) {
      const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** attempt);
      for (let i = 0; i < 200; i++) {
        const ms = backoffMs(attempt, rnd);
        expect(ms).toBeGreaterThanOrEqual(0);
        expect(ms).toBeLessThan(ceiling);
      }
    }
  });

  it('clamps a misbehaving random and a negative attempt', () => {
    expect(backoffMs(0, () => 5)).toBe(BACKOFF_BASE_MS);
    expect(backoffMs(0, () => -1)).toBe(0);
    expect(backoffMs(-3, () => 0.5)).toBe(250);
  });
});

describe('retryAfterMs', () => {
  const now = Date.parse('2026-11-21T12:00:00Z');

  it.each([
    ['0', 0],
    ['1', 1000],
    ['120', 120_000],
    ['0.05', 50],
    ['0.25', 250],
    ['1.5', 1500],
    ['.5', 500],
    [' 2 ', 2000],
    ['0.0001', 1],
  ])('reads delta seconds %j as %i ms', (value, ms) => {
    expect(retryAfterMs(value, now)).toBe(ms);
  });

  it('treats a negative delta as 0', () => {
    expect(retryAfterMs('-5', now)).toBe(0);
    expect(retryAfterMs('-0.5', now)).toBe(0);
  });

  it('reads an HTTP-date in the future', () => {
    expect(retryAfterMs('Sat, 21 Nov 2026 12:00:30 GMT', now)).toBe(30_000);
  });

  it('reads an HTTP-date in the past as 0', () => {
    expect(retryAfterMs('Sat, 21 Nov 2026 11:59:00 GMT', now)).toBe(0);
  });

  it.each([
    undefined,
    null,
    '',
    '   ',
    'soon',
    'abc123',
    '1 2',
    '12s',
    '1e3',
    'NaN',
    'Infinity',
    '1,5',
    'Mon, 99 Foo 2026 25:61:00 GMT',
  ])('gives undefined for garbage %j', (value) => {
    expect(retryAfterMs(value, now)).toBeUndefined();
  });
});
