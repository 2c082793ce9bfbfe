// Benchmark of bulk update, link and delete (issue 12, "Measured"), through the real binary
// against `crm sandbox` in a child process, under a rate limit scaled in time:
//   update: crm batch contacts upd.csv --update          (PATCH /contacts/ID per row)
//   link:   crm links add segments SEG members --file ids.txt   (POST /segments/SEG/members per row)
//   delete: crm batch contacts ids.txt --delete --yes    (DELETE /contacts/ID per row)
// For each: the least time the limit allows, the time taken, their ratio (goal ≥ 0.9), the 429s the
// sandbox answered (its request log), the crm process's peak RSS and ops/s, beside the floor.
//
//   npm run bench:bulk-change                     1 000 rows each, 200 requests per 5 s (~80 s)
//   node bench/bulk-change.mjs --quick            200 rows each, 50 requests per 2 s (~25 s)
// The limit is the API's 200 a minute scaled in time, but still well below what 4 requests in flight
// can do on a loaded machine (~100/s here): a faster limit would measure the concurrency, not the pacing.
//   node bench/bulk-change.mjs --rows 1000 --rate-limit 100 --rate-window-ms 1000 --only update,delete --json
//   node bench/bulk-change.mjs --rate-limit 1000000   (no limit: the raw ops/s; the ratio means nothing)
//
// The least time: one row is one request (plus the reads before them: an update's column check reads a
// page, a delete first keeps each record it deletes), and the sandbox's window is fixed (it opens at the first
// request, the next one at the first request after it ended), so at best the windows follow each
// other back to back and the last of N requests starts (ceil(N / limit) - 1) windows after the
// first. The time taken is the crm process's wall time (start-up, the check pass over the file and
// the last answer included); the floor adds `node -e 0`'s start-up to the least time. The span
// from the first request's start to the last one's (from the -v lines) is given beside it, and the
// time at the limit's steady rate (N / limit × window: no window's budget spent at once), whose
// ratio says how near crm keeps to the rate itself.
//
// One seeded sandbox (--control) for the run. The records are made first with the limit out of the
// way (N contacts in batches of 100, one segment); each operation then starts on fresh windows
// (/__sandbox/limits). Each operation's outcome is checked on the server.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { api, limits, nodeStartMs, printColumns, requestLog, RSS_METHOD, runCrm, stats, secs } from './measure.mjs';
import { CRM, startLimitedSandbox } from './sandbox-child.mjs';

const { values: flags } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    rows: { type: 'string' },
    'rate-limit': { type: 'string' },
    'rate-window-ms': { type: 'string' },
    concurrency: { type: 'string', default: '4' },
    only: { type: 'string', default: 'update,link,delete' },
    json: { type: 'boolean', default: false },
  },
});
const [ROWS, LIMIT, WINDOW_MS] = flags.quick ? [200, 50, 2000] : [1000, 200, 5000];
const N = Number(flags.rows ?? ROWS);
const L = Number(flags['rate-limit'] ?? LIMIT);
const W = Number(flags['rate-window-ms'] ?? WINDOW_MS);
const CONCURRENCY = Number(flags.concurrency);
for (const [name, v] of Object.entries({ rows: N, 'rate-limit': L, 'rate-window-ms': W, concurrency: CONCURRENCY }))
  if (!Number.isInteger(v) || v < 1) throw new Error(`--${name} must be a positive integer`);
const OPS = ['update', 'link', 'delete'];
const ONLY = new Set(flags.only.split(',').map((s) => s.trim()));
for (const op of ONLY) if (!OPS.includes(op)) throw new Error(`--only takes ${OPS.join(', ')}`);

const GOAL = 0.9;
const HIGH = 1_000_000_000;
const work = mkdtempSync(path.join(tmpdir(), 'crm-bench-bulk-'));
const log = (m) => process.stderr.write(`[bench] ${m}\n`);

const contactCount = async (sb) => (await stats(sb)).records.contacts;

/** N contacts (batches of 100) and a segment; the files of the three operations. */
async function setUp(sb) {
  await limits(sb, { rate_limit: HIGH });
  const ids = [];
  for (let i = 0; i < N; i += 100) {
    const items = Array.from({ length: Math.min(100, N - i) }, (_, k) => ({
      email: `bulk${i + k}@bench.example`,
      first_name: `First${i + k}`,
    }));
    const page = await api(sb, 'POST', '/contacts/batch', items);
    ids.push(...page.data.items.map((it) => it.data.id));
  }
  const segment = (await api(sb, 'POST', '/segments', { name: 'bulk bench' })).data.id;
  const upd = path.join(work, 'upd.csv');
  writeFileSync(upd, `id,first_name,last_name\n${ids.map((id, i) => `${id},Changed${i},"Last, ${i}"\n`).join('')}`);
  const idsFile = path.join(work, 'ids.txt');
  writeFileSync(idsFile, `${ids.join('\n')}\n`);
  return { ids, segment, upd, idsFile };
}

/** Whether this build has `crm links add … --file`. */
function hasLinkFile() {
  const r = spawnSync(process.execPath, [CRM, 'links', 'add', '--help'], { encoding: 'utf8' });
  return /--file\b/.test(r.stdout);
}

/** The operations: crm's arguments, the summary field that counts done rows, the server-side check. */
function operations(sb, { ids, segment, upd, idsFile }) {
  return {
    update: {
      args: ['batch', 'contacts', upd, '--update'],
      field: 'updated',
      check: async () => (await api(sb, 'GET', `/contacts/${ids.at(-1)}`)).data.first_name === `Changed${N - 1}`,
    },
    link: {
      args: ['links', 'add', 'segments', segment, 'members', '--file', idsFile],
      field: 'linked',
      check: async () => {
        let n = 0;
        for (let cursor = ''; ;) {
          const page = await api(sb, 'GET', `/segments/${segment}/members?limit=100${cursor && `&cursor=${cursor}`}`);
          n += page.data.length;
          if (!page.page_info.has_next_page) return n === N;
          cursor = page.page_info.end_cursor;
        }
      },
    },
    delete: {
      args: ['batch', 'contacts', idsFile, '--delete', '--yes'],
      field: 'deleted',
      before: () => contactCount(sb),
    },
  };
}

async function measure(sb, name, op) {
  const contactsBefore = await op.before?.();
  await limits(sb, { rate_limit: L, rate_window_ms: W, org_rate_limit: HIGH }); // fresh windows
  const since = (await stats(sb)).requests;
  const env = {
    ...process.env,
    CRM_BASE_URL: sb.base_url,
    CRM_API_KEY: sb.keys.admin,
    CRM_CONFIG_DIR: mkdtempSync(path.join(work, 'config-')),
  };
  const args = ['-v', '-o', 'json', '--quiet', ...op.args, '--concurrency', String(CONCURRENCY)];
  log(`${name}: ${N} rows at ${L} requests per ${W} ms`);
  const r = await runCrm(args, { env, work, request: /^(?:GET|PATCH|DELETE|POST|PUT) \S+ (\d{3}) (\d+) ms/ });
  if (r.code !== 0) throw new Error(`crm ${op.args.join(' ')} exited ${r.code}:\n${r.stderr}`);
  await limits(sb, { rate_limit: HIGH }); // the checks' requests out of the limit's way
  const summary = JSON.parse(r.stdout);
  if (summary[op.field] !== N) throw new Error(`${name}: expected ${N} ${op.field}, got ${r.stdout}`);
  const after = await requestLog(sb, since);
  const ok = op.check ? await op.check() : (await contactCount(sb)) === contactsBefore - N;
  if (!ok) throw new Error(`${name}: the server does not show the change`);
  // every request the limit counted: the rows', and the reads before them (an update's column check
  // reads a page; a delete first keeps each record: a listing, or a GET a row)
  const counted = after.total - after.r429;
  const leastMs = (Math.ceil(counted / L) - 1) * W;
  const spanMs = r.starts.length > 1 ? r.starts.at(-1) - r.starts[0] : NaN;
  return {
    rows: N,
    requests: after.total,
    least_ms: leastMs,
    wall_ms: r.wallMs,
    ratio: leastMs / r.wallMs,
    to_first_request_ms: r.starts[0],
    span_ms: spanMs,
    span_ratio: leastMs / spanMs,
    rate_limited: after.r429,
    retries: summary.retries,
    peak_rss_mb: r.peakMb,
    ops_per_s: N / (r.wallMs / 1000),
    // how many requests started in each window after the first request's start (where the time goes)
    per_window: r.starts.reduce(
      (a, t) => ((a[Math.floor((t - r.starts[0]) / W)] += 1), a),
      Array(Math.ceil(spanMs / W + 1e-9) || 1).fill(0),
    ),
  };
}

const results = {};
const notes = [];
let startMs;
let sb;
try {
  startMs = nodeStartMs();
  sb = await startLimitedSandbox(L, W);
  const files = await setUp(sb);
  const ops = operations(sb, files);
  for (const name of OPS) {
    if (!ONLY.has(name)) continue;
    if (name === 'link' && !hasLinkFile()) {
      notes.push('link: skipped, this build has no `crm links add … --file` (issue 12: bulk links)');
      continue;
    }
    results[name] = await measure(sb, name, ops[name]);
  }
} finally {
  await sb?.stop();
  rmSync(work, { recursive: true, force: true });
}

if (flags.json) {
  console.log(
    JSON.stringify(
      {
        rows: N,
        rate_limit: L,
        rate_window_ms: W,
        concurrency: CONCURRENCY,
        node_start_ms: startMs,
        ...results,
        notes,
      },
      null,
      2,
    ),
  );
} else {
  console.log(
    `bulk change benchmark: ${N} rows each, ${L} requests per ${W} ms, concurrency ${CONCURRENCY}, node ${process.version}, peak RSS by ${RSS_METHOD}`,
  );
  const names = Object.keys(results);
  const s = secs;
  const cell = (f) => names.map((n) => f(results[n]));
  const least = (Math.ceil(N / L) - 1) * W;
  const misses = names.filter((n) => !(results[n].ratio >= GOAL));
  printColumns(
    [
      ['', ...names, 'floor / goal'],
      [
        'requests sent',
        ...cell((r) => r.requests),
        `${N} (one per row) + the reads first (update: a page; delete: the backup's)`,
      ],
      ['least time the limit allows', ...cell((r) => s(r.least_ms)), `(ceil(requests/${L}) - 1) × ${W} ms`],
      ['floor: + node -e 0 start-up', ...cell((r) => s(r.least_ms + startMs)), `node -e 0: ${startMs.toFixed(0)} ms`],
      ['time taken (crm wall time)', ...cell((r) => s(r.wall_ms)), ''],
      ['ratio least / taken', ...cell((r) => r.ratio.toFixed(3)), `goal ≥ ${GOAL}`],
      ['ratio floor / taken', ...cell((r) => ((r.least_ms + startMs) / r.wall_ms).toFixed(3)), `goal ≥ ${GOAL}`],
      [
        'start → first request',
        ...cell((r) => `${r.to_first_request_ms.toFixed(0)} ms`),
        `node -e 0: ${startMs.toFixed(0)} ms`,
      ],
      ['first → last request start', ...cell((r) => s(r.span_ms)), s(least)],
      ["at the limit's rate: N / limit × window", ...cell(() => s((N / L) * W)), 'no window free at the start'],
      ['ratio rate time / taken', ...cell((r) => (((N / L) * W) / r.wall_ms).toFixed(3)), ''],
      ['ratio least / that span', ...cell((r) => r.span_ratio.toFixed(3)), `goal ≥ ${GOAL}`],
      ['requests started per window', ...cell((r) => r.per_window.join(' ')), `${L} per window`],
      ['429s (sandbox request log)', ...cell((r) => r.rate_limited), '0'],
      ['peak RSS (crm)', ...cell((r) => `${r.peak_rss_mb.toFixed(1)} MB`), ''],
      ['ops/s', ...cell((r) => r.ops_per_s.toFixed(1)), `limit: ${((L / W) * 1000).toFixed(1)}/s`],
    ],
    new Set([0, names.length + 1]),
  );
  for (const n of notes) console.log(n);
  console.log(misses.length ? `BELOW THE GOAL: ${misses.join(', ')}` : 'all at or above the goal');
}
