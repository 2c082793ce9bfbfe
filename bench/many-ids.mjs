// Benchmark of many ids in one process (issue 13, "Many ids in one process"), through the real binary
// against `crm sandbox` in a child process, each figure beside its floor:
//   one process:  crm contacts get - -o ndjson < ids.txt          (1,000 GETs, --concurrency 4)
//   shell loop:   while read id; do crm contacts get "$id" -o ndjson; done < ids.txt
//                 (only the first --loop ids are run, 50 by default; the time for all of them is
//                 that time × rows / loop, and never less than the least time the limit allows)
//   floor:        bench/many-ids-floor.mjs, a bare undici loop in its own process doing the same GETs
//                 4 at a time (run with the limit lifted: it does not pace); under a limit the floor
//                 is the larger of that and the least time the limit allows plus `node -e 0`
// Each is run twice: with the sandbox's rate limit lifted, and under the API's 200 a minute scaled
// in time (200 requests per 5 s by default, so the 1,000 GETs need at least 20 s).
//
//   npm run bench:many-ids                          1,000 ids, a loop of 50, 200 per 5 s (~1.5 min)
//   node bench/many-ids.mjs --quick                 200 ids, a loop of 20, 50 per 2 s (~20 s)
//   node bench/many-ids.mjs --rows 1000 --loop 100 --rate-limit 100 --rate-window-ms 1000 --json
//
// The least time: one id is one request, and the sandbox's window is fixed (it opens at the first
// request), so at best the last of N requests starts (ceil(N / limit) - 1) windows after the first.
// Times are wall times of whole processes (start-up included). Every run's output is checked: one
// record per id, each id once.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { api, limits, nodeStartMs, printColumns, requestLog, RSS_METHOD, runCrm, stats, secs } from './measure.mjs';
import { CRM, startLimitedSandbox } from './sandbox-child.mjs';

const { values: flags } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    rows: { type: 'string' },
    loop: { type: 'string' },
    'rate-limit': { type: 'string' },
    'rate-window-ms': { type: 'string' },
    concurrency: { type: 'string', default: '4' },
    json: { type: 'boolean', default: false },
  },
});
const [ROWS, LOOP, LIMIT, WINDOW_MS] = flags.quick ? [200, 20, 50, 2000] : [1000, 50, 200, 5000];
const N = Number(flags.rows ?? ROWS);
const LOOP_N = Math.min(N, Number(flags.loop ?? LOOP));
const L = Number(flags['rate-limit'] ?? LIMIT);
const W = Number(flags['rate-window-ms'] ?? WINDOW_MS);
const CONCURRENCY = Number(flags.concurrency);
for (const [name, v] of Object.entries({
  rows: N,
  loop: LOOP_N,
  'rate-limit': L,
  'rate-window-ms': W,
  concurrency: CONCURRENCY,
}))
  if (!Number.isInteger(v) || v < 1) throw new Error(`--${name} must be a positive integer`);

const HIGH = 1_000_000_000;
const FLOOR = fileURLToPath(new URL('./many-ids-floor.mjs', import.meta.url));
const work = mkdtempSync(path.join(tmpdir(), 'crm-bench-many-ids-'));
const log = (m) => process.stderr.write(`[bench] ${m}\n`);
const elapsedMs = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;

/**
 * Runs `cmd` to its end without blocking this process's event loop (a blocked loop lets the fetch
 * connections to the sandbox go stale): exit code, stdout, stderr and wall ms.
 */
async function run(cmd, args, opts) {
  const t0 = process.hrtime.bigint();
  const child = spawn(cmd, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const [[code]] = await Promise.all([once(child, 'exit'), once(child.stdout, 'end'), once(child.stderr, 'end')]);
  return { code, stdout, stderr, wallMs: elapsedMs(t0) };
}

const lift = (sb) => limits(sb, { rate_limit: HIGH });

/** N contacts (batches of 100); ids.txt with all their ids, loop.txt with the first LOOP_N. */
async function setUp(sb) {
  await lift(sb);
  const ids = [];
  for (let i = 0; i < N; i += 100) {
    const items = Array.from({ length: Math.min(100, N - i) }, (_, k) => ({
      email: `many${i + k}@bench.example`,
      first_name: `First${i + k}`,
    }));
    const page = await api(sb, 'POST', '/contacts/batch', items);
    ids.push(...page.data.items.map((it) => it.data.id));
  }
  const all = path.join(work, 'ids.txt');
  writeFileSync(all, `${ids.join('\n')}\n`);
  const loop = path.join(work, 'loop.txt');
  writeFileSync(loop, `${ids.slice(0, LOOP_N).join('\n')}\n`);
  return { ids, all, loop };
}

/** Throws unless `file` holds one NDJSON record for each of `ids`, each once. */
function checkRecords(what, file, ids) {
  const got = readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l).id);
  const want = [...ids].sort();
  if (JSON.stringify([...got].sort()) !== JSON.stringify(want))
    throw new Error(`${what}: expected ${ids.length} records, one per id; got ${got.length}`);
}

/** A fresh set of windows: the limit (or none), the organization's out of the way. */
const startWindows = (sb, limited) =>
  limits(sb, { rate_limit: limited ? L : HIGH, rate_window_ms: W, org_rate_limit: HIGH });

async function oneProcess(sb, env, files, limited) {
  await startWindows(sb, limited);
  const since = (await stats(sb)).requests;
  const out = path.join(work, 'one.ndjson');
  const args = ['-o', 'ndjson', '--quiet', 'contacts', 'get', '-', '--concurrency', String(CONCURRENCY)];
  const r = await runCrm(args, { env, work, stdinFile: files.all, stdoutFile: out });
  if (r.code !== 0) throw new Error(`crm ${args.join(' ')} exited ${r.code}:\n${r.stderr}`);
  await lift(sb);
  checkRecords('one process', out, files.ids);
  const after = await requestLog(sb, since);
  return { wall_ms: r.wallMs, requests: after.total, rate_limited: after.r429, peak_rss_mb: r.peakMb };
}

/** A real shell loop of single gets over the first LOOP_N ids. */
async function shellLoop(sb, env, files, limited) {
  await startWindows(sb, limited);
  const out = path.join(work, 'loop.ndjson');
  const script = 'while read -r id; do "$0" "$1" contacts get "$id" -o ndjson >> "$2" || exit 1; done < "$3"';
  writeFileSync(out, '');
  const { code, stderr, wallMs } = await run('sh', ['-c', script, process.execPath, CRM, out, files.loop], { env });
  if (code !== 0) throw new Error(`the shell loop exited ${code}:\n${stderr}`);
  await lift(sb);
  checkRecords('shell loop', out, files.ids.slice(0, LOOP_N));
  return { wall_ms: wallMs, per_get_ms: wallMs / LOOP_N };
}

/** The bare undici loop, with the limit lifted (it does not pace). */
async function bareLoop(sb, files) {
  await lift(sb);
  const out = path.join(work, 'floor.ndjson');
  const r = await run(process.execPath, [FLOOR, sb.base_url, sb.keys.admin, files.all, String(CONCURRENCY)]);
  if (r.code !== 0) throw new Error(`the bare undici loop exited ${r.code}:\n${r.stderr}`);
  writeFileSync(out, r.stdout);
  checkRecords('bare undici loop', out, files.ids);
  return r.wallMs;
}

async function scenario(sb, env, files, startMs, limited) {
  const name = limited ? `${L} per ${W} ms` : 'no limit';
  log(`${name}: ${N} ids in one process`);
  const one = await oneProcess(sb, env, files, limited);
  log(`${name}: a shell loop of ${LOOP_N} single gets`);
  const loop = await shellLoop(sb, env, files, limited);
  log(`${name}: the bare undici loop (limit lifted)`);
  const bare = await bareLoop(sb, files);
  const leastMs = limited ? (Math.ceil(N / L) - 1) * W : 0;
  const floorMs = Math.max(bare, limited ? leastMs + startMs : 0);
  const loopAllMs = Math.max(loop.per_get_ms * N, leastMs);
  return {
    name,
    one_process: one,
    shell_loop: { ...loop, ids: LOOP_N, extrapolated_ms: loopAllMs },
    bare_undici_ms: bare,
    least_ms: limited ? leastMs : null,
    floor_ms: floorMs,
    ratio_one_to_floor: one.wall_ms / floorMs,
    ratio_loop_to_one: loopAllMs / one.wall_ms,
    ratio_loop_to_floor: loopAllMs / floorMs,
  };
}

const results = [];
let startMs;
let sb;
try {
  startMs = nodeStartMs();
  sb = await startLimitedSandbox(L, W);
  const files = await setUp(sb);
  const env = {
    ...process.env,
    CRM_BASE_URL: sb.base_url,
    CRM_API_KEY: sb.keys.admin,
    CRM_CONFIG_DIR: mkdtempSync(path.join(work, 'config-')),
  };
  for (const limited of [false, true]) results.push(await scenario(sb, env, files, startMs, limited));
} finally {
  await sb?.stop();
  rmSync(work, { recursive: true, force: true });
}

if (flags.json) {
  console.log(
    JSON.stringify(
      {
        rows: N,
        loop: LOOP_N,
        rate_limit: L,
        rate_window_ms: W,
        concurrency: CONCURRENCY,
        node_start_ms: startMs,
        results,
      },
      null,
      2,
    ),
  );
} else {
  console.log(
    `many ids benchmark: ${N} contacts get, concurrency ${CONCURRENCY}, node ${process.version}, node -e 0 ${startMs.toFixed(0)} ms, peak RSS by ${RSS_METHOD}`,
  );
  const s = secs;
  const cell = (f) => results.map(f);
  printColumns([
    ['', ...cell((r) => r.name)],
    [`one process: crm contacts get - (${N} ids)`, ...cell((r) => s(r.one_process.wall_ms))],
    ['  requests sent / 429s', ...cell((r) => `${r.one_process.requests} / ${r.one_process.rate_limited}`)],
    ['  peak RSS', ...cell((r) => `${r.one_process.peak_rss_mb.toFixed(1)} MB`)],
    [`shell loop: ${LOOP_N} single gets, measured`, ...cell((r) => s(r.shell_loop.wall_ms))],
    ['  per get', ...cell((r) => `${r.shell_loop.per_get_ms.toFixed(0)} ms`)],
    [`  ${N} gets, extrapolated (× ${(N / LOOP_N).toFixed(1)})`, ...cell((r) => s(r.shell_loop.extrapolated_ms))],
    [`bare undici loop, one process (${N} GETs, ${CONCURRENCY} in flight)`, ...cell((r) => s(r.bare_undici_ms))],
    ['least time the limit allows', ...cell((r) => s(r.least_ms))],
    ['floor (the larger; the limit + node -e 0)', ...cell((r) => s(r.floor_ms))],
    ['ratio one process / floor', ...cell((r) => `${r.ratio_one_to_floor.toFixed(2)}×`)],
    ['ratio shell loop / one process', ...cell((r) => `${r.ratio_loop_to_one.toFixed(1)}×`)],
    ['ratio shell loop / floor', ...cell((r) => `${r.ratio_loop_to_floor.toFixed(1)}×`)],
  ]);
  console.log(
    `the shell loop's ${N} is its ${LOOP_N} measured × ${N}/${LOOP_N} (at least the limit's least time), not run`,
  );
}
