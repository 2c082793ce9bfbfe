// A delete's backup (issue 19): each record as it was, one JSON line, written and fsynced before its
// DELETE is sent. Each id at most once in the file across reruns: the ids already there are read when
// it is opened, and a record whose id the file holds is not written again.
import { open, readFile, type FileHandle } from 'node:fs/promises';
import { UsageError } from '../../http/errors.js';

export interface DeleteBackup {
  path: string;
  /** appends the record (unless its id is in the file already) and fsyncs before resolving */
  keep(record: { id?: unknown }): Promise<void>;
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

/** Opens (or creates) the backup file for appending; one that cannot be written is a usage error (exit 2) naming it. */
export async function openBackup(path: string): Promise<DeleteBackup> {
  let file: FileHandle;
  let text = '';
  try {
    file = await open(path, 'a');
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
  return {
    path,
    keep(record) {
      const id = typeof record.id === 'string' ? record.id : undefined;
      if (id !== undefined && ids.has(id)) return queue;
      if (id !== undefined) ids.add(id);
      const line = `${torn ? '\n' : ''}${JSON.stringify(record)}\n`;
      torn = false;
      // appends one at a time, each durable before the DELETE it guards
      queue = queue.then(async () => {
        await file.write(line);
        await file.sync();
      });
      return queue;
    },
    close: () => queue.then(() => file.close()),
  };
}
