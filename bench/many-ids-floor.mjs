// The floor of bench/many-ids.mjs: a bare undici loop, in its own process, GETting BASE/contacts/ID
// for every id of IDS (one per line), CONCURRENCY at a time, parsing each answer and writing its
// record as one NDJSON line on stdout (what `crm contacts get - -o ndjson` prints). Nothing else: no
// CLI, no checks, no pacing, no retries (an answer that is not 200 stops it).
//
//   node bench/many-ids-floor.mjs BASE_URL API_KEY IDS CONCURRENCY > out.ndjson
import { readFileSync } from 'node:fs';
import { Pool } from 'undici';

const [base, key, file, conc] = process.argv.slice(2);
const ids = readFileSync(file, 'utf8').split('\n').filter(Boolean);
const url = new URL(base);
const prefix = url.pathname.replace(/\/$/, '');
const pool = new Pool(url.origin, { keepAliveTimeout: 4_000 });
const headers = { 'x-service-api-key': key, accept: 'application/json' };

let next = 0;
async function worker() {
  while (next < ids.length) {
    const id = ids[next++];
    const res = await pool.request({ path: `${prefix}/contacts/${encodeURIComponent(id)}`, method: 'GET', headers });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`GET ${id}: HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
    process.stdout.write(`${JSON.stringify(JSON.parse(text).data)}\n`);
  }
}

await Promise.all(Array.from({ length: Number(conc) }, worker));
await pool.close();
