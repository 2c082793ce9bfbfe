// The floor of bench/reconcile.mjs: a bare undici loop, in its own process, sending what
// `crm batch contacts FILE --match email` sends, at the same rate limit: PAGES list pages
// (GET BASE/contacts?limit=100, following the cursor), one PATCH /contacts/ID per changed email
// (its ids learnt from those pages) and the create chunks (POST /contacts/batch), CONCURRENCY at a
// time. Its pacing is the least a client can do (bench/paced-undici.mjs). Nothing else: no file, no
// matching, no journal, no undo file.
//
//   node bench/reconcile-floor.mjs BASE_URL API_KEY PAGES WORK.json CONCURRENCY
//
// WORK.json: {"changes": {email: {field: value}}, "creates": [[record, …], …]}. Prints one JSON
// line: {requests, rate_limited, patched, created, loop_ms} (loop_ms: the sending alone).
import { readFileSync } from 'node:fs';
import { pacedClient } from './paced-undici.mjs';

const [base, key, pagesArg, file, conc] = process.argv.slice(2);
const work = JSON.parse(readFileSync(file, 'utf8'));
const { send, counts, close } = pacedClient(base, key);

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
await close();
console.log(JSON.stringify({ ...counts, patched, created, loop_ms: loopMs }));
