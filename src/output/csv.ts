// CSV and TSV cells and rows: RFC 4180 quoting for csv, backslash escapes for tsv, and the OWASP
// CSV-injection guard for both (a spreadsheet opening either would run a formula). The guard is
// undone exactly by `crm batch` (formula-guard.ts), so an exported list imports back unchanged.
import { guardFormula } from './formula-guard.js';
import { cellText } from './cell.js';
import { sanitizeForTerminal } from './sanitize.js';

export type CsvSeparator = ',' | '\t';

export interface CsvCellOptions {
  /**
   * The output is a terminal: control characters are shown escaped (sanitizeForTerminal) instead
   * of being quoted, since nothing will parse this and a raw ESC or CR would reach the terminal.
   */
  terminal?: boolean;
}

/** One cell, escaped for `sep` (',' → RFC 4180 quoting; '\t' → `\\`, `\t`, `\n`, `\r` escapes). */
export function csvCell(value: unknown, sep: CsvSeparator = ',', opts: CsvCellOptions = {}): string {
  let text = cellText(value);
  if (typeof value === 'string') text = guardFormula(text);
  if (sep === '\t') {
    text = escapeTsv(text);
    return opts.terminal ? sanitizeForTerminal(text) : text;
  }
  if (opts.terminal) text = sanitizeForTerminal(text);
  return quoteCsv(text);
}

/** RFC 4180: quoted when it holds a comma, a quote, CR or LF (quotes doubled). No formula guard. */
export function quoteCsv(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One row without its line terminator; the writers end rows with `\n`. */
export function csvRow(values: readonly unknown[], sep: CsvSeparator = ',', opts: CsvCellOptions = {}): string {
  let line = '';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) line += sep;
    line += csvCell(values[i], sep, opts);
  }
  return line;
}

// The "linear TSV" convention (also PostgreSQL's text COPY format): reversible, one row per line.
function escapeTsv(text: string): string {
  if (!/[\\\t\n\r]/.test(text)) return text;
  return text.replace(/[\\\t\n\r]/g, (ch) => (ch === '\\' ? '\\\\' : ch === '\t' ? '\\t' : ch === '\n' ? '\\n' : '\\r'));
}
