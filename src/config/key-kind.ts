// Which API version a key belongs to, from its form alone (spec, Authentication rules 2 and 3):
// version 2 keys are `service_live_…`, version 1 keys `service_pk_…`. They are not interchangeable.

export type KeyKind = 'v2' | 'v1' | 'unknown';

export const V2_KEY_PREFIX = 'service_live_';
export const V1_KEY_PREFIX = 'service_pk_';

/** A key is one token of visible ASCII: a space or control character means a bad paste (refused, not sent for a 401). */
export const KEY_SHAPE = /^[\x21-\x7e]+$/;

export function keyKind(key: string): KeyKind {
  if (!KEY_SHAPE.test(key)) return 'unknown';
  if (key.startsWith(V2_KEY_PREFIX) && key.length > V2_KEY_PREFIX.length) return 'v2';
  if (key.startsWith(V1_KEY_PREFIX) && key.length > V1_KEY_PREFIX.length) return 'v1';
  return 'unknown';
}

/** Why `key` cannot be used where a key of kind `expected` is wanted (and how to store it), or undefined. */
export function keyKindMismatch(key: string, expected: 'v1' | 'v2'): string | undefined {
  const kind = keyKind(key);
  if (kind === expected) return undefined;
  const forms = `Version 2 keys start with ${V2_KEY_PREFIX}, version 1 keys with ${V1_KEY_PREFIX}.`;
  if (kind === 'unknown') {
    return `That is not an API key: ${forms} (A key has no spaces or control characters.)`;
  }
  if (expected === 'v2') {
    return `That is a version 1 key (${V1_KEY_PREFIX}…), but a version 2 key (${V2_KEY_PREFIX}…) was expected. Add it with --v1 to store it as the profile's version 1 key.`;
  }
  return `That is a version 2 key (${V2_KEY_PREFIX}…), but --v1 expects a version 1 key (${V1_KEY_PREFIX}…). Add it without --v1 to store it as the profile's version 2 key.`;
}
