// paged-file.ts, the resumable file of every snapshot part: runs stopped after any page, some leaving
// a page written but not recorded (a kill between the fsync and the state), then a run to the end:
// every line once, in order, and the state gone once forgotten.
import { appendFileSync, existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { writePaged } from '../../../../src/commands/snapshot/paged-file.js';
import { runs } from '../../../helpers/property.js';
import { tempDir } from '../../../helpers/temp.js';

const validAt = (a: unknown): a is { page: number } => typeof (a as { page?: unknown } | null)?.page === 'number';
class Stop extends Error {}

describe('writePaged', () => {
  it('stopped after any page (with or without a page written but not recorded), then run again: every line once', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.nat(4), { minLength: 1, maxLength: 8 }),
        fc.array(fc.record({ after: fc.nat(8), torn: fc.boolean() }), { maxLength: 5 }),
        async (sizes, stops) => {
          const dir = tempDir('crm-paged-');
          const pages = sizes.map((n, p) => Array.from({ length: n }, (_, i) => `{"p":${p},"i":${i}}\n`).join(''));
          const fill =
            (stopAfter: number | undefined) =>
            async (w: Parameters<Parameters<typeof writePaged<{ page: number }>>[3]>[0]) => {
              let done = 0;
              for (let p = w.resume?.at.page ?? 0; p < pages.length; p++) {
                if (stopAfter !== undefined && done++ >= stopAfter) throw new Stop();
                await w.page(pages[p]!, sizes[p]!, { page: p + 1 });
              }
            };
          for (const stop of stops) {
            await writePaged(dir, 'x.ndjson', validAt, fill(stop.after)).catch((err: unknown) => {
              if (!(err instanceof Stop)) throw err;
              // a kill after a page's lines were written, before its state: lines the rerun must cut
              if (stop.torn && existsSync(join(dir, '.x.ndjson.partial')))
                appendFileSync(join(dir, '.x.ndjson.partial'), '{"torn":1}\n');
            });
          }
          const { records, forget } = await writePaged(dir, 'x.ndjson', validAt, fill(undefined));
          expect(readFileSync(join(dir, 'x.ndjson'), 'utf8')).toBe(pages.join(''));
          expect(records).toBe(sizes.reduce((a, b) => a + b, 0));
          await forget();
          expect(readdirSync(dir)).toEqual(['x.ndjson']);
        },
      ),
      runs(60),
    );
  });
});
