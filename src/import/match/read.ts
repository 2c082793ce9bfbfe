// STAND-IN (lead's branch): replaced by the read helper's read.ts at merge.
import type { HttpClient } from '../../http/types.js';
import type { IndexEntry, MatchIndex } from '../engine-types.js';
import { matchKey } from './key.js';

export async function readIndex(o: {
  client: HttpClient;
  resource: string;
  fields: readonly string[];
  keep: readonly string[];
  wanted: (key: string) => boolean;
  signal?: AbortSignal;
  onProgress?: (p: { records: number; pages: number; requests: number }) => void;
}): Promise<MatchIndex> {
  const map = new Map<string, IndexEntry>();
  const seen = new Set<string>();
  const fieldsSeen = new Set<string>();
  let records = 0;
  let requests = 0;
  for await (const page of o.client.pages(`/${o.resource}`, { limit: 100, signal: o.signal })) {
    requests++;
    for (const r of page.data) {
      for (const k of Object.keys(r)) fieldsSeen.add(k);
      const id = r.id as string;
      if (seen.has(id)) continue;
      records++;
      const key = matchKey(o.fields, r);
      if (key === undefined || !o.wanted(key)) continue;
      seen.add(id);
      const record = Object.fromEntries([...o.keep, ...o.fields].filter((f) => f in r).map((f) => [f, r[f]]));
      const had = map.get(key);
      map.set(key, !had ? { one: { id, record } } : { ids: 'one' in had ? [had.one.id, id] : [...had.ids, id] });
    }
    o.onProgress?.({ records, pages: requests, requests });
  }
  return { get: (k) => map.get(k), records, requests, how: 'list', fieldsSeen };
}
