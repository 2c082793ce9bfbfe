// The floor of bench/import.mjs: a bare undici loop, in its own process, POSTing precomputed chunk
// bodies (one JSON array per line of BODIES, the same bytes `crm batch` sends) to BASE/contacts/batch,
// CONCURRENCY at a time, each with an Idempotency-Key, reading and parsing every answer (a client must
// know what was created). Nothing else: no file parsing, no checks, no journal, no retries.
//
//   node bench/import-floor.mjs BASE_URL API_KEY BODIES CONCURRENCY
//
// Prints one JSON line: {created, requests, loop_ms} (loop_ms: the sending loop only; the caller
// times the whole process, start-up and reading BODIES included).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Pool } from 'undici';

const [base, key, file, conc] = process.argv.slice(2);
const bodies = readFileSync(file, 'utf8').split('\n').filter(Boolean);
const url = new URL(base);
const prefix = url.pathname.replace(/\/$/, '');
const pool = new Pool(url.origin, { keepAliveTimeout: 4_000 });
const headers = (body) => ({
  'x-service-api-key': key,
  accept: 'application/json',
  'content-type': 'application/json',
  'idempotency-key': `floor-${createHash('sha256').update(body).digest('hex')}`,
});

let next = 0;
let created = 0;
async function worker() {
  while (next < bodies.length) {
    const body = bodies[next++];
    const res = await pool.request({ path: `${prefix}/contacts/batch`, method: 'POST', headers: headers(body), body });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
    created += JSON.parse(text).data.summary.succeeded;
  }
}

const t0 = process.hrtime.bigint();
await Promise.all(Array.from({ length: Number(conc) }, worker));
const loopMs = Number(process.hrtime.bigint() - t0) / 1e6;
await pool.close();
console.log(JSON.stringify({ created, requests: bodies.length, loop_ms: loopMs }));
