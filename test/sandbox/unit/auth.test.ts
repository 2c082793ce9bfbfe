import { describe, expect, it } from 'vitest';
import { authenticate, canSee, requireScope } from '../../../src/sandbox/auth.js';
import type { ApiError } from '../../../src/sandbox/responses.js';
import type { KeyDef } from '../../../src/sandbox/types.js';

const v2: KeyDef = { key: 'service_live_a', version: 2, scopes: ['contacts:read'], access: 'user', user: 'usr_u' };
const v1: KeyDef = { key: 'service_pk_b', version: 1, scopes: [], access: 'organization', user: 'usr_admin' };
const keys = new Map([v2, v1].map((k) => [k.key, k]));

function code(headers: Record<string, string[]>, version: 1 | 2 = 2): string | KeyDef {
  try {
    return authenticate(headers, keys, version);
  } catch (err) {
    return (err as ApiError).code;
  }
}

describe('authenticate', () => {
  it('accepts the key in exactly one of the two headers', () => {
    expect(code({ 'x-service-api-key': ['service_live_a'] })).toBe(v2);
    expect(code({ authorization: ['Bearer service_live_a'] })).toBe(v2);
    expect(code({ 'x-service-api-key': ['service_pk_b'] }, 1)).toBe(v1);
  });

  it('refuses Authorization: Bearer on version 1 (spec: "Version 1 headers")', () => {
    expect(code({ authorization: ['Bearer service_pk_b'] }, 1)).toBe('UNAUTHENTICATED');
  });

  it.each([
    [{}, 'UNAUTHENTICATED'],
    [{ 'x-service-api-key': [''] }, 'UNAUTHENTICATED'],
    [{ 'x-service-api-key': ['service_live_unknown'] }, 'UNAUTHENTICATED'],
    [{ authorization: ['Basic abc'] }, 'UNAUTHENTICATED'],
    [{ authorization: ['Bearer'] }, 'UNAUTHENTICATED'],
    [{ authorization: ['Bearer a b'] }, 'UNAUTHENTICATED'],
    [{ 'x-service-api-key': ['service_live_a'], authorization: ['Bearer service_live_a'] }, 'AMBIGUOUS_CREDENTIALS'],
    [{ 'x-service-api-key': ['service_live_a', 'service_live_a'] }, 'AMBIGUOUS_CREDENTIALS'],
    [{ 'x-service-api-key': ['service_pk_b'] }, 'WRONG_API_VERSION'],
  ])('%j → %s', (headers, expected) => {
    expect(code(headers)).toBe(expected);
  });

  it('refuses a version 2 key on version 1', () => {
    expect(code({ 'x-service-api-key': ['service_live_a'] }, 1)).toBe('WRONG_API_VERSION');
  });
});

describe('scopes and ownership', () => {
  it('requires the scope of version 2 keys, with the scope in details', () => {
    expect(() => requireScope(v2, 'contacts:read')).not.toThrow();
    try {
      requireScope(v2, 'contacts:write');
      throw new Error('no error');
    } catch (err) {
      expect((err as ApiError).status).toBe(403);
      expect((err as ApiError).details).toEqual([{ required_scope: 'contacts:write' }]);
    }
    expect(() => requireScope(v1, 'anything:write')).not.toThrow();
  });

  it('user-bound keys see their own records only', () => {
    expect(canSee(v2, { owner_id: 'usr_u' })).toBe(true);
    expect(canSee(v2, { owner_id: 'usr_admin' })).toBe(false);
    expect(canSee(v1, { owner_id: 'usr_u' })).toBe(true);
  });
});
