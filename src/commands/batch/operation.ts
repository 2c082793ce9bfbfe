// Which rows-to-requests operation `crm batch` runs (--update, --delete; `crm links import` its links),
// and a delete's confirmation: the count and the resource, typed back on a terminal, as gh asks.
import { findResource, RESOURCES } from '../../api/resources.js';
import { nearestName } from '../../util/nearest.js';
import { UsageError } from '../../http/errors.js';
import { deleteOperation, updateOperation, type RowOperation } from '../../import/index.js';
import type { MatchPlan } from '../../import/types.js';
import { count, plural } from '../../output/plural.js';
import type { Ctx } from '../context.js';
import { ask } from '../shared/ask.js';
import { linksLostText } from '../shared/links-lost.js';
import { forStderr } from '../../output/width.js';
import { sanitizeForTerminal } from '../../output/sanitize.js';
import type { BatchOptions } from './command.js';

/** The resources `crm batch` takes: creates in batches (`batch`), or updates / deletes row by row. */
function batchable(verb?: 'update' | 'delete'): string[] {
  return RESOURCES.filter((r) => (verb ? r.verbs.includes(verb) : r.batch)).map((r) => r.name);
}

/** A name that is no resource, as a usage error suggesting the nearest (`contact` → `contacts`) of those batch takes. */
export function checkResourceName(name: string, verb?: 'update' | 'delete'): void {
  if (findResource(name)) return;
  const names = batchable(verb);
  const near = nearestName(name, names);
  throw new UsageError(`unknown resource '${name}'${near ? `; did you mean '${near}'?` : ''}`, {
    hint: `batch${verb ? ` --${verb}` : ''} works for ${names.join(', ')}`,
  });
}

/** --update / --delete → the operation (undefined: a create); --id-column becomes a map to `id`. */
export function batchOperation(o: BatchOptions): { operation?: RowOperation; maps?: string[] } {
  const help = { hint: `see ${'`crm batch --help`'}` };
  if (o.update && o.delete)
    throw new UsageError('--update and --delete cannot be used together: one run does one of them', help);
  const verb = o.update ? 'update' : o.delete ? 'delete' : undefined;
  checkResourceName(o.resource, verb);
  if (o.yes && verb !== 'delete' && o.match === undefined)
    throw new UsageError('--yes applies only with --delete or --match (nothing else asks first)', help);
  if (o.backup !== undefined && verb !== 'delete')
    throw new UsageError('--backup and --no-backup apply only with --delete', help);
  if (verb === undefined) {
    if (o.idColumn !== undefined)
      throw new UsageError('--id-column applies only with --update or --delete (a create has no ids)', help);
    return { maps: o.map };
  }
  if (!findResource(o.resource)!.verbs.includes(verb))
    throw new UsageError(`${o.resource} cannot be ${verb}d (${verb} works for ${batchable(verb).join(', ')})`);
  const maps = o.idColumn !== undefined && o.idColumn !== 'id' ? [...(o.map ?? []), `${o.idColumn}=id`] : o.map;
  return { operation: verb === 'update' ? updateOperation(o.resource) : deleteOperation(o.resource), maps };
}

/** Where a delete keeps the records it deletes: --backup FILE, else <input>.deleted.ndjson; none with --no-backup or from standard input without --backup. */
export function backupPath(o: Pick<BatchOptions, 'backup' | 'file'>): string | undefined {
  if (o.backup === false) return undefined;
  if (typeof o.backup === 'string') return o.backup;
  if (o.file === '-')
    throw new UsageError(
      'a delete from standard input needs --backup FILE (or --no-backup): it has no file name to name the backup after',
    );
  return `${o.file}.deleted.ndjson`;
}

/**
 * Before anything is deleted: without --yes, a terminal must confirm by typing the number of rows left to
 * delete or the resource's name; without a terminal --yes is required. Nothing has been sent when this
 * refuses. `done`: the rows an earlier run of the job deleted (a rerun asks about the rest only).
 */
export async function confirmDelete(
  ctx: Ctx,
  o: Pick<BatchOptions, 'yes' | 'resource' | 'file'>,
  valid: number,
  backup: string | undefined,
  cost?: { read: string; total: string },
  done = 0,
): Promise<void> {
  const left = valid - Math.min(valid, Math.max(0, done));
  if (left === 0) return;
  const what =
    plural(left, findResource(o.resource)?.singular ?? o.resource, o.resource) +
    (left < valid ? ` (of ${count(valid)}: an earlier run deleted ${count(valid - left)})` : '');
  const lost = linksLostText(o.resource, backup !== undefined);
  const kept =
    (backup
      ? ` Each is first copied to ${backup}, ${cost?.read ?? 'read with one GET each'}; importing that file creates them again, with new ids.` +
        (cost ? ` It costs ${cost.total}.` : '')
      : '') + (lost ? ` ${lost}` : '');
  if (o.yes) {
    // without a question, the notice alone says where the records go and what reading them costs
    if (backup) ctx.warn(`Deleting ${what}.${kept}`);
    return;
  }
  if (!ctx.interactive()) {
    throw new UsageError(`refusing to delete ${what} without confirmation: nothing was deleted`, {
      hint: 'pass --yes to delete without asking (--dry-run shows what would go)',
    });
  }
  // the question is asked even with --quiet: what it asks about is said with it, wrapped to the terminal
  const text = `This deletes ${what} listed in ${o.file === '-' ? 'standard input' : o.file}. It cannot be undone.${kept}`;
  ctx.io.stderr.write(`${forStderr(ctx.io.stderr, sanitizeForTerminal(text))}\n`);
  const answer = await ask(ctx, `Type ${left} or ${o.resource} to confirm: `, 'nothing was deleted');
  if (answer !== String(left) && answer !== o.resource)
    throw new UsageError(`not confirmed ("${answer.slice(0, 40)}"): nothing was deleted`);
}

/** A reconcile planning this many creates and updates or more asks first on a terminal, as a delete does. */
export const ASK_FROM_WRITES = 100;

/**
 * Before a big reconcile is sent: on a terminal, without --yes, a plan of ASK_FROM_WRITES writes or more (its lines
 * just printed) asks to go on; `yes` or `y` sends it. Without a terminal it is sent, as before (scripts, pipes).
 */
export async function confirmPlan(
  ctx: Ctx,
  o: Pick<BatchOptions, 'yes' | 'resource'>,
  plan: Pick<MatchPlan, 'create' | 'update'>,
  /** a records file's link columns: the resources its rows' records are then linked to (planned after the records) */
  linksTo: readonly string[] = [],
): Promise<void> {
  if (o.yes || plan.create + plan.update < ASK_FROM_WRITES || !ctx.interactive()) return;
  const name = findResource(o.resource)?.singular ?? o.resource;
  const writes = [
    plan.create > 0 ? `create ${plural(plan.create, name, o.resource)}` : '',
    plan.update > 0 ? `update ${plural(plan.update, name, o.resource)}` : '',
  ].filter(Boolean);
  // the trial: the question named 150 deals and not the ~290 links the run then made
  const then = linksTo.length > 0 ? `, then link them to ${linksTo.join(' and ')} as the file says` : '';
  const answer = await ask(ctx, `This will ${writes.join(' and ')}${then}. Send? [y/N] `, 'nothing was sent');
  if (!/^y(es)?$/i.test(answer))
    throw new UsageError(`not confirmed${answer ? ` ("${answer.slice(0, 40)}")` : ''}: nothing was sent`, {
      hint: '--dry-run --plan FILE writes what each row would do; --yes sends without asking',
    });
}
