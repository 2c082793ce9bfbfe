import { describe, expect, it } from 'vitest';
import { CursorCodec, paginate } from '../../../src/sandbox/cursor.js';

const codec = CursorCodec.forSeed(1);

describe('cursor encoding', () => {
  it('round-trips, is base64url, and does not show its payload', () => {
    const c = codec.encode({ seq: 1234, scope: 'deals/deal_1/contacts' });
    expect(c).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(codec.decode(c)).toEqual({ seq: 1234, scope: 'deals/deal_1/contacts' });
    const bytes = Buffer.from(c, 'base64url').toString('latin1');
    expect(bytes).not.toContain('deals');
    expect(bytes).not.toContain('1234');
  });

  it('is deterministic for a seed, and differs between seeds', () => {
    const p = { seq: 14, scope: 'contacts' };
    expect(CursorCodec.forSeed(1).encode(p)).toBe(codec.encode(p));
    expect(CursorCodec.forSeed(2).encode(p)).not.toBe(codec.encode(p));
    expect(CursorCodec.forSeed(2).decode(codec.encode(p))).toBeUndefined();
    expect(CursorCodec.forSeed(undefined).decode(codec.encode(p))).toBeUndefined();
  });

  it('refuses every altered byte', () => {
    const c = codec.encode({ seq: 14, scope: 'contacts' });
    const bytes = Buffer.from(c, 'base64url');
    for (let i = 0; i < bytes.length; i++) {
      const altered = Buffer.from(bytes);
      altered[i] = altered[i]! ^ 1;
      expect(codec.decode(altered.toString('base64url')), `byte ${i}`).toBeUndefined();
    }
    expect(codec.decode(c.slice(0, -1))).toBeUndefined();
    expect(codec.decode(`${c}A`)).toBeUndefined();
  });

  it.each([
    '',
    'not a cursor',
    '!!!',
    'e30',
    Buffer.from('{"s":14,"p":"contacts"}').toString('base64url'),
    Buffer.from('{"s":1.5,"p":"x"}').toString('base64url'),
    Buffer.from('14\ncontacts').toString('base64url'),
    'A'.repeat(40),
  ])('refuses %j', (c) => {
    expect(codec.decode(c)).toBeUndefined();
  });
});

describe('paginate', () => {
  const rows = (seqs: number[]) => seqs.map((seq) => ({ seq }));
  const after = (cursor: string | null) => codec.decode(cursor!)!.seq;

  it('pages in order and stops with has_next_page false', () => {
    const all = rows([1, 2, 3, 4, 5]);
    const p1 = paginate(all, 's', 2, 0, codec);
    expect(p1.items.map((r) => r.seq)).toEqual([1, 2]);
    expect(p1.hasNextPage).toBe(true);
    const p2 = paginate(all, 's', 2, after(p1.endCursor), codec);
    expect(p2.items.map((r) => r.seq)).toEqual([3, 4]);
    const p3 = paginate(all, 's', 2, after(p2.endCursor), codec);
    expect(p3.items.map((r) => r.seq)).toEqual([5]);
    expect(p3.hasNextPage).toBe(false);
    expect(p3.endCursor).not.toBeNull();
  });

  it('an exact last page has no next page', () => {
    expect(paginate(rows([1, 2]), 's', 2, 0, codec).hasNextPage).toBe(false);
  });

  it('is stable when the last record of a page is deleted and new ones are added', () => {
    const p1 = paginate(rows([1, 2, 3]), 's', 2, 0, codec);
    const p2 = paginate(rows([1, 3, 4]), 's', 2, after(p1.endCursor), codec);
    expect(p2.items.map((r) => r.seq)).toEqual([3, 4]);
  });

  it('an empty page has a null end cursor', () => {
    const p = paginate(rows([]), 's', 25, 0, codec);
    expect(p).toEqual({ items: [], endCursor: null, hasNextPage: false });
  });
});
