import { describe, expect, it } from 'vitest';
import { credentialsFor } from '../../../src/config/credentials.js';
import { AuthError, UsageError } from '../../../src/http/errors.js';

const base = {
  baseUrl: 'https://c.example/api/v2',
  v1BaseUrl: 'https://c.example/api/v1',
  authHeader: 'x-api-key' as const,
};

describe('credentialsFor', () => {
  it('gives the v2 root and key, or the v1 ones', () => {
    const p = { ...base, apiKey: 'service_live_a', v1ApiKey: 'service_pk_b' };
    expect(credentialsFor(p, 'v2')).toEqual({ baseUrl: 'https://c.example/api/v2', apiKey: 'service_live_a' });
    expect(credentialsFor(p, 'v1')).toEqual({ baseUrl: 'https://c.example/api/v1', apiKey: 'service_pk_b' });
  });
  it('no key is an AuthError (exit 3) that says how to add one', () => {
    expect(() => credentialsFor(base, 'v2')).toThrow(AuthError);
    expect(() => credentialsFor(base, 'v1')).toThrow(AuthError);
    expect.assertions(5);
    try {
      credentialsFor({ ...base, name: 'dev' }, 'v2');
    } catch (e) {
      expect((e as AuthError).exitCode).toBe(3);
      expect((e as AuthError).message).toContain('profile "dev"');
      expect((e as AuthError).hint).toMatch(/crm keys add/);
    }
  });
  it('a key of the other version is refused before sending, without showing it', () => {
    expect(() => credentialsFor({ ...base, apiKey: 'service_pk_secret' }, 'v2')).toThrow(
      /is a version 1 key \(service_pk_…\)/,
    );
    expect(() => credentialsFor({ ...base, v1ApiKey: 'service_live_secret' }, 'v1')).toThrow(
      /is a version 2 key \(service_live_…\)/,
    );
    expect(() => credentialsFor({ ...base, apiKey: 'service_pk_secret' }, 'v2')).not.toThrow(/secret/);
  });
  it('no base URL is a UsageError', () => {
    expect(() => credentialsFor({ authHeader: 'x-api-key', apiKey: 'service_live_a' }, 'v2')).toThrow(UsageError);
    const err = (() => {
      try {
        credentialsFor({ authHeader: 'x-api-key', v1ApiKey: 'service_pk_a' }, 'v1');
      } catch (e) {
        return e as UsageError;
      }
    })();
    expect(err).toBeInstanceOf(UsageError);
    expect(err?.hint).toMatch(/--v1-base-url/);
  });
});

describe('credentialsFor refuses keys that cannot be keys', () => {
  it.each(['service_live_ab\ncd', 'service_live_abcd\r', 'service_live_ab cd', 'service_live_\u0000x'])(
    '%j → AuthError before anything is sent',
    (apiKey) => {
      expect(() =>
        credentialsFor({ apiKey, baseUrl: 'https://x.example.com/api/v2', authHeader: 'x-api-key' }),
      ).toThrow(/space, line break/);
    },
  );
});
