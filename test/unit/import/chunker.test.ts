import { describe, expect, it } from 'vitest';
import { CHUNK_KEY_PREFIX, Chunker, chunkKey, type Chunk, type ValidRow } from '../../../src/import/check/chunker.js';

const rows = (n: number, from = 2): ValidRow[] =>
  Array.from({ length: n }, (_, i) => ({ line: from + i, record: { email: `u${i}@x.io` }, raw: [`u${i}@x.io`] }));

function chunkRows(rs: ValidRow[], size: number): Chunk[] {
  const c = new Chunker(size);
  const out = rs.map((r) => c.push(r)).filter((x): x is Chunk => x !== undefined);
  const last = c.flush();
  return last ? [...out, last] : out;
}

describe('chunking', () => {
  it.each([
    [0, 100, []],
    [1, 100, [1]],
    [100, 100, [100]],
    [101, 100, [100, 1]],
    [250, 100, [100, 100, 50]],
    [7, 3, [3, 3, 1]],
    [5, 1, [1, 1, 1, 1, 1]],
  ])('%i rows in chunks of %i → %j', (n, size, sizes) => {
    const chunks = chunkRows(rows(n), size);
    expect(chunks.map((c) => c.rows.length)).toEqual(sizes);
    expect(chunks.map((c) => c.seq)).toEqual(sizes.map((_, i) => i + 1));
  });

  it('each chunk carries its lines and the exact JSON body', () => {
    const [c] = chunkRows(rows(3, 10), 100);
    expect(c!.lines).toEqual([10, 11, 12]);
    expect(c!.body).toBe('[{"email":"u0@x.io"},{"email":"u1@x.io"},{"email":"u2@x.io"}]');
    expect(JSON.parse(c!.body)).toEqual(c!.rows.map((r) => r.record));
  });

  it('streams: push returns a chunk when full, flush returns the rest', () => {
    const ch = new Chunker(2);
    const rs = rows(3);
    expect(ch.push(rs[0]!)).toBeUndefined();
    expect(ch.push(rs[1]!)?.lines).toEqual([2, 3]);
    expect(ch.push(rs[2]!)).toBeUndefined();
    expect(ch.flush()?.lines).toEqual([4]);
    expect(ch.flush()).toBeUndefined();
  });
});

describe('chunkKey', () => {
  const body = chunkRows(rows(2), 100)[0]!.body;
  it('is deterministic, prefixed, and a valid Idempotency-Key (≤ 255 printable ASCII)', () => {
    const k = chunkKey('http://127.0.0.1:4010/api/v2', 'contacts', body);
    expect(k).toBe(chunkKey('http://127.0.0.1:4010/api/v2', 'contacts', body));
    expect(k.startsWith(CHUNK_KEY_PREFIX)).toBe(true);
    expect(k).toMatch(/^crm-batch-[0-9a-f]{64}$/);
    expect(k.length).toBeLessThanOrEqual(255);
  });
  it('a trailing slash on the base URL does not change it', () => {
    expect(chunkKey('https://h/api/v2/', 'contacts', body)).toBe(chunkKey('https://h/api/v2', 'contacts', body));
  });
  it('differs when the base URL, resource or body differs', () => {
    const k = chunkKey('https://h/api/v2', 'contacts', body);
    expect(chunkKey('https://other/api/v2', 'contacts', body)).not.toBe(k);
    expect(chunkKey('https://h/api/v2', 'companies', body)).not.toBe(k);
    expect(chunkKey('https://h/api/v2', 'contacts', body.replace('u0', 'u9'))).not.toBe(k);
    // the parts cannot slide into each other
    expect(chunkKey('a', 'bc', '[]')).not.toBe(chunkKey('ab', 'c', '[]'));
  });
});
