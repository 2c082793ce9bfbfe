// The one line-by-line reader of NDJSON files (src/util/text-lines.ts): property-tested.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { runs } from '../../helpers/property.js';
import { countTextLines, textLines } from '../../../src/util/text-lines.js';

const dir = mkdtempSync(join(tmpdir(), 'crm-text-lines-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const collect = async (it: AsyncIterable<string>): Promise<string[]> => {
  const out: string[] = [];
  for await (const x of it) out.push(x);
  return out;
};

describe('textLines / countTextLines', () => {
  const line = fc.oneof(
    fc.constant(''),
    fc.constant('  '),
    fc.string({ unit: fc.constantFrom('a', 'é', '{', '"', ' ', '😀') }),
  );
  it('yields the non-blank lines in order (LF or CRLF), a byte range of whole lines as the lines in it, and counts them', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(line, { maxLength: 30 }),
        fc.boolean(),
        fc.nat(),
        fc.nat(),
        async (lines, crlf, a, b) => {
          const file = join(dir, `f${n++}.ndjson`);
          const ends = crlf ? '\r\n' : '\n';
          writeFileSync(file, lines.map((l) => l + ends).join(''));
          const kept = lines.filter((l) => l.trim() !== '');
          expect(await collect(textLines(file))).toEqual(kept);
          expect(await countTextLines(file)).toBe(kept.length);
          // a range from one line's start to another's
          const [i, j] = [a % (lines.length + 1), b % (lines.length + 1)].sort((x, y) => x - y) as [number, number];
          const offset = (k: number) =>
            Buffer.byteLength(
              lines
                .slice(0, k)
                .map((l) => l + ends)
                .join(''),
            );
          const inRange = lines.slice(i, j).filter((l) => l.trim() !== '');
          expect(await collect(textLines(file, { start: offset(i), end: offset(j) }))).toEqual(inRange);
        },
      ),
      runs(60),
    );
  });

  it('a missing file: no lines when missingOk, else its error', async () => {
    const missing = join(dir, 'nothing-here.ndjson');
    expect(await collect(textLines(missing, { missingOk: true }))).toEqual([]);
    await expect(collect(textLines(missing))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
