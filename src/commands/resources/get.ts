// `crm RESOURCE get ID…`: GET /{resource}/{id}; one id prints the record, several (or `-`) a list (many.ts).
import { writeRecord } from '../../output/writers.js';
import type { Ctx } from '../context.js';
import { recordPath } from '../../http/url.js';
import type { GetOptions } from './command.js';
import { outputOptions } from '../shared/output-options.js';
import { Ids, isMany, runForIds } from './many.js';

type Answer = { data: Record<string, unknown> };

export async function runGet(o: GetOptions, ctx: Ctx): Promise<void> {
  if (isMany(o.ids)) {
    const ids = new Ids(o.ids, ctx, o.resource);
    const client = await ctx.client({ concurrencyFlag: true });
    const one = async (path: string) =>
      (await client.request<Answer>({ method: 'GET', path, expect: 'success' })).body.data;
    return runForIds(ctx, { resource: o.resource, ids, concurrency: o.concurrency, done: 'fetched', one });
  }
  const client = await ctx.client();
  const res = await client.request<Answer>({
    method: 'GET',
    path: recordPath(o.resource, o.ids[0]!),
    expect: 'success',
  });
  await writeRecord(ctx.format(), ctx.io.stdout, res.body.data, outputOptions(ctx));
}
