import { describe, expect, it } from 'vitest';
import { keyRedactor, maskKey } from '../../../src/http/mask.js';

describe('maskKey', () => {
  it('shows the v2 prefix and the last 4', () => {
    expect(maskKey('service_live_0123456789abcdefghijf3a9')).toBe('service_live_…f3a9');
  });
  it('shows the v1 prefix and the last 4', () => {
    expect(maskKey('service_pk_0123456789abcdefghij1234')).toBe('service_pk_…1234');
  });
  it.each([
    'service_live_abc',
    'service_live_12345678901',
    'service_pk_',
    'secret',
    'sk_live_0123456789abcdefghij',
    'x',
  ])('fully masks a short or unknown key %j', (key) => {
    const masked = maskKey(key);
    expect(masked).toBe('****');
  });
  it('masks nothing into something', () => {
    expect(maskKey('')).toBe('****');
    expect(maskKey(undefined)).toBe('****');
  });
  it('never contains the secret part', () => {
    const key = 'service_live_SECRETSECRETSECRETwxyz';
    expect(maskKey(key)).not.toContain('SECRET');
  });
});

describe('keyRedactor([key]).text', () => {
  const key = 'service_live_0123456789abcdefghijf3a9';
  const redactKey = (text: string, k: string | undefined) => keyRedactor([k]).text(text);
  it('replaces every occurrence', () => {
    expect(redactKey(`a ${key} b ${key}`, key)).toBe('a service_live_…f3a9 b service_live_…f3a9');
  });
  it('leaves text without the key alone', () => {
    expect(redactKey('nothing here', key)).toBe('nothing here');
    expect(redactKey('nothing here', undefined)).toBe('nothing here');
  });
});

describe('keyRedactor', () => {
  const key = 'service_live_0123456789abcdefghijf3a9';
  const v1 = 'service_pk_0123456789abcdefghij1234';
  const r = keyRedactor([key, v1, undefined]);

  it('masks both keys in every string of a parsed body, field names too, keeping field order', () => {
    const body = JSON.parse(`{"a": "x ${key.replace('_', '\\u005f')} y", "${v1}": [1, "${v1}"], "z": true}`) as unknown;
    const out = r.value(body) as Record<string, unknown>;
    expect(Object.keys(out)).toEqual(['a', 'service_pk_…1234', 'z']);
    expect(out).toEqual({ a: 'x service_live_…f3a9 y', 'service_pk_…1234': [1, 'service_pk_…1234'], z: true });
  });

  it('keeps a field named __proto__ a field', () => {
    const out = r.value(JSON.parse(`{"__proto__": {"x": 1}, "${key}": 2}`) as unknown) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.keys(out)).toEqual(['__proto__', 'service_live_…f3a9']);
  });

  it('leaves values of other classes (exact big numbers, dates) alone', () => {
    class Exact {
      constructor(readonly text: string) {}
    }
    const exact = new Exact(key);
    expect(r.value({ n: exact }).n).toBe(exact);
  });

  it('masks escaped forms in text: \\u, \\x, %XX, and the JSON short escapes', () => {
    const k = 'service_live_ab"cd\\ef/gh12345678';
    const rk = keyRedactor([k]);
    for (const written of [
      'service\\u005Flive_ab\\"cd\\\\ef\\/gh12345678',
      'service%5flive%5Fab%22cd%5Cef%2Fgh12345678',
      '\\x73ervice_live_ab"cd\\ef/gh1234567\\u0038',
    ]) {
      expect(rk.text(`<${written}>`)).toBe(`<${maskKey(k)}>`);
    }
  });

  it('ignores keys too short to be keys, and does nothing without keys', () => {
    expect(keyRedactor(['test', '', null]).text('a test')).toBe('a test');
    expect(keyRedactor([]).value({ a: key })).toEqual({ a: key });
  });
});
