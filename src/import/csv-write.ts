// RFC 4180 output for the rejects and results files. Deliberately without the spreadsheet-formula
// guard of src/output/csv.ts: these files are fed back to `crm batch`, so a cell must come back
// exactly as it was read.

/** One cell: quoted when it holds a comma, a quote, CR or LF (quotes doubled). */
export function csvCell(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** One record, CRLF-terminated. */
export function csvRow(cells: readonly string[]): string {
  return cells.map(csvCell).join(',') + '\r\n';
}
