// Reading crm's tsv back in tests: the inverse of its cell escaping (`\\`, `\t`, `\n`, `\r`), as `crm batch` reads it. A
// cell never holds a raw tab or line end, so splitting a line on tabs finds the cells.
export { unescapeTsv } from '../../src/output/csv.js';
