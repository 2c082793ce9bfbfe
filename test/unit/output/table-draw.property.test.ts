// A list table is drawn row by row (src/output/table.ts, drawList: linear in the rows), not by
// cli-table3 laying out every row: the text must be byte for byte what cli-table3 draws for the
// same cells, widths and colours, for any cells (wide, combining and emoji graphemes, empty cells).
import Table from 'cli-table3';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { renderTable } from '../../../src/output/table.js';
import { cutToWidth } from '../../../src/output/width.js';
import { runs } from '../../helpers/property.js';

// cli-table3 colours through @colors/colors, which reads FORCE_COLOR when first used (not a TTY here)
process.env.FORCE_COLOR = '1';

/** What cli-table3 itself draws for the shown cells (the table.ts options, every row pushed). */
function cliTable3(color: boolean, widths: readonly (number | undefined)[], head: string[], rows: string[][]): string {
  const pick = (cells: readonly string[]) =>
    cells.flatMap((c, i) => (widths[i] === undefined ? [] : [cutToWidth(c, widths[i])]));
  const style = color ? { head: ['bold'], border: ['grey'] } : { head: [], border: [] };
  const chars = { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' };
  const colWidths = widths.flatMap((w) => (w === undefined ? [] : [w + 2]));
  const table = new Table({ head: pick(head), style, chars, wordWrap: false, colWidths });
  for (const row of rows) table.push(pick(row));
  return `${table.toString()}\n`;
}

const grapheme = fc.constantFrom('a', 'Z', '7', ' ', '-', '…', '漢', 'ｱ', '😀', 'e\u0301', '👩‍💻', '🇫🇷', '\u200b', 'ß');
const text = fc.array(grapheme, { maxLength: 14 }).map((g) => g.join(''));

const tableArb = fc.integer({ min: 1, max: 5 }).chain((n) =>
  fc.record({
    // the first column is `id` (pinned, never hidden), as in every list
    columns: fc
      .array(text, { minLength: n - 1, maxLength: n - 1 })
      .map((names) => ['id', ...names.map((s, i) => `c${i}${s}`)]),
    rows: fc.array(fc.array(text, { minLength: n, maxLength: n }), { minLength: 1, maxLength: 12 }),
    width: fc.option(fc.integer({ min: 10, max: 90 }), { nil: undefined }),
    maxCellWidth: fc.constantFrom(0, 8, 60),
    color: fc.boolean(),
  }),
);

describe('list tables drawn row by row', () => {
  it('are what cli-table3 draws for the same cells, widths and colours', () => {
    fc.assert(
      fc.property(tableArb, ({ columns, rows, width, maxCellWidth, color }) => {
        const drawn = renderTable(columns, rows, { color, width, maxCellWidth });
        // the reference gets the cells as renderTable shows them: cut to the cell cap, then to the column
        const capped = rows.map((r) => r.map((c, i) => (i === 0 ? c : cutToWidth(c, maxCellWidth))));
        expect(drawn.text).toBe(cliTable3(color, drawn.layout.widths, columns, capped));
      }),
      runs(400),
    );
  });

  it('colours as cli-table3 does when colour is on', () => {
    const drawn = renderTable(
      ['id', 'name'],
      [
        ['1', 'Ada'],
        ['2', ''],
      ],
      { color: true },
    ).text;
    expect(drawn).toContain('\x1b[');
    expect(drawn).toBe(
      cliTable3(
        true,
        [2, 4],
        ['id', 'name'],
        [
          ['1', 'Ada'],
          ['2', ''],
        ],
      ),
    );
  });
});
