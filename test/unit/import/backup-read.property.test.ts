// How a delete's backup reads its records (issue 19): one GET per id for a few, a listing first for many,
// going on while the pages pay for themselves. Property-tested on random collections, files and earlier
// backups: the read costs no more than the range the confirmation states, at most one request above a GET
// per id on a first run, a page per 100 ids when the file's records come first, and it writes each record
// of the file the listing met exactly once (none already in the backup again).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { HttpClient } from '../../../src/http/types.js';
import type { DeleteBackup } from '../../../src/import/files/backup.js';
import {
  deleteCostText,
  LIST_MIN_IDS,
  listIntoBackup,
  readCost,
  readHow,
} from '../../../src/import/send/backup-read.js';
import { runs } from '../../helpers/property.js';

/** A collection of `size` records, `c0`…; the file's ids are some of them and some that are not there. */
const scenario = fc
  .record({
    size: fc.integer({ min: 0, max: 1500 }),
    density: fc.double({ min: 0, max: 1, noNaN: true }),
    first: fc.boolean(),
    missing: fc.integer({ min: 0, max: 150 }),
    keptShare: fc.double({ min: 0, max: 1, noNaN: true }),
    seed: fc.integer(),
  })
  .map(({ size, density, first, missing, keptShare, seed }) => {
    let x = seed >>> 0;
    const rnd = () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 2 ** 32;
    const collection = Array.from({ length: size }, (_, i) => `c${i}`);
    const inFile = first ? collection.slice(0, Math.round(size * density)) : collection.filter(() => rnd() < density);
    const file = [...inFile, ...Array.from({ length: missing }, (_, i) => `gone${i}`)];
    // an earlier run's backup: some of the file's records, those a killed listing met first
    const kept = inFile.slice(0, Math.round(inFile.length * keptShare * (first ? 1 : 0)));
    return { collection, file, kept, first };
  });

function fakes(collection: string[], kept: string[]) {
  let pages = 0;
  const client = {
    async *pages() {
      for (let i = 0; i < Math.max(1, collection.length); i += 100) {
        pages++;
        const data = collection.slice(i, i + 100).map((id) => ({ id }));
        yield { data, endCursor: null, hasNextPage: i + 100 < collection.length, cut: false };
      }
    },
  } as unknown as HttpClient;
  const held = new Set(kept);
  /** what the listing set aside (each goes to the backup just before its DELETE) */
  const written: string[] = [];
  const aside = new Set<string>();
  const backup: DeleteBackup = {
    path: 'b',
    has: (id) => held.has(id),
    keep: async (r) => !held.has(r.id as string) && Boolean(held.add(r.id as string)),
    refused: (id) => void held.delete(id),
    async stage(rs) {
      let n = 0;
      for (const r of rs) {
        if (held.has(r.id as string) || aside.has(r.id as string)) continue;
        aside.add(r.id as string);
        written.push(r.id as string);
        n++;
      }
      return n;
    },
    staged: async (id) => (aside.has(id) ? { id } : undefined),
    close: async () => undefined,
  };
  return { client, backup, written, held, pages: () => pages };
}

/** The whole read: the listing (when readHow says so), then a GET for each id of the file the backup still lacks. */
async function read(collection: string[], file: string[], kept: string[]) {
  const f = fakes(collection, kept);
  const ids = new Set(file);
  const toRead = [...ids].filter((id) => !f.held.has(id)).length;
  if (readHow(toRead) === 'list') await listIntoBackup(f.client, 'contacts', ids, f.backup);
  const gets = [...ids].filter((id) => !f.held.has(id) && !f.written.includes(id)).length;
  return { toRead, kept: ids.size - toRead, requests: f.pages() + gets, pages: f.pages(), written: f.written };
}

describe('a delete backup read', () => {
  it('costs within the range the confirmation states, and at most one request above a GET per id to read on a first run', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async ({ collection, file, kept }) => {
        const r = await read(collection, file, kept);
        const { least, most } = readCost(r.toRead, r.kept);
        expect(r.requests).toBeGreaterThanOrEqual(least);
        expect(r.requests).toBeLessThanOrEqual(most);
        if (r.kept === 0) expect(r.requests).toBeLessThanOrEqual(r.toRead + 1);
      }),
      runs(200),
    );
  });

  it('sets aside each record of the file the listing met once, and none the backup held already', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async ({ collection, file, kept }) => {
        const r = await read(collection, file, kept);
        expect(new Set(r.written).size).toBe(r.written.length);
        for (const id of r.written) {
          expect(file).toContain(id);
          expect(kept).not.toContain(id);
        }
      }),
      runs(200),
    );
  });

  it('the file’s records first in the collection: a page per 100 ids, no GET; a rerun after a kill reads the pages again, no GET', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: LIST_MIN_IDS, max: 1200 }),
        fc.integer({ min: 0, max: 600 }),
        async (n, more) => {
          const collection = Array.from({ length: n + more }, (_, i) => `c${i}`);
          const file = collection.slice(0, n);
          expect((await read(collection, file, [])).requests).toBe(Math.ceil(n / 100));
          // killed after the listing kept the first k: the rerun lists again up to the last page it needs
          const k = Math.min(n - LIST_MIN_IDS, Math.floor(n / 2));
          expect((await read(collection, file, file.slice(0, k))).requests).toBe(Math.ceil(n / 100));
        },
      ),
      runs(100),
    );
  });

  it('fewer ids than a page: one GET each, no listing', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: LIST_MIN_IDS - 1 }), async (n) => {
        const collection = Array.from({ length: n }, (_, i) => `c${i}`);
        const r = await read(collection, collection, []);
        expect(r.pages).toBe(0);
        expect(r.requests).toBe(n);
      }),
      runs(50),
    );
  });
});

describe("a delete's whole cost (the confirmation)", () => {
  it('the reads plus one DELETE per row left; the minutes asked for the most; a rerun says the rows an earlier run did', () => {
    fc.assert(
      fc.property(fc.nat(5_000), fc.nat(5_000), fc.nat(5_000), (toRead, kept, done) => {
        const rows = toRead + kept + done;
        const deletes = rows - done;
        let asked = -1;
        const text = deleteCostText({ toRead, kept, deletes, rows }, (n) => ((asked = n), 'AT'));
        const { least, most } = readCost(toRead, kept);
        expect(asked).toBe(most + deletes);
        const total =
          least === most
            ? `${(most + deletes).toLocaleString('en-US')} request`
            : `from ${(least + deletes).toLocaleString('en-US')} to`;
        expect(text.startsWith(total)).toBe(true);
        expect(text).toContain(`${deletes.toLocaleString('en-US')} DELETE`);
        expect(text.includes('for the rows an earlier run did not finish')).toBe(done > 0);
        // the time is the least the limit allows all of them: never "at most" (2.1 min said so took 2.5)
        expect(
          text.endsWith(least === most ? ': AT' : `: AT, for all ${(most + deletes).toLocaleString('en-US')}`),
        ).toBe(true);
        expect(text).not.toContain('at most');
      }),
      runs(),
    );
  });
});
