// The floor of bench/reconcile.mjs: a bare undici loop, in its own process, sending what
// `crm batch contacts FILE --match email` sends, at the same rate limit: PAGES list pages
// (GET BASE/contacts?limit=100, following the cursor), one PATCH /contacts/ID per changed email
// (its ids learnt from those pages) and the create chunks (POST /contacts/batch), CONCURRENCY at a
// time. Its pacing is the least a client can do: it reads X-RateLimit-Remaining and -Reset from
// each answer and, when the window's requests are spent, waits for the reset; a 429 waits for its
// Retry-After and is sent again. Nothing else: no file, no matching, no journal, no undo file.
//
//   node bench/reconcile-floor.mjs BASE_URL API_KEY PAGES WORK.json CONCURRENCY
//
// WORK.json: {"changes": {email: {field: value}}, "creates": [[record, …], …]}. Prints one JSON
// line: {requests, rate_limited, patched, created, loop_ms} (loop_ms: the sending alone).
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';

const [base, key, pagesArg, file, conc] = process.argv.slice(2);
const work = JSON.parse(readFileSync(file, 'utf8'));
const url = new URL(base);
const prefix = url.pathname.replace(/\/$/, '');
const pool = new Pool(url.origin, { keepAliveTimeout: 4_000 });
const headers = { 'x-service-api-key': key, accept: 'application/json', 'content-type': 'application/json' };

let [remaining, resetAt, limit, inFlight, requests, rateLimited] = [Infinity, 0, Infinity, 0, 0, 0];
/** Waits while the window's requests are spent (those in flight counted), then counts this one in. */
async function gate() {
  while (remaining - inFlight <= 0) {
    const wait = resetAt - Date.now();
    if (wait > 0) await sleep(wait);
    else remaining = limit; // a fresh window
  }
  inFlight++;
}
async function send(method, path, body) {
  for (;;) {
    await gate();
    requests++;
    const res = await pool.request({ path: `${prefix}${path}`, method, headers, body: body && JSON.stringify(body) });
    const text = await res.body.text();
    inFlight--;
    const h = res.headers;
    if (h['x-ratelimit-limit'] !== undefined) limit = Number(h['x-ratelimit-limit']);
    if (h['x-ratelimit-remaining'] !== undefined) remaining = Number(h['x-ratelimit-remaining']);
    if (h['x-ratelimit-reset'] !== undefined) resetAt = Date.now() + Number(h['x-ratelimit-reset']) * 1000;
    if (res.statusCode === 429) {
      rateLimited++;
      remaining = 0;
      resetAt = Date.now() + Number(h['retry-after'] ?? 1) * 1000;
      continue;
    }
    if (res.statusCode >= 300) throw new Error(`${method} ${path}: HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
    return JSON.parse(text);
  }
}

async function inParallel(items, each) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await each(items[next++]);
  };
  await Promise.all(Array.from({ length: Number(conc) }, worker));
}

const t0 = process.hrtime.bigint();
const ids = new Map();
let cursor = '';
for (let p = 0; p < Number(pagesArg); p++) {
  const page = await send('GET', `/contacts?limit=100${cursor && `&cursor=${encodeURIComponent(cursor)}`}`);
  for (const r of page.data) if (Object.hasOwn(work.changes, r.email)) ids.set(r.email, r.id);
  if (!page.page_info.has_next_page) break;
  cursor = page.page_info.end_cursor;
}
let [patched, created] = [0, 0];
await inParallel([...ids], async ([email, id]) => {
  await send('PATCH', `/contacts/${encodeURIComponent(id)}`, work.changes[email]);
  patched++;
});
await inParallel(work.creates, async (chunk) => {
  const answer = await send('POST', '/contacts/batch', chunk); // (not `created += await …`: that reads created first)
  created += answer.data.summary.succeeded;
});
const loopMs = Number(process.hrtime.bigint() - t0) / 1e6;
await pool.close();
console.log(JSON.stringify({ requests, rate_limited: rateLimited, patched, created, loop_ms: loopMs }));
