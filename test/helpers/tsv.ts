// Reading crm's tsv back in tests: the inverse of its cell escaping (`\\`, `\t`, `\n`, `\r`). A
// cell never holds a raw tab or line end, so splitting a line on tabs finds the cells.
export function unescapeTsv(cell: string): string {
  return cell.replace(/\\([\\tnr])/g, (_m, c: string) =>
    c === 't' ? '\t' : c === 'n' ? '\n' : c === 'r' ? '\r' : '\\',
  );
}
