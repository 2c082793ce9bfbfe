// A delete's backup (issue 19): each record as it was, one JSON line, written and fsynced before its
// DELETE is sent. Each id at most once in the file across reruns: the ids already there are read when
// it is opened, and a record whose id the file holds is not written again. `crm batch --delete` and
// `crm RESOURCE delete ID…` both keep their records here.
import { open, readFile, type FileHandle } from 'node:fs/promises';
import type { ApiRecord } from '../../api/envelopes.js';
import { NotFoundError, UsageError } from '../../http/errors.js';
import type { HttpClient } from '../../http/types.js';

export interface DeleteBackup {
  path: string;
  /** the file holds this id's record already (written by this run or an earlier one) */
  has(id: string): boolean;
  /** appends the record (unless its id is in the file already) and fsyncs before resolving */
  keep(record: { id?: unknown }): Promise<void>;
  /** appends several (a page of a listing) in one write and one fsync, each id at most once */
  keepAll(records: ReadonlyArray<{ id?: unknown }>): Promise<void>;
  close(): Promise<void>;
}

/** The ids of the records a backup file holds (a torn last line, from a kill during a write, is skipped). */
export function backupIds(text: string): Set<string> {
  const ids = new Set<string>();
  for (const line of text.split('\n')) {
    try {
      const id = (JSON.parse(line) as { id?: unknown } | null)?.id;
      if (typeof id === 'string') ids.add(id);
    } catch {
      // a torn or empty line
    }
  }
  return ids;
}

/** The ids a backup file holds now, without opening it for writing (none when it does not exist or cannot be read). */
export async function backupIdsIn(path: string): Promise<Set<string>> {
  return backupIds(await readFile(path, 'utf8').catch(() => ''));
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
  const ids = backupIds(text);
  // a torn last line (killed mid-write) is ended, so the next record starts a line of its own
  let torn = text.length > 0 && !text.endsWith('\n');
  let queue: Promise<void> = Promise.resolve();
  const keepAll = (records: ReadonlyArray<{ id?: unknown }>): Promise<void> => {
    let lines = '';
    for (const record of records) {
      const id = typeof record.id === 'string' ? record.id : undefined;
      if (id !== undefined && ids.has(id)) continue;
      if (id !== undefined) ids.add(id);
      lines += `${JSON.stringify(record)}\n`;
    }
    if (lines === '') return queue;
    if (torn) lines = `\n${lines}`;
    torn = false;
    // appends one at a time, each durable before the DELETEs it guards
    queue = queue.then(async () => {
      await file.write(lines);
      await file.sync();
    });
    return queue;
  };
  return {
    path,
    has: (id) => ids.has(id),
    keep: (record) => keepAll([record]),
    keepAll,
    close: () => queue.then(() => file.close()),
  };
}

/**
 * A record as it is, written durably to the backup before its DELETE: read with one GET unless the file
 * holds it already (an earlier run's, or a listing's); a 404 (gone already) writes nothing.
 */
export async function keepBefore(client: HttpClient, path: string, id: string, backup: DeleteBackup): Promise<void> {
  if (backup.has(id)) return;
  const record = await client
    .request<{ data?: ApiRecord }>({ method: 'GET', path, expect: 'success' })
    .then((res) => res.body.data)
    .catch((err: unknown) => {
      if (err instanceof NotFoundError) return undefined;
      throw err;
    });
  if (record) await backup.keep(record);
}
