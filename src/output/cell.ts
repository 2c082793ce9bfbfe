// How one value looks in a table cell: sanitised, nested values as compact JSON, long text cut.
// Kept apart from table.ts so that buffering rows does not load cli-table3.
import { RawNumber, stringifyJson } from '../json/exact-json.js';
import { sanitizeForTerminal } from './sanitize.js';

export const DEFAULT_MAX_CELL_WIDTH = 60;

/** What a value looks like in a cell: '' for null/undefined, compact JSON for objects, sanitised text. */
export function cellDisplay(value: unknown, maxWidth = 0): string {
  let text: string;
  if (value === null || value === undefined) text = '';
  else if (typeof value === 'string') text = value;
  else if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') text = String(value);
  else if (value instanceof RawNumber) text = value.text;
  else text = stringifyJson(value) ?? '';
  return truncate(sanitizeForTerminal(text), maxWidth);
}

/** Cut to `max` code points (never splitting a surrogate pair), ending with `…`; 0 = no limit. */
export function truncate(text: string, max: number): string {
  if (max <= 0 || text.length <= max) return text;
  const chars = Array.from(text);
  if (chars.length <= max) return text;
  return `${chars.slice(0, Math.max(1, max - 1)).join('')}…`;
}
