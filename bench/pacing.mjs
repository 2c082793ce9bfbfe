// Benchmark of the pacer (issue 13, "Pacing"): a real `crm batch contacts` import through the built
// binary against `crm sandbox` (a child process) playing each shape of rate limiter a real server
// uses, with windows of 10 s or more so that whole-second rounding is as in production:
//   fixed windows, X-RateLimit-Reset in whole seconds (rounded up)    goal ≥ 0.95, ≤ 3 429s
//   fixed windows, X-RateLimit-Reset as a Unix time (rounded up)      goal ≥ 0.95, ≤ 3 429s
//   a sliding window (sliding log), Reset in whole seconds            goal ≥ 0.95, ≤ 3 429s
//   a sliding window, Reset until its oldest request leaves (seconds)  goal ≥ 0.95, ≤ 3 429s
//   fixed windows, no X-RateLimit-* headers (429 + Retry-After only)  goal ≥ 0.85
//   4 `crm` processes sharing one key (fixed, seconds)                 goal ≥ 0.85 all together, all finish
//
// Each shape runs --runs times (default 3): the worst run must meet the goal; the median is beside it.
//
//   npm run bench:pacing                                 (builds first)
//   node bench/pacing.mjs --quick                        (fewer rows, 2 runs a shape: a few minutes)
//   node bench/pacing.mjs --only sliding-oldest --runs 5
//   node bench/pacing.mjs --only fixed-seconds,procs-4 --json
//   node bench/pacing.mjs --crm /tmp/old/bin/crm         (another build as the client: before/after)
//
// Least time: the first request opens a window; at best the windows follow each other back to back,
// so the last of R requests at L per window W cannot start before (ceil(R / L) - 1) × W after the
// first (for a sliding window too: request i cannot start before request i - L has left the window).
// Time taken: the same span, measured, from the first request's start to the last one's (each
// process's --verbose lines: arrival less the duration the line gives). The whole wall time of the
// run (start-up, the check pass, the last answer) is printed beside it. 429s: the sandbox's request
// log (/__sandbox/requests).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { CRM, startSandboxChild } from './sandbox-child.mjs';

const { values: flags } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    rows: { type: 'string' },
    'rate-limit': { type: 'string' },
    'rate-window-ms': { type: 'string' },
    concurrency: { type: 'string', default: '4' },
    runs: { type: 'string' },
    processes: { type: 'string', default: '4' },
    json: { type: 'boolean', default: false },
    /** the client under test, e.g. another build's bin/crm for a before/after table (the sandbox stays this one) */
    crm: { type: 'string' },
  },
});
const CLIENT = flags.crm ? path.resolve(flags.crm) : CRM;
const ROWS = Number(flags.rows ?? (flags.quick ? 6_000 : 12_000));
const LIMIT = Number(flags['rate-limit'] ?? (flags.quick ? 30 : 40));
const WINDOW_MS = Number(flags['rate-window-ms'] ?? 10_000);
const CONCURRENCY = Number(flags.concurrency);
const PROCESSES = Number(flags.processes);
const RUNS = Number(flags.runs ?? (flags.quick ? 2 : 3));
for (const [name, v] of [
  ['runs', RUNS],
  ['rows', ROWS],
  ['rate-limit', LIMIT],
  ['rate-window-ms', WINDOW_MS],
  ['concurrency', CONCURRENCY],
  ['processes', PROCESSES],
]) {
  if (!Number.isInteger(v) || v < 1) throw new Error(`--${name} must be a positive integer`);
}

const SCENARIOS = [
  {
    name: 'fixed-seconds',
    what: 'fixed window, Reset in whole seconds',
    kind: 'fixed',
    format: 'seconds',
    goal: 0.95,
    max429: 3,
  },
  {
    name: 'fixed-unix',
    what: 'fixed window, Reset as a Unix time',
    kind: 'fixed',
    format: 'epoch',
    goal: 0.95,
    max429: 3,
  },
  {
    name: 'sliding',
    what: 'sliding window, Reset in whole seconds',
    kind: 'sliding',
    format: 'seconds',
    goal: 0.95,
    max429: 3,
  },
  {
    name: 'sliding-oldest',
    what: 'sliding window, Reset: oldest leaves, seconds',
    kind: 'sliding-oldest',
    format: 'seconds',
    goal: 0.95,
    max429: 3,
  },
  { name: 'none', what: 'fixed window, no X-RateLimit-* headers', kind: 'fixed', format: 'none', goal: 0.85 },
  {
    name: `procs-${PROCESSES}`,
    what: `${PROCESSES} processes, one key (fixed, seconds)`,
    kind: 'fixed',
    format: 'seconds',
    goal: 0.85,
    procs: PROCESSES,
  },
];
const only = flags.only ? new Set(flags.only.split(',').map((s) => s.trim())) : undefined;
const chosen = SCENARIOS.filter((s) => !only || only.has(s.name));
if (chosen.length === 0) throw new Error(`--only: none of ${SCENARIOS.map((s) => s.name).join(', ')}`);

const work = mkdtempSync(path.join(tmpdir(), 'crm-bench-pacing-'));
const log = (m) => process.stderr.write(`[bench] ${m}\n`);

/** A CSV of contacts `from`..`to` (unique emails). */
function writeCsv(file, from, to) {
  const lines = ['email,First Name,Last Name,title'];
  for (let i = from; i <= to; i++) lines.push(`pace${i}@bench.example,First${i},Last${i},Title ${i % 100}`);
  writeFileSync(file, `${lines.join('\r\n')}\r\n`);
}

/** Runs `crm -v batch contacts FILE`; resolves with its summary and each request's start (ms on `t0`'s clock). */
async function runBatch(sb, file, t0) {
  const env = {
    ...process.env,
    CRM_BASE_URL: sb.base_url,
    CRM_API_KEY: sb.keys.admin,
    CRM_CONFIG_DIR: mkdtempSync(path.join(work, 'config-')),
  };
  const args = [CLIENT, '-o', 'json', '--quiet', '-v', 'batch', 'contacts', file, '--concurrency', String(CONCURRENCY)];
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  const starts = [];
  child.stdout.on('data', (d) => (stdout += d));
  createInterface({ input: child.stderr }).on('line', (line) => {
    const at = Number(process.hrtime.bigint() - t0) / 1e6;
    const m = /^(?:GET|POST) \S+ (\d{3}) (\d+) ms/.exec(line);
    if (m) starts.push(at - Number(m[2]));
    else stderr += `${line}\n`;
  });
  const [code] = await Promise.all([once(child, 'exit'), once(child.stderr, 'end')]).then(([c]) => c);
  const endMs = Number(process.hrtime.bigint() - t0) / 1e6;
  if (code !== 0) throw new Error(`crm batch exited ${code}:\n${stderr}`);
  return { summary: JSON.parse(stdout), starts, endMs };
}

async function run(s) {
  const procs = s.procs ?? 1;
  const per = Math.ceil(ROWS / procs);
  const files = Array.from({ length: procs }, (_, p) => {
    const file = path.join(work, `${s.name}-${p}.csv`);
    writeCsv(file, p * per + 1, Math.min(ROWS, (p + 1) * per));
    return file;
  });
  const sb = await startSandboxChild([
    ...['--seed', '1', '--control', '--org-rate-limit', String(1_000_000_000)],
    ...['--rate-limit', String(LIMIT), '--rate-window-ms', String(WINDOW_MS)],
    ...['--rate-limit-kind', s.kind, '--rate-reset-format', s.format],
  ]);
  try {
    log(`${s.name}: ${ROWS} rows in ${procs} process(es) at ${LIMIT} requests per ${WINDOW_MS} ms`);
    const t0 = process.hrtime.bigint();
    const runs = await Promise.all(files.map((f) => runBatch(sb, f, t0)));
    const entries = await (await fetch(`${sb.control_url}/requests`)).json();
    const created = runs.reduce((n, r) => n + r.summary.created, 0);
    if (created !== ROWS) throw new Error(`${s.name}: expected ${ROWS} created, got ${created}`);
    const starts = runs.flatMap((r) => r.starts).sort((a, b) => a - b);
    // every request the limit counted: the chunks, and the one page each run reads first to check the
    // file's columns against the fields records have
    const requests = entries.filter((e) => e.status !== 429).length;
    if (requests !== (Math.ceil(per / 100) + 1) * procs)
      throw new Error(`${s.name}: ${requests} requests counted, expected chunks + 1 a process`);
    const leastMs = (Math.ceil(requests / LIMIT) - 1) * WINDOW_MS;
    const spanMs = starts[starts.length - 1] - starts[0];
    const wallMs = Math.max(...runs.map((r) => r.endMs));
    return {
      ...s,
      requests,
      least_ms: leastMs,
      span_ms: spanMs,
      efficiency: leastMs / spanMs,
      wall_ms: wallMs,
      efficiency_wall: leastMs / wallMs,
      sent: entries.filter((e) => e.path.endsWith('/batch')).length,
      rate_limited: entries.filter((e) => e.status === 429).length,
    };
  } finally {
    await sb.stop();
  }
}

/** The worst run (least efficient) and the median of a shape's runs. */
function summarise(runs) {
  const sorted = [...runs].sort((a, b) => a.efficiency - b.efficiency);
  const median = sorted[Math.floor((sorted.length - 1) / 2)];
  return {
    ...sorted[0],
    runs: runs.length,
    median_efficiency: median.efficiency,
    efficiencies: runs.map((r) => r.efficiency),
    most_rate_limited: Math.max(...runs.map((r) => r.rate_limited)),
  };
}

const results = [];
try {
  for (const s of chosen) {
    const runs = [];
    for (let i = 0; i < RUNS; i++) runs.push(await run(s));
    results.push(summarise(runs));
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}

if (flags.json) {
  console.log(
    JSON.stringify(
      { rows: ROWS, limit: LIMIT, window_ms: WINDOW_MS, concurrency: CONCURRENCY, runs: RUNS, results },
      null,
      2,
    ),
  );
} else {
  console.log(
    `pacing benchmark, node ${process.version}: ${ROWS} rows (chunks of 100) at ${LIMIT} requests per ${WINDOW_MS} ms, concurrency ${CONCURRENCY}, ${RUNS} runs a shape (the worst shown, the median beside it)`,
  );
  const head = ['shape', 'least', 'taken (worst)', 'worst', 'median', 'goal', '429s', 'whole run', 'met'];
  const rows = results.map((r) => {
    const met = r.efficiency >= r.goal && (r.max429 === undefined || r.most_rate_limited <= r.max429);
    return [
      r.what,
      `${(r.least_ms / 1000).toFixed(1)} s`,
      `${(r.span_ms / 1000).toFixed(2)} s`,
      r.efficiency.toFixed(3),
      r.median_efficiency.toFixed(3),
      `≥ ${r.goal}${r.max429 === undefined ? '' : `, ≤ ${r.max429} 429s a run`}`,
      `${r.rate_limited} / ${r.sent} (most ${r.most_rate_limited})`,
      `${(r.wall_ms / 1000).toFixed(2)} s → ${r.efficiency_wall.toFixed(3)}`,
      met ? 'yes' : 'NO',
    ];
  });
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  for (const r of [head, ...rows])
    console.log(r.map((c, i) => (i === 0 ? c.padEnd(w[i]) : c.padStart(w[i]))).join('  '));
  console.log(
    'taken: first → last request start; whole run: spawn → exit of the last process (start-up, check pass, last answer)',
  );
  console.log(
    'worst: the least efficient of the runs (its 429s and whole run shown), which must meet the goal; median: of all runs',
  );
  console.log(rows.every((r) => r[8] === 'yes') ? 'all goals met' : 'SOME GOALS MISSED');
  if (!rows.every((r) => r[8] === 'yes')) process.exitCode = 1;
}
