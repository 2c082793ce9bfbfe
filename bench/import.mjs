// Benchmark of `crm batch` (CONTRACT §7, issues 5 and 13), through the real binary against `crm sandbox`
// in a child process:
//   1. throughput: 100 000 rows, no rate limit, no faults: wall time of `crm batch` beside its floor,
//      a bare undici loop (bench/import-floor.mjs, its own process) POSTing the same chunk bodies,
//      precomputed, to the same sandbox with the same concurrency; run --rounds times, interleaved
//      (floor, crm, crm, floor, …), each run on a fresh sandbox; medians, and crm / floor (goal ≤ 1.4);
//   2. memory: 1 000 000 rows: the CLI's peak RSS, which must stay under 150 MB and flat (beside
//      the 100 000-row figure);
//   3. pacing: 10 000 rows (100 chunks) under a scaled limit (30 requests per 3 s): efficiency =
//      the least time the limit allows / the time taken, and the 429s the sandbox answered.
//
//   npm run bench:import                               (builds first)
//   node bench/import.mjs --parts 1,3 --rows 100000 --big-rows 1000000 --rounds 3 --json
//
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { procKb, requestLog, RSS_METHOD, runCrm, secs, megabytes } from './measure.mjs';
import { startSandboxChild } from './sandbox-child.mjs';

const FLOOR = fileURLToPath(new URL('./import-floor.mjs', import.meta.url));

const { values: flags } = parseArgs({
  options: {
    parts: { type: 'string', default: '1,2,3' },
    rows: { type: 'string', default: '100000' },
    'big-rows': { type: 'string', default: '1000000' },
    'pace-rows': { type: 'string', default: '10000' },
    'rate-limit': { type: 'string', default: '30' },
    'rate-window-ms': { type: 'string', default: '3000' },
    concurrency: { type: 'string', default: '4' },
    rounds: { type: 'string', default: '3' },
    json: { type: 'boolean', default: false },
  },
});
const PARTS = new Set(flags.parts.split(',').map((s) => Number(s.trim())));
const ROWS = Number(flags.rows);
const BIG_ROWS = Number(flags['big-rows']);
const PACE_ROWS = Number(flags['pace-rows']);
const LIMIT = Number(flags['rate-limit']);
const WINDOW_MS = Number(flags['rate-window-ms']);
const CONCURRENCY = Number(flags.concurrency);
const ROUNDS = Number(flags.rounds);
for (const [name, v] of [
  ['rows', ROWS],
  ['big-rows', BIG_ROWS],
  ['pace-rows', PACE_ROWS],
  ['rate-limit', LIMIT],
  ['rate-window-ms', WINDOW_MS],
  ['concurrency', CONCURRENCY],
  ['rounds', ROUNDS],
]) {
  if (!Number.isInteger(v) || v < 1) throw new Error(`--${name} must be a positive integer`);
}

const RSS_TARGET_MB = 150;
/** crm batch's wall time at most this many times its floor's */
const FLOOR_RATIO_TARGET = 1.4;
const CHUNK = 100;
/** "flat": the 1M-row peak at most this much above the 100k-row peak */
const FLAT_TOLERANCE_MB = 15;
const EFFICIENCY_TARGET = 0.9;
/** limits out of the way for parts 1 and 2 */
const HIGH = String(1_000_000_000);
const SANDBOX = ['--seed', '1', '--control'];

const work = mkdtempSync(path.join(tmpdir(), 'crm-bench-import-'));
const log = (m) => process.stderr.write(`[bench] ${m}\n`);

const TAGS = ['lead', 'customer', 'vip', 'partner', 'churned'];
/** Row `i` of the benchmark's contacts: the CSV line, and the record crm sends for it. */
function contact(i) {
  const [score, active, tags] = [((i * 37) % 1000) / 10, i % 3 === 0, [TAGS[i % 5], TAGS[(i >> 3) % 5]]];
  const [email, first, last, company] = [
    `person${i}@bench.example`,
    `First${i}`,
    `Last, ${i % 997}`,
    `Company ${i % 1000}`,
  ];
  return {
    line: `${email},${first},"${last}",${company},${score},${active},${tags.join(';')}\r\n`,
    record: { email, first_name: first, last_name: last, company, score, active, tags },
  };
}

/** Writes `n` pieces of text made by `piece(i)` as a stream (constant memory); resolves with the size. */
async function writeStream(file, n, head, piece) {
  const out = createWriteStream(file);
  out.write(head);
  let buf = '';
  for (let i = 1; i <= n; i++) {
    buf += piece(i);
    if (buf.length >= 64 * 1024) {
      if (!out.write(buf)) await once(out, 'drain');
      buf = '';
    }
  }
  out.end(buf);
  await once(out, 'finish');
  return statSync(file).size;
}

/** A CSV of `n` contacts with unique emails and typed columns. */
const writeCsv = (file, n) =>
  writeStream(
    file,
    n,
    'email,First Name,Last Name,company,score:number,active:boolean,tags:list\r\n',
    (i) => contact(i).line,
  );

/** The floor's input: the bodies crm sends for that CSV, one chunk (a JSON array of CHUNK records) per line. */
const writeBodies = (file, n) =>
  writeStream(file, Math.ceil(n / CHUNK), '', (c) => {
    const records = [];
    for (let i = (c - 1) * CHUNK + 1; i <= Math.min(n, c * CHUNK); i++) records.push(contact(i).record);
    return `${JSON.stringify(records)}\n`;
  });

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

/** The floor on a fresh sandbox: the whole process's wall time and its loop's. */
async function runFloor(bodies) {
  const fsb = await startSandboxChild([...SANDBOX, '--rate-limit', HIGH, '--org-rate-limit', HIGH]);
  try {
    const t0 = process.hrtime.bigint();
    const child = spawn(process.execPath, [FLOOR, fsb.base_url, fsb.keys.admin, bodies, String(CONCURRENCY)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const [code] = await once(child, 'exit');
    const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
    if (code !== 0) throw new Error(`the floor exited ${code}`);
    const r = JSON.parse(out);
    if (r.created !== ROWS) throw new Error(`floor: expected ${ROWS} created, got ${r.created}`);
    return { wallMs, loopMs: r.loop_ms };
  } finally {
    await fsb.stop();
  }
}

/** `crm batch` on a fresh sandbox. */
async function runCrmFresh(file) {
  const csb = await startSandboxChild([...SANDBOX, '--rate-limit', HIGH, '--org-rate-limit', HIGH]);
  try {
    const r = await runBatch(csb, file);
    if (r.summary.created !== ROWS) throw new Error(`expected ${ROWS} created, got ${JSON.stringify(r.summary)}`);
    return r;
  } finally {
    await csb.stop();
  }
}

/**
 * Runs `crm -o json batch contacts FILE …` against `sb`; resolves with its summary, wall ms, peak
 * RSS and, with `-v` in `extra`, when each request started on this process's clock (the time its
 * --verbose line arrived less the duration the line gives).
 */
async function runBatch(sb, file, extra = []) {
  const env = {
    ...process.env,
    CRM_BASE_URL: sb.base_url,
    CRM_API_KEY: sb.keys.admin,
    CRM_CONFIG_DIR: mkdtempSync(path.join(work, 'config-')),
  };
  // `company` is near the field `company_id` the seeded contacts have: crm refuses it unless --map says it is meant
  const crmArgs = ['-o', 'json', '--quiet', 'batch', 'contacts', file, '--concurrency', String(CONCURRENCY)];
  crmArgs.push('--map', 'company=company', ...extra);
  const r = await runCrm(crmArgs, { env, work, request: /^POST \S+\/batch (\d{3}) (\d+) ms/ });
  if (r.code !== 0) throw new Error(`crm batch exited ${r.code}:\n${r.stderr}`);
  return { ...r, summary: JSON.parse(r.stdout) };
}

const count429 = (sb) => requestLog(sb);

const mb = megabytes;
const results = {};
let sb;
try {
  if (PARTS.has(1) || PARTS.has(2)) {
    const small = path.join(work, `contacts-${ROWS}.csv`);
    const bodies = path.join(work, `bodies-${ROWS}.ndjson`);
    const t0 = Date.now();
    const bytes = await writeCsv(small, ROWS);
    if (PARTS.has(1)) await writeBodies(bodies, ROWS);
    log(`wrote ${ROWS} rows (${mb(bytes / 1048576)}) in ${Date.now() - t0} ms`);
    // floor and crm alternate which goes first, so a drift of the machine's load falls on both
    const rounds = PARTS.has(1) ? ROUNDS : 1;
    const [crm, floor] = [[], []];
    for (let k = 0; k < rounds; k++) {
      const order = PARTS.has(1) ? (k % 2 === 0 ? ['floor', 'crm'] : ['crm', 'floor']) : ['crm'];
      for (const side of order) {
        log(`throughput: ${ROWS} rows, round ${k + 1} of ${rounds}: ${side}`);
        if (side === 'crm') crm.push(await runCrmFresh(small));
        else floor.push(await runFloor(bodies));
      }
    }
    const wall = median(crm.map((r) => r.wallMs));
    results.throughput = {
      rows: ROWS,
      rounds,
      wall_ms: wall,
      wall_ms_each: crm.map((r) => Math.round(r.wallMs)),
      elapsed_ms: median(crm.map((r) => r.summary.elapsed_ms)),
      rows_per_s: ROWS / (wall / 1000),
      peak_rss_mb: Math.max(...crm.map((r) => r.peakMb)),
      ...(floor.length > 0
        ? {
            floor_wall_ms: median(floor.map((f) => f.wallMs)),
            floor_wall_ms_each: floor.map((f) => Math.round(f.wallMs)),
            floor_loop_ms: median(floor.map((f) => f.loopMs)),
            ratio: wall / median(floor.map((f) => f.wallMs)),
            ratio_to_loop: wall / median(floor.map((f) => f.loopMs)),
          }
        : {}),
    };
    rmSync(small);
    rmSync(bodies, { force: true });
  }
  if (PARTS.has(2)) {
    const big = path.join(work, `contacts-${BIG_ROWS}.csv`);
    const t0 = Date.now();
    const bytes = await writeCsv(big, BIG_ROWS);
    log(`wrote ${BIG_ROWS} rows (${mb(bytes / 1048576)}) in ${Date.now() - t0} ms`);
    // a fresh sandbox: it keeps every record in memory
    sb = await startSandboxChild([...SANDBOX, '--rate-limit', HIGH, '--org-rate-limit', HIGH]);
    log(`memory: ${BIG_ROWS} rows`);
    const r = await runBatch(sb, big);
    if (r.summary.created !== BIG_ROWS)
      throw new Error(`expected ${BIG_ROWS} created, got ${JSON.stringify(r.summary)}`);
    results.memory = {
      rows: BIG_ROWS,
      wall_ms: r.wallMs,
      elapsed_ms: r.summary.elapsed_ms,
      rows_per_s: BIG_ROWS / (r.wallMs / 1000),
      peak_rss_mb: r.peakMb,
      sandbox_rss_mb: procKb(sb.child.pid, 'VmRSS') / 1024,
    };
    rmSync(big);
    await sb.stop();
    sb = undefined;
  }
  if (PARTS.has(3)) {
    const file = path.join(work, `contacts-${PACE_ROWS}.csv`);
    await writeCsv(file, PACE_ROWS);
    sb = await startSandboxChild([
      ...SANDBOX,
      '--rate-limit',
      String(LIMIT),
      '--rate-window-ms',
      String(WINDOW_MS),
      '--org-rate-limit',
      HIGH,
    ]);
    log(`pacing: ${PACE_ROWS} rows at ${LIMIT} requests per ${WINDOW_MS} ms`);
    const before = await count429(sb);
    const r = await runBatch(sb, file, ['-v']);
    const after = await count429(sb);
    const requests = Math.ceil(PACE_ROWS / 100);
    if (r.summary.created !== PACE_ROWS)
      throw new Error(`expected ${PACE_ROWS} created, got ${JSON.stringify(r.summary)}`);
    // The sandbox's window is fixed: it opens at the first request and the next one at the first
    // request after it ended. So at best the windows follow each other back to back, and the last
    // of `requests` requests cannot start before ceil(requests / limit) - 1 whole windows have
    // passed since the first one started. The time taken is the same span, measured: from the
    // first request's start to the last one's (the -v lines). The import's whole elapsed_ms (which
    // also holds the first pass over the file and the last answer) is given beside it.
    const leastMs = (Math.ceil(requests / LIMIT) - 1) * WINDOW_MS;
    const spanMs = r.starts.length > 1 ? r.starts[r.starts.length - 1] - r.starts[0] : NaN;
    results.pacing = {
      rows: PACE_ROWS,
      requests,
      limit: LIMIT,
      window_ms: WINDOW_MS,
      least_ms: leastMs,
      first_to_last_start_ms: spanMs,
      efficiency: leastMs / spanMs,
      elapsed_ms: r.summary.elapsed_ms,
      efficiency_elapsed: leastMs / r.summary.elapsed_ms,
      wall_ms: r.wallMs,
      sent: after.total - before.total,
      rate_limited: after.r429 - before.r429,
      retries: r.summary.retries,
    };
    await sb.stop();
    sb = undefined;
  }
} finally {
  await sb?.stop();
  rmSync(work, { recursive: true, force: true });
}

if (flags.json) {
  console.log(JSON.stringify(results, null, 2));
} else {
  console.log(`import benchmark, node ${process.version}, concurrency ${CONCURRENCY}, peak RSS by ${RSS_METHOD}`);
  const rows = [];
  let ok = true;
  const row = (what, value, target, met) => {
    if (met === false) ok = false;
    rows.push([what, value, target ?? '', met === undefined ? '' : met ? 'yes' : 'NO']);
  };
  const t = results.throughput;
  const m = results.memory;
  const p = results.pacing;
  if (t) {
    const s = secs;
    row(
      `1. ${t.rows} rows: crm batch wall time`,
      s(t.wall_ms),
      `median of ${t.rounds}: ${t.wall_ms_each.map(s).join(', ')}`,
    );
    if (t.floor_wall_ms !== undefined) {
      const each = t.floor_wall_ms_each.map(s).join(', ');
      row(`1. floor: bare undici loop, wall time`, s(t.floor_wall_ms), `median of ${t.rounds}: ${each}`);
      row(`1. floor: its sending loop alone`, s(t.floor_loop_ms), 'without node start-up and reading the bodies');
      row(`1. crm / floor`, `${t.ratio.toFixed(2)}×`, `≤ ${FLOOR_RATIO_TARGET}×`, t.ratio <= FLOOR_RATIO_TARGET);
      row(`1. crm / floor's loop alone`, `${t.ratio_to_loop.toFixed(2)}×`, '(for reference)');
    }
    row(`1. ${t.rows} rows: throughput`, `${Math.round(t.rows_per_s)} rows/s`);
    row(`1. ${t.rows} rows: CLI peak RSS`, mb(t.peak_rss_mb), `< ${RSS_TARGET_MB} MB`, t.peak_rss_mb < RSS_TARGET_MB);
  }
  if (m) {
    row(`2. ${m.rows} rows: wall time`, `${(m.wall_ms / 1000).toFixed(2)} s (${Math.round(m.rows_per_s)} rows/s)`);
    row(`2. ${m.rows} rows: CLI peak RSS`, mb(m.peak_rss_mb), `< ${RSS_TARGET_MB} MB`, m.peak_rss_mb < RSS_TARGET_MB);
    row(`2. sandbox RSS with ${m.rows} contacts`, mb(m.sandbox_rss_mb), "(not the CLI's; for reference)");
    if (t) {
      const d = m.peak_rss_mb - t.peak_rss_mb;
      row(
        `2. peak RSS ${t.rows} vs ${m.rows}`,
        `${mb(t.peak_rss_mb)} vs ${mb(m.peak_rss_mb)} (${d >= 0 ? '+' : ''}${d.toFixed(1)})`,
        `flat (±${FLAT_TOLERANCE_MB} MB)`,
        Math.abs(d) <= FLAT_TOLERANCE_MB,
      );
    }
  }
  if (p) {
    row(
      `3. pacing: least time`,
      `${(p.least_ms / 1000).toFixed(2)} s`,
      `first → last request start: (ceil(${p.requests}/${p.limit}) - 1) × ${p.window_ms} ms`,
    );
    row(
      `3. pacing: time taken`,
      `${(p.first_to_last_start_ms / 1000).toFixed(2)} s`,
      'first → last request start, measured',
    );
    row(`3. pacing: efficiency`, p.efficiency.toFixed(3), `≥ ${EFFICIENCY_TARGET}`, p.efficiency >= EFFICIENCY_TARGET);
    row(
      `3. pacing: whole import`,
      `${(p.elapsed_ms / 1000).toFixed(2)} s → ${p.efficiency_elapsed.toFixed(3)}`,
      'elapsed_ms, with the check pass',
    );
    row(`3. pacing: 429s`, `${p.rate_limited} of ${p.sent} requests`, '(sandbox request log)');
  }
  const w = [0, 1, 2].map((i) => Math.max(...rows.map((r) => r[i].length)));
  for (const r of rows)
    console.log(`${r[0].padEnd(w[0])}  ${r[1].padStart(w[1])}  ${r[2].padEnd(w[2])}  ${r[3]}`.trimEnd());
  console.log(ok ? 'all targets met' : 'SOME TARGETS MISSED');
}
