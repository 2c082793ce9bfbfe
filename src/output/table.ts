// Table rendering with cli-table3 (the only importer of it; loaded lazily by the writers, since
// cli-table3 costs ~13 ms at startup). Every cell is sanitised; nested values
// are shown as compact JSON; long cells are cut so one wide field does not wreck the layout.
import Table from 'cli-table3';
import { cellDisplay, DEFAULT_MAX_CELL_WIDTH, truncate } from './cell.js';
import { sanitizeForTerminal } from './sanitize.js';

export interface TableOptions {
  /** ANSI colours for header and border; false gives plain text */
  color?: boolean;
  /** list tables: longest cell in characters before it is cut with `…` (default 60; 0 = never) */
  maxCellWidth?: number;
  /** the terminal width: the widest columns are cut (with `…`) until the table fits */
  width?: number;
}

const MIN_COLUMN = 6;

/**
 * Column widths that fit `width`: each column's natural width, then the widest shrunk one step at a
 * time (never below a few characters) until the table, borders and padding included, fits.
 */
export function fitColumns(natural: readonly number[], width: number | undefined): number[] {
  const widths = [...natural];
  if (width === undefined || width <= 0) return widths;
  const total = () => widths.reduce((a, w) => a + w + 3, 1); // "│ " + cell + " " per column, one final "│"
  while (total() > width) {
    let widest = 0;
    for (let i = 1; i < widths.length; i++) if (widths[i]! > widths[widest]!) widest = i;
    if (widths[widest]! <= MIN_COLUMN) break;
    widths[widest]!--;
  }
  return widths;
}

export interface KeyValueTableOptions {
  color?: boolean;
  /** the terminal width: long values wrap to fit it; without it values are shown whole */
  width?: number;
}

function style(color: boolean | undefined): { head: string[]; border: string[] } {
  return color ? { head: ['bold'], border: ['grey'] } : { head: [], border: [] };
}

/** No rule between body rows: compact, as gh and kubectl print lists. */
const COMPACT = { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' };

/**
 * A table of `rows` (already display strings or raw values) under `columns`, as one string ending
 * in a newline. Header names are sanitised too: without `--fields` they are the server's keys.
 */
export function renderTable(columns: readonly string[], rows: readonly (readonly unknown[])[], opts: TableOptions = {}): string {
  const max = opts.maxCellWidth ?? DEFAULT_MAX_CELL_WIDTH;
  const head = columns.map((c) => cellDisplay(c, max));
  const body = rows.map((row) => row.map((v) => (typeof v === 'string' ? truncate(sanitizeForTerminal(v), max) : cellDisplay(v, max))));
  const natural = head.map((h, i) => Math.max(h.length, ...body.map((r) => (r[i] ?? '').length)));
  const widths = fitColumns(natural, opts.width);
  const cut = (cells: string[]) => cells.map((c, i) => truncate(c, widths[i]!));
  const table = new Table({
    head: cut(head),
    style: style(opts.color),
    chars: COMPACT,
    wordWrap: false,
  });
  for (const row of body) table.push(cut(row));
  return `${table.toString()}\n`;
}

/** A two-column key/value table for one resource (`get`), keys in record order. */
export function renderKeyValueTable(entries: ReadonlyArray<readonly [string, unknown]>, opts: KeyValueTableOptions = {}): string {
  const keys = entries.map(([k]) => cellDisplay(k));
  const values = entries.map(([, v]) => cellDisplay(v));
  const keyWidth = Math.max(1, ...keys.map((k) => k.length)) + 2;
  const longest = Math.max(0, ...values.map((v) => Math.max(...v.split('\n').map((l) => l.length))));
  const fits = opts.width === undefined || keyWidth + longest + 7 <= opts.width;
  // wrap only what would not fit: a short table keeps its natural width
  const wrapAt = !fits && opts.width! > keyWidth + 20 ? opts.width! - keyWidth - 3 : undefined;
  const table = new Table({
    style: style(opts.color),
    chars: COMPACT,
    ...(wrapAt !== undefined ? { colWidths: [keyWidth, wrapAt], wordWrap: true } : {}),
  });
  for (let i = 0; i < keys.length; i++) {
    table.push([keys[i], values[i]]);
  }
  return `${table.toString()}\n`;
}
