// RFC 4180 output for the rejects and results files. The input's own columns are written without
// the spreadsheet-formula guard of src/output/csv.ts: these files are fed back to `crm batch`, so a
// cell must come back exactly as it was read. Columns this tool fills from the server's answers
// (`_error_code`, `_error_message`, `id`) are never imported back, so they get the guard and the
// control-character escapes (serverCell): users are told to open the rejects file in a spreadsheet.
import { guardFormula } from '../output/formula-guard.js';
import { sanitizeForTerminal } from '../output/sanitize.js';

/** One cell: quoted when it holds a comma, a quote, CR or LF (quotes doubled). */
export function csvCell(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** One record, CRLF-terminated. */
export function csvRow(cells: readonly string[]): string {
  return cells.map(csvCell).join(',') + '\r\n';
}

/**
 * Text from the server (or our message quoting it) for a column that is never imported back:
 * ESC/OSC, C1 and bidi controls shown escaped (the project's one sanitiser), then a formula
 * (`=HYPERLINK(…)`, `+`, `-`, `@`) made inert with a leading `'`, the guard of every csv/tsv output.
 */
export function serverCell(text: string): string {
  return guardFormula(sanitizeForTerminal(text));
}
