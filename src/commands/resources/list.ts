// `crm RESOURCE list`: one page or, with --all, every page (CONTRACT §5).
import { findResource } from '../../api/resources.js';
import type { Ctx } from '../context.js';
import { parseParams } from '../shared/body.js';
import { printList } from '../shared/print-list.js';
import type { ListOptions } from './command.js';

export async function runList(o: ListOptions, ctx: Ctx): Promise<void> {
  await printList(ctx, {
    path: `/${o.resource}`,
    query: parseParams(o.param ?? []),
    limit: o.limit,
    cursor: o.cursor,
    all: Boolean(o.all),
    max: o.max,
    columns: findResource(o.resource)?.columns,
    keep: o.hasTranscript ? (r) => r.has_transcript === true : undefined,
    nextWords: [o.resource, 'list', ...(o.param ?? []).flatMap((p) => ['--param', p])],
  });
}
