// Random sources: a seeded PRNG for deterministic data and keys (--seed), crypto otherwise.
// Tokens that act as credentials always come from crypto.
import { randomBytes } from 'node:crypto';

export type Random = () => number;

/** mulberry32: a tiny, fast 32-bit PRNG; the same seed gives the same sequence. */
export function mulberry32(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// crypto draws are costly one at a time (they capped a bulk import at ~4,000 rows/s): take them
// from a pool refilled 4 KiB at a time.
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let offset = POOL_BYTES;

/** A random source backed by crypto, for when no seed is given. */
export function cryptoRandom(): number {
  if (offset + 4 > pool.length) {
    pool = randomBytes(POOL_BYTES);
    offset = 0;
  }
  const n = pool.readUInt32BE(offset);
  offset += 4;
  return n / 4294967296;
}

/**
 * `prefix` and `length` characters of [0-9a-z] drawn from `random`, as one flat string: `+=` would
 * keep a tree of 15 pieces per id until it is hashed (a million seeded records hold a million ids).
 */
export function randomString(random: Random, length: number, prefix = ''): string {
  const chars = [prefix];
  for (let i = 0; i < length; i++) chars.push(Math.floor(random() * 36).toString(36));
  return chars.join('');
}

export function pick<T>(random: Random, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

/** 32 random bytes, base64url: a transcript download token. */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

export function newRequestId(): string {
  return `req_${randomBytes(10).toString('hex')}`;
}
