// The floor of bench/snapshot.mjs: a bare undici loop, in its own process, reading what
// `crm snapshot DIR` reads, at the same rate limit: every page of each collection (GET
// BASE/NAME?limit=100, following the cursor), one collection after the other, with the least
// pacing a client can do (bench/paced-undici.mjs). Nothing else: no file, no state, no manifest.
//
//   node bench/snapshot-floor.mjs BASE_URL API_KEY NAME,NAME,…
//
// Prints one JSON line: {requests, rate_limited, pages: {NAME: n}, records: {NAME: n},
// ids: {NAME: sha256 of the ids in the order read, one a line}, loop_ms} (loop_ms: the reading alone).
import { createHash } from 'node:crypto';
import { pacedClient } from './paced-undici.mjs';

const [base, key, names] = process.argv.slice(2);
const { send, counts, close } = pacedClient(base, key);
const [pages, records, ids] = [{}, {}, {}];

const t0 = process.hrtime.bigint();
for (const name of names.split(',')) {
  const hash = createHash('sha256');
  [pages[name], records[name]] = [0, 0];
  let cursor = '';
  for (;;) {
    const page = await send('GET', `/${name}?limit=100${cursor && `&cursor=${encodeURIComponent(cursor)}`}`);
    pages[name]++;
    records[name] += page.data.length;
    for (const r of page.data) hash.update(`${r.id}\n`);
    if (!page.page_info.has_next_page) break;
    cursor = page.page_info.end_cursor;
  }
  ids[name] = hash.digest('hex');
}
const loopMs = Number(process.hrtime.bigint() - t0) / 1e6;
await close();
console.log(JSON.stringify({ ...counts, pages, records, ids, loop_ms: loopMs }));
