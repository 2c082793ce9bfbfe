// The progress lines of `crm snapshot` on a terminal: a collection's records and pages (no ETA: the API
// gives no count), the links' parents done with an ETA from the rate limit; the pacer's wait either way.
import { plural } from '../../output/plural.js';
import { formatDuration } from '../batch/progress-text.js';

/** waits shorter than this are the pacer's ordinary spacing, not worth a word */
const WAIT_SHOWN_MS = 1000;

/** ` · waiting 12s (rate limit)`, or nothing for a wait under a second */
export const waitText = (waitMs: number): string =>
  waitMs >= WAIT_SHOWN_MS ? ` · waiting ${formatDuration(waitMs / 1000)} (rate limit)` : '';

export interface LinksProgress {
  /** the kind's place among `kinds` (from 0) */
  index: number;
  kinds: number;
  key: string;
  /** parents of this kind done, of `parents` */
  parent: number;
  parents: number;
  /** links in this kind's file */
  links: number;
  /** etaMs for the requests left of every kind; undefined when nothing is known */
  etaMs: number | undefined;
  waitMs: number;
}

/** `Links 1/6: deals.contacts 40/130 parents · 57 links · ETA 1m3s` */
export function linksProgressText(p: LinksProgress): string {
  const eta = p.etaMs !== undefined && p.etaMs > 0 ? ` · ETA ${formatDuration(p.etaMs / 1000)}` : '';
  return `Links ${p.index + 1}/${p.kinds}: ${p.key} ${p.parent}/${plural(p.parents, 'parent')} · ${plural(p.links, 'link')}${eta}${waitText(p.waitMs)}`;
}
