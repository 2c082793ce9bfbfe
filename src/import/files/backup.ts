// A delete's backup (issue 19): each record as it was, one JSON line, written and fsynced before its
// DELETE is sent. Each id at most once in the file across reruns: the ids already there are read when
// it is opened, and a record whose id the file holds is not written again. `crm batch --delete` and
// `crm RESOURCE delete ID…` both keep their records here. A listing's records (backup-read.ts) wait in
// a hidden file beside it, `.<backup>.listed`, and each goes to the backup just before its own DELETE:
// the backup never holds a record that was not deleted by the run that wrote it (a run stopped after
// the listing would otherwise leave records there that a re-import would create a second time). A DELETE the
// server refuses takes its record's line back (blanked in place, `blankLine`).
// Below: the file's ids against the backup's (`backupRead`). A backup imported again: owners.ts.
import { parseJson, stringifyJson } from '../../json/exact-json.js';
import { open, readFile, rm, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { ApiRecord } from '../../api/envelopes.js';
import { CrmError, NotFoundError, UsageError } from '../../http/errors.js';
import type { HttpClient } from '../../http/types.js';
import { tempPathFor } from '../../util/atomic-file.js';
import { removeStaleTemps } from '../../util/fs.js';
import type { BeforeSend } from '../types.js';
import { unwritable } from './outputs.js';
import { idText } from '../../api/ids.js';
import { LINKS_KEY, ownRelations, readOwnLinks } from './backup-links.js';

export interface DeleteBackup {
  path: string;
  /** the file holds this id's record already, on disk (written by this run or an earlier one) */
  has(id: string): boolean;
  /**
   * appends the record (unless its id is in the file already) and fsyncs before resolving: true when this call wrote it;
   * after a failed write, every later keep fails
   */
  keep(record: { id?: unknown }): Promise<boolean>;
  /** the server refused the DELETE a keep that wrote the record's line was for: it is still there, so the line is blanked */
  refused(id: string): void;
  /** sets a listing's records aside (the hidden `.listed` file), for `keepBefore` to keep each just before its DELETE; those held or set aside already are not: how many were */
  stage(records: ReadonlyArray<ApiRecord>): Promise<number>;
  /** the record set aside for this id, if any */
  staged(id: string): Promise<ApiRecord | undefined>;
  close(): Promise<void>;
}

/** A delete's backup by its name: `<input>.deleted.ndjson`, or a single delete's `<resource>.deleted.<time>[-n].ndjson`. */
export const isBackupFile = (name: string): boolean => /\.deleted(\.\d{8}T\d{6}Z(-\d+)?)?\.ndjson$/.test(name);

/** A backup line's record's id; undefined for a torn line (from a kill during a write) or an empty one. */
function idOf(line: string): unknown {
  try {
    return (parseJson(line) as Record<string, unknown> | null)?.id;
  } catch {
    return undefined;
  }
}

/** The ids of the records a backup file holds (a torn last line is skipped). */
export function backupIds(text: string): Set<string> {
  const ids = text.split('\n').map((line) => idText(idOf(line)));
  return new Set(ids.filter((id): id is string => id !== undefined));
}

/** Opens (or creates) the backup file for appending; one that cannot be written is a usage error (exit 2) naming it. */
export async function openBackup(path: string): Promise<DeleteBackup> {
  let file: FileHandle;
  let text = '';
  try {
    file = await open(path, 'a', 0o600);
    text = await readFile(path, 'utf8');
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw new UsageError(`cannot write the backup file ${path} (${why}): nothing was deleted`, {
      hint: 'name a file that can be written with --backup FILE (or pass --no-backup to delete without one)',
    });
  }
  const durable = backupIds(text);
  await sweepListed(path);
  const pending = new Map<string, Promise<boolean>>();
  /** each record's line this run appended, by id: its JSON and where it was written (to blank it if its DELETE is refused) */
  const written = new Map<string, { json: string; at: number }>();
  // a torn last line (killed mid-write) is ended, so the next record starts a line of its own
  let torn = text.length > 0 && !text.endsWith('\n');
  let queue: Promise<void> = Promise.resolve();
  let broken: Error | undefined;
  const keep = (record: { id?: unknown }): Promise<boolean> => {
    const id = idText(record.id);
    if (id !== undefined && durable.has(id)) return Promise.resolve(false);
    const already = id === undefined ? undefined : pending.get(id);
    if (already) return already.then(() => false);
    if (broken) return Promise.reject(broken);
    const json = stringifyJson(record)!;
    const line = `${torn ? '\n' : ''}${json}\n`;
    torn = false;
    // appends one at a time, each durable before the DELETE it guards; an id counts as held only then
    const done = queue.then(async () => {
      try {
        if (broken) throw broken;
        await appendWhole(file, line, path);
        await file.sync();
        if (id !== undefined) {
          durable.add(id);
          // where the line landed: this run's appends are one at a time (another run's may make it wrong: blankLine checks)
          written.set(id, { json, at: (await file.stat()).size - Buffer.byteLength(`${json}\n`) });
        }
        return true;
      } catch (err) {
        broken ??= err instanceof Error ? err : new Error(String(err));
        throw err;
      } finally {
        if (id !== undefined) pending.delete(id);
      }
    });
    queue = done.then(
      () => undefined,
      () => undefined,
    );
    if (id !== undefined) pending.set(id, done);
    return done;
  };
  const stage = listedStage(path);
  return {
    path,
    has: (id) => durable.has(id),
    keep,
    refused(id) {
      const line = written.get(id);
      if (line === undefined) return;
      // not held any more: a later row of this id keeps it again before its own DELETE
      written.delete(id);
      durable.delete(id);
      // blanked now, in the write queue (a kill later cannot leave it); a failure leaves the line (nothing lost)
      queue = queue.then(() => blankLine(path, line).catch(() => undefined));
    },
    stage: (records) => stage.add(records.filter((r) => idText(r.id) !== undefined && !durable.has(idText(r.id)!))),
    staged: (id) => stage.get(id),
    close: () => queue.then(() => Promise.all([file.close(), stage.remove()])).then(() => undefined),
  };
}

/**
 * The line of a record whose DELETE was refused, turned into spaces where it is: at the place it was written, or (another
 * run appended to the file meanwhile) the first line with its text no other blank took — the same record kept by
 * another run whose DELETE went through stays once. In place, not rewritten: another run appending to the same file
 * loses nothing (CONTRACT §7c). A blank line is skipped by every reader (import, `backupIds`, jq).
 */
async function blankLine(path: string, line: { json: string; at: number }): Promise<void> {
  const want = Buffer.from(`${line.json}\n`, 'utf8');
  const fh = await open(path, 'r+');
  try {
    const here = Buffer.alloc(want.length);
    await fh.read(here, 0, want.length, line.at);
    let at = here.equals(want) ? line.at : -1;
    if (at < 0) {
      const text = await fh.readFile();
      for (let from = 0; (at = text.indexOf(want, from)) !== -1; from = at + 1)
        if (at === 0 || text[at - 1] === 0x0a) break;
    }
    if (at < 0) return;
    await fh.write(Buffer.alloc(want.length - 1, 0x20), 0, want.length - 1, at);
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * Whether a DELETE's error says the server refused it (the record is still there): a 401, 403, 422 or other refusal of
 * the row, or a 404 to a DELETE sent once (a 404 to one sent again is the earlier one's success). Not a 5xx or no
 * answer: that DELETE may have gone through, and its record stays kept.
 */
export function deleteRefused(err: unknown, sentBefore = false): boolean {
  const status = err instanceof CrmError ? err.status : undefined;
  if (status === undefined || status < 400 || status >= 500 || [408, 425, 429].includes(status)) return false;
  return status !== 404 || !sentBefore;
}

/**
 * All of `text` appended (FileHandle.appendFile goes on after a short write), or a DiskError naming the backup and its
 * folder's free space: a record's line is whole before its DELETE is sent (CONTRACT §7c), and a full disk under the
 * backup is named as such, not as the journal's.
 */
async function appendWhole(file: FileHandle, text: string, path: string): Promise<void> {
  try {
    await file.appendFile(text, 'utf8');
  } catch (err) {
    throw await unwritable(err, path, 'the backup file', 'nothing more was deleted');
  }
}

const listedName = (backupPath: string): string => `.${basename(backupPath)}.listed`;

/**
 * What a killed run left beside the backup: its `.listed` file (`….tmp-PID-hex`: its process gone), and one of a
 * crm from before the process was in the name. A live run's is left alone (two runs may share a --backup FILE).
 */
async function sweepListed(backupPath: string): Promise<void> {
  const own = listedName(backupPath);
  await removeStaleTemps(dirname(backupPath), Date.now(), (name) => name === own);
  await rm(join(dirname(backupPath), own), { force: true }).catch(() => undefined);
}

/**
 * The hidden `.<backup>.listed.tmp-PID-hex` file: a listing's records, written as they come (no fsync: a run killed
 * loses them, and the next one lists or GETs again), found by id at their place in it; removed at close (after a
 * kill, by the next run that opens the backup).
 */
function listedStage(backupPath: string) {
  const at = new Map<string, { pos: number; len: number }>();
  const file = tempPathFor(join(dirname(backupPath), listedName(backupPath)));
  let handle: Promise<FileHandle> | undefined;
  let size = 0;
  const opened = () => (handle ??= open(file, 'w+', 0o600));
  return {
    async add(records: ReadonlyArray<ApiRecord>): Promise<number> {
      const fresh = records.filter((r) => !at.has(idText(r.id)!));
      if (fresh.length === 0) return 0;
      const h = await opened();
      let text = '';
      for (const r of fresh) {
        const line = Buffer.from(`${stringifyJson(r)!}\n`, 'utf8');
        at.set(idText(r.id)!, { pos: size + Buffer.byteLength(text, 'utf8'), len: line.length - 1 });
        text += line.toString('utf8');
      }
      const buf = Buffer.from(text, 'utf8');
      await h.write(buf, 0, buf.length, size);
      size += buf.length;
      return fresh.length;
    },
    async get(id: string): Promise<ApiRecord | undefined> {
      const place = at.get(id);
      if (!place || !handle) return undefined;
      const buf = Buffer.alloc(place.len);
      await (await handle).read(buf, 0, place.len, place.pos);
      return parseJson(buf.toString('utf8')) as ApiRecord;
    },
    async remove(): Promise<void> {
      if (!handle) return;
      await (await handle).close();
      await rm(file, { force: true });
    },
  };
}

/** What keeps a record before its DELETE (keepBefore), and what its DELETE failing does to the backup. */
export interface KeptDelete {
  /** RequestOptions.beforeSend: the record written to the backup; none when there is nothing to write */
  beforeSend?: () => Promise<void>;
  /** the DELETE failed: when the server refused it (deleteRefused), the line this DELETE's keep wrote is blanked */
  failed: (err: unknown, sentBefore?: boolean) => void;
}

/**
 * What keeps a record before its DELETE, as the DELETE's `beforeSend` (RequestOptions): the record as it is
 * — the one a listing set aside, else read now with one GET — written durably to the backup once the
 * pacer has admitted the DELETE, just before it goes (written before a rate-limit wait, a run stopped in
 * it left records there that were never deleted), with its own links when it has some (`_links`: backup-links.ts).
 * Nothing to write when the file holds it already (an
 * earlier run's), or a 404 (gone already). A refused DELETE takes back only the line its own keep wrote
 * (a second DELETE of a record another row deleted is answered 404: that row's line stays).
 */
export async function keepBefore(
  client: HttpClient,
  path: string,
  id: string,
  backup: DeleteBackup,
  /** the record's collection: a deal's, note's or segment's own links are kept with it (backup-links.ts) */
  resource: string,
): Promise<KeptDelete> {
  const found = backup.has(id) ? undefined : ((await backup.staged(id)) ?? (await readRecord(client, path)));
  const links = found && ownRelations(resource).length > 0 ? await readOwnLinks(client, resource, id) : undefined;
  // gone while its links were read: nothing to keep
  const record = links === null ? undefined : links ? { ...found, [LINKS_KEY]: links } : found;
  if (!record) return { failed: () => undefined };
  let wrote = false;
  return {
    // run before each attempt: a retry finds the line written (false), and must not forget that this DELETE wrote it
    beforeSend: async () => {
      wrote = (await backup.keep(record)) || wrote;
    },
    failed: (err, sentBefore = false) => {
      if (wrote && deleteRefused(err, sentBefore)) backup.refused(id);
    },
  };
}

/** The record as it is now; undefined when it is gone (404). */
const readRecord = (client: HttpClient, path: string): Promise<ApiRecord | undefined> =>
  client
    .request<{ data?: ApiRecord }>({ method: 'GET', path, expect: 'success' })
    .then((res) => res.body.data)
    .catch((err: unknown) => {
      if (err instanceof NotFoundError) return undefined;
      throw err;
    });

/** The file's ids (a delete's valid rows, read back), how many of them the backup holds already and how many are left to read. */
export async function backupRead(
  path: string,
  checked: BeforeSend,
  /** the file there is another job's (moved aside before this one writes): none of its ids is this job's */
  foreign = false,
): Promise<{ ids: Set<string>; toRead: number; kept: number }> {
  const ids = new Set<string>();
  for await (const r of checked.records?.() ?? []) if (idText(r.id) !== undefined) ids.add(idText(r.id)!);
  // the ids the backup holds now, read without opening it for writing (none when it does not exist or cannot be read)
  const there = foreign ? new Set<string>() : backupIds(await readFile(path, 'utf8').catch(() => ''));
  const kept = [...ids].filter((id) => there.has(id)).length;
  return { ids, toRead: ids.size - kept, kept };
}
