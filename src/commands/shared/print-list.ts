// Prints a list endpoint: one page (with a hint at the next), or with `all` every
// page, streamed to the writer one record at a time so memory stays flat (CONTRACT §3, §5).
import type { ApiRecord } from '../../api/envelopes.js';
import { createListWriter, writeWhole } from '../../output/writers.js';
import { crmCommand } from './command-line.js';
import type { Ctx } from '../context.js';
import { outputOptions } from './output-options.js';

export interface PrintListOptions {
  path: string;
  query?: Record<string, string>;
  limit?: number;
  cursor?: string;
  all: boolean;
  max?: number;
  columns?: readonly string[];
  /** table: columns never cut besides ids (shown whole or hidden) */
  whole?: readonly string[];
  keep?: (record: ApiRecord) => boolean;
  /** the words of the command that shows the next page, e.g. `contacts list --param status=open` */
  nextWords: string[];
}

export async function printList(ctx: Ctx, o: PrintListOptions): Promise<void> {
  const client = await ctx.client();
  const format = ctx.format();
  const writer = createListWriter(format, ctx.io.stdout, outputOptions(ctx, { columns: o.columns, whole: o.whole }));
  const keep = o.keep ?? (() => true);
  let written = 0;
  /** records were left out after the last one printed (--max reached mid-page) */
  let cut = false;
  const emit = async (records: AsyncIterable<ApiRecord> | Iterable<ApiRecord>): Promise<void> => {
    for await (const record of records) {
      if (o.max !== undefined && written >= o.max) {
        cut = true;
        break;
      }
      if (!keep(record)) continue;
      await writer.write(record);
      written++;
    }
  };
  // --max also bounds the requests (paginatePages), so a page's end cursor follows the last record
  // printed; with a filter the kept records are counted here, and a cut page gets no cursor.
  const paging = {
    query: o.query,
    cursor: o.cursor,
    signal: ctx.signal,
    max: o.keep === undefined ? o.max : undefined,
  };
  if (o.all) {
    await writeWhole(writer, () => emit(client.paginate(o.path, { ...paging, limit: o.limit ?? 100 })));
    return;
  }
  const pages = client.pages(o.path, { ...paging, limit: o.limit });
  const first = await pages.next();
  await pages.return(undefined);
  const page = first.done ? undefined : first.value;
  await emit(page?.data ?? []);
  await writer.end();
  // the hints go to stderr: in table mode always, in other formats when a person watches stderr
  // (`-o csv > x.csv` typed in a terminal must not lose the second page without a word)
  if (format !== 'table' && !ctx.io.stderr.isTTY) return;
  if (written === 0 && format === 'table') ctx.warn('No results.');
  if (cut || page?.cut) ctx.warn('More results: raise --max to see them, or use --all');
  else if (page?.hasNextPage && page.endCursor) {
    const limit = o.limit === undefined ? [] : ['--limit', String(o.limit)];
    const next = crmCommand(ctx.globals, [...o.nextWords, ...limit, '--cursor', page.endCursor]);
    ctx.warn(`More results: ${next} (or --all for every page)`);
  }
}
