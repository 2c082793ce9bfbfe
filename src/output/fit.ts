// Which columns of a list table to show, and how wide, to fit the terminal: a pure decision on
// display widths. Ids are never cut (a cut id cannot be copied), `id` is never hidden. Columns empty
// in every row go first, then the last in the view's order; the rest may be cut.

/** `natural`: the widest cell's display width (header included); `empty` in every row; `whole`: never cut; `pinned`: never hidden nor cut. */
export type ColumnFacts = { name: string; natural: number; empty: boolean; whole: boolean; pinned: boolean };

/** `widths`: per column, undefined when hidden; `hiddenEmpty`: hidden columns empty in every row; `cut`: shown narrower than natural. */
export type ColumnLayout = { widths: (number | undefined)[]; hidden: string[]; hiddenEmpty: string[]; cut: string[] };

/** A cut column keeps at least this many columns (or its natural width): `ada.lovela…`, not `ada…`. */
export const MIN_CUT_WIDTH = 12;

/** `│ ` + cell + ` ` per column and one final `│`. */
export function tableWidth(widths: readonly (number | undefined)[]): number {
  return widths.reduce<number>((sum, w) => (w === undefined ? sum : sum + w + 3), 1);
}

/** A column named `id`, `*_id`, `*Id` or `*.id`: its values are ids. */
export function isIdColumn(name: string): boolean {
  const last = name.slice(name.lastIndexOf('.') + 1);
  return last === 'id' || last.endsWith('_id') || /[a-z0-9]Id$/.test(last);
}

/** A column never cut: ids (a cut id cannot be copied into the next command), pinned ones, and the view's own. */
export function isWholeColumn(name: string, pinned: readonly string[], whole: readonly string[] = []): boolean {
  return isIdColumn(name) || pinned.includes(name) || whole.includes(name);
}

function minWidth(c: ColumnFacts): number {
  return c.whole || c.pinned ? c.natural : Math.min(c.natural, MIN_CUT_WIDTH);
}

/** The layout of `columns` within `width` (≤ 0 or none: all whole); `show` fixes the shown columns (later chunks). */
export function fitColumns(
  columns: readonly ColumnFacts[],
  width: number | undefined,
  show?: readonly boolean[],
): ColumnLayout {
  const natural = columns.map((c) => c.natural);
  if (width === undefined || width <= 0 || (show === undefined && tableWidth(natural) <= width)) {
    return { widths: natural, hidden: [], hiddenEmpty: [], cut: [] };
  }
  const shown = show ? [...show] : chooseShown(columns, width);
  const widths = cutToFit(columns, shown, width);
  const layout: ColumnLayout = { widths, hidden: [], hiddenEmpty: [], cut: [] };
  columns.forEach((c, i) => {
    const w = widths[i];
    if (w === undefined) (c.empty ? layout.hiddenEmpty : layout.hidden).push(c.name);
    else if (w < c.natural) layout.cut.push(c.name);
  });
  return layout;
}

// The pinned columns, then each other column with values that fits at its narrowest, in order.
function chooseShown(columns: readonly ColumnFacts[], width: number): boolean[] {
  const shown = columns.map((c) => c.pinned);
  let used = tableWidth(columns.map((c) => (c.pinned ? minWidth(c) : undefined)));
  columns.forEach((c, i) => {
    if (c.pinned || c.empty) return;
    const cost = minWidth(c) + 3;
    if (used + cost <= width) {
      shown[i] = true;
      used += cost;
    }
  });
  return shown;
}

// Cuts the widest cuttable columns to the highest common level that fits (never below their
// minimum); what remains goes one column each from the left.
function cutToFit(columns: readonly ColumnFacts[], shown: readonly boolean[], width: number): (number | undefined)[] {
  const at = (level: number): (number | undefined)[] =>
    columns.map((c, i) =>
      !shown[i] ? undefined : minWidth(c) === c.natural ? c.natural : Math.max(minWidth(c), Math.min(c.natural, level)),
    );
  let lo = 0;
  let hi = Math.max(0, ...columns.map((c) => c.natural));
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (tableWidth(at(mid)) <= width) lo = mid;
    else hi = mid - 1;
  }
  const widths = at(lo);
  let spare = width - tableWidth(widths);
  for (let i = 0; i < widths.length && spare > 0; i++) {
    const w = widths[i];
    if (w !== undefined && w < columns[i]!.natural) {
      widths[i] = w + 1;
      spare--;
    }
  }
  return widths;
}

/** The stderr notice for a fitted table: what was hidden or cut and how to see it (`--fields` starts with `pinned`). */
export function fitNotice(layout: ColumnLayout, width: number, pinned: readonly string[]): string | undefined {
  const { hidden, hiddenEmpty, cut } = layout;
  if (hidden.length === 0 && hiddenEmpty.length === 0 && cut.length === 0) return undefined;
  const parts: string[] = [];
  if (hidden.length > 0) parts.push(`hidden ${hidden.join(', ')}`);
  if (hiddenEmpty.length > 0) parts.push(`hidden as empty in every row ${hiddenEmpty.join(', ')}`);
  if (cut.length > 0) parts.push(`cut ${cut.join(', ')}`);
  const ways = ['--wide'];
  if (hidden.length > 0) ways.push(`--fields ${[...new Set([...pinned, ...hidden])].join(',')}`);
  ways.push('-o json');
  return `Table fitted to ${width} columns: ${parts.join('; ')}. To see everything: ${ways.join(', ').replace(/, (?=[^,]*$)/, ' or ')}.`;
}
