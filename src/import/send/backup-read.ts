// How a delete's backup reads the records it keeps (issue 19), at the cheapest cost the API allows: one GET
// per id, or, for a file of many ids, the collection listed 100 records a request while the pages pay for
// themselves, then one GET per id the listing did not find. The API gives no collection's size, so the rule
// looks only at what the pages find: listing goes on while the file's ids found so far are at least the pages
// read (each page saved at least the one GET it cost), so the read never costs more than one request above
// a GET per id, and costs a page per 100 ids when the file's records fill the pages.
import type { ApiRecord } from '../../api/envelopes.js';
import { PAGE_SIZE_MAX } from '../../api/resources.js';
import { InterruptedError } from '../../http/errors.js';
import type { HttpClient } from '../../http/types.js';
import { count, plural } from '../../output/plural.js';
import type { DeleteBackup } from '../files/backup.js';
import { idText } from '../../api/ids.js';
import { ownRelations } from '../files/backup-links.js';

/** Fewer ids to read than a page holds: one GET each (a listing could cost one request more). */
export const LIST_MIN_IDS = PAGE_SIZE_MAX;

/** How the records are read: a listing first when there are at least LIST_MIN_IDS ids to read. */
export function readHow(toRead: number): 'list' | 'get' {
  return toRead >= LIST_MIN_IDS ? 'list' : 'get';
}

/**
 * The read's cost in requests, least and most: a listing whose first pages hold just the ids to read, and
 * one that stops once its pages fall behind (a page more than the file's ids it found: `toRead + 1`, and
 * in a rerun, up to one more per id kept already, whose pages it reads again).
 */
export function readCost(toRead: number, kept = 0): { least: number; most: number } {
  if (toRead === 0) return { least: 0, most: 0 };
  if (readHow(toRead) === 'get') return { least: toRead, most: toRead };
  return { least: Math.ceil(toRead / PAGE_SIZE_MAX), most: toRead + kept + 1 };
}

interface ListedRead {
  pages: number;
  /** records the listing set aside, each kept in the backup just before its DELETE */
  kept: number;
}

/**
 * Lists `/{resource}` 100 a page, setting aside each record whose id is wanted and not in the backup yet
 * (`DeleteBackup.stage`: it goes to the backup just before its own DELETE, so a run stopped early leaves
 * none there that it did not delete), while the pages pay for themselves; the rest are read by GET as each is deleted.
 */
export async function listIntoBackup(
  client: HttpClient,
  resource: string,
  wanted: ReadonlySet<string>,
  backup: DeleteBackup,
  signal?: AbortSignal,
): Promise<ListedRead> {
  let left = [...wanted].filter((id) => !backup.has(id)).length;
  let [pages, found, kept] = [0, 0, 0];
  for await (const page of client.pages(`/${resource}`, { limit: PAGE_SIZE_MAX, signal })) {
    pages++;
    const mine = page.data.filter((r: ApiRecord) => wanted.has(idText(r.id) ?? ''));
    const staged = await backup.stage(mine);
    [found, left, kept] = [found + mine.length, left - staged, kept + staged];
    if (signal?.aborted)
      throw new InterruptedError('interrupted while reading the records to keep, before this run deleted any');
    // another page only while ids are left to find and the file's ids found so far (those in the backup already
    // included, so a rerun reading again the pages a killed run read goes on) are at least the pages read
    if (!page.hasNextPage || left <= 0 || found < pages) break;
  }
  return { pages, kept };
}

/** What the confirmation says the backup read costs, in requests (the time is said for the whole delete: deleteCostText). */
export function readCostText(resource: string, toRead: number, kept: number): string {
  const there = kept > 0 ? `; ${count(kept)} ${kept === 1 ? 'is' : 'are'} in it already` : '';
  if (toRead === 0) return `each is in it already: no request to read them`;
  const { least, most } = readCost(toRead, kept);
  const n = (r: number) => plural(r, 'request');
  if (readHow(toRead) === 'get') return `read with one GET each: ${n(most)}${there}`;
  return (
    `read by listing ${resource}, ${PAGE_SIZE_MAX} a page, while the pages find them, then one GET for each not found: ` +
    `from ${n(least)} to ${n(most)}${there}`
  );
}

/**
 * The whole delete's cost (issue 19): the reads and one DELETE per row left (a rerun: the rows an earlier
 * run did not finish), in requests and in time at the rate limit (`atLimit`: costAtLimitText) for all of
 * them. That is the least time the limit allows them, no upper bound: never "at most" (a delete said
 * "at most about 2.1 min" took 2.5).
 */
export function deleteCostText(
  r: { toRead: number; kept: number; deletes: number; rows: number; resource?: string },
  atLimit: (requests: number) => string,
): string {
  const { least, most } = readCost(r.toRead, r.kept);
  const did = `it did ${count(r.rows - r.deletes)} of ${count(r.rows)}`;
  const dels =
    plural(r.deletes, 'DELETE') + (r.deletes < r.rows ? `, for the rows an earlier run did not finish (${did})` : '');
  // a deal's, note's or segment's own links, kept with it: a GET per relation (one more per further 100 links)
  const links = r.toRead * (r.resource === undefined ? 0 : ownRelations(r.resource).length);
  const reads =
    (readHow(r.toRead) === 'get' ? plural(most, 'GET') : 'the reads') +
    (links > 0 ? `, ${plural(links, 'GET')} of their links or more` : '');
  const [fewest, all] = [least + links + r.deletes, most + links + r.deletes];
  const total = least === most ? plural(all, 'request') : `from ${count(fewest)} to ${count(all)} requests`;
  return `${total} in all (${reads} and ${dels}): ${atLimit(all)}${least === most ? '' : `, for all ${count(all)}`}`;
}
