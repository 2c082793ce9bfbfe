// Rows of a create whose record repeats an earlier row's (the same row pasted twice): found in the check pass
// by a 64-bit hash of the record's JSON in an open-addressed table (`../util/hash-table.ts`: about 32 bytes
// per distinct row, 32 MB for a million), so a repeated row is skipped and named, never
// created twice. Two different records sharing a hash (odds about n²/2⁶⁵: 3·10⁻⁸ at a million rows) would
// skip the second; the warning names it.

import { HashTable } from '../../util/hash-table.js';

export class RowRepeats {
  private readonly table = new HashTable();

  /** The line an identical record came on earlier, or undefined (then this one is remembered). */
  seen(json: string, line: number): number | undefined {
    const earlier = this.table.get(json);
    if (earlier === undefined) this.table.set(json, line);
    return earlier;
  }
}
