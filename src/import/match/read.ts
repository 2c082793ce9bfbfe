// The read stage of reconcile (CONTRACT §7b "What is there"): what the CRM holds for the match fields,
// as an index from a key to the record having it, or to the ids of the records sharing it. Only records
// whose key the file has are kept, each with only the fields the later stages read, so memory follows
// the file, not the collection. Two reads: the collection listed 100 records a request (one page held
// at a time, the PageGuard stopping cursors that cycle), or one GET per id for `--match id` on a small file.
import type { ApiRecord } from '../../api/envelopes.js';
import { PAGE_SIZE_MAX } from '../../api/resources.js';
import { InterruptedError, NotFoundError } from '../../http/errors.js';
import type { HttpClient } from '../../http/types.js';
import { recordPath } from '../../http/url.js';
import { matchKey } from './key.js';

export interface Indexed {
  id: string;
  /** only the fields in `keep` and the match fields */
  record: ApiRecord;
}
/** `ids`: two or more records share the key (ambiguous) */
export type IndexEntry = { one: Indexed } | { ids: string[] };
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
  how: 'list' | 'get';
}
export interface ReadIndexOptions {
  client: HttpClient;
  resource: string;
  /** the match fields */
  fields: readonly string[];
  /** the file's fields to keep per record (for the diff and the undo values) */
  keep: readonly string[];
  /** the file's keys: only records with one of them are kept */
  wanted: ReadonlySet<string> | ((key: string) => boolean);
  signal?: AbortSignal;
  onProgress?: (p: { records: number; pages: number; requests: number }) => void;
}

/** Rows read one GET each at most: 100 requests, what listing a collection of 10,000 records costs. */
export const GET_ROWS_MAX = 100;

/** Which read the plan takes, and one sentence saying why. */
export function chooseRead(fields: readonly string[], rows: number): { how: 'list' | 'get'; why: string } {
  const byId = fields.length === 1 && fields[0] === 'id';
  const pages = `listing the collection, ${PAGE_SIZE_MAX} records a request`;
  if (!byId) return { how: 'list', why: `${pages}: only --match id can read one record per row.` };
  if (rows <= GET_ROWS_MAX) {
    const fewer = `fewer than listing a collection of more than ${(rows * PAGE_SIZE_MAX).toLocaleString('en-US')} records`;
    return { how: 'get', why: `one GET per id: ${rows} request${rows === 1 ? '' : 's'}, ${fewer}.` };
  }
  return { how: 'list', why: `${pages}: ${rows} GETs, one per id, would cost more than listing 10,000 records.` };
}

/** Lists the collection into an index of the records having one of the file's keys. */
export async function readIndex(o: ReadIndexOptions): Promise<RecordIndex> {
  const keys = o.wanted;
  const index = new IndexBuilder(o.fields, o.keep, typeof keys === 'function' ? keys : (key) => keys.has(key));
  const start = o.client.stats.requests;
  let pages = 0;
  stopIfAborted(o.signal);
  for await (const page of o.client.pages(`/${o.resource}`, { limit: PAGE_SIZE_MAX, signal: o.signal })) {
    for (const record of page.data) index.add(record);
    pages++;
    o.onProgress?.({ records: index.records, pages, requests: o.client.stats.requests - start });
    stopIfAborted(o.signal);
  }
  return index.done('list', o.client.stats.requests - start);
}

/** `--match id` on a small file: one GET per id (each once; the ids trimmed, as their keys), a 404 being no record. */
export async function readByIds(o: Omit<ReadIndexOptions, 'fields' | 'wanted'> & { ids: readonly string[] }): Promise<RecordIndex> {
  const index = new IndexBuilder(['id'], o.keep, () => true);
  const start = o.client.stats.requests;
  for (const id of new Set(o.ids)) {
    stopIfAborted(o.signal);
    const record = await getRecord(o.client, o.resource, id, o.signal);
    if (record !== undefined) index.add(record);
    o.onProgress?.({ records: index.records, pages: 0, requests: o.client.stats.requests - start });
  }
  return index.done('get', o.client.stats.requests - start);
}

async function getRecord(client: HttpClient, resource: string, id: string, signal?: AbortSignal): Promise<ApiRecord | undefined> {
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

/**
 * The index as it is built. A collection that shifts between pages can show a record twice: the ids of
 * the kept records (and their keys) are remembered, so a kept record read again replaces its earlier read
 * (under its newest key) and is not counted again, and two reads of one record never make its key
 * ambiguous. Only kept ids are remembered, bounded by the file's keys: an unwanted record read twice is
 * in no entry either time (it is only counted twice in `records`). Records without a string id (nothing
 * to update) or without a usable key are not kept.
 */
class IndexBuilder {
  /** each key → its one record, or the records sharing it */
  private readonly byKey = new Map<string, Indexed | Indexed[]>();
  /** each kept id → its key */
  private readonly keyOf = new Map<string, string>();
  private readonly project: readonly string[];
  readonly fieldsSeen = new Set<string>();
  records = 0;

  constructor(
    private readonly fields: readonly string[],
    keep: readonly string[],
    private readonly wanted: (key: string) => boolean,
  ) {
    this.project = [...new Set([...fields, ...keep])];
  }

  add(record: ApiRecord): void {
    for (const field of Object.keys(record)) this.fieldsSeen.add(field);
    const id = record.id;
    if (typeof id !== 'string') {
      this.records++;
      return;
    }
    const earlier = this.keyOf.get(id);
    if (earlier === undefined) this.records++;
    else this.remove(id, earlier);
    const key = matchKey(this.fields, record);
    if (key === undefined || !this.wanted(key)) return;
    const entry: Indexed = { id, record: this.pick(record) };
    const there = this.byKey.get(key);
    if (Array.isArray(there)) there.push(entry);
    else this.byKey.set(key, there === undefined ? entry : [there, entry]);
    this.keyOf.set(id, key);
  }

  private remove(id: string, key: string): void {
    this.keyOf.delete(id);
    const there = this.byKey.get(key);
    if (!Array.isArray(there)) {
      this.byKey.delete(key); // its one record was this one
      return;
    }
    const rest = there.filter((e) => e.id !== id);
    this.byKey.set(key, rest.length === 1 ? rest[0]! : rest);
  }

  private pick(record: ApiRecord): ApiRecord {
    const out: ApiRecord = {};
    for (const field of this.project) if (Object.hasOwn(record, field)) out[field] = record[field];
    return out;
  }

  done(how: 'list' | 'get', requests: number): RecordIndex {
    const { byKey, records, fieldsSeen } = this;
    const get = (key: string): IndexEntry | undefined => {
      const there = byKey.get(key);
      if (there === undefined) return undefined;
      return Array.isArray(there) ? { ids: there.map((e) => e.id) } : { one: there };
    };
    return { get, records, kept: this.keyOf.size, requests, fieldsSeen, how };
  }
}
