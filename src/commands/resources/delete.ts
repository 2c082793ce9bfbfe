// `crm RESOURCE delete ID…`: asks on a terminal (once, with the count); without one it needs --yes
// (CONTRACT §5). Several ids (or `-`) are deleted as many.ts runs them; a retry that finds the record
// gone (the first answer was lost) counts as deleted.
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

type Answer = { data: Record<string, unknown> | null };

export async function runDelete(o: DeleteOptions, ctx: Ctx): Promise<void> {
  if (isMany(o.ids)) return deleteMany(o, ctx);
  const id = o.ids[0]!;
  const singular = findResource(o.resource)?.singular ?? o.resource;
  const req = { method: 'DELETE' as const, path: recordPath(o.resource, id) };
  if (o.dryRun) return printDryRun(ctx, req);
  await confirmDelete(ctx, o, `${singular} ${id}`, `${singular} ${sanitizeForTerminal(id)}`);
  const res = await (await ctx.client()).request<Answer>({ ...req, expect: 'success' });
  if (res.goneOnRetry) ctx.warn(`The first attempt's answer was lost; its retry found the ${singular} already deleted.`);
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
  if (o.dryRun) {
    for await (const id of ids) await printDryRun(ctx, { method: 'DELETE', path: recordPath(o.resource, id) });
    return;
  }
  if (!o.yes && ids.fromStdin && !ctx.interactive()) {
    // refused before standard input is read: it may hold millions of ids
    throw new UsageError(`refusing to delete the ${o.resource} read from standard input without confirmation: pass --yes`);
  }
  if (!o.yes) {
    const all = await ids.all();
    const what = plural(all.length, singular, o.resource);
    const shown =
      all
        .slice(0, 5)
        .map((id) => sanitizeForTerminal(id))
        .join(', ') + (all.length > 5 ? ', …' : '');
    if (all.length > 0) await confirmDelete(ctx, o, what, `${what} (${shown})`);
  }
  const client = await ctx.client({ concurrencyFlag: true });
  const one = async (path: string, id: string) => {
    const res = await client.request<Answer>({ method: 'DELETE', path, expect: 'success' });
    if (res.goneOnRetry) ctx.warn(`${singular} ${id}: the first attempt's answer was lost; its retry found it already deleted.`);
    return res.body.data ?? { id, deleted: true };
  };
  const line = (id: string) => `Deleted ${singular} ${id}.`;
  await runForIds(ctx, { resource: o.resource, ids, concurrency: o.concurrency, done: 'deleted', one, line });
}

/** Without --yes: a terminal must say yes (`question` names what goes); without one, a usage error. */
async function confirmDelete(ctx: Ctx, o: Pick<DeleteOptions, 'yes'>, what: string, question: string): Promise<void> {
  if (o.yes) return;
  if (!ctx.interactive()) throw new UsageError(`refusing to delete ${what} without confirmation: pass --yes`);
  if (!(await confirm(ctx, `Delete ${question}?`))) throw new UsageError('not deleted: not confirmed');
}

/** A yes/no question on standard error; only asked when stdin and stdout are both terminals. */
async function confirm(ctx: Ctx, question: string): Promise<boolean> {
  return /^y(es)?$/i.test(await ask(ctx, `${question} [y/N] `, 'nothing was deleted'));
}
