// The id map of a restore (CONTRACT §10): `DIR/restore/<target>.ids.csv`, one per target base URL, each snapshot id
// with the id its record has in the target and how it got it (found by id, matched, created). A line is appended and
// fsynced before the step that relies on it; a later line for the same record wins. In memory: a hash table of
// `resource NUL snapshot id` to a line of a temporary file holding the line (a few bytes a record: a snapshot of a
// million contacts keeps its map on disk); each line read back is checked against its key, never a hash alone.
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseCsv } from 'csv-parse';
import { csvLine } from '../../import/files/outputs.js';
import { tempPathFor } from '../../util/atomic-file.js';
import { HashTable } from '../../util/hash-table.js';
import { LineFile } from '../../util/line-file.js';
import { exists } from '../../util/fs.js';
import { safeFileName } from '../../util/safe-name.js';

export type MappedHow = 'found' | 'matched' | 'created';
export interface IdMapEntry {
  resource: string;
  snapshot: string;
  target: string;
  how: MappedHow;
}

const HEADER = ['resource', 'snapshot_id', 'target_id', 'how'];
const HOWS: readonly string[] = ['found', 'matched', 'created'];

/** The folder name a target base URL is known by in DIR/restore/ (its host, port and path, made a safe name). */
export function targetName(baseUrl: string): string {
  const url = new URL(baseUrl);
  return safeFileName(`${url.host}${url.pathname.replace(/\/+$/, '')}`, { forceHash: true });
}

/** `DIR/restore/<target>.ids.csv` */
export const idMapPath = (dir: string, baseUrl: string): string =>
  join(dir, 'restore', `${targetName(baseUrl)}.ids.csv`);

export class IdMap {
  private readonly at = new HashTable();
  private readonly lines: LineFile;
  /** entries per resource (the latest of each record) */
  private readonly counts = new Map<string, number>();

  private constructor(readonly path: string) {
    this.lines = new LineFile(tempPathFor(path));
  }

  /** The map in `path` (none yet: empty); a line that is not one crm wrote is an error naming the file and line. */
  static async open(path: string): Promise<IdMap> {
    const map = new IdMap(path);
    if (!(await exists(path))) return map;
    try {
      const rows = createReadStream(path).pipe(
        // a line appended by hand (an ambiguous record settled: the hint says how) ends in LF, crm's in CRLF
        parseCsv({ bom: true, skip_empty_lines: true, relax_column_count: true, record_delimiter: ['\r\n', '\n'] }),
      );
      let line = 0;
      for await (const r of rows as AsyncIterable<string[]>) {
        line++;
        if (line === 1 && r.join(',') === HEADER.join(',')) continue;
        const [resource, snapshot, target, how] = r;
        if (r.length !== 4 || !resource || !snapshot || !target || !HOWS.includes(how!))
          throw new Error(`${path}, line ${line}: not a line of a restore's id map (${HEADER.join(',')})`);
        map.remember({ resource, snapshot, target, how: how as MappedHow });
      }
    } catch (err) {
      map.close();
      throw err;
    }
    return map;
  }

  get(resource: string, snapshot: string): string | undefined {
    const n = this.at.get(keyOf(resource, snapshot));
    if (n === undefined) return undefined;
    const e = JSON.parse(this.lines.read(n)) as [string, string, string];
    if (e[0] !== resource || e[1] !== snapshot) throw new Error(`${this.path}: two records share a hash (${snapshot})`);
    return e[2];
  }

  count(resource: string): number {
    return this.counts.get(resource) ?? 0;
  }

  /** Appends `entries` to the file and syncs it: once this returns, a kill loses none of them. */
  async add(given: readonly IdMapEntry[]): Promise<void> {
    // an entry the map holds already (a resumed job's creates, read again from its journal) is not written twice
    const entries = given.filter((e) => this.get(e.resource, e.snapshot) !== e.target);
    if (entries.length === 0) return;
    const fh = await open(this.path, 'a+', 0o600);
    try {
      const size = (await fh.stat()).size;
      // a line added by hand without its newline: crm's first line must not run on from it
      const last = size > 0 ? (await fh.read(Buffer.alloc(1), 0, 1, size - 1)).buffer.toString('latin1') : '\n';
      const text =
        (size === 0 ? csvLine(HEADER) : last === '\n' ? '' : '\r\n') +
        entries.map((e) => csvLine([e.resource, e.snapshot, e.target, e.how])).join('');
      await fh.writeFile(text, 'utf8');
      await fh.sync();
    } finally {
      await fh.close();
    }
    for (const e of entries) this.remember(e);
  }

  close(): void {
    this.lines.close();
  }

  private remember(e: IdMapEntry): void {
    const key = keyOf(e.resource, e.snapshot);
    if (this.at.get(key) === undefined) this.counts.set(e.resource, this.count(e.resource) + 1);
    else if (this.get(e.resource, e.snapshot) === undefined) throw new Error(`${this.path}: unreadable entry`);
    this.at.set(key, this.lines.append(JSON.stringify([e.resource, e.snapshot, e.target])));
  }
}

const keyOf = (resource: string, snapshot: string): string => `${resource}\u0000${snapshot}`;
