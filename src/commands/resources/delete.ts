// `crm RESOURCE delete ID`: asks on a terminal; without one it needs --yes (CONTRACT §5).
import { findResource } from '../../api/resources.js';
import { UsageError } from '../../http/errors.js';
import { sanitizeForTerminal } from '../../output/sanitize.js';
import { writeRecord } from '../../output/writers.js';
import type { Ctx } from '../context.js';
import { ask } from '../shared/ask.js';
import { printDryRun } from '../shared/dry-run.js';
import { recordPath } from '../../http/url.js';
import type { DeleteOptions } from './command.js';
import { outputOptions } from '../shared/output-options.js';

export async function runDelete(o: DeleteOptions, ctx: Ctx): Promise<void> {
  const singular = findResource(o.resource)?.singular ?? o.resource;
  const req = { method: 'DELETE' as const, path: recordPath(o.resource, o.id) };
  if (o.dryRun) return printDryRun(ctx, req);
  if (!o.yes) {
    if (!ctx.interactive()) {
      throw new UsageError(`refusing to delete ${singular} ${o.id} without confirmation: pass --yes`);
    }
    if (!(await confirm(ctx, `Delete ${singular} ${sanitizeForTerminal(o.id)}?`))) {
      throw new UsageError('not deleted: not confirmed');
    }
  }
  const res = await (await ctx.client()).request<{ data: Record<string, unknown> | null }>({ ...req, expect: 'success' });
  if (res.goneOnRetry) ctx.warn(`The first attempt's answer was lost; its retry found the ${singular} already deleted.`);
  const format = ctx.format();
  if (format === 'table') {
    ctx.io.stdout.write(`Deleted ${singular} ${sanitizeForTerminal(o.id)}.\n`);
    return;
  }
  await writeRecord(format, ctx.io.stdout, res.body.data ?? { id: o.id, deleted: true }, outputOptions(ctx));
}

/** A yes/no question on standard error; only asked when stdin and stdout are both terminals. */
async function confirm(ctx: Ctx, question: string): Promise<boolean> {
  return /^y(es)?$/i.test(await ask(ctx, `${question} [y/N] `, 'nothing was deleted'));
}
