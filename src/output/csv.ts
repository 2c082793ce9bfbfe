// CSV and TSV cells and rows: RFC 4180 quoting for csv, backslash escapes for tsv, and the
// spreadsheet formula guard for both (undone exactly by `crm batch`: formula-guard.ts).
import { guardFormula } from './formula-guard.js';
import { cellText } from './cell.js';
import { sanitizeForTerminal } from './sanitize.js';

export type CsvSeparator = ',' | '\t';

/** `terminal`: control characters are shown escaped instead of quoted (nothing parses a terminal). */
type CsvCellOptions = { terminal?: boolean };

// The "linear TSV" convention (also PostgreSQL's text COPY format): reversible, one row per line.
const TSV_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** One cell, escaped for `sep` (',' → RFC 4180 quoting; '\t' → `\\`, `\t`, `\n`, `\r` escapes). */
export function csvCell(value: unknown, sep: CsvSeparator = ',', opts: CsvCellOptions = {}): string {
  let text = cellText(value);
  if (typeof value === 'string') text = guardFormula(text);
  if (sep === '\t') text = text.replace(/[\\\t\n\r]/g, (ch) => TSV_ESCAPES[ch]!);
  if (opts.terminal) text = sanitizeForTerminal(text);
  return sep === '\t' ? text : quoteCsv(text);
}

/** A tsv cell back to its text: the exact inverse of csvCell's escapes (`crm batch FILE.tsv`). */
export function unescapeTsv(cell: string): string {
  return cell.replace(/\\([\\tnr])/g, (_m, c: string) =>
    c === 't' ? '\t' : c === 'n' ? '\n' : c === 'r' ? '\r' : '\\',
  );
}

/** The type suffixes a csv/tsv header may carry (`amount:number`), as `crm batch` reads them (import/input/header.ts). */
export const HEADER_TYPES = ['string', 'number', 'boolean', 'list', 'json'] as const;
const TYPED = new RegExp(`:\\s*(?:${HEADER_TYPES.join('|')})\\s*$`, 'i');

/** A column's header that `crm batch` reads back as `name`: one ending as a type suffix would (`tags:list`) is written as a JSON string. */
export function headerName(name: string): string {
  return TYPED.test(name) ? JSON.stringify(name) : name;
}

/** RFC 4180: quoted when it holds a comma, a quote, CR or LF (quotes doubled). No formula guard. */
export function quoteCsv(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One row without its line terminator; the writers end rows with `\n`. */
export function csvRow(values: readonly unknown[], sep: CsvSeparator = ',', opts: CsvCellOptions = {}): string {
  return values.map((v) => csvCell(v, sep, opts)).join(sep);
}
