import { describe, expect, it } from 'vitest';
import { maskKey, redactKey } from '../../../src/http/mask.js';

describe('maskKey', () => {
  it('shows the v2 prefix and the last 4', () => {
    expect(maskKey('service_live_0123456789abcdefghijf3a9')).toBe('service_live_…f3a9');
  });
  it('shows the v1 prefix and the last 4', () => {
    expect(maskKey('service_pk_0123456789abcdefghij1234')).toBe('service_pk_…1234');
  });
  it.each(['service_live_abc', 'service_live_12345678901', 'service_pk_', 'secret', 'sk_live_0123456789abcdefghij', 'x'])(
    'fully masks a short or unknown key %j',
    (key) => {
      const masked = maskKey(key);
      expect(masked).toBe('****');
    },
  );
  it('masks nothing into something', () => {
    expect(maskKey('')).toBe('****');
    expect(maskKey(undefined)).toBe('****');
  });
  it('never contains the secret part', () => {
    const key = 'service_live_SECRETSECRETSECRETwxyz';
    expect(maskKey(key)).not.toContain('SECRET');
  });
});

describe('redactKey', () => {
  const key = 'service_live_0123456789abcdefghijf3a9';
  it('replaces every occurrence', () => {
    expect(redactKey(`a ${key} b ${key}`, key)).toBe('a service_live_…f3a9 b service_live_…f3a9');
  });
  it('leaves text without the key alone', () => {
    expect(redactKey('nothing here', key)).toBe('nothing here');
    expect(redactKey('nothing here', undefined)).toBe('nothing here');
  });
});
