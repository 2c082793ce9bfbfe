// `crm RESOURCE delete ID…`: asks on a terminal (once, with the count); without one it needs --yes
// (CONTRACT §5). Several ids (or `-`) are deleted as many.ts runs them; a retry that finds the record
// gone (the first answer was lost) counts as deleted. Each record is first kept, as GET returned it, in
// `<resource>.deleted.<time>.ndjson`, a file per run (or --backup FILE; not with --no-backup), as `crm batch --delete` keeps its own.
import { findResource } from '../../api/resources.js';
import { UsageError } from '../../http/errors.js';
import { plural } from '../../output/plural.js';
import { sanitizeForTerminal } from '../../output/sanitize.js';
import { writeRecord } from '../../output/writers.js';
import type { Ctx } from '../context.js';
import { ask } from '../shared/ask.js';
import { printDryRun } from '../shared/dry-run.js';
import { recordPath } from '../../http/url.js';
import type { DeleteOptions } from './command.js';
import { outputOptions } from '../shared/output-options.js';
import { Ids, isMany, runForIds } from './many.js';
import { keepBefore, openBackup, type DeleteBackup } from '../../import/index.js';
import { ownRelations } from '../../import/files/backup-links.js';
import type { HttpClient } from '../../http/types.js';
import { crmCommand } from '../shared/command-line.js';
import { linksLostText } from '../shared/links-lost.js';
import { forStderr } from '../../output/width.js';
import { createOwnFile, freeOwnName } from '../../util/own-name.js';

type Answer = { data: Record<string, unknown> | null };

export async function runDelete(o: DeleteOptions, ctx: Ctx): Promise<void> {
  if (isMany(o.ids)) return deleteMany(o, ctx);
  const id = o.ids[0]!;
  const singular = findResource(o.resource)?.singular ?? o.resource;
  const req = { method: 'DELETE' as const, path: recordPath(o.resource, id) };
  if (o.dryRun) return printDryRun(ctx, req);
  const file = await backupFile(o, ctx.clock.now());
  await confirmDelete(ctx, o, `${singular} ${id}`, `${singular} ${sanitizeForTerminal(id)}`, file?.path);
  const client = await ctx.client();
  const res = await withBackup(ctx, o, file, (backup, deleted) =>
    deleteKept(client, { resource: o.resource, path: req.path, id }, backup, deleted),
  );
  if (res.goneOnRetry)
    ctx.warn(`The first attempt's answer was lost; its retry found the ${singular} already deleted.`);
  const format = ctx.format();
  if (format === 'table') {
    ctx.io.stdout.write(`Deleted ${singular} ${sanitizeForTerminal(id)}.\n`);
    return;
  }
  await writeRecord(format, ctx.io.stdout, res.body.data ?? { id, deleted: true }, outputOptions(ctx));
}

async function deleteMany(o: DeleteOptions, ctx: Ctx): Promise<void> {
  const singular = findResource(o.resource)?.singular ?? o.resource;
  const ids = new Ids(o.ids, ctx, o.resource);
  const file = await backupFile(o, ctx.clock.now());
  if (o.dryRun) {
    for await (const id of ids) await printDryRun(ctx, { method: 'DELETE', path: recordPath(o.resource, id) });
    return;
  }
  if (!o.yes && ids.fromStdin && !ctx.interactive()) {
    // refused before standard input is read: it may hold millions of ids
    throw new UsageError(
      `refusing to delete the ${o.resource} read from standard input without confirmation: pass --yes`,
    );
  }
  if (!o.yes) {
    const all = await ids.all();
    const what = plural(all.length, singular, o.resource);
    const shown =
      all
        .slice(0, 5)
        .map((id) => sanitizeForTerminal(id))
        .join(', ') + (all.length > 5 ? ', …' : '');
    if (all.length > 0) await confirmDelete(ctx, o, what, `${what} (${shown})`, file?.path);
  }
  const client = await ctx.client({ concurrencyFlag: true });
  await withBackup(ctx, o, file, async (backup, deleted) => {
    const one = async (path: string, id: string) => {
      const res = await deleteKept(client, { resource: o.resource, path, id }, backup, deleted);
      if (res.goneOnRetry)
        ctx.warn(`${singular} ${id}: the first attempt's answer was lost; its retry found it already deleted.`);
      return res.body.data ?? { id, deleted: true };
    };
    const line = (id: string) => `Deleted ${singular} ${id}.`;
    await runForIds(ctx, { resource: o.resource, ids, concurrency: o.concurrency, done: 'deleted', one, line });
  });
}

interface BackupFile {
  /** the file named before the run (in the question): --backup FILE, or the first free name of this run's own */
  path: string;
  /** this run's own file, `<resource>.deleted.<time>.ndjson` (`-2`, … when another run has that name), made when opened */
  own?: { stem: string; now: number };
}

/**
 * Where the records deleted are kept: --backup FILE, else a file of this run's own in the current folder (one file
 * gathering every delete made there was restored whole again and again; two runs in the same second each have
 * their own, CONTRACT §7c); none with --no-backup.
 */
async function backupFile(o: Pick<DeleteOptions, 'backup' | 'resource'>, now: number): Promise<BackupFile | undefined> {
  if (o.backup === false) return undefined;
  if (typeof o.backup === 'string') return { path: o.backup };
  const stem = `${o.resource}.deleted`;
  return { path: await freeOwnName(stem, '.ndjson', now), own: { stem, now } };
}

/** One DELETE, its record kept first; `deleted` is told once the server says it is gone. */
async function deleteKept(
  client: HttpClient,
  { resource, path, id }: { resource: string; path: string; id: string },
  backup?: DeleteBackup,
  deleted?: Deleted,
) {
  const kept = backup ? await keepBefore(client, path, id, backup, resource) : undefined;
  const res = await client
    .request<Answer>({ method: 'DELETE', path, expect: 'success', beforeSend: kept?.beforeSend })
    .catch((err: unknown) => {
      // refused: the record is still there, so the backup does not keep it as deleted
      kept?.failed(err);
      throw err;
    });
  deleted?.(id);
  return res;
}

type Deleted = (id: string) => void;

/**
 * Runs the deletes with the backup open (opened after the confirmation, before any request: a file that
 * cannot be written is exit 2, nothing deleted), then says on stderr where the records were kept.
 */
async function withBackup<T>(
  ctx: Ctx,
  o: DeleteOptions,
  file: BackupFile | undefined,
  run: (b?: DeleteBackup, deleted?: Deleted) => Promise<T>,
): Promise<T> {
  if (file === undefined) return run();
  // made exclusively: another run that took the name since it was asked about makes this one take the next
  const path = file.own
    ? await createOwnFile(file.own.stem, '.ndjson', file.own.now).catch(() => file.path)
    : file.path;
  const backup = await openBackup(path);
  // the records kept whose DELETE went through: a refused one is still in the CRM, so nothing offers to re-create it
  const kept = new Set<string>();
  const gone = new Set<string>();
  const counting: DeleteBackup = { ...backup, keep: (r) => (kept.add(String(r.id)), backup.keep(r)) };
  try {
    return await run(counting, (id) => gone.add(id));
  } finally {
    await backup.close();
    const again = crmCommand(ctx.globals, ['batch', o.resource, path]);
    const ids = [...kept].filter((id) => gone.has(id)).length;
    if (ids > 0)
      ctx.warn(
        `Kept as ${ids === 1 ? 'it was' : 'they were'} in ${path} before the DELETE (\`${again}\` creates ${ids === 1 ? 'it' : 'them'} again, with new ids; ` +
          (ownRelations(o.resource).length > 0
            ? `and links ${ids === 1 ? 'it' : 'them'} again to the records ${ids === 1 ? 'it was' : 'they were'} linked to that are still there; not the links to ${ids === 1 ? 'it' : 'them'}, which are gone).`
            : `not ${ids === 1 ? 'its' : 'their'} links, which are gone).`),
      );
  }
}

/** Without --yes: a terminal must say yes (`question` names what goes, and the backup file); without one, a usage error. */
async function confirmDelete(
  ctx: Ctx,
  o: Pick<DeleteOptions, 'yes' | 'resource'>,
  what: string,
  question: string,
  backup: string | undefined,
): Promise<void> {
  if (o.yes) return;
  if (!ctx.interactive()) throw new UsageError(`refusing to delete ${what} without confirmation: pass --yes`);
  // the file on a line of its own: the question stays short enough for one line of a terminal
  if (backup !== undefined) {
    const lost = linksLostText(o.resource);
    ctx.io.stderr.write(
      `${forStderr(ctx.io.stderr, `Each record is first kept, as it is now, in ${backup}.${lost ? ` ${lost}` : ''}`)}\n`,
    );
  }
  if (!(await confirm(ctx, `Delete ${question}?`))) throw new UsageError('not deleted: not confirmed');
}

/** A yes/no question on standard error; only asked when stdin and stdout are both terminals. */
async function confirm(ctx: Ctx, question: string): Promise<boolean> {
  return /^y(es)?$/i.test(await ask(ctx, `${question} [y/N] `, 'nothing was deleted'));
}
