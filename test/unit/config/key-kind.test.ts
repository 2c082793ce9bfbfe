import { describe, expect, it } from 'vitest';
import { keyKind, keyKindMismatch } from '../../../src/config/key-kind.js';

describe('keyKind', () => {
  it.each([
    ['service_live_abc123', 'v2'],
    ['service_live_Ab-_.~9', 'v2'],
    ['service_pk_42', 'v1'],
    ['service_pk_abcDEF_123', 'v1'],
    ['service_live_', 'unknown'],
    ['service_pk_', 'unknown'],
    ['service_live_abc def', 'unknown'],
    ['service_live_abc\n', 'unknown'],
    ['service_live_abc\t', 'unknown'],
    ['service_live_ä', 'unknown'],
    ['SERVICE_LIVE_abc', 'unknown'],
    ['service_test_abc', 'unknown'],
    ['sk_live_abc', 'unknown'],
    [' service_live_abc', 'unknown'],
    ['', 'unknown'],
  ] as const)('%j → %s', (key, kind) => {
    expect(keyKind(key)).toBe(kind);
  });
});

describe('keyKindMismatch', () => {
  it('accepts the right kind', () => {
    expect(keyKindMismatch('service_live_x', 'v2')).toBeUndefined();
    expect(keyKindMismatch('service_pk_x', 'v1')).toBeUndefined();
  });
  it('a v1 key as v2 says which is which and suggests --v1', () => {
    const m = keyKindMismatch('service_pk_x', 'v2')!;
    expect(m).toMatch(/version 1 key \(service_pk_…\)/);
    expect(m).toMatch(/version 2 key \(service_live_…\) was expected/);
    expect(m).toMatch(/--v1/);
    expect(m).not.toContain('service_pk_x');
  });
  it('a v2 key with --v1 says which is which and suggests leaving out --v1', () => {
    const m = keyKindMismatch('service_live_x', 'v1')!;
    expect(m).toMatch(/version 2 key \(service_live_…\), but --v1 expects a version 1 key \(service_pk_…\)/);
    expect(m).toMatch(/without --v1/);
  });
  it('an unknown form names both forms and never echoes the input', () => {
    for (const expected of ['v1', 'v2'] as const) {
      const m = keyKindMismatch('hunter2-secret', expected)!;
      expect(m).toMatch(/not an API key.*service_live_.*service_pk_/);
      expect(m).not.toContain('hunter2');
    }
  });
});
