// Benchmark of `crm recordings download` (CONTRACT §8): N recordings with transcripts under a
// download limit of L per window, through the real binary against `crm sandbox` in a child
// process. Efficiency = least time the limit allows / time taken. Without options it runs every
// case of CASES: bulk (500 at 20/s), low limits (14 at 2/s, one worker and four), and links that
// live 300 ms under a tight limit (every link must be got just before its download).
//
//   npm run bench:transcripts                     (builds first)
//   node bench/transcripts.mjs --case low-rate-c1
//   node bench/transcripts.mjs --recordings 200 --limit 50 --concurrency 8 [--ttl-ms 300]
//
// The sandbox seeds only 20 recordings, so the N recordings come in through its `--data-file`
// (the store format "crm-sandbox-store/1"); the API limits are set out of the way so that only the
// download limit is measured.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values: flags } = parseArgs({
  options: {
    case: { type: 'string' },
    recordings: { type: 'string' },
    limit: { type: 'string' },
    'window-ms': { type: 'string' },
    concurrency: { type: 'string' },
    'ttl-ms': { type: 'string' },
    bin: { type: 'string', default: path.join(root, 'bin', 'crm') },
    json: { type: 'boolean', default: false },
  },
});
const BIN = path.resolve(flags.bin);

/** name → recordings, limit per window, window, concurrency, link life (ms) */
const CASES = {
  bulk: { recordings: 500, limit: 20, windowMs: 1000, concurrency: 4, ttlMs: 300_000 },
  'low-rate-c1': { recordings: 14, limit: 2, windowMs: 1000, concurrency: 1, ttlMs: 300_000 },
  'low-rate-c4': { recordings: 14, limit: 2, windowMs: 1000, concurrency: 4, ttlMs: 300_000 },
  'short-ttl': { recordings: 28, limit: 4, windowMs: 1000, concurrency: 4, ttlMs: 300 },
};

function chosenCases() {
  const custom = ['recordings', 'limit', 'window-ms', 'concurrency', 'ttl-ms'].some((k) => flags[k] !== undefined);
  if (flags.case !== undefined) {
    const c = CASES[flags.case];
    if (!c) throw new Error(`--case must be one of ${Object.keys(CASES).join(', ')}`);
    return [[flags.case, c]];
  }
  if (!custom) return Object.entries(CASES);
  const c = {
    recordings: Number(flags.recordings ?? 500),
    limit: Number(flags.limit ?? 20),
    windowMs: Number(flags['window-ms'] ?? 1000),
    concurrency: Number(flags.concurrency ?? 4),
    ttlMs: Number(flags['ttl-ms'] ?? 300_000),
  };
  for (const [name, v] of Object.entries(c)) {
    if (!Number.isInteger(v) || v < 1) throw new Error(`${name} must be a positive integer`);
  }
  return [['custom', c]];
}

/** The sandbox's store with N ready recordings and nothing else. */
function writeStore(dataFile, N) {
  const base = Date.UTC(2026, 0, 5, 9);
  const recordings = Array.from({ length: N }, (_, i) => {
    const at = new Date(base + i * 3_600_000).toISOString();
    return {
      id: `rec_bench_${String(i + 1).padStart(5, '0')}`,
      title: `Board prep call ${i + 1}`,
      meeting_id: null,
      started_at: at,
      duration_seconds: 600 + (i % 40) * 30,
      has_transcript: true,
      transcript_status: 'ready',
      transcript_url: null,
      recording_url: null,
      video_status: 'skipped',
      owner_id: 'usr_admin',
      created_at: at,
      updated_at: at,
    };
  });
  writeFileSync(
    dataFile,
    JSON.stringify({ format: 'crm-sandbox-store/1', seq: N, records: { recordings }, links: [] }),
  );
}

function cleanEnv(extra) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('CRM_')) env[k] = v;
  return { ...env, NO_COLOR: '1', ...extra };
}

/** Starts `crm sandbox` and resolves with its start-up line. */
function startSandbox(dataFile, c) {
  const child = spawn(
    process.execPath,
    [
      BIN,
      'sandbox',
      '--port',
      '0',
      '--data-file',
      dataFile,
      '--control',
      '--rate-limit',
      '1000000',
      '--org-rate-limit',
      '1000000',
      '--download-rate-limit',
      String(c.limit),
      '--download-window-ms',
      String(c.windowMs),
      '--transcript-ttl-ms',
      String(c.ttlMs),
    ],
    { env: cleanEnv({}), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (d) => (err += d));
  return new Promise((resolve, reject) => {
    child.on('exit', (code) => reject(new Error(`crm sandbox exited (${code}) before starting:\n${err}`)));
    child.stdout.setEncoding('utf8').on('data', (d) => {
      out += d;
      const nl = out.indexOf('\n');
      if (nl >= 0) {
        child.removeAllListeners('exit');
        resolve({ child, info: JSON.parse(out.slice(0, nl)) });
      }
    });
  });
}

function run(args, env) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [BIN, ...args], { env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr, ms: performance.now() - started }));
  });
}

async function runCase(name, c) {
  const { recordings: N, limit: LIMIT, windowMs: WINDOW_MS, concurrency: CONCURRENCY, ttlMs: TTL_MS } = c;
  const work = mkdtempSync(path.join(tmpdir(), 'crm-bench-transcripts-'));
  const dataFile = path.join(work, 'store.json');
  const outDir = path.join(work, 'transcripts');
  const configDir = path.join(work, 'config');
  writeStore(dataFile, N);
  const { child: sandbox, info } = await startSandbox(dataFile, c);
  try {
    const controlUrl = info.control_url ?? `${new URL(info.base_url).origin}/__sandbox`;
    const env = { CRM_BASE_URL: info.base_url, CRM_API_KEY: info.keys.admin, CRM_CONFIG_DIR: configDir };
    // The download window starts fresh with the run.
    await fetch(`${controlUrl}/limits`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ download_rate_limit: LIMIT, download_window_ms: WINDOW_MS, transcript_ttl_ms: TTL_MS }),
    });
    const logStart = (await (await fetch(`${controlUrl}/stats`)).json()).requests;

    const res = await run(
      ['recordings', 'download', '--dir', outDir, '--concurrency', String(CONCURRENCY), '-o', 'json'],
      env,
    );
    if (res.code !== 0)
      throw new Error(`[${name}] crm recordings download exited ${res.code}\n${res.stderr.slice(0, 2000)}`);
    const summary = JSON.parse(res.stdout.trim());

    const log = await (await fetch(`${controlUrl}/requests?since=${logStart}`)).json();
    const downloads = log.filter((e) => e.path.startsWith('/transcripts/download/'));
    const count = (status) => downloads.filter((e) => e.status === status).length;
    const files = readdirSync(outDir).filter((f) => f.endsWith('.json')).length;

    // A fixed window admits LIMIT at once: N downloads need ceil(N/LIMIT) windows, the last one
    // starting (ceil(N/LIMIT) - 1) windows after the first request. At the sustained rate: N/LIMIT windows.
    const fixedWindowMs = (Math.ceil(N / LIMIT) - 1) * WINDOW_MS;
    const rateMs = (N / LIMIT) * WINDOW_MS;
    const leastMs = Math.max(fixedWindowMs, 1);
    const figures = {
      case: name,
      recordings: N,
      download_limit: `${LIMIT} per ${WINDOW_MS} ms`,
      concurrency: CONCURRENCY,
      link_ttl_ms: TTL_MS,
      downloaded: summary.downloaded,
      failed: summary.failed,
      files,
      downloads_200: count(200),
      downloads_429: count(429),
      downloads_404: count(404),
      api_requests: log.length - downloads.length,
      wall_ms: Math.round(res.ms),
      command_elapsed_ms: summary.elapsed_ms,
      least_ms_fixed_window: fixedWindowMs,
      least_ms_at_rate: rateMs,
      efficiency: +(leastMs / res.ms).toFixed(3),
      efficiency_in_command: +(leastMs / summary.elapsed_ms).toFixed(3),
      efficiency_vs_rate: +(rateMs / res.ms).toFixed(3),
      downloads_per_s: +((summary.downloaded / res.ms) * 1000).toFixed(2),
    };
    if (flags.json) {
      console.log(JSON.stringify(figures));
    } else {
      console.log(`crm recordings download benchmark: ${name}`);
      for (const [k, v] of Object.entries(figures)) console.log(`  ${k.padEnd(24)} ${v}`);
      console.log(
        `  → efficiency ${figures.efficiency} (target ≥ 0.85; ${figures.efficiency_in_command} without process start-up): least time the limit allows ${leastMs} ms / wall time ${figures.wall_ms} ms`,
      );
    }
    if (summary.downloaded !== N || files !== N || summary.failed !== 0) {
      process.exitCode = 1;
      console.error(
        `[${name}] expected ${N} transcripts downloaded, got ${summary.downloaded} (files: ${files}, failed: ${summary.failed})`,
      );
    }
  } finally {
    sandbox.kill('SIGTERM');
    await new Promise((r) => sandbox.once('exit', r));
    rmSync(work, { recursive: true, force: true });
  }
}

for (const [name, c] of chosenCases()) await runCase(name, c);
