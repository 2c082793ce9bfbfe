// A delete's backup in `crm batch` (issue 19): the file named, the delete confirmed, the records read at the cheapest
// cost and kept before their DELETEs, and the file imported again (the engine's parts: src/import/files/backup.ts,
// send/backup-read.ts); this file wires them to the command's options and says what happened.
import { linksTo } from '../../api/resources.js';
import { crmCommand, shellWord } from '../shared/command-line.js';
import { UsageError } from '../../http/errors.js';
import type { HttpClient } from '../../http/types.js';
import {
  backupRead,
  deleteCostText,
  listIntoBackup,
  openBackup,
  readCostText,
  readHow,
  type BeforeSend,
  type DeleteBackup,
  type ImportSummary,
  type RowOperation,
} from '../../import/index.js';
import { costAtLimitText } from '../../output/eta.js';
import { count, plural } from '../../output/plural.js';
import { forStderr } from '../../output/width.js';
import { moveToOwnName } from '../../util/own-name.js';
import { stat } from 'node:fs/promises';
import { isAbsolute, relative, resolve } from 'node:path';
import type { Ctx } from '../context.js';
import type { BatchOptions } from './command.js';
import { backupPath, confirmDelete } from './operation.js';

/**
 * A delete's backup (issue 19): named before anything is read, opened (so checked writable: exit 2 naming
 * it) once the delete is confirmed, before the first DELETE; none for a dry run, --no-backup or links.
 * The file's ids are read first, so the confirmation can say what reading the records costs; a file of
 * many ids is read by a listing first (backup-read.ts), the rest by a GET each as it is deleted.
 */
export function deleteBackup(
  ctx: Ctx,
  o: BatchOptions,
  op: RowOperation | undefined,
  client: HttpClient | undefined,
  progress: { pause<T>(f: () => Promise<T>): Promise<T> },
) {
  let path = op?.kind === 'delete' && !o.operation && !o.dryRun ? backupPath(o) : undefined;
  let file: DeleteBackup | undefined;
  /** the listing's requests, which the engine (counting from the first row sent) does not see */
  let listing = 0;
  return {
    path,
    current: () => file,
    beforeSend: async (checked: BeforeSend): Promise<void> => {
      // a rerun of this job keeps adding to the backup its first run named (CONTRACT §7c)
      if (path !== undefined && checked.backup !== undefined) path = journaled(o, path, checked.backup);
      // `<input>.deleted.ndjson` of a delete of other content under this name (each run's created file is one):
      // that job's, moved aside once this one is confirmed, so restoring one backup never brings back the other's
      const foreign = path !== undefined && typeof o.backup !== 'string' && !checked.resumes && (await holds(path));
      const read =
        path !== undefined && client && checked.valid > 0 ? await backupRead(path, checked, foreign) : undefined;
      const deletes = checked.valid - (checked.done ?? 0);
      const atLimit = (n: number) => costAtLimitText(n, ctx.clock.now(), client?.pace?.());
      const cost = read && {
        read: readCostText(o.resource, read.toRead, read.kept),
        total: deleteCostText(
          { ...read, deletes: Math.max(0, deletes), rows: checked.valid, resource: o.resource },
          atLimit,
        ),
      };
      await progress.pause(() => confirmDelete(ctx, o, checked.valid, path, cost, checked.done));
      if (path === undefined || checked.valid === 0) return;
      if (foreign) {
        const aside = await moveToOwnName(path, `${o.file}.deleted`, '.ndjson', (await stat(path)).mtimeMs);
        if (aside && !ctx.globals.quiet)
          ctx.io.stderr.write(
            `${forStderr(ctx.io.stderr, `The backup of an earlier delete of another ${o.file} is now ${aside}; this one's is ${path}.`)}\n`,
          );
      }
      file = await openBackup(path);
      if (read && client && readHow(read.toRead) === 'list') {
        const before = client.stats.requests;
        const listed = await progress
          .pause(() => listIntoBackup(client, o.resource, read.ids, file!, ctx.signal))
          .finally(() => (listing = client.stats.requests - before));
        const rest = read.toRead - listed.kept;
        const found =
          listed.kept === 0
            ? `none of the file's records found there; each is read with a GET as it is deleted, and written to ${path} just before its DELETE`
            : `${count(listed.kept)} found, each written to ${path} just before its DELETE` +
              (rest > 0 ? `; the other ${count(rest)} are read with a GET each as they are deleted` : '');
        if (!ctx.globals.quiet)
          ctx.io.stderr.write(
            `${forStderr(ctx.io.stderr, `Listed ${plural(listed.pages, 'page')} of ${o.resource}: ${found}.`)}\n`,
          );
      }
    },
    close: async () => file?.close(),
    /** the summary with `backup_file` when there is one, its requests with the listing's */
    named: (s: ImportSummary): ImportSummary =>
      path !== undefined
        ? {
            ...s,
            backup_file: s.backup_file ? journaled(o, path, s.backup_file, true) : path,
            requests: s.requests + listing,
          }
        : s,
  };
}

/**
 * …and says so: new ids, how to map old to new, and which links did not come back (a delete's backup); and for any
 * create whose rows' owner_id was left out, the owners file and the command that gives the owners back.
 */
export function noteRecreated(ctx: Ctx, o: BatchOptions, s: ImportSummary): void {
  if (ctx.globals.quiet) return;
  if (s.links_not_restored !== undefined) {
    const lost = new Set(s.links_not_restored);
    const links = linksTo(s.resource)
      .filter((l) => lost.has(l.path))
      .map((l) => `${l.words} (${l.path})`);
    const map = o.results
      ? `${o.results} maps them: each row's _line is the line of ${o.file} that holds the old id, its id the new one`
      : `--results FILE maps them (each row's _line is the line of ${o.file} holding the old id, its id the new one)`;
    ctx.warn(
      `The records created from a delete's backup have new ids (the old ids are gone for good); ${map}.` +
        (links.length > 0
          ? `\nThese links did not come back (a backup holds only a record's own links; link them again with crm links): ${links.join(', ')}.`
          : ''),
    );
  }
  if (s.owners_file !== undefined)
    ctx.warn(
      `The records created now belong to the key's user (the server sets owner_id on create): ${s.owners_file} holds ` +
        `each new id with the owner its row had, and this command gives them back their owners:\n  ${crmCommand(ctx.globals, ['batch', s.resource, s.owners_file, '--match', 'id'])}`,
    );
}

/**
 * The backup an earlier run of this job named (its journal's), for this rerun: without --backup that one; another
 * --backup FILE is refused before anything is sent (one job's records are kept in one file, restored by one command);
 * a finished job's summary names the file that holds its records, whatever --backup says.
 */
function journaled(o: BatchOptions, path: string, earlier: string, finished = false): string {
  if (resolve(path) === earlier) return path;
  if (typeof o.backup === 'string' && !finished)
    throw new UsageError(
      `an earlier run of this delete kept its records in ${shown(earlier)}, not ${path}: nothing was deleted by this run`,
      {
        hint: `rerun with --backup ${shellWord(shown(earlier))} (or without --backup), so one file holds the job's records`,
      },
    );
  return shown(earlier);
}

/** A path as the user would type it here: relative when under the current folder. */
function shown(path: string): string {
  const rel = relative(process.cwd(), path);
  return isAbsolute(path) && rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path;
}

/** A file with something in it (a backup that holds records). */
const holds = (path: string): Promise<boolean> =>
  stat(path).then(
    (st) => st.size > 0,
    () => false,
  );
