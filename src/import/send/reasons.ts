// Why rows failed, grouped as `sf data bulk results` groups them: by error code and message, with counts,
// so a summary can say "2,115 × VALIDATION_FAILED email: required" instead of only "2,115 rows failed".
import type { Reason } from '../shapes.js';
export type { Reason } from '../shapes.js';

/** the code of the group that gathers every reason beyond those listed */
export const OTHER_REASONS = '(other)';

/** distinct groups kept; rows of further ones are counted together (a message naming each row's value makes one group a row) */
const MAX_GROUPS = 1000;

export class ReasonTally {
  private readonly groups = new Map<string, Reason>();
  private overflow = 0;

  add(code: string, message: string, count = 1): void {
    if (count <= 0) return;
    const key = `${code}\0${message}`;
    const g = this.groups.get(key);
    if (g) g.count += count;
    else if (this.groups.size < MAX_GROUPS) this.groups.set(key, { code, message, count });
    else this.overflow += count;
  }

  /** The `top` largest groups (ties in first-seen order), and the rest as one `(other)` group; the counts add up to every row added. */
  list(top = 10): Reason[] {
    const all = [...this.groups.values()].sort((a, b) => b.count - a.count);
    const shown = all.slice(0, top).map((r) => ({ ...r }));
    const rest = all.slice(top);
    const rows = rest.reduce((n, r) => n + r.count, this.overflow);
    if (rows === 0) return shown;
    const more = this.overflow > 0 ? ' or more' : '';
    const message = `${rest.length}${more} other ${rest.length === 1 && !more ? 'reason' : 'reasons'}`;
    return [...shown, { code: OTHER_REASONS, message, count: rows }];
  }
}
