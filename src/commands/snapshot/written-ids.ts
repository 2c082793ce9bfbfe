// Each record of a collection written once (issue 28): a server paging by position serves a record again
// when one is inserted before its cursor, so the ids already in the collection's partial file are kept,
// in flat memory: a 64-bit hash of each id's JSON text in a HashTable (../../util/hash-table.ts) pointing
// at the start of the line that holds it (about 40 bytes a record, never the ids themselves). A hash is
// never taken as equality: a hit is confirmed by reading that line back and comparing the ids' JSON text
// (a number id `101` is not the string `"101"`); an id whose hash another id holds (odds about n²/2⁶⁵)
// is kept, exactly, in a small set of its own. The first read of a record is the one kept: the file
// stays append-only, each page durable once written, and no second copy of it is ever needed (on a disk
// that is filling up, a rewrite would be what fails); a record deleted during the read may be missing.
import { readSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { parseJson, stringifyJson } from '../../json/exact-json.js';
import { HashTable } from '../../util/hash-table.js';
import { streamLines } from '../../util/lines.js';

/** The JSON text of a record's id (any JSON type), or undefined when it has none (never taken as a repeat). */
export function idJson(record: unknown): string | undefined {
  if (typeof record !== 'object' || record === null || !Object.hasOwn(record, 'id')) return undefined;
  const id = (record as { id: unknown }).id;
  return typeof id === 'string' ? JSON.stringify(id) : stringifyJson(id); // a string, the usual id: at once
}

/** What WrittenIds needs of a hash table (tests give one whose hashes collide). */
export interface IdTable {
  get(text: string): number | undefined;
  set(text: string, value: number): void;
}

const READ_BYTES = 64 * 1024;

export class WrittenIds {
  /** where each registered line starts in the file (the table's values index it) */
  private starts = new Float64Array(1024);
  private count = 0;
  private table: IdTable;
  /** ids whose hash the table holds for another id */
  private exact = new Set<string>();

  private constructor(
    private readonly fh: FileHandle,
    private readonly newTable: () => IdTable,
  ) {
    this.table = newTable();
  }

  /** The ids of the lines of `file` (a partial file, already cut back to its last saved page). */
  static async of(file: string, newTable: () => IdTable = () => new HashTable()): Promise<WrittenIds> {
    const fh = await open(file, 'r');
    const ids = new WrittenIds(fh, newTable);
    try {
      await streamLines(fh, (line, start) => {
        const id = idOfLine(line);
        if (id !== undefined && !ids.has(id)) ids.add(id, start);
      });
    } catch (err) {
      await fh.close();
      throw err;
    }
    return ids;
  }

  /**
   * The lines of the records of `records` that are not in the file yet (nor earlier in `records`), each
   * registered as written from byte `at` on: the caller appends `text` there next.
   */
  fresh(records: readonly unknown[], at: number): { text: string; count: number } {
    const onPage = new Set<string>();
    const lines: string[] = [];
    const added: Array<[string, number]> = [];
    let bytes = at;
    for (const record of records) {
      const id = idJson(record);
      if (id !== undefined && (onPage.has(id) || this.has(id))) continue;
      const line = `${stringifyJson(record)}\n`;
      if (id !== undefined) {
        onPage.add(id);
        added.push([id, bytes]);
      }
      lines.push(line);
      bytes += Buffer.byteLength(line);
    }
    // after the page is sorted out: a hit is always confirmed against a line already in the file
    for (const [id, start] of added) this.add(id, start);
    return { text: lines.join(''), count: lines.length };
  }

  /** Forgets every id: the file was emptied (the part starts again). */
  clear(): void {
    [this.table, this.exact, this.count] = [this.newTable(), new Set(), 0];
  }

  async close(): Promise<void> {
    await this.fh.close();
  }

  private has(id: string): boolean {
    const n = this.table.get(id);
    if (n === undefined) return false;
    return idOfLine(this.lineAt(this.starts[n]!)) === id || this.exact.has(id);
  }

  /** `id`, not in the file yet, at the line starting at byte `start` */
  private add(id: string, start: number): void {
    if (this.count === this.starts.length) {
      const grown = new Float64Array(this.count * 2);
      grown.set(this.starts);
      this.starts = grown;
    }
    this.starts[this.count] = start;
    if (this.table.get(id) === undefined) this.table.set(id, this.count);
    else this.exact.add(id); // the table's entry for its hash is another id's
    this.count++;
  }

  /** The line starting at byte `start`, without its \n. */
  private lineAt(start: number): string {
    const parts: Buffer[] = [];
    for (let pos = start; ;) {
      const buf = Buffer.allocUnsafe(READ_BYTES);
      const n = readSync(this.fh.fd, buf, 0, READ_BYTES, pos);
      const end = buf.subarray(0, n).indexOf(10);
      parts.push(buf.subarray(0, end < 0 ? n : end));
      if (end >= 0 || n === 0) return Buffer.concat(parts).toString('utf8');
      pos += n;
    }
  }
}

/** The id text of a line of the file; a line that is not JSON has none. */
function idOfLine(line: string): string | undefined {
  try {
    return idJson(parseJson(line));
  } catch {
    return undefined;
  }
}
