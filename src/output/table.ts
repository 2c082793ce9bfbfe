// Table rendering with cli-table3 (its only importer; loaded lazily by the writers: startup time).
// Cells sanitised, nested values as compact JSON, display widths; fit.ts decides the columns.
import Table from 'cli-table3';
import { cellDisplay, DEFAULT_MAX_CELL_WIDTH } from './cell.js';
import { fitColumns, isWholeColumn, type ColumnFacts, type ColumnLayout } from './fit.js';
import { sanitizeForTerminal } from './sanitize.js';
import { cutToWidth, displayWidth, wrapToWidth } from './width.js';

/** As WriterOptions; `show`: the columns an earlier chunk of the same list showed. */
interface TableOptions {
  color?: boolean;
  maxCellWidth?: number;
  width?: number;
  pinned?: readonly string[];
  whole?: readonly string[];
  show?: readonly boolean[];
}

/** A cli-table3 table without rules between body rows (as gh and kubectl print lists); widths include padding. */
function newTable(color: boolean | undefined, colWidths: number[], head: string[] = []): InstanceType<typeof Table> {
  const style = color ? { head: ['bold'], border: ['grey'] } : { head: [], border: [] };
  return new Table({
    head,
    style,
    chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' },
    wordWrap: false,
    colWidths,
  });
}

/** A table of `rows` (display strings or raw values) fitted to `opts.width`; headers are sanitised too (server keys). */
export function renderTable(
  columns: readonly string[],
  rows: readonly (readonly unknown[])[],
  opts: TableOptions = {},
): { text: string; layout: ColumnLayout; shown: boolean[] } {
  const max = opts.maxCellWidth ?? DEFAULT_MAX_CELL_WIDTH;
  const pinned = opts.pinned ?? ['id'];
  const whole = columns.map((c) => isWholeColumn(c, pinned, opts.whole));
  const head = columns.map((c) => cellDisplay(c));
  const body = rows.map((row) =>
    columns.map((_, i) => {
      const v = row[i];
      const text = typeof v === 'string' ? sanitizeForTerminal(v) : cellDisplay(v);
      return whole[i] ? text : cutToWidth(text, max);
    }),
  );
  const facts: ColumnFacts[] = columns.map((name, i) => ({
    name,
    natural: Math.max(displayWidth(head[i]!), ...body.map((r) => displayWidth(r[i]!))),
    empty: body.every((r) => r[i] === ''),
    whole: whole[i]!,
    pinned: pinned.includes(name),
  }));
  const layout = fitColumns(facts, opts.width, opts.show);
  const shown = layout.widths.map((w) => w !== undefined);
  const pick = (cells: readonly string[]) =>
    cells.flatMap((c, i) => (layout.widths[i] === undefined ? [] : [cutToWidth(c, layout.widths[i])]));
  const colWidths = layout.widths.flatMap((w) => (w === undefined ? [] : [w + 2]));
  return { text: drawList(opts.color, colWidths, pick(head), body.map(pick)), layout, shown };
}

/**
 * A list table as cli-table3 draws it, in time linear in the rows (its own layout is quadratic:
 * 10 000 rows took seconds). cli-table3 draws the head, the edges and one empty row, whose
 * borders (coloured as it colours them) frame every body row; body cells are single lines that
 * fit their column (sanitised, cut above), padded on the right by display width as it pads them.
 */
function drawList(color: boolean | undefined, colWidths: number[], head: string[], rows: readonly string[][]): string {
  const probe = newTable(color, colWidths, head);
  probe.push(colWidths.map(() => ''));
  const lines = probe.toString().split('\n');
  const borders = lines[lines.length - 2]?.split(/ +/) ?? [];
  if (colWidths.length === 0 || head.length === 0 || lines.length !== 4 || borders.length !== colWidths.length + 1) {
    const table = newTable(color, colWidths, head); // not a shape drawn here: cli-table3 draws it all
    for (const row of rows) table.push(row);
    return `${table.toString()}\n`;
  }
  let text = `${lines[0]}\n${lines[1]}\n`;
  for (const row of rows) {
    let line = borders[0]!;
    for (let i = 0; i < row.length; i++)
      line += ` ${row[i]}${' '.repeat(colWidths[i]! - 1 - displayWidth(row[i]!))}${borders[i + 1]}`;
    text += `${line}\n`;
  }
  return `${text}${lines[3]}\n`;
}

/** Below this many columns for the values, a key/value table stops wrapping and lets the terminal do it. */
const MIN_VALUE_WIDTH = 20;

/**
 * A key/value table for one resource; values are never cut: with a width they wrap, else they are
 * whole. `onBroken` gets the keys whose values had a word broken across lines.
 */
export function renderKeyValueTable(
  entries: ReadonlyArray<readonly [string, unknown]>,
  opts: { color?: boolean; width?: number; onBroken?: (keys: string[]) => void } = {},
): string {
  const keys = entries.map(([k]) => cellDisplay(k));
  const values = entries.map(([, v]) => cellDisplay(v));
  const keyWidth = Math.max(1, ...keys.map(displayWidth));
  const valueWidth = Math.max(0, ...values.map(displayWidth));
  const room = opts.width === undefined || opts.width <= 0 ? undefined : opts.width - keyWidth - 7;
  const wrapAt = room !== undefined && room < valueWidth && room >= MIN_VALUE_WIDTH ? room : undefined;
  const broken: string[] = [];
  const shownValues = values.map((v, i) => {
    if (wrapAt === undefined) return v;
    const wrapped = wrapToWidth(v, wrapAt);
    if (wrapped.broken) broken.push(keys[i]!);
    return wrapped.lines.join('\n');
  });
  const table = newTable(opts.color, [keyWidth + 2, Math.max(1, wrapAt ?? valueWidth) + 2]);
  for (let i = 0; i < keys.length; i++) table.push([keys[i], shownValues[i]]);
  if (broken.length > 0) opts.onBroken?.(broken);
  return `${table.toString()}\n`;
}
