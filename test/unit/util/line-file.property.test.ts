// The temporary file of lines read back by number (src/util/line-file.ts): against an array of the same appends,
// reads interleaved, through the growth of its offsets and their change from 32 to 64 bits (lowered here: a file
// crossing 4 GB is the same step).
import fc from 'fast-check';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LineFile } from '../../../src/util/line-file.js';
import { runs } from '../../helpers/property.js';
import { tempDir } from '../../helpers/temp.js';

afterEach(() => {
  LineFile.narrowMax = 0xffffffff;
});

describe('LineFile', () => {
  it('reads back each line appended, across flushes and the change to 64-bit offsets', () => {
    const dir = tempDir('line-file');
    let n = 0;
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'grapheme', maxLength: 20 })), {
          maxLength: 3000,
        }),
        fc.nat({ max: 20_000 }),
        (texts, narrowMax) => {
          LineFile.narrowMax = narrowMax;
          const file = new LineFile(join(dir, `lines-${n++}`));
          try {
            texts.forEach((t, i) => {
              expect(file.append(t)).toBe(i);
              if (i % 7 === 0) expect(file.read(i >> 1)).toBe(texts[i >> 1]);
            });
            texts.forEach((t, i) => expect(file.read(i)).toBe(t));
            expect(file.count).toBe(texts.length);
          } finally {
            file.close();
          }
        },
      ),
      runs(60),
    );
  });
});
