// One snapshot file written page by page, resumable (issue 19): the lines go to DIR/.<name>.partial;
// after each page's lines are on disk (fsync) DIR/.<name>.state records where the part stands (`at`,
// the caller's position: a cursor, a parent and a cursor …) and the file's length and line count then.
// A rerun cuts the partial file back to that length and goes on from `at`, so no line is written
// twice; a finished file is renamed to DIR/<name> and skipped by later runs. Its last state stays
// until the caller has recorded the counts in the manifest (forget()). A full disk is a DiskError naming
// the file that could not be written (writing): what was saved before it is kept, and a rerun resumes.
import { open, readFile, rename, rm, truncate } from 'node:fs/promises';
import path from 'node:path';
import { CrmError } from '../../http/errors.js';
import { unwritable } from '../../import/files/outputs.js';
import { writeFileAtomic } from '../../util/atomic-file.js';
import { exists } from '../../util/fs.js';

/** Where a file stands: the caller's position, and the bytes and lines written before it. */
export interface Saved<P> {
  at: P;
  bytes: number;
  records: number;
}

export interface PagedWriter<P> {
  /** where the earlier run stopped; undefined: from the start */
  readonly resume: Saved<P> | undefined;
  /** the partial file (to read back what the current position wrote) */
  readonly partial: string;
  /** bytes and lines in the file so far */
  readonly bytes: number;
  readonly records: number;
  /** appends `text` (`count` lines, each ending in \n; maybe none) durably, then saves `at` */
  page(text: string, count: number, at: P): Promise<void>;
  /** empties the file and forgets the saved position: the part starts again from nothing */
  restart(): Promise<void>;
}

/**
 * The server refused a position an earlier run saved (a cursor expired, or unknown to a server that
 * restarted: 400, 404, 410 or 422 to the first request of a resumed read): the part must start again.
 */
export const refusedCursor = (err: unknown): boolean =>
  err instanceof CrmError && [400, 404, 410, 422].includes(err.status ?? 0);

export interface PagedResult<P> {
  /** the lines in the file; undefined when a file finished by an earlier run has lost its state (the manifest or the file says) */
  records: number | undefined;
  /** the last position saved (none when nothing was, or it is lost) */
  at: P | undefined;
  /** removes the state once the manifest holds the counts */
  forget: () => Promise<void>;
}

/**
 * `work`, whose failure to write `file` on a full (or failing) disk is a DiskError (exit 8) naming it and
 * its folder's free space, never "a bug in crm"; any other error comes back as it was.
 */
export const writing = <T>(file: string, work: () => Promise<T>): Promise<T> =>
  work().catch(async (err: unknown) => {
    throw await unwritable(err, file, 'the snapshot file', 'what was saved before it is kept');
  });

/** the state file and its temporary copies: what removeStaleTemps may clear */
export const STATE_NAME = /^\.[\w.-]+\.ndjson\.state$/;

/** DIR/<name> (e.g. `contacts.ndjson`, `links/deals.contacts.ndjson`), filled by `fill` unless finished by an earlier run. */
export async function writePaged<P>(
  dir: string,
  name: string,
  validAt: (at: unknown) => at is P,
  fill: (w: PagedWriter<P>) => Promise<void>,
): Promise<PagedResult<P>> {
  const { final, partial, statePath } = pathsOf(dir, name);
  const forget = () => rm(statePath, { force: true });
  if (await exists(final)) {
    const last = await readState(statePath, validAt);
    return { records: last?.records, at: last?.at, forget };
  }
  // without its partial file a saved position is worth nothing: the file starts again
  const resume = (await exists(partial)) ? await readState(statePath, validAt) : undefined;
  // lines after the last saved position (a page written but not recorded) go: that page is read again
  if (await exists(partial)) await truncate(partial, resume?.bytes ?? 0);
  let saved = resume;
  let bytes = resume?.bytes ?? 0;
  let records = resume?.records ?? 0;
  const file = await writing(partial, () => open(partial, 'a', 0o600));
  try {
    await fill({
      resume,
      partial,
      get bytes() {
        return bytes;
      },
      get records() {
        return records;
      },
      async page(text, count, at) {
        if (text !== '') {
          const buf = Buffer.from(text, 'utf8');
          // appendFile goes on after a short write (a disk filling up), which write() would leave unsaid
          await writing(partial, async () => {
            await file.appendFile(buf);
            await file.sync();
          });
          bytes += buf.length;
          records += count;
        }
        saved = { at, bytes, records };
        await writing(statePath, () => writeFileAtomic(statePath, `${JSON.stringify(saved)}\n`, 0o600));
      },
      async restart() {
        await rm(statePath, { force: true });
        await file.truncate(0);
        [bytes, records, saved] = [0, 0, undefined];
      },
    });
  } finally {
    await file.close();
  }
  await writing(final, () => rename(partial, final));
  return { records, at: saved?.at, forget };
}

/** DIR/<name>, and its hidden partial and state files beside it */
function pathsOf(dir: string, name: string) {
  const final = path.join(dir, name);
  const hidden = (ext: string) => path.join(path.dirname(final), `.${path.basename(final)}.${ext}`);
  return { final, partial: hidden('partial'), statePath: hidden('state') };
}

async function readState<P>(file: string, validAt: (at: unknown) => at is P): Promise<Saved<P> | undefined> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(file, 'utf8'));
  } catch {
    return undefined;
  }
  if (!parsed || typeof parsed !== 'object') return undefined;
  const s = parsed as Partial<Saved<unknown>>;
  if (!validAt(s.at) || !Number.isInteger(s.bytes) || !Number.isInteger(s.records)) return undefined;
  return s as Saved<P>;
}

/** Where DIR/<name> stands before a run, read only: finished, or the saved position of its partial file. */
export async function pagedState<P>(
  dir: string,
  name: string,
  validAt: (at: unknown) => at is P,
): Promise<{ finished: boolean; saved: Saved<P> | undefined }> {
  const { final, partial, statePath } = pathsOf(dir, name);
  if (await exists(final)) return { finished: true, saved: undefined };
  return { finished: false, saved: (await exists(partial)) ? await readState(statePath, validAt) : undefined };
}
