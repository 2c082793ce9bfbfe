// The column-fitting decision (src/output/fit.ts) and whole tables rendered with it: ids are never
// cut, the table never exceeds the terminal when it can fit, widths are display widths.
import fc from 'fast-check';
import stringWidth from 'string-width';
import { describe, expect, it } from 'vitest';
import {
  fitColumns,
  fitNotice,
  isIdColumn,
  MIN_CUT_WIDTH,
  tableWidth,
  type ColumnFacts,
} from '../../../src/output/fit.js';
import { renderTable } from '../../../src/output/table.js';
import { runs } from '../../helpers/property.js';

const column = (name: string, natural: number, more: Partial<ColumnFacts> = {}): ColumnFacts => ({
  name,
  natural,
  empty: false,
  whole: isIdColumn(name),
  pinned: name === 'id',
  ...more,
});

const columnsArb = fc
  .array(
    fc.record({
      natural: fc.integer({ min: 1, max: 70 }),
      empty: fc.boolean(),
      whole: fc.boolean(),
    }),
    { minLength: 1, maxLength: 14 },
  )
  .map((cols): ColumnFacts[] =>
    cols.map((c, i) => ({
      ...c,
      name: i === 0 ? 'id' : `c${i}`,
      pinned: i === 0,
      whole: i === 0 || c.whole,
      empty: i > 0 && c.empty,
    })),
  );

describe('fitColumns', () => {
  it('never cuts a whole (id) column, never hides the pinned one', () => {
    fc.assert(
      fc.property(columnsArb, fc.integer({ min: 1, max: 250 }), (cols, width) => {
        const { widths } = fitColumns(cols, width);
        cols.forEach((c, i) => {
          if (c.pinned) expect(widths[i]).toBe(c.natural);
          if (c.whole && widths[i] !== undefined) expect(widths[i]).toBe(c.natural);
        });
      }),
      runs(),
    );
  });

  it('fits the width whenever the pinned columns alone fit', () => {
    fc.assert(
      fc.property(columnsArb, fc.integer({ min: 1, max: 250 }), (cols, width) => {
        const pinnedOnly = tableWidth(cols.map((c) => (c.pinned ? c.natural : undefined)));
        const { widths } = fitColumns(cols, width);
        if (pinnedOnly <= width) expect(tableWidth(widths)).toBeLessThanOrEqual(width);
      }),
      runs(),
    );
  });

  it('hides nothing and cuts nothing when the table fits; a cut column keeps its minimum', () => {
    fc.assert(
      fc.property(columnsArb, fc.integer({ min: 1, max: 250 }), (cols, width) => {
        const layout = fitColumns(cols, width);
        if (tableWidth(cols.map((c) => c.natural)) <= width) {
          expect(layout.widths).toEqual(cols.map((c) => c.natural));
        }
        layout.widths.forEach((w, i) => {
          if (w !== undefined) expect(w).toBeGreaterThanOrEqual(Math.min(cols[i]!.natural, MIN_CUT_WIDTH));
        });
      }),
      runs(),
    );
  });

  it('columns empty in every row are hidden before any column with values', () => {
    fc.assert(
      fc.property(columnsArb, fc.integer({ min: 1, max: 250 }), (cols, width) => {
        const layout = fitColumns(cols, width);
        if (layout.hidden.length > 0) {
          cols.forEach((c, i) => {
            if (c.empty) expect(layout.widths[i]).toBeUndefined();
          });
        }
        // and what is reported matches what is shown
        expect([...layout.hidden, ...layout.hiddenEmpty].sort()).toEqual(
          cols
            .filter((_, i) => layout.widths[i] === undefined)
            .map((c) => c.name)
            .sort(),
        );
      }),
      runs(),
    );
  });

  it('the view order is the priority: an earlier column is shown before a later one of the same size', () => {
    const cols = [column('id', 18), column('email', 30), column('company_id', 18), column('owner_id', 25)];
    const layout = fitColumns(cols, 80);
    expect(layout.widths[0]).toBe(18);
    expect(layout.widths[1]).toBe(30);
    expect(layout.hidden).toEqual(['owner_id']);
  });

  it('a later chunk keeps the columns of the first', () => {
    const cols = [column('id', 18), column('a', 30), column('b', 5)];
    expect(fitColumns(cols, 200, [true, false, true]).widths).toEqual([18, undefined, 5]);
  });

  it('isIdColumn: id, *_id, *Id, *.id', () => {
    for (const name of ['id', 'company_id', 'companyId', 'link.id', 'link.child_id'])
      expect(isIdColumn(name)).toBe(true);
    for (const name of ['email', 'paid', 'Id', 'video', 'identity']) expect(isIdColumn(name)).toBe(false);
  });

  it('fitNotice names what was hidden and cut and how to see it', () => {
    const notice = fitNotice({ widths: [], hidden: ['company_id'], hiddenEmpty: ['phone'], cut: ['email'] }, 80, [
      'id',
    ]);
    expect(notice).toBe(
      'Table fitted to 80 columns: hidden company_id; hidden as empty in every row phone; cut email. To see everything: --wide, --fields id,company_id or -o json.',
    );
    expect(fitNotice({ widths: [], hidden: [], hiddenEmpty: [], cut: [] }, 80, ['id'])).toBeUndefined();
  });
});

// text a table may hold: ASCII, CJK, emoji (with ZWJ sequences and skin tones), accents
const cellArb = fc
  .array(
    fc.constantFrom(
      'a',
      'Z',
      '0',
      ' ',
      '-',
      '@',
      '東',
      '京',
      '会',
      '議',
      'ﾃ',
      '😀',
      '🎉',
      '👩‍💻',
      '👍🏽',
      'é',
      'ë',
      'ß',
      'Ω',
    ),
    {
      maxLength: 40,
    },
  )
  .map((parts) => parts.join(''));
const idArb = fc.stringMatching(/^con_[a-z0-9]{10,22}$/);

describe('renderTable at a terminal width (display width, not characters)', () => {
  it('no line is wider than the terminal when it can fit, and every id is shown whole', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(idArb, cellArb, cellArb, idArb, cellArb), { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 40, max: 160 }),
        (rows, width) => {
          const { text } = renderTable(['id', 'name', 'title', 'company_id', 'notes'], rows, { color: false, width });
          for (const line of text.trimEnd().split('\n')) expect(stringWidth(line)).toBeLessThanOrEqual(width);
          for (const row of rows) expect(text).toContain(row[0]);
        },
      ),
      runs(200),
    );
  });

  it('all lines of a table are equally wide (borders line up with CJK and emoji)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(idArb, cellArb, cellArb), { minLength: 1, maxLength: 5 }),
        fc.integer({ min: 30, max: 120 }),
        (rows, width) => {
          const { text } = renderTable(['id', 'name', 'title'], rows, { color: false, width });
          const widths = new Set(
            text
              .trimEnd()
              .split('\n')
              .map((l) => stringWidth(l)),
          );
          expect(widths.size).toBe(1);
        },
      ),
      runs(200),
    );
  });
});
