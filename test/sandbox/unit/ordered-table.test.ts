import { describe, expect, it } from 'vitest';
import { OrderedTable } from '../../../src/sandbox/store.js';

const seqs = (rows: Iterable<{ seq: number }>) => [...rows].map((r) => r.seq);

describe('OrderedTable', () => {
  it('keeps creation order and finds the rows after a sequence number', () => {
    const t = new OrderedTable();
    for (let i = 1; i <= 10; i++) t.append(`id${i}`, { seq: i * 2, data: { id: `id${i}` } });
    expect(seqs(t.after(0))).toEqual([2, 4, 6, 8, 10, 12, 14, 16, 18, 20]);
    expect(seqs(t.after(7))).toEqual([8, 10, 12, 14, 16, 18, 20]);
    expect(seqs(t.after(8))).toEqual([10, 12, 14, 16, 18, 20]);
    expect(seqs(t.after(20))).toEqual([]);
  });

  it('skips deleted rows and compacts without losing order', () => {
    const t = new OrderedTable();
    for (let i = 1; i <= 300; i++) t.append(`id${i}`, { seq: i, data: { id: `id${i}` } });
    for (let i = 1; i <= 250; i++) if (i % 5 !== 0) expect(t.delete(`id${i}`)).toBe(true);
    expect(t.delete('id1')).toBe(false);
    expect(t.size).toBe(50 + 50);
    expect(seqs(t.after(240)).slice(0, 3)).toEqual([245, 250, 251]);
    expect(seqs(t.values())).toEqual(seqs(t.after(0)));
    expect(t.get('id5')?.seq).toBe(5);
    expect(t.get('id4')).toBeUndefined();
  });

  it('pages through 100 000 rows quickly', () => {
    const t = new OrderedTable();
    for (let i = 1; i <= 100_000; i++) t.append(`id${i}`, { seq: i, data: {} });
    const started = performance.now();
    let after = 0;
    let pages = 0;
    for (;;) {
      const page: number[] = [];
      for (const row of t.after(after)) {
        page.push(row.seq);
        if (page.length === 25) break;
      }
      if (page.length === 0) break;
      after = page[page.length - 1]!;
      pages++;
    }
    expect(pages).toBe(4000);
    expect(performance.now() - started).toBeLessThan(2000);
  });
});
