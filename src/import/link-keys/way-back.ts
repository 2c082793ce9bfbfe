// The way back of `crm links import` (CONTRACT §7c, §7d): `<input>.linked.csv` (a removal's `<input>.unlinked.csv`),
// one line per request, durable before it is sent, in the linked file's columns (so `links import … --remove` takes it
// back, and a removal's file links again); and an unfinished job's names, kept in the journal folder, so the same
// command after a kill adds to the files the job began (never another run's: a new job takes names of its own).
import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { ApiRecord } from '../../api/envelopes.js';
import { findLink } from '../../api/links.js';
import { UsageError } from '../../http/errors.js';
import { writeFileAtomic } from '../../util/atomic-file.js';
import { exists } from '../../util/fs.js';
import { freeOwnName } from '../../util/own-name.js';
import { csvLine, serverCell, unwritable } from '../files/outputs.js';
import { openCsvLog, readCsvLog } from '../files/csv-log.js';
import { BEFORE_COLUMN, LINKED_COLUMNS, type LinkLayout } from './layout.js';
import type { PlannedRow } from './resolve.js';

/** An unfinished job's way-back names, kept in the journal folder until a run of it ends with every row through. */
export interface WayBack {
  linked: string;
  unlinked: string;
  began: number;
}

export const JobState = {
  path: (dir: string, job: string) => join(dir, 'links', `${job}.json`),
  async find(dir: string, job: string): Promise<WayBack | undefined> {
    const text = await readFile(JobState.path(dir, job), 'utf8').catch(() => undefined);
    if (text === undefined) return undefined;
    const v = JSON.parse(text) as Partial<WayBack>;
    return typeof v.linked === 'string' && typeof v.unlinked === 'string' && typeof v.began === 'number'
      ? (v as WayBack)
      : undefined;
  },
  /** The names a new job takes: `<input>.linked.csv` when no file has it, else `<input>.linked.<time>.csv`. */
  async begin(dir: string, job: string, base: string, now: number): Promise<WayBack> {
    const free = async (kind: string) =>
      (await exists(`${base}.${kind}.csv`)) ? freeOwnName(`${base}.${kind}`, '.csv', now) : `${base}.${kind}.csv`;
    const names = { linked: await free('linked'), unlinked: await free('unlinked'), began: now };
    await mkdir(join(dir, 'links'), { recursive: true, mode: 0o700 });
    await writeFileAtomic(JobState.path(dir, job), JSON.stringify(names));
    return names;
  },
  end: (dir: string, job: string) => rm(JobState.path(dir, job), { force: true }),
};

/** A linked file's row as its pair (`parent_id`, `child_id`). */
const pairOf = (header: readonly string[], row: readonly string[]): string =>
  `${row[header.indexOf('parent_id')] ?? ''}\0${row[header.indexOf('child_id')] ?? ''}`;

/**
 * `<input>.linked.csv` (or `.unlinked.csv` for a removal): one line per request, durable before it is sent, in the
 * linked file's columns, so `crm links import P R FILE --remove` (or without --remove) takes it back.
 */
export class WayBackLog {
  private log?: Promise<Awaited<ReturnType<typeof openCsvLog>>>;
  private readonly columns: string[];
  private written = 0;
  private held?: Set<string>;

  constructor(
    readonly path: string,
    private readonly layout: LinkLayout,
    /** what its lines are: the links a run made, or those a removal took away */
    private readonly kind: 'linked' | 'unlinked',
  ) {
    const fields = (findLink(layout.parent, layout.relation)?.fields ?? []).map((f) => f.name);
    this.columns = [...LINKED_COLUMNS, ...fields, ...(layout.association ? [BEFORE_COLUMN] : [])];
  }

  async add(r: PlannedRow): Promise<void> {
    const a = r.act as { parentId: string; childId: string; before?: string | null };
    this.log ??= openCsvLog(this.path, this.columns, (header) => {
      if (!LINKED_COLUMNS.every((c) => header.includes(c)))
        throw new UsageError(`${this.path} is not a file of links crm wrote; move it away and run again`);
    });
    const log = await this.log;
    // a resumed job's file may hold the pair already: its line was written, the kill came before (or after) its request
    this.held ??= new Set(log.rows.map((r) => pairOf(log.header, r)));
    if (this.held.has(`${a.parentId}\0${a.childId}`)) return;
    this.held.add(`${a.parentId}\0${a.childId}`);
    const fields: ApiRecord = { ...r.extras, ...r.held };
    const cell = (c: string): string => {
      const v =
        c === 'parent'
          ? this.layout.parent
          : c === 'parent_id'
            ? a.parentId
            : c === 'relation'
              ? this.layout.relation
              : c === 'child_id'
                ? a.childId
                : c === BEFORE_COLUMN
                  ? (a.before ?? '')
                  : fields[c];
      return typeof v === 'string' ? serverCell(v) : '';
    };
    const line = csvLine(log.header.map(cell));
    try {
      await log.fh.write(line);
      await log.fh.datasync();
    } catch (err) {
      throw await unwritable(err, this.path, 'the file of links', 'nothing more was sent');
    }
    this.written++;
  }

  /** The pairs an earlier run of the job wrote (a resumed job's file), read only. */
  static async earlier(path: string): Promise<Set<string>> {
    const [header, ...rows] = (await readCsvLog(path)).records;
    return new Set(header ? rows.map((r: string[]) => pairOf(header, r)) : []);
  }

  async close(): Promise<{ linked?: string; unlinked?: string }> {
    const log = await this.log?.catch(() => undefined);
    await log?.fh.close();
    // a rerun that sends nothing still names the file its job began (the link its first run made is there)
    if (this.written === 0 && !(await exists(this.path))) return {};
    return { [this.kind]: this.path };
  }
}
