// The one-line deprecation notice every version 1 command prints on stderr (not with --quiet).
import type { Ctx } from '../context.js';

const INSTEAD: Record<string, string> = {
  people: "'crm contacts list' (version 1 people are version 2 contacts)",
  interactions: "'crm interactions list'",
  companies: "'crm companies update'",
};

export function deprecationNotice(ctx: Ctx, resource: keyof typeof INSTEAD): void {
  ctx.warn(`Notice: the version 1 API is deprecated; use ${INSTEAD[resource]} instead.`);
}
