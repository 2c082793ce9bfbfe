// The text of one value in a cell (csv, tsv, table) and how it looks in a table cell. Apart from
// table.ts so that buffering rows does not load cli-table3.
import { RawNumber, stringifyJson } from '../json/exact-json.js';
import { sanitizeForTerminal } from './sanitize.js';

export const DEFAULT_MAX_CELL_WIDTH = 60;

/** null/undefined → '', scalars via String, a RawNumber as its digits, objects as compact JSON. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
    case 'boolean':
    case 'bigint':
      return String(value);
    default:
      if (value instanceof Date) return value.toISOString();
      if (value instanceof RawNumber) return value.text;
      return stringifyJson(value) ?? '';
  }
}

/** What a value looks like in a table cell: its cellText, sanitised, cut to `maxWidth`. */
export function cellDisplay(value: unknown, maxWidth = 0): string {
  return truncate(sanitizeForTerminal(cellText(value)), maxWidth);
}

/** Cut to `max` code points (never splitting a surrogate pair), ending with `…`; 0 = no limit. */
export function truncate(text: string, max: number): string {
  if (max <= 0 || text.length <= max) return text;
  const chars = Array.from(text);
  if (chars.length <= max) return text;
  return `${chars.slice(0, Math.max(1, max - 1)).join('')}…`;
}
