// Benchmark of `crm restore DIR` (CONTRACT §10, issue 31's performance section), through the real binary against
// `crm sandbox --control` in child processes, each figure beside its floor or target in the same run:
//   setup (not measured): a source CRM of CONTACTS contacts (each naming a company), COMPANIES companies, DEALS deals
//      (batch POSTs of 100, the limit out of the way; one record in 8 created with the user key, so owned by
//      usr_user, the others by usr_admin) and LINKS deal-contact links (POST /deals/{id}/contacts: link k is deal
//      k mod DEALS with one of its contacts, no pair twice); `crm snapshot DIR --links` of it; users.csv mapping
//      usr_admin and usr_user to the target's same users;
//   A. into an empty organization (another sandbox), `crm restore DIR --links --owners users.csv` at the API's 200
//      requests a minute scaled in time (200 per 1 s by default): the requests the target's log holds, by kind
//      (GET list pages, POST /<resource>/batch, GET a deal's contacts, POST a link, PATCH an owner), which must be at
//      most the target's pages (each collection listed once, as it held them) + create chunks (100 a request) + one
//      list per parent with links (+ its extra pages) + one POST per missing link + one PATCH per owner that differs,
//      no 429 answered; the wall time beside the least time the limit allows those requests (the time taken must be
//      ≥ 0.95 of it), beside `node -e 0` and a bare undici loop (this file's --floor mode, paced by
//      bench/paced-undici.mjs, its own empty sandbox) sending the bound's requests at the same limit; crm's peak
//      RSS (≤ 200 MB); the target's state: each collection holds the snapshot's count, the id map names each snapshot
//      record once, with its fields, its owner and (contacts) its company translated, and each deal's links are
//      the snapshot's, each once;
//   B. into an organization that still holds 90% of it: the same target after one record in 10 of each collection
//      was deleted (DELETE, its links going with it), the same command again: the same bound (pages of the 90%,
//      chunks of the 10%, every parent's links read once, the links lost, the owners of the 10%), nothing POSTed
//      for a record there (the target's counts grow by the 10% exactly), the same pace, RSS and state checks;
//   C. a snapshot of BIG contacts (1,000,000; written straight in crm snapshot's format: manifest.json and
//      contacts.ndjson) into an empty target, the limit out of the way: `--dry-run` (the plan: every contact to
//      create), the restore itself (the creates, the id map of BIG lines on disk, the owners reconciled) and
//      `--dry-run` again (every contact in the id map and the target): each one's peak RSS (≤ 200 MB) and CPU.
//      With a smaller --big-contacts the 1,000,000 figures are extrapolated from what each contact adds between a
//      quarter of it and it (printed, not gating; linear, so it overstates what grows less than that: from 10,000
//      it says 2 to 4 GB where 1,000,000 measured 282 to 481 MB).
// Exit 1 when a check fails (requests, pace, the target's state) or a target measured at its own size is missed (A
// and B's RSS at the issue's size or more, C's at 1,000,000 contacts or more); elsewhere it is printed, not gating.
//
// At the default sizes on 2 cores (one run, at commit 91e59ea, a new-user trial's sandboxes on the other core; the
// source made in 9 s, crm snapshot --links of it 60 s):
//   A: 38,653 requests, the bound exactly (8 pages + 270 chunks + 5,000 parents' links + 30,000 links + 3,375
//      owners; none read again after a write: the owners are PATCHed from what the creates answered); 212.1 s (least
//      193.0 s: 1.099, the bare loop 197.8 s: crm 1.072×); 146 MB, 51.8 s CPU; the target's state as the snapshot's: PASS;
//   B: 11,450 requests, the bound exactly (248 pages + 27 chunks + 5,000 + 5,500 links + 675 owners); 2,700 records
//      created, none for what was there; 62.8 s (least 57.0 s: 1.102); 151 MB, 21.9 s CPU: PASS;
//   C: 1,000,000 contacts: --dry-run 127 MB, 51 s CPU (PASS); the restore 147 MB, 146 s CPU, 10,001 requests (PASS);
//      --dry-run again, every contact in the id map and the target, 185 MB, 123 s CPU: PASS (261 MB at f7ae3d7, before
//      the index by key was built after the listing and only for records not placed, the tables made one column and
//      sized from the manifest, and LineFile's offsets 32-bit; before 3581a93..72810e2: 282 / 433 / 481 MB).
//
//   npm run bench:restore                  20,000 contacts, 2,000 companies, 5,000 deals, 30,000 links at 200 per 1 s;
//                                          C at 1,000,000 contacts (~23 min)
//   npm run bench:restore:short            1,000 contacts, 100 companies, 200 deals, 1,200 links at 100 per 0.25 s;
//                                          C at 10,000 and 2,500 contacts (< 60 s)
//   node bench/restore.mjs --contacts 5000 --links 8000 --big-contacts 200000 --rate-limit 200 --rate-window-ms 500 --json
//
// The least time, as bench/links.mjs: the sandbox's window is fixed, so at best the windows follow each other back
// to back and the last of R requests starts (ceil(R / limit) - 1) windows after the first.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import {
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { api, limits, megabytes, nodeStartMs, printColumns, RSS_METHOD, runCrm, secs, stats } from './measure.mjs';
import { Pool } from 'undici';
import { pacedClient } from './paced-undici.mjs';
import { startSandboxChild } from './sandbox-child.mjs';

const { values: flags } = parseArgs({
  options: {
    short: { type: 'boolean', default: false },
    contacts: { type: 'string' },
    companies: { type: 'string' },
    deals: { type: 'string' },
    links: { type: 'string' },
    'big-contacts': { type: 'string' },
    'rate-limit': { type: 'string' },
    'rate-window-ms': { type: 'string' },
    json: { type: 'boolean', default: false },
    // internal: the bare undici loop, in its own process (see floorLoop)
    floor: { type: 'string' },
  },
});

const PAGE = 100;
const CHUNK = 100;
const HIGH = 1_000_000_000;
/** The issue's sizes: A and B's RSS target gates at these or more. */
const FULL = { contacts: 20_000, companies: 2_000, deals: 5_000, links: 30_000 };
const [RSS_TARGET_MB, BIG_FULL] = [200, 1_000_000];
const PACE_TARGET = 0.95;
/** The collections a restore creates, in its order (src/commands/restore/decide.ts): each listed once when planned. */
const RESTORE_ORDER = ['companies', 'pipelines', 'contacts', 'deals', 'tasks', 'notes', 'segments', 'interactions'];
const SIDES = ['companies', 'contacts', 'deals'];
/** The key's user (the admin key): what a created record's owner is before its PATCH. */
const [KEY_USER, OTHER_USER] = ['usr_admin', 'usr_user'];
const log = (m) => process.stderr.write(`[bench] ${m}\n`);
const elapsedMs = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;

/** Record i of each collection in the source; one in 8 owned by usr_user (created with the user key). */
const company = (i) => ({ name: `Company ${i}`, domain: `company${i}.bench.example` });
const contact = (i, companyIds) => ({
  email: `person${i}@bench.example`,
  first_name: `First${i}`,
  company_id: companyIds[i % companyIds.length],
});
const deal = (i) => ({ name: `Bench deal ${i}` });
const userOwned = (i) => i % 8 === 0;
/** Run B: the records deleted from the target before it (one in 10 of each collection). */
const deletedBeforeB = (i) => i % 10 === 0;

/**
 * Link k: deal k mod D and its j-th contact (j = floor(k / D)) at (d + j × stride) mod C, the stride keeping one
 * deal's contacts apart, so no pair comes twice.
 */
function pairsOf(n, contacts, deals) {
  const perDeal = Math.ceil(n / deals);
  if (perDeal > contacts) throw new Error(`${n} distinct links need more than ${contacts} contacts per deal`);
  const stride = Math.floor(contacts / perDeal);
  return Array.from({ length: n }, (_, k) => {
    const d = k % deals;
    return { deal: d, contact: (d + Math.floor(k / deals) * stride) % contacts };
  });
}

/** The setup's and checks' connections to each sandbox (an undici Pool: fetch is slower at 30,000 links). */
const pools = new Map();
/** A JSON request to a sandbox with `key` (default its admin key); throws unless 2xx. */
async function call(sb, method, url, body, key = sb.keys.admin) {
  const base = new URL(sb.base_url);
  if (!pools.has(base.origin)) pools.set(base.origin, new Pool(base.origin, { connections: 8 }));
  const res = await pools.get(base.origin).request({
    path: `${base.pathname}${url}`,
    method,
    headers: { 'x-service-api-key': key, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${text}`);
  return JSON.parse(text);
}

/** `n` calls of `each(i)`, `width` at a time. */
async function eachOf(n, each, width = 8) {
  let next = 0;
  const worker = async () => {
    while (next < n) await each(next++);
  };
  await Promise.all(Array.from({ length: width }, worker));
}

/** Every record of a list path (all pages, 100 a page), through `get(path)`. */
async function listAll(get, listPath) {
  const out = [];
  let cursor = '';
  for (;;) {
    const page = await get(`${listPath}?limit=${PAGE}${cursor && `&cursor=${encodeURIComponent(cursor)}`}`);
    out.push(...page.data);
    if (!page.page_info.has_next_page) return out;
    cursor = page.page_info.end_cursor;
  }
}

/** Creates `n` records of `resource` (`make(i)`) in batch POSTs of 100, 4 at a time, the user-owned ones with the user key: their ids, in order. */
async function createAll(sb, resource, n, make) {
  const ids = new Array(n);
  const chunks = [];
  for (const [owned, key] of [
    [false, sb.keys.admin],
    [true, sb.keys.user],
  ]) {
    const idx = [];
    for (let i = 0; i < n; i++) if (userOwned(i) === owned) idx.push(i);
    for (let at = 0; at < idx.length; at += CHUNK) chunks.push({ key, idx: idx.slice(at, at + CHUNK) });
  }
  await eachOf(
    chunks.length,
    async (c) => {
      const { idx, key } = chunks[c];
      const r = await call(
        sb,
        'POST',
        `/${resource}/batch`,
        idx.map((i) => make(i)),
        key,
      );
      if (r.data.summary.succeeded !== idx.length)
        throw new Error(`setup: a ${resource} batch failed: ${JSON.stringify(r.data.summary)}`);
      for (const item of r.data.items) ids[idx[item.index]] = item.data.id;
    },
    4,
  );
  return ids;
}

/** The source CRM and its snapshot (`crm snapshot DIR --links`, the limit out of the way): its ids and the pairs. */
async function sourceSnapshot(sizes, dir, crmEnv, work) {
  const src = await startSandboxChild(['--control', '--rate-limit', String(HIGH), '--org-rate-limit', String(HIGH)]);
  try {
    const t0 = process.hrtime.bigint();
    const ids = {};
    ids.companies = await createAll(src, 'companies', sizes.companies, company);
    ids.contacts = await createAll(src, 'contacts', sizes.contacts, (i) => contact(i, ids.companies));
    ids.deals = await createAll(src, 'deals', sizes.deals, deal);
    const pairs = pairsOf(sizes.links, sizes.contacts, sizes.deals);
    await eachOf(pairs.length, (k) =>
      call(src, 'POST', `/deals/${ids.deals[pairs[k].deal]}/contacts`, { contact_id: ids.contacts[pairs[k].contact] }),
    );
    const madeMs = elapsedMs(t0);
    log(
      `setup: the source (${SIDES.map((r) => `${sizes[r]} ${r}`).join(', ')}, ${pairs.length} links) in ${secs(madeMs)}`,
    );
    const snap = await runCrm(['--quiet', 'snapshot', dir, '--links'], {
      env: crmEnv(src),
      work,
      stdoutFile: '/dev/null',
    });
    if (snap.code !== 0) throw new Error(`crm snapshot exited ${snap.code}:\n${snap.stderr}`);
    const manifest = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
    for (const r of SIDES)
      if (manifest.collections[r]?.records !== sizes[r] || !manifest.collections[r].complete)
        throw new Error(`setup: the snapshot holds ${JSON.stringify(manifest.collections[r])} of ${r}`);
    if (manifest.links?.['deals.contacts']?.records !== pairs.length)
      throw new Error(`setup: the snapshot holds ${JSON.stringify(manifest.links?.['deals.contacts'])} links`);
    log(`setup: crm snapshot --links in ${secs(snap.wallMs)}`);
    return { ids, pairs, made_ms: madeMs, snapshot_ms: snap.wallMs };
  } finally {
    await src.stop();
  }
}

/** The id map crm wrote for a target: resource → snapshot id → target id (a later line wins). */
function readIdMap(dir) {
  const restoreDir = path.join(dir, 'restore');
  const files = readdirSync(restoreDir).filter((f) => f.endsWith('.ids.csv'));
  if (files.length !== 1) throw new Error(`expected one id map in ${restoreDir}, found ${files.join(', ') || 'none'}`);
  const map = new Map();
  const lines = readFileSync(path.join(restoreDir, files[0]), 'utf8').split(/\r?\n/).filter(Boolean);
  for (const line of lines.slice(1)) {
    const [resource, snapshot, target] = line.split(',');
    if (!map.has(resource)) map.set(resource, new Map());
    map.get(resource).set(snapshot, target);
  }
  return { file: files[0], map };
}

/** A sandbox's collections' counts (the 8 a restore plans). */
async function heldCounts(sb) {
  const records = (await stats(sb)).records;
  return Object.fromEntries(RESTORE_ORDER.map((r) => [r, records[r]]));
}

/**
 * The requests a run may send (the issue's bound) into a target holding `held` (its counts by collection),
 * `missing[r]` (the snapshot indexes of each collection it lacks) and `presentLinks[d]` (each deal's links there).
 */
function boundOf(held, missing, presentLinks, pairs) {
  const pages = RESTORE_ORDER.reduce((n, r) => n + Math.max(1, Math.ceil(held[r] / PAGE)), 0);
  const chunks = SIDES.reduce((n, r) => n + Math.ceil(missing[r].length / CHUNK), 0);
  const parents = new Set(pairs.map((p) => p.deal));
  let parentReads = 0;
  for (const d of parents) parentReads += Math.max(1, Math.ceil((presentLinks[d] ?? 0) / PAGE));
  const there = [...parents].reduce((n, d) => n + (presentLinks[d] ?? 0), 0);
  const posts = pairs.length - there;
  const patches = SIDES.reduce((n, r) => n + missing[r].filter(userOwned).length, 0);
  return {
    pages,
    chunks,
    parents: parents.size,
    parent_reads: parentReads,
    posts,
    patches,
    creates: SIDES.reduce((n, r) => n + missing[r].length, 0),
    requests: pages + chunks + parentReads + posts + patches,
  };
}

/**
 * The target's log since entry `since`, by kind: list pages before the first write (the plan's) and after it (read
 * again), create chunks, a deal's contacts read, a link POSTed, an owner PATCHed, others, 429s, replays. Throws when
 * the log lost entries (it keeps the last 50,000).
 */
async function requestsByKind(sb, since) {
  const entries = await api(sb, 'GET', `${sb.control_url}/requests?since=${since}`);
  const total = (await stats(sb)).requests - since;
  if (entries.length !== total) throw new Error(`the sandbox's log holds ${entries.length} of the ${total} requests`);
  const by = { pages: 0, pages_again: 0, gets_again: 0, chunks: 0, parent_reads: 0, posts: 0, patches: 0, other: 0 };
  const pagesAgainBy = {};
  let written = false;
  for (const e of entries) {
    const p = e.path
      .replace(/^\/api\/v2/, '')
      .split('/')
      .slice(1);
    if (e.method === 'GET' && p.length === 1 && RESTORE_ORDER.includes(p[0])) {
      if (written) {
        by.pages_again++;
        pagesAgainBy[p[0]] = (pagesAgainBy[p[0]] ?? 0) + 1;
      } else by.pages++;
      continue;
    }
    written ||= e.method !== 'GET';
    if (e.method === 'POST' && p.length === 2 && p[1] === 'batch' && SIDES.includes(p[0])) by.chunks++;
    else if (p.length === 3 && p[0] === 'deals' && p[2] === 'contacts' && e.method === 'GET') by.parent_reads++;
    else if (p.length === 3 && p[0] === 'deals' && p[2] === 'contacts' && e.method === 'POST') by.posts++;
    else if (e.method === 'PATCH' && p.length === 2 && SIDES.includes(p[0])) by.patches++;
    else if (e.method === 'GET' && p.length === 2 && SIDES.includes(p[0])) {
      by.gets_again++; // a record read by its id (after a write: the owners' reconcile of a small file)
      pagesAgainBy[`${p[0]} by id`] = (pagesAgainBy[`${p[0]} by id`] ?? 0) + 1;
    } else by.other++;
  }
  return {
    total,
    ...by,
    pages_again_by: pagesAgainBy,
    rate_limited: entries.filter((e) => e.status === 429).length,
    replayed: entries.filter((e) => e.replayed).length,
  };
}

/**
 * The target's state against the snapshot: each collection's count, the id map naming each snapshot record once and a
 * record there, each record's fields and owner, a contact's company (translated, unless `keptCompany(i)`: a contact
 * that stayed while its company was created again keeps the old id, as the contract says), each deal's links.
 */
async function stateOf(sb, dir, src, sizes, keptCompany) {
  const { map } = readIdMap(dir);
  const off = { counts: 0, id_map: 0, fields: 0, owners: 0, companies: 0, deals_links: 0 };
  const held = await heldCounts(sb);
  for (const r of RESTORE_ORDER) if (held[r] !== (sizes[r] ?? 0)) off.counts++;
  const get = (p) => call(sb, 'GET', p);
  const targetIds = {};
  for (const r of SIDES) {
    const rows = new Map((await listAll(get, `/${r}`)).map((x) => [x.id, x]));
    const m = map.get(r) ?? new Map();
    const make = r === 'companies' ? company : r === 'deals' ? deal : (i) => contact(i, src.ids.companies);
    const seen = new Set();
    targetIds[r] = src.ids[r].map((sid, i) => {
      const t = m.get(sid);
      const row = t === undefined ? undefined : rows.get(t);
      if (!row || seen.has(t)) {
        off.id_map++;
        return t;
      }
      seen.add(t);
      const want = make(i);
      if (Object.keys(want).some((f) => f !== 'company_id' && row[f] !== want[f])) off.fields++;
      if (row.owner_id !== (userOwned(i) ? OTHER_USER : KEY_USER)) off.owners++;
      if (r === 'contacts' && !keptCompany(i) && row.company_id !== map.get('companies')?.get(want.company_id))
        off.companies++;
      return t;
    });
  }
  const want = Array.from({ length: sizes.deals }, () => []);
  for (const p of src.pairs) want[p.deal].push(targetIds.contacts[p.contact]);
  await eachOf(sizes.deals, async (d) => {
    const got = (await listAll(get, `/deals/${encodeURIComponent(targetIds.deals[d])}/contacts`)).map((c) => c.id);
    const same =
      got.length === want[d].length && new Set(got).size === got.length && want[d].every((c) => got.includes(c));
    if (!same) off.deals_links++;
  });
  return { held, off, ok: Object.values(off).every((n) => n === 0) };
}

/** Each deal's links in the target now (by the snapshot's deal index). */
async function presentLinks(sb, dealTargets) {
  const out = new Array(dealTargets.length).fill(0);
  await eachOf(dealTargets.length, async (d) => {
    if (dealTargets[d] === undefined) return;
    out[d] = (await listAll((p) => call(sb, 'GET', p), `/deals/${encodeURIComponent(dealTargets[d])}/contacts`)).length;
  });
  return out;
}

/** The bare undici loop: the bound's requests (pages, chunks, parents' links, links, owners), paced as little as a client can, nothing else. */
async function floorLoop(jobFile) {
  const job = JSON.parse(readFileSync(jobFile, 'utf8'));
  const { send, counts, close } = pacedClient(job.base_url, job.key);
  const inParallel = async (items, each) => {
    let next = 0;
    const worker = async () => {
      while (next < items.length) await each(items[next++]);
    };
    await Promise.all(Array.from({ length: 4 }, worker));
  };
  const readJson = (file) =>
    existsSync(file)
      ? readFileSync(file, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l))
      : [];
  const t0 = process.hrtime.bigint();
  const newId = new Map(); // `resource NUL snapshot id` → the target's id
  let patches = 0;
  for (const r of RESTORE_ORDER) await listAll((p) => send('GET', p), `/${r}`);
  for (const r of RESTORE_ORDER) {
    const records = readJson(path.join(job.dir, `${r}.ndjson`));
    const chunks = [];
    for (let at = 0; at < records.length; at += CHUNK) chunks.push(records.slice(at, at + CHUNK));
    const owners = [];
    await inParallel(chunks, async (chunk) => {
      const body = chunk.map((rec) => {
        const { id: _id, owner_id: _owner, created_at: _c, updated_at: _u, ...fields } = rec;
        if (fields.company_id)
          fields.company_id = newId.get(`companies\u0000${fields.company_id}`) ?? fields.company_id;
        return fields;
      });
      const answer = await send('POST', `/${r}/batch`, body);
      for (const item of answer.data.items) {
        const rec = chunk[item.index];
        newId.set(`${r}\u0000${rec.id}`, item.data.id);
        const to = job.owners[rec.owner_id];
        if (to !== undefined && to !== item.data.owner_id) owners.push([item.data.id, to]);
      }
    });
    await inParallel(owners, ([id, to]) => send('PATCH', `/${r}/${id}`, { owner_id: to }));
    patches += owners.length;
  }
  const links = readJson(path.join(job.dir, 'links', 'deals.contacts.ndjson'));
  const byDeal = new Map();
  for (const l of links) {
    const d = newId.get(`deals\u0000${l.parent_id}`);
    if (!byDeal.has(d)) byDeal.set(d, []);
    byDeal.get(d).push(newId.get(`contacts\u0000${l.record.id}`));
  }
  const toPost = [];
  await inParallel([...byDeal.keys()], async (d) => {
    const there = new Set((await listAll((p) => send('GET', p), `/deals/${d}/contacts`)).map((c) => c.id));
    for (const c of byDeal.get(d)) if (!there.has(c)) toPost.push([d, c]);
  });
  await inParallel(toPost, ([d, c]) => send('POST', `/deals/${d}/contacts`, { contact_id: c }));
  const loopMs = elapsedMs(t0);
  await close();
  const cpu = process.cpuUsage();
  const cpuS = (cpu.user + cpu.system) / 1e6;
  console.log(JSON.stringify({ ...counts, posted: toPost.length, patches, loop_ms: loopMs, cpu_s: cpuS }));
}

/** Runs this file's --floor mode in its own process: its counts and wall ms. */
async function floorRun(job) {
  const t0 = process.hrtime.bigint();
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--floor', job], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  const [code] = await once(child, 'exit');
  if (code !== 0) throw new Error(`the bare undici loop exited ${code}`);
  return { wall_ms: elapsedMs(t0), ...JSON.parse(out) };
}

/** A snapshot folder of `n` contacts (owned by usr_admin), in crm snapshot's format, written as a stream. */
async function writeBigSnapshot(dir, n) {
  rmSync(dir, { recursive: true, force: true });
  const now = new Date().toISOString();
  mkdirSync(dir, { recursive: true });
  const file = createWriteStream(path.join(dir, 'contacts.ndjson'));
  let buf = '';
  for (let i = 0; i < n; i++) {
    const id = `con_big${i.toString(36).padStart(8, '0')}`;
    buf += `{"id":"${id}","email":"big${i}@bench.example","first_name":"Big${i}","owner_id":"${KEY_USER}","created_at":"${now}","updated_at":"${now}"}\n`;
    if (buf.length >= 256 * 1024) {
      if (!file.write(buf)) await once(file, 'drain');
      buf = '';
    }
  }
  file.end(buf);
  await once(file, 'finish');
  const manifest = {
    base_url: 'http://big-source.invalid/api/v2',
    started_at: now,
    finished_at: now,
    complete: true,
    collections: { contacts: { file: 'contacts.ndjson', records: n, complete: true } },
    left_out: [],
  };
  writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2));
}

async function main() {
  const sizes0 = flags.short
    ? { contacts: 1_000, companies: 100, deals: 200, links: 1_200, big: 10_000, limit: 100, window: 250 }
    : { ...FULL, big: BIG_FULL, limit: 200, window: 1000 };
  const sizes = {
    contacts: Number(flags.contacts ?? sizes0.contacts),
    companies: Number(flags.companies ?? sizes0.companies),
    deals: Number(flags.deals ?? sizes0.deals),
    links: Number(flags.links ?? sizes0.links),
  };
  const BIG = Number(flags['big-contacts'] ?? sizes0.big);
  const L = Number(flags['rate-limit'] ?? sizes0.limit);
  const W = Number(flags['rate-window-ms'] ?? sizes0.window);
  for (const [name, v] of Object.entries({ ...sizes, 'big-contacts': BIG, 'rate-limit': L, 'rate-window-ms': W }))
    if (!Number.isInteger(v) || v < 1) throw new Error(`--${name} must be a whole number, at least 1`);
  const ORG_LIMIT = L * 5; // the organization's limit kept in the API's proportion
  const fullSize = SIDES.every((r) => sizes[r] >= FULL[r]) && sizes.links >= FULL.links;
  const work = mkdtempSync(path.join(tmpdir(), 'crm-bench-restore-'));
  const crmEnv = (sb, config = mkdtempSync(path.join(work, 'config-'))) => ({
    ...process.env,
    CRM_BASE_URL: sb.base_url,
    CRM_API_KEY: sb.keys.admin,
    CRM_CONFIG_DIR: config,
  });
  const usersCsv = path.join(work, 'users.csv');
  writeFileSync(usersCsv, `old_id,new_id\n${KEY_USER},${KEY_USER}\n${OTHER_USER},${OTHER_USER}\n`);
  /** `crm -o json --quiet restore DIR …extra` into `sb`: its summary (or plan), wall ms, CPU, peak RSS. */
  const restore = async (sb, dir, extra, env) => {
    const args = ['-o', 'json', '--quiet', 'restore', dir, ...extra];
    const r = await runCrm(args, { env, work });
    if (r.code !== 0) throw new Error(`crm ${args.join(' ')} exited ${r.code}:\n${r.stderr}`);
    return { ...r, out: JSON.parse(r.stdout) };
  };
  const results = { ...sizes, big_contacts: BIG, rate_limit: L, rate_window_ms: W, org_rate_limit: ORG_LIMIT };
  const sandboxes = [];
  const sandbox = async () => {
    const sb = await startSandboxChild(['--control', '--rate-limit', String(HIGH), '--org-rate-limit', String(HIGH)]);
    sandboxes.push(sb);
    return sb;
  };
  try {
    results.node_start_ms = nodeStartMs();
    const dir = path.join(work, 'snapshot');
    const src = await sourceSnapshot(sizes, dir, crmEnv, work);
    results.setup = { source_ms: src.made_ms, snapshot_ms: src.snapshot_ms };
    const tgt = await sandbox();
    const tgtEnv = crmEnv(tgt);
    /** One measured restore into the target: the bound from its state before, the log, the state after. */
    const measuredRun = async (label, missing, present, keptCompany) => {
      const held = await heldCounts(tgt);
      const expected = boundOf(held, missing, present, src.pairs);
      await limits(tgt, { rate_limit: L, org_rate_limit: ORG_LIMIT, rate_window_ms: W });
      const since = (await stats(tgt)).requests;
      log(`${label}: crm restore --links --owners at ${L} requests per ${W} ms (the bound: ${expected.requests})`);
      // --yes: B creates deals (no match fields) into a target holding most of them (asked, refused without a terminal)
      const run = await restore(tgt, dir, ['--links', '--owners', usersCsv, '--yes'], tgtEnv);
      const sent = await requestsByKind(tgt, since);
      await limits(tgt, { rate_limit: HIGH, org_rate_limit: HIGH });
      const state = await stateOf(tgt, dir, src, sizes, keptCompany);
      const createdHere = SIDES.reduce((n, r) => n + state.held[r] - held[r], 0);
      const summary = run.out;
      return {
        wall_ms: run.wallMs,
        least_ms: (Math.ceil(sent.total / L) - 1) * W,
        peak_rss_mb: run.peakMb,
        cpu_s: run.cpuS,
        held_before: held,
        expected,
        sent,
        created_here: createdHere,
        state,
        summary: {
          created: summary.collections.reduce((n, c) => n + c.created, 0),
          owners_set: summary.collections.reduce((n, c) => n + (c.owners_set ?? 0), 0),
          made: (summary.links ?? []).reduce((n, l) => n + (l.made ?? 0), 0),
          requests: summary.requests,
        },
      };
    };

    // A. into an empty organization
    const all = Object.fromEntries(SIDES.map((r) => [r, src.ids[r].map((_, i) => i)]));
    results.a = await measuredRun('A (empty target)', all, [], () => false);

    // A's floor: the bound's requests into an empty sandbox of its own, at the same limit
    const empty = await sandbox();
    await limits(empty, { rate_limit: L, org_rate_limit: ORG_LIMIT, rate_window_ms: W });
    const job = path.join(work, 'floor.json');
    const owners = { [KEY_USER]: KEY_USER, [OTHER_USER]: OTHER_USER };
    writeFileSync(job, JSON.stringify({ base_url: empty.base_url, key: empty.keys.admin, dir, owners }));
    log(`floor: a bare undici loop, ${results.a.expected.requests} requests at ${L} per ${W} ms`);
    results.a.floor = await floorRun(job);
    await empty.stop();

    // B. the same target after one record in 10 of each collection was deleted (their links going with them)
    const { map } = readIdMap(dir);
    const missing = Object.fromEntries(
      SIDES.map((r) => [r, src.ids[r].flatMap((_, i) => (deletedBeforeB(i) ? [i] : []))]),
    );
    for (const r of SIDES)
      await eachOf(missing[r].length, (k) => call(tgt, 'DELETE', `/${r}/${map.get(r).get(src.ids[r][missing[r][k]])}`));
    const dealTargets = src.ids.deals.map((sid, i) => (deletedBeforeB(i) ? undefined : map.get('deals').get(sid)));
    const present = await presentLinks(tgt, dealTargets);
    log(
      `B: deleted ${SIDES.map((r) => `${missing[r].length} ${r}`).join(', ')}; ${present.reduce((a, b) => a + b, 0)} links left`,
    );
    const companyGone = (i) => deletedBeforeB(i % sizes.companies);
    results.b = await measuredRun('B (90% there)', missing, present, (i) => !deletedBeforeB(i) && companyGone(i));
    await tgt.stop();

    // C. a snapshot of BIG contacts, the limit out of the way: the plan, the restore, the plan again
    /** The three runs of part C at `n` contacts, each into a new empty target. */
    const bigRuns = async (n) => {
      const bigDir = path.join(work, `big-${n}`);
      const t0 = process.hrtime.bigint();
      await writeBigSnapshot(bigDir, n);
      log(`C: a snapshot of ${n} contacts written in ${secs(elapsedMs(t0))}`);
      const big = await sandbox();
      const bigEnv = crmEnv(big);
      const figures = (r) => ({ wall_ms: r.wallMs, cpu_s: r.cpuS, peak_rss_mb: r.peakMb });
      log(`C: --dry-run of ${n} contacts into an empty target`);
      const plan = await restore(big, bigDir, ['--owners', usersCsv, '--dry-run'], bigEnv);
      log(`C: the restore of ${n} contacts`);
      const made = await restore(big, bigDir, ['--owners', usersCsv], bigEnv);
      const held = (await stats(big)).records.contacts;
      log(`C: --dry-run again (every contact in the id map and the target)`);
      const again = await restore(big, bigDir, ['--owners', usersCsv, '--dry-run'], bigEnv);
      await big.stop();
      rmSync(bigDir, { recursive: true, force: true });
      const [p, m, a] = [plan.out.collections[0], made.out.collections[0], again.out.collections[0]];
      return {
        contacts: n,
        plan: { ...figures(plan), create: p.create },
        restore: { ...figures(made), created: m.created, requests: made.out.requests, held_after: held },
        again: { ...figures(again), mapped: a.mapped, create: a.create },
      };
    };
    results.c = await bigRuns(BIG);
    // the 1,000,000 figures when not measured: what each contact adds between a quarter of BIG and BIG
    if (BIG < BIG_FULL && BIG >= 8) {
      const q = await bigRuns(Math.floor(BIG / 4));
      results.c.quarter = q;
      results.c.extrapolated_1m = {};
      for (const k of ['plan', 'restore', 'again']) {
        const [m, mq] = [results.c[k], q[k]];
        const span = BIG - q.contacts;
        const per = { cpu: (m.cpu_s - mq.cpu_s) / span, mb: (m.peak_rss_mb - mq.peak_rss_mb) / span };
        results.c.extrapolated_1m[k] = {
          cpu_s: m.cpu_s + per.cpu * (BIG_FULL - BIG),
          peak_rss_mb: m.peak_rss_mb + per.mb * (BIG_FULL - BIG),
        };
      }
    }
  } finally {
    await Promise.all([...pools.values()].map((p) => p.close()));
    await Promise.all(sandboxes.map((sb) => sb.stop()));
    rmSync(work, { recursive: true, force: true });
  }
  report(results, fullSize);
}

/** The checks (always gating) and the targets (gating where measured at their own size), printed or as JSON. */
function report(results, fullSize) {
  const failures = [];
  const check = (what, ok, gating = true) => {
    if (!ok && gating) failures.push(what);
    return ok ? 'PASS' : gating ? 'FAIL' : 'FAIL (not gating)';
  };
  const runRows = (name, r, floor) => {
    const e = r.expected;
    const s = r.sent;
    const requestsOk = check(
      `${name}: requests`,
      s.total <= e.requests && s.other === 0 && s.rate_limited === 0 && s.chunks === e.chunks,
    );
    const createsOk = check(
      `${name}: nothing created for what is there`,
      r.created_here === e.creates && r.summary.created === e.creates,
    );
    const stateOk = check(`${name}: the target's state`, r.state.ok);
    const paceOk = check(`${name}: pace`, r.wall_ms >= PACE_TARGET * r.least_ms);
    const rssOk = check(`${name}: peak RSS`, r.peak_rss_mb <= RSS_TARGET_MB, fullSize);
    const again = Object.entries(s.pages_again_by)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
    const off = Object.entries(r.state.off)
      .filter(([, v]) => v > 0)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
    const rows = [
      [
        `${name}. requests sent (the target's log)`,
        s.total,
        `≤ ${e.requests} = ${e.pages} pages + ${e.chunks} chunks + ${e.parent_reads} parents' links + ${e.posts} links + ${e.patches} owners`,
        requestsOk,
      ],
      ['   GET list pages, planning', s.pages, `${e.pages} (each collection once, 100 a page, as the target held it)`],
      [
        '   GET list pages / records by id, read again after a write',
        `${s.pages_again} / ${s.gets_again}`,
        `0 / 0 (${again || 'none'})`,
      ],
      ['   POST /<resource>/batch', s.chunks, `${e.chunks} (${e.creates} records missing, ${CHUNK} a chunk)`],
      ["   GET a deal's contacts", s.parent_reads, `${e.parent_reads} (${e.parents} parents with links)`],
      ['   POST a link', s.posts, `${e.posts} (the links missing)`],
      ['   PATCH an owner', s.patches, `${e.patches} (created records owned by ${OTHER_USER})`],
      ['   other requests / 429s / replays', `${s.other} / ${s.rate_limited} / ${s.replayed}`, '0 / 0'],
      [
        "   crm's summary: created / owners set / links made",
        `${r.summary.created} / ${r.summary.owners_set} / ${r.summary.made}`,
        `${e.creates} / ${e.patches} / ${e.posts}`,
      ],
      [`${name}. records the target gained`, r.created_here, `${e.creates} (nothing for what is there)`, createsOk],
      [
        `${name}. the target's state: off`,
        off || '0',
        'counts, id map, fields, owners, companies, deals\u2019 links: 0',
        stateOk,
      ],
      [`${name}. wall time (crm)`, secs(r.wall_ms), ''],
      [
        '   least time the limit allows',
        secs(r.least_ms),
        `(ceil(${s.total}/${results.rate_limit}) - 1) × ${results.rate_window_ms} ms`,
      ],
      [
        '   ratio taken / least',
        (r.wall_ms / r.least_ms).toFixed(3),
        `≥ ${PACE_TARGET} (no faster than allowed)`,
        paceOk,
      ],
      ['   ratio least / taken', (r.least_ms / r.wall_ms).toFixed(3), 'how near crm keeps to the limit (1 = at it)'],
      [
        '   least time + node -e 0',
        secs(r.least_ms + results.node_start_ms),
        `node -e 0: ${results.node_start_ms.toFixed(0)} ms`,
      ],
    ];
    if (floor) {
      const floorOk = check(
        `${name}: floor`,
        floor.requests === floor.rate_limited + e.requests && floor.posted === e.posts && floor.patches === e.patches,
      );
      rows.push(
        [
          '   bare undici loop, the bound’s requests, same limit',
          secs(floor.wall_ms),
          `${floor.requests} requests, ${floor.rate_limited} 429s, its loop ${secs(floor.loop_ms)}`,
          floorOk,
        ],
        ['   ratio crm / bare loop', `${(r.wall_ms / floor.wall_ms).toFixed(3)}×`, ''],
      );
    }
    rows.push([
      `${name}. peak RSS / CPU (crm)`,
      `${megabytes(r.peak_rss_mb)} / ${r.cpu_s.toFixed(2)} s`,
      `≤ ${RSS_TARGET_MB} MB${fullSize ? '' : ' (not the issue’s size: not gating)'}`,
      rssOk,
    ]);
    return rows;
  };
  const rows = [
    ['', 'measured', 'floor / target', ''],
    ...runRows('A', results.a, results.a.floor),
    ...runRows('B', results.b),
  ];
  const c = results.c;
  const bigMeasured = c.contacts >= BIG_FULL;
  const planOk = check(
    'C: the plans',
    c.plan.create === c.contacts && c.again.mapped === c.contacts && c.again.create === 0,
  );
  const madeOk = check('C: the restore', c.restore.created === c.contacts && c.restore.held_after === c.contacts);
  rows.push(
    [`C. ${c.contacts} contacts: plan / restore / plan again`, '', 'the limit out of the way', `${planOk}, ${madeOk}`],
    [
      '   the restore: requests (crm)',
      c.restore.requests,
      `the bound: ${1 + Math.ceil(c.contacts / CHUNK)} (1 page + ${Math.ceil(c.contacts / CHUNK)} chunks, no owner differs)`,
    ],
  );
  for (const [k, what] of [
    ['plan', '--dry-run, empty target'],
    ['restore', 'the restore (creates, id map, owners)'],
    ['again', '--dry-run again, all there'],
  ]) {
    const m = c[k];
    const ok = check(`C: ${what} peak RSS`, m.peak_rss_mb <= RSS_TARGET_MB, bigMeasured);
    rows.push([
      `   ${what}: peak RSS / CPU / wall`,
      `${megabytes(m.peak_rss_mb)} / ${m.cpu_s.toFixed(2)} s / ${secs(m.wall_ms)}`,
      bigMeasured ? `≤ ${RSS_TARGET_MB} MB` : `(${RSS_TARGET_MB} MB is for ${BIG_FULL})`,
      bigMeasured ? ok : '',
    ]);
    if (c.extrapolated_1m) {
      const x = c.extrapolated_1m[k];
      const xOk = check(`C: ${what} peak RSS, extrapolated`, x.peak_rss_mb <= RSS_TARGET_MB, false);
      rows.push([
        `     ${BIG_FULL} contacts, extrapolated`,
        `${megabytes(x.peak_rss_mb)} / ${x.cpu_s.toFixed(2)} s`,
        `≤ ${RSS_TARGET_MB} MB (linear from ${c.quarter.contacts}'s ${megabytes(c.quarter[k].peak_rss_mb)}: overstates)`,
        xOk,
      ]);
    }
  }
  results.failures = failures;
  if (flags.json) {
    console.log(JSON.stringify(results, null, 2));
  } else {
    console.log(
      `restore benchmark: crm restore DIR --links --owners users.csv, a snapshot of ${results.contacts} contacts, ` +
        `${results.companies} companies, ${results.deals} deals, ${results.links} links, ${results.rate_limit} requests ` +
        `per ${results.rate_window_ms} ms (org ${results.org_rate_limit}); the source made in ` +
        `${secs(results.setup.source_ms)}, crm snapshot --links in ${secs(results.setup.snapshot_ms)}; ` +
        `node ${process.version}, peak RSS and CPU by ${RSS_METHOD}`,
    );
    printColumns(rows, new Set([0, 2]));
    console.log(
      failures.length ? `FAILED: ${failures.join(', ')}` : 'all checks met, and the targets measured at their size',
    );
  }
  if (failures.length) process.exitCode = 1;
}

if (flags.floor) await floorLoop(flags.floor);
else await main();
