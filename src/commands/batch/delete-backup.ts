// A delete's backup in `crm batch` (issue 19): the file named, the records read at the cheapest cost and
// kept before their DELETEs (src/import/send/backup.ts, backup-read.ts), and the file imported again.
import { readFile, rm } from 'node:fs/promises';
import { parse } from 'csv-parse/sync';
import { linksTo } from '../../api/resources.js';
import { csvLine } from '../../import/files/outputs.js';
import { writeFileAtomic } from '../../util/atomic-file.js';
import { crmCommand } from '../shared/command-line.js';
import type { HttpClient } from '../../http/types.js';
import {
  backupIdsIn,
  deleteCostText,
  isBackupFile,
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
  const path = op?.kind === 'delete' && !o.operation && !o.dryRun ? backupPath(o) : undefined;
  let file: DeleteBackup | undefined;
  /** the listing's requests, which the engine (counting from the first row sent) does not see */
  let listing = 0;
  return {
    current: () => file,
    beforeSend: async (checked: BeforeSend): Promise<void> => {
      const read = path !== undefined && client && checked.valid > 0 ? await backupRead(path, checked) : undefined;
      const deletes = checked.valid - (checked.done ?? 0);
      const atLimit = (n: number) => costAtLimitText(n, ctx.clock.now(), client?.pace?.());
      const cost = read && {
        read: readCostText(o.resource, read.toRead, read.kept),
        total: deleteCostText({ ...read, deletes: Math.max(0, deletes), rows: checked.valid }, atLimit),
      };
      await progress.pause(() => confirmDelete(ctx, o, checked.valid, path, cost, checked.done));
      if (path === undefined || checked.valid === 0) return;
      file = await openBackup(path);
      if (read && client && readHow(read.toRead) === 'list') {
        const before = client.stats.requests;
        const listed = await progress
          .pause(() => listIntoBackup(client, o.resource, read.ids, file!, ctx.signal))
          .finally(() => (listing = client.stats.requests - before));
        const rest = read.toRead - listed.kept;
        const then = rest > 0 ? `; the other ${count(rest)} are read with a GET each as they are deleted` : '';
        if (!ctx.globals.quiet)
          ctx.io.stderr.write(
            `Listed ${plural(listed.pages, 'page')} of ${o.resource}: ${count(listed.kept)} found, each written to ${path} just before its DELETE${then}.\n`,
          );
      }
    },
    close: async () => file?.close(),
    /** the summary with `backup_file` when there is one, its requests with the listing's */
    named: (s: ImportSummary): ImportSummary => (path !== undefined ? { ...s, backup_file: path, requests: s.requests + listing } : s),
  };
}

/** The file's ids, how many of them the backup holds already and how many are left to read. */
async function backupRead(path: string, checked: BeforeSend): Promise<{ ids: Set<string>; toRead: number; kept: number }> {
  const ids = new Set<string>();
  for await (const r of checked.records?.() ?? []) if (typeof r.id === 'string') ids.add(r.id);
  const there = await backupIdsIn(path);
  let kept = 0;
  for (const id of ids) if (there.has(id)) kept++;
  return { ids, toRead: ids.size - kept, kept };
}

/** A create from a delete's backup (a file named `*.deleted.ndjson`). */
const isRestore = (o: BatchOptions): boolean => !o.operation && !o.update && !o.delete && !o.dryRun && isBackupFile(o.file);

/**
 * A create from a delete's backup maps each line to its new id through the --results machinery (the
 * engine writes `_line,id` from its journal, every row created by this run or an earlier one): the file
 * named by --results, else a temporary one beside the input, removed once read.
 */
export function restoreResults(o: BatchOptions): { path?: string; temporary: boolean } {
  if (!isRestore(o) || o.results !== undefined) return { path: o.results, temporary: false };
  return { path: `${o.file}.results-${process.pid}-${Date.now()}.tmp.csv`, temporary: true };
}

/**
 * `<input>.owners.csv` (issue 19): the records created from a backup belong to the key's user (the server
 * sets owner_id on create), so each new id with the owner its backup line had, `id,owner_id`, for
 * `crm batch RESOURCE <input>.owners.csv --update`. Written durably (0600, renamed into place) before the
 * summary; only rows created whose backup line had an owner_id; none when there are none.
 */
export async function writeOwners(o: BatchOptions, results: { path?: string; temporary: boolean }): Promise<string | undefined> {
  if (!isRestore(o) || results.path === undefined) return undefined;
  try {
    const lines = (await readFile(o.file, 'utf8')).split('\n');
    const rows = parse<Record<string, string>>(await readFile(results.path, 'utf8'), { columns: true, bom: true, skip_empty_lines: true });
    let out = 'id,owner_id\r\n';
    let n = 0;
    for (const r of rows) {
      const id = r.id ?? '';
      const owner = ownerOf(lines[Number(r._line) - 1]);
      if (id === '' || owner === undefined) continue;
      out += csvLine([id, owner]);
      n++;
    }
    if (n === 0) return undefined;
    const path = `${o.file}.owners.csv`;
    await writeFileAtomic(path, out);
    return path;
  } finally {
    if (results.temporary) await rm(results.path, { force: true });
  }
}

function ownerOf(line: string | undefined): string | undefined {
  try {
    const owner = (JSON.parse(line ?? '') as { owner_id?: unknown } | null)?.owner_id;
    return typeof owner === 'string' && owner !== '' ? owner : undefined;
  } catch {
    return undefined;
  }
}

/** A delete's backup imported again: the links its records had, which cannot come back, and the owners file. */
export function recreated(o: BatchOptions, s: ImportSummary, owners?: string): ImportSummary {
  if (s.operation || !isBackupFile(o.file) || s.created === 0) return s;
  return { ...s, links_not_restored: linksTo(s.resource).map((l) => l.path), ...(owners ? { owners_file: owners } : {}) };
}

/** …and says so: new ids, how to map old to new, and which links did not come back. */
export function noteRecreated(ctx: Ctx, o: BatchOptions, s: ImportSummary): void {
  if (s.links_not_restored === undefined || ctx.globals.quiet) return;
  const links = linksTo(s.resource).map((l) => `${l.words} (${l.path})`);
  const map = o.results
    ? `${o.results} maps them: each row's _line is the line of ${o.file} that holds the old id, its id the new one`
    : `--results FILE maps them (each row's _line is the line of ${o.file} holding the old id, its id the new one)`;
  ctx.warn(
    `The records created from a delete's backup have new ids (the old ids are gone for good); ${map}.` +
      (links.length > 0
        ? `\nTheir links did not come back (the API cannot restore them; link them again with crm links): ${links.join(', ')}.`
        : ''),
  );
  if (s.owners_file !== undefined)
    ctx.warn(
      `They now belong to the key's user (the server sets owner_id on create): ${s.owners_file} holds each new id with the owner ` +
        `its record had, and this command gives them back their owners:\n  ${crmCommand(ctx.globals, ['batch', s.resource, s.owners_file, '--update'])}`,
    );
}
