// Each distinct string once, with the number it first came with (a line of the file): the hash table (hash-table.ts)
// says where the string's text was put on disk, and that text is compared — two strings sharing a 64-bit hash are
// never taken for one. Memory: the table's slot and 8 bytes a string; the strings themselves are on disk.
import { join } from 'node:path';
import { tempPathFor } from './atomic-file.js';
import { HashTable } from './hash-table.js';
import { LineFile } from './line-file.js';

export class FirstSeen {
  private readonly texts: LineFile;
  private firsts = new Float64Array(1024);
  /** strings whose hash an earlier, different string has: their text's number (rare: kept in memory) */
  private readonly sharing = new Map<string, number>();

  /** `table`: column 0 is this one's (a caller may use column 1, as the match index does); `dir`: for the temporary file */
  constructor(
    dir: string,
    readonly table = new HashTable(),
  ) {
    this.texts = new LineFile(tempPathFor(join(dir, 'keys')));
  }

  /** how many distinct strings */
  get size(): number {
    return this.texts.count;
  }

  /** The number `text` first came with, or undefined. */
  get(text: string): number | undefined {
    const n = this.where(text);
    return n === undefined ? undefined : this.firsts[n];
  }

  /** The number `text` first came with, or undefined when it is new (then `value` is remembered for it). */
  seen(text: string, value: number): number | undefined {
    const earlier = this.get(text);
    if (earlier !== undefined) return earlier;
    const n = this.texts.append(text);
    if (n === this.firsts.length) {
      const grown = new Float64Array(n * 2);
      grown.set(this.firsts);
      this.firsts = grown;
    }
    this.firsts[n] = value;
    if (this.table.get(text) === undefined) this.table.set(text, n);
    else this.sharing.set(text, n);
    return undefined;
  }

  close(): void {
    this.texts.close();
  }

  private where(text: string): number | undefined {
    const n = this.table.get(text);
    if (n === undefined) return undefined;
    return this.texts.read(n) === text ? n : this.sharing.get(text);
  }
}
