// The read stage of reconcile (CONTRACT §7b "What is there"): what the CRM holds for the match fields,
// as an index from a key to the record having it, or to the ids of the records sharing it. Only records
// whose key the file has are kept, each with only the fields the later stages read, so memory follows
// the file, not the collection. Two reads: the collection listed 100 records a request (one page held
// at a time, the PageGuard stopping cursors that cycle), or one GET per id for `--match id` on a small file.
import { tmpdir } from 'node:os';
import { HashTable } from '../../util/hash-table.js';
import type { ApiRecord } from '../../api/envelopes.js';
import { PAGE_SIZE_MAX } from '../../api/resources.js';
import { InterruptedError, NotFoundError } from '../../http/errors.js';
import type { HttpClient } from '../../http/types.js';
import { recordPath } from '../../http/url.js';
import { RecordIndexBuilder, type IndexEntry } from './record-index.js';
import type { ImportDeps } from '../types.js';

export type { Indexed, IndexEntry } from './record-index.js';
export interface RecordIndex {
  get(key: string): IndexEntry | undefined;
  /** distinct records read (a kept record read twice counts once; see IndexBuilder) */
  records: number;
  /** records kept in the index: those with a key of the file */
  kept: number;
  /** requests spent, retries included */
  requests: number;
  /** every field name any record read had (for the column check) */
  fieldsSeen: ReadonlySet<string>;
  /** the match fields no record read had, and the first record's fields (a "did you mean") */
  unseen?: { fields: readonly string[]; near: readonly string[] };
  how: 'list' | 'get';
  /** removes the index's temporary file */
  close(): void;
  /** a list read that stopped at `pagesMax` before the collection's end: false */
  complete?: boolean;
  /** a value of the type the records read hold a field as (a create's text cells are sent as that type) */
  sample(field: string): unknown;
}
export interface ReadIndexOptions {
  client: HttpClient;
  resource: string;
  /** the match fields */
  fields: readonly string[];
  /** the file's fields to keep per record (for the diff and the undo values) */
  keep: readonly string[];
  /** the file's keys: only records with one of them are kept (a two-column HashTable: the index uses it for its records too) */
  wanted: ReadonlySet<string> | ((key: string) => boolean) | HashTable;
  signal?: AbortSignal;
  onProgress?: (p: { records: number; pages: number; requests: number }) => void;
  /** a folder for the index's temporary file (the journal folder; default the system's) */
  dir?: string;
  /** stop after this many pages (`complete` false when the collection had more) */
  pagesMax?: number;
  /** false: the index keeps no fieldsSeen and gives no sample (a read for links, which has no column check) */
  survey?: boolean;
}

/** Rows read one GET each at most: 100 requests, what listing a collection of 10,000 records costs. */
export const GET_ROWS_MAX = 100;

/** Which read the plan takes, and one sentence saying why. */
export function chooseRead(fields: readonly string[], rows: number): { how: 'list' | 'get'; why: string } {
  const byId = fields.length === 1 && fields[0] === 'id';
  const pages = `listing the collection, ${PAGE_SIZE_MAX} records a request`;
  if (!byId) return { how: 'list', why: `${pages}: only --match id can read one record per row.` };
  if (rows <= GET_ROWS_MAX) {
    // the collection's size is not known (the API gives none): the sentence claims none
    const most = `at most ${rows + 1} requests at any collection size`;
    return { how: 'get', why: `one list page (the whole collection, when it fits), else one GET per id: ${most}.` };
  }
  return { how: 'list', why: `${pages}: ${rows} GETs, one per id, would cost more than listing 10,000 records.` };
}

/**
 * The engine's read (ImportDeps.readIndex) over the HTTP client: the collection listed at the largest page size, or
 * for `--match id` on a small file one list page first (a collection that fits in it is read whole by that one
 * request), then one GET per id.
 */
export function matchReader(
  client: HttpClient,
  resource: string,
  clock: { now(): number },
  signal?: AbortSignal,
): NonNullable<ImportDeps['readIndex']> {
  return async (req, onProgress) => {
    const started = clock.now();
    const how = chooseRead(req.fields, req.keys);
    const base = { client, resource, keep: req.keep, signal, onProgress, dir: req.dir };
    const list = { ...base, ...req, wanted: req.table ?? req.wanted };
    let index: RecordIndex | undefined;
    let why = how.why;
    if (how.how === 'get' && req.ids) {
      const page = await readIndex({ ...list, pagesMax: 1 });
      if (page.complete !== false) [index, why] = [page, 'the whole collection fits in one page'];
      else page.close();
      index ??= await readByIds({ ...base, ids: req.ids });
      // the fields the page's records have too: the file's own records alone called a field others hold "new"
      // (issue 29's re-trial), in the column check (plan-rows.ts)
      if (index.how === 'get')
        index = {
          ...index,
          requests: index.requests + 1,
          fieldsSeen: new Set([...page.fieldsSeen, ...index.fieldsSeen]),
        };
    }
    index ??= await readIndex(list);
    return { ...index, why, ms: clock.now() - started };
  };
}

/** Lists the collection into an index of the records having one of the file's keys. */
export async function readIndex(o: ReadIndexOptions): Promise<RecordIndex> {
  const keys = o.wanted;
  const index = new RecordIndexBuilder(
    o.fields,
    o.keep,
    typeof keys === 'function' || keys instanceof HashTable ? keys : (key) => keys.has(key),
    o.dir ?? tmpdir(),
    o.survey,
  );
  const start = o.client.stats.requests;
  let pages = 0;
  let complete = true;
  try {
    stopIfAborted(o.signal);
    for await (const page of o.client.pages(`/${o.resource}`, { limit: PAGE_SIZE_MAX, signal: o.signal })) {
      for (const record of page.data) index.add(record);
      pages++;
      o.onProgress?.({ records: index.records, pages, requests: o.client.stats.requests - start });
      stopIfAborted(o.signal);
      if (o.pagesMax !== undefined && pages >= o.pagesMax && page.hasNextPage) {
        complete = false;
        break;
      }
    }
  } catch (err) {
    index.close();
    throw err;
  }
  return { ...done(index, 'list', o.client.stats.requests - start), complete };
}

/** `--match id` on a small file: one GET per id (each once; the ids trimmed, as their keys), a 404 being no record. */
export async function readByIds(
  o: Omit<ReadIndexOptions, 'fields' | 'wanted'> & { ids: readonly string[] },
): Promise<RecordIndex> {
  const index = new RecordIndexBuilder(['id'], o.keep, () => true, o.dir ?? tmpdir());
  const start = o.client.stats.requests;
  try {
    for (const id of new Set(o.ids)) {
      stopIfAborted(o.signal);
      const record = await getRecord(o.client, o.resource, id, o.signal);
      if (record !== undefined) index.add(record);
      o.onProgress?.({ records: index.records, pages: 0, requests: o.client.stats.requests - start });
    }
  } catch (err) {
    index.close();
    throw err;
  }
  return done(index, 'get', o.client.stats.requests - start);
}

async function getRecord(
  client: HttpClient,
  resource: string,
  id: string,
  signal?: AbortSignal,
): Promise<ApiRecord | undefined> {
  let path: string;
  try {
    path = recordPath(resource, id);
  } catch {
    return undefined; // '', '.' or '..': no record can be read at such a path
  }
  try {
    return (await client.request<{ data: ApiRecord }>({ method: 'GET', path, expect: 'success', signal })).body.data;
  } catch (err) {
    if (err instanceof NotFoundError && err.status === 404) return undefined;
    throw err;
  }
}

function stopIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new InterruptedError('interrupted while reading what the CRM holds; nothing was sent');
}

function done(index: RecordIndexBuilder, how: 'list' | 'get', requests: number): RecordIndex {
  const { records, kept, fieldsSeen } = index;
  return {
    ...(records > 0 && index.unseen.length > 0
      ? { unseen: { fields: index.unseen, near: index.firstFields ?? [] } }
      : {}),
    get: (key) => index.get(key),
    sample: (f) => index.sample(f),
    records,
    kept,
    requests,
    fieldsSeen,
    how,
    close: () => index.close(),
  };
}
