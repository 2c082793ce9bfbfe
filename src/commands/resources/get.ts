// `crm RESOURCE get ID`: GET /{resource}/{id}.
import { writeRecord } from '../../output/writers.js';
import type { Ctx } from '../context.js';
import { recordPath } from '../../http/url.js';
import type { GetOptions } from './command.js';
import { outputOptions } from '../shared/output-options.js';

export async function runGet(o: GetOptions, ctx: Ctx): Promise<void> {
  const client = await ctx.client();
  const res = await client.request<{ data: Record<string, unknown> }>({
    method: 'GET',
    path: recordPath(o.resource, o.id),
    expect: 'success',
  });
  await writeRecord(ctx.format(), ctx.io.stdout, res.body.data, outputOptions(ctx));
}
