import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor, paginate } from '../../../src/sandbox/cursor.js';

describe('cursor encoding', () => {
  it('round-trips and is base64url', () => {
    const c = encodeCursor({ seq: 1234, scope: 'deals/deal_1/contacts' });
    expect(c).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(c)).toEqual({ seq: 1234, scope: 'deals/deal_1/contacts' });
  });

  it.each(['', 'not a cursor', '!!!', 'e30', Buffer.from('{"s":-1,"p":"x"}').toString('base64url'), Buffer.from('{"s":1.5,"p":"x"}').toString('base64url'), Buffer.from('{"s":1}').toString('base64url'), Buffer.from('[1]').toString('base64url'), Buffer.from('nope').toString('base64url')])(
    'refuses %j',
    (c) => {
      expect(decodeCursor(c)).toBeUndefined();
    },
  );
});

describe('paginate', () => {
  const rows = (seqs: number[]) => seqs.map((seq) => ({ seq }));

  it('pages in order and stops with has_next_page false', () => {
    const all = rows([1, 2, 3, 4, 5]);
    const p1 = paginate(all, 's', 2, 0);
    expect(p1.items.map((r) => r.seq)).toEqual([1, 2]);
    expect(p1.hasNextPage).toBe(true);
    const p2 = paginate(all, 's', 2, decodeCursor(p1.endCursor!)!.seq);
    expect(p2.items.map((r) => r.seq)).toEqual([3, 4]);
    const p3 = paginate(all, 's', 2, decodeCursor(p2.endCursor!)!.seq);
    expect(p3.items.map((r) => r.seq)).toEqual([5]);
    expect(p3.hasNextPage).toBe(false);
    expect(p3.endCursor).not.toBeNull();
  });

  it('an exact last page has no next page', () => {
    expect(paginate(rows([1, 2]), 's', 2, 0).hasNextPage).toBe(false);
  });

  it('is stable when the last record of a page is deleted and new ones are added', () => {
    const p1 = paginate(rows([1, 2, 3]), 's', 2, 0);
    const after = decodeCursor(p1.endCursor!)!.seq;
    const p2 = paginate(rows([1, 3, 4]), 's', 2, after);
    expect(p2.items.map((r) => r.seq)).toEqual([3, 4]);
  });

  it('an empty page has a null end cursor', () => {
    const p = paginate(rows([]), 's', 25, 0);
    expect(p).toEqual({ items: [], endCursor: null, hasNextPage: false });
  });
});
