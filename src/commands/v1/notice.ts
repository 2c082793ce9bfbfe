// The one-line deprecation notice every version 1 command prints on stderr (not with --quiet).
import type { V1Operation } from '../../api/v1.js';
import type { Ctx } from '../context.js';

export function deprecationNotice(ctx: Ctx, op: V1Operation): void {
  const same = op.kind === op.resource ? '' : ` (version 1 ${op.kind} are version 2 ${op.resource})`;
  ctx.warn(`Notice: the version 1 API is deprecated; use 'crm ${op.resource} ${op.instead}'${same} instead.`);
}
