// The fault matrix of issue 9 ("How to prove it"): the real `crm` (bin/crm) against `crm sandbox`
// in a child process, under injected faults, a restarted sandbox and `kill -9` of crm, over seeded
// runs; then the outcome is checked on the server and on disk.
//
//   npm run bench:faults                     the full matrix (several minutes)
//   npm run bench:faults:short               the short form that .ci/run runs (well under 2 min)
//   node bench/faults.mjs --seed 7 --only batch-kill --run 12 -v    one run again (a reproduction;
//                                            -v: each crm attempt; --keep: keep the work folder)
//
// Scenarios: batch-faults (crm batch under the chaos below), batch-kill (crm batch killed with
// SIGKILL at 1–2 points, then rerun), batch-restart (the sandbox stopped with SIGTERM and started
// again on the same port, seed and --data-file while crm batch runs), download-kill (crm recordings
// download killed, rerun), list-kill (crm contacts list --all killed, rerun; the rerun's output is
// checked). The chaos, for each crm process: 2–6 settings 100–400 ms apart (seeded), each new
// random rates among the sandbox's fault kinds, maybe one-shot `next` faults, a 429 storm (5–15 in
// a row) or a latency spike (200–700 ms, beyond crm's `--timeout 0.5`), then no faults. A kill point is "after the k-th request crm logged with -v, plus d ms".
// After it the same command is rerun, as crm tells a user: up to 3 times under the chaos, then up
// to 2 times without faults; a run that never gets there, or a crm over the time bound, is a problem.
//
// Checks. batch: every valid row's (unique) email exactly once on the server; rows invalid on
// purpose (a bad number: never sent; an email without @: refused by the server) in the rejects
// file and not on the server, and nothing else in it. download: every transcript file complete JSON
// equal to what the sandbox serves, no temporary file left. list: the output complete valid
// JSON/NDJSON, each record once and as the server has it. Faults counted are those the sandbox's
// request log marks, plus latency spikes. Exit 1 on any duplicate, loss or problem, each printed
// with the command that reruns it.
//
// The sandbox saves its idempotency keys in --data-file with the records and saves on SIGTERM
// (docs/sandbox.md, "Seed and data file"), so a chunk written just before a restart, whose answer
// was lost (an after-write fault, or a latency spike beyond crm's timeout), is replayed when crm
// resends it after the restart: batch-restart runs the whole chaos. The restart scenario probes
// the cache around the restart and prints the result.
import { spawn } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { parse as parseCsv } from 'csv-parse/sync';
import { CRM, startSandboxChild } from './sandbox-child.mjs';

const { values: flags } = parseArgs({
  options: {
    seed: { type: 'string', default: '1' },
    short: { type: 'boolean', default: false },
    only: { type: 'string' },
    run: { type: 'string' },
    keep: { type: 'boolean', default: false },
    verbose: { type: 'boolean', short: 'v', default: false },
  },
});
const SEED = Number(flags.seed);
const ALL_KINDS = ['500', '500-after-write', 'drop', 'drop-after-write', 'html-502', '429', 'truncated'];
/** name → runs (short, full), kills per run, chaos kinds and paths */
const SCENARIOS = {
  'batch-faults': { runs: [1, 8], kills: 0, kinds: ALL_KINDS, paths: '/contacts/batch$' },
  'batch-kill': { runs: [8, 45], kills: 2, kinds: ALL_KINDS, paths: '/contacts/batch$' },
  'batch-restart': { runs: [1, 4], kills: 0, restart: true, kinds: ALL_KINDS, paths: '/contacts/batch$' },
  'download-kill': { runs: [3, 60], kills: 2, kinds: ALL_KINDS, paths: 'recordings|transcripts' },
  'list-kill': { runs: [3, 45], kills: 2, kinds: ALL_KINDS, paths: '/contacts' },
};
const BOUND_MS = flags.short ? 45_000 : 120_000; // one crm process; beyond it: a hang
if (!Number.isInteger(SEED) || SEED < 0) throw new Error('--seed must be a non-negative integer');
if (flags.run !== undefined && !(Number(flags.run) >= 1 && Number.isInteger(Number(flags.run))))
  throw new Error('--run must be a positive integer');
if (flags.only && !SCENARIOS[flags.only]) throw new Error(`--only must be one of ${Object.keys(SCENARIOS).join(', ')}`);

const work = mkdtempSync(path.join(tmpdir(), 'crm-bench-faults-'));
const log = (m) => process.stderr.write(`[faults] ${m}\n`);
const dbg = (m) => flags.verbose && log(m);
const problems = [];
const faultsByKind = {};
let faultCount = 0; // every fault the sandboxes logged, harvested before each restart and after each run

function mulberry32(a) {
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const runRng = (scenario, run) =>
  mulberry32(
    [...`${SEED}:${scenario}:${run}`].reduce((h, c) => Math.imul(h ^ c.charCodeAt(0), 16777619) >>> 0, 2166136261),
  );
const int = (rng, lo, hi) => lo + Math.floor(rng() * (hi - lo + 1));
const pick = (rng, xs) => xs[Math.floor(rng() * xs.length)];

// ---- the sandbox, its control endpoint, its request log ----
async function startSandbox(dataFile, port = 0) {
  const sb = await startSandboxChild(
    [
      '--seed',
      String(SEED),
      '--control',
      '--data-file',
      dataFile,
      '--rate-limit',
      '1000000',
      '--org-rate-limit',
      '1000000',
      '--download-rate-limit',
      '100000',
    ],
    { port },
  );
  return Object.assign(sb, { dataFile, logIndex: 0, port: Number(new URL(sb.base_url).port) });
}
async function restartSandbox(sb) {
  await harvest(sb);
  await sb.stop();
  return Object.assign(sb, await startSandbox(sb.dataFile, sb.port));
}
const auth = (sb) => ({ 'X-Service-Api-Key': sb.keys.admin });
const crmEnv = (sb, configDir) => ({
  CRM_BASE_URL: sb.base_url,
  CRM_API_KEY: sb.keys.admin,
  CRM_CONFIG_DIR: configDir,
});
async function control(sb, what, body) {
  const init =
    body === undefined
      ? {}
      : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
  return (await fetch(`${sb.control_url}/${what}`, init)).json();
}
/** Counts the faults the sandbox logged since the last harvest. */
async function harvest(sb) {
  const entries = await control(sb, `requests?since=${sb.logIndex}`);
  sb.logIndex += entries.length;
  for (const e of entries)
    if (e.fault) {
      faultCount++;
      faultsByKind[e.fault] = (faultsByKind[e.fault] ?? 0) + 1;
    }
}
async function listAll(sb, resource) {
  const out = [];
  for (let cursor = ''; ;) {
    const res = await fetch(`${sb.base_url}/${resource}?limit=100${cursor && `&cursor=${cursor}`}`, {
      headers: auth(sb),
    });
    const page = await res.json();
    out.push(...page.data);
    if (!page.page_info.has_next_page) return out;
    cursor = page.page_info.end_cursor;
  }
}

/**
 * 2–6 fault settings, 100–400 ms apart, then none (so that the reruns can get through); resolves
 * the number of latency spikes when stopped.
 */
function chaos(sb, rng, { kinds, paths }) {
  let left = int(rng, 2, 6);
  let timer;
  let spikes = 0;
  const step = async () => {
    const body = { paths, latency_ms: 0, faults: {} };
    if (left-- > 0) {
      for (const k of kinds) if (rng() < 0.4) body.faults[k] = Math.round((0.01 + rng() * 0.04) * 1000) / 1000;
      const r = rng();
      if (r < 0.15) {
        body.latency_ms = int(rng, 200, 700);
        spikes++;
      } else if (r < 0.3) body.next = [{ kind: '429', path: paths, count: int(rng, 5, 15) }];
      else if (r < 0.6) body.next = [{ kind: pick(rng, kinds), path: paths, count: int(rng, 1, 3) }];
      timer = setTimeout(step, int(rng, 100, 400));
    }
    await control(sb, 'faults', body).catch(() => {}); // down during a restart
  };
  void step();
  return async () => {
    left = 0;
    clearTimeout(timer);
    await control(sb, 'faults', { next: [] });
    return spikes;
  };
}

/** One crm process; `at` = {k, d, act}: act() d ms after the k-th request line (k 0: after start). */
function crm(args, env, { stdoutFile, at } = {}) {
  const out = stdoutFile ? openSync(stdoutFile, 'w') : 'pipe';
  const child = spawn(process.execPath, [CRM, '-v', '--timeout', '0.5', ...args], {
    env: { ...process.env, NO_COLOR: '1', ...env },
    stdio: ['ignore', out, 'pipe'],
  });
  if (stdoutFile) closeSync(out);
  let stdout = '';
  let stderr = '';
  let requests = 0;
  let hung = false;
  let timer; // cleared at exit: an action only ever hits a running crm
  const fire = () => (timer = setTimeout(() => at.act(child), at.d));
  if (at?.k === 0) fire();
  child.stdout?.setEncoding('utf8').on('data', (d) => (stdout += d));
  createInterface({ input: child.stderr }).on('line', (line) => {
    if (/^(GET|POST|PUT|PATCH|DELETE) /.test(line)) {
      if (++requests === at?.k) fire();
    } else stderr += `${line}\n`;
  });
  const bound = setTimeout(() => ((hung = true), child.kill('SIGKILL')), BOUND_MS);
  return new Promise((resolve) =>
    child.on('close', (code, signal) => {
      clearTimeout(bound);
      clearTimeout(timer);
      resolve({ code, signal, hung, stdout, stderr, requests });
    }),
  );
}

/**
 * Runs the command with its kill points (or restart), then reruns it until `done(res)`. Returns
 * the last result and the kill points that landed (the process was still running).
 */
async function drive(sb, rng, sc, { args, env, expectRequests, done, stdoutFile, problem }) {
  const landed = [];
  let spikes = 0;
  let attempt = 0;
  const once = async (withChaos, at) => {
    const stop = withChaos ? chaos(sb, rng, sc) : undefined;
    const t = performance.now();
    attempt++;
    const res = await crm(args, env, { stdoutFile: stdoutFile?.(attempt), at });
    await at?.pending; // a restart still under way
    dbg(
      `  attempt ${attempt}: exit ${res.code ?? res.signal}, ${res.requests} requests, ${Math.round(performance.now() - t)} ms`,
    );
    if (stop) spikes += await stop();
    if (res.hung) problem(`hang: crm ran over ${BOUND_MS / 1000} s (attempt ${attempt})`);
    return res;
  };
  const nKills = sc.kills ? int(rng, 1, sc.kills) : 0;
  for (let i = 0; i < nKills; i++) {
    const k = int(rng, 0, Math.max(1, expectRequests >> i));
    const at = {
      k,
      d: k === 0 ? int(rng, 0, 400) : int(rng, 0, 40),
      act: (child) => child.exitCode === null && child.kill('SIGKILL') && landed.push(`k=${k}+${at.d}ms`),
    };
    await once(true, at);
  }
  if (sc.restart) {
    const at = {
      k: int(rng, 1, expectRequests),
      d: int(rng, 0, 40),
      act: () => ((at.pending = restartWithProbe(sb)), spikes++),
    }; // a restart counts as a fault
    await once(true, at);
  }
  let res;
  for (let i = 0; i < 5; i++) if (done((res = await once(i < 3)))) return { res, landed, spikes, converged: true };
  problem(
    `not done after 5 reruns: exit ${res.code}${res.signal ? ` (${res.signal})` : ''}: ${res.stderr.trim().split('\n').slice(-3).join(' | ')}`,
  );
  return { res, landed, spikes, converged: false };
}

let probeResult;
/** Restarts the sandbox; around it, one POST with the same Idempotency-Key tells whether the cache survived. */
async function restartWithProbe(sb) {
  const probe = () =>
    fetch(`${sb.base_url}/contacts`, {
      method: 'POST',
      headers: { ...auth(sb), 'content-type': 'application/json', 'Idempotency-Key': `faults-probe-${SEED}` },
      body: JSON.stringify({ email: `probe-${SEED}@faults.example` }),
    });
  await probe();
  dbg('restart: stopping');
  await restartSandbox(sb);
  dbg('restart: started');
  probeResult =
    (await probe()).headers.get('idempotent-replayed') === 'true'
      ? 'kept'
      : 'lost (the same key and body created a second record)';
}

// ---- scenarios: each run returns {rows, dups, losses, kills, spikes} ----
async function batchRun(sb, rng, sc, tag, problem) {
  const dir = mkdtempSync(path.join(work, 'batch-'));
  const rows = int(rng, 60, 240);
  const chunk = pick(rng, [10, 20, 25]);
  const lines = ['email,first_name,score:number'];
  const valid = new Set();
  const invalid = new Set();
  let serverInvalid = 0;
  for (let i = 1; i <= rows; i++) {
    const r = rng();
    const email = r < 0.01 ? `bad-${tag}-${i}` : `r${i}-${tag}@faults.example`; // no @: the server refuses it
    const score = r >= 0.01 && r < 0.02 ? 'x' : String(i); // not a number: never sent
    (r < 0.02 ? invalid : valid).add(email);
    if (r < 0.01) serverInvalid++;
    lines.push(`${email},First ${i},${score}`);
  }
  const csv = path.join(dir, 'rows.csv');
  writeFileSync(csv, `${lines.join('\n')}\n`);
  const args = [
    '-o',
    'json',
    'batch',
    'contacts',
    csv,
    '--chunk-size',
    String(chunk),
    '--concurrency',
    String(int(rng, 1, 4)),
  ];
  const env = crmEnv(sb, path.join(dir, 'config'));
  const done = (res) => {
    if (res.code !== 0 && res.code !== 9) return false;
    try {
      const s = JSON.parse(res.stdout);
      return s.failed === serverInvalid && s.invalid === invalid.size - serverInvalid;
    } catch {
      return false;
    }
  };
  const { landed, spikes } = await drive(sb, rng, sc, {
    args,
    env,
    expectRequests: Math.ceil(rows / chunk),
    done,
    problem,
  });
  const count = new Map();
  for (const c of await listAll(sb, 'contacts'))
    if (c.email?.includes(tag)) count.set(c.email, (count.get(c.email) ?? 0) + 1);
  let dups = 0;
  let losses = 0;
  for (const e of valid) {
    const n = count.get(e) ?? 0;
    if (n > 1) {
      dups += n - 1;
      problem(`duplicate: ${e} ×${n}`);
    }
    if (n === 0) {
      losses++;
      problem(`lost: ${e} is not on the server`);
    }
  }
  for (const e of invalid) {
    if (count.has(e)) {
      dups++;
      problem(`invalid row on the server: ${e}`);
    }
  }
  const rejectsFile = `${csv}.rejects.csv`;
  const rejected = new Set(
    existsSync(rejectsFile) ? parseCsv(readFileSync(rejectsFile), { columns: true }).map((r) => r.email) : [],
  );
  for (const e of invalid) {
    if (!rejected.has(e)) {
      losses++;
      problem(`invalid row missing from the rejects file: ${e}`);
    }
  }
  for (const e of rejected) if (!invalid.has(e)) problem(`valid row left in the rejects file: ${e}`);
  return { rows, dups, losses, kills: landed, spikes };
}

let transcripts; // id → the transcript the sandbox serves
async function downloadRun(sb, rng, sc, tag, problem) {
  transcripts ??= await referenceTranscripts(sb);
  const dir = mkdtempSync(path.join(work, 'download-'));
  const args = ['-o', 'json', 'recordings', 'download', '--dir', dir, '--concurrency', String(int(rng, 1, 4))];
  const env = crmEnv(sb, path.join(work, 'config-dl'));
  const { landed, spikes } = await drive(sb, rng, sc, {
    args,
    env,
    expectRequests: 2 * transcripts.size,
    done: (r) => r.code === 0,
    problem,
  });
  let losses = 0;
  const files = new Set(readdirSync(dir));
  for (const [id, body] of transcripts) {
    let text = '';
    try {
      text = readFileSync(path.join(dir, `${id}.json`), 'utf8');
      if (JSON.stringify(JSON.parse(text)) !== JSON.stringify(body)) throw new Error('content differs');
    } catch (err) {
      losses++;
      problem(`transcript ${id}.json: ${err.code ?? err.message} (${text.length} bytes)`);
    }
    files.delete(`${id}.json`);
  }
  for (const f of files) problem(`${f.includes('.tmp-') ? 'temporary file left' : 'unexpected file'}: ${f}`);
  return { rows: transcripts.size, dups: 0, losses, kills: landed, spikes };
}
async function referenceTranscripts(sb) {
  const map = new Map();
  for (const r of await listAll(sb, 'recordings')) {
    if (!r.has_transcript) continue;
    const rec = await (await fetch(`${sb.base_url}/recordings/${r.id}`, { headers: auth(sb) })).json();
    map.set(r.id, await (await fetch(rec.data.transcript_url)).json());
  }
  return map;
}

let contacts; // the server's contacts, for the listing's check
async function listRun(sb, rng, sc, tag, problem) {
  contacts ??= new Map((await listAll(sb, 'contacts')).map((c) => [c.id, JSON.stringify(c)]));
  const format = pick(rng, ['json', 'ndjson']);
  const limit = pick(rng, [10, 25, 50]);
  const dir = mkdtempSync(path.join(work, 'list-'));
  const stdoutFile = (i) => path.join(dir, `out-${i}.${format}`);
  const args = ['-o', format, 'contacts', 'list', '--all', '--limit', String(limit)];
  const env = crmEnv(sb, path.join(dir, 'config'));
  let last;
  const done = (r) => r.code === 0;
  const { landed, spikes, converged } = await drive(sb, rng, sc, {
    args,
    env,
    expectRequests: Math.ceil(contacts.size / limit),
    done,
    problem,
    stdoutFile: (i) => (last = stdoutFile(i)),
  });
  let records = [];
  const text = readFileSync(last, 'utf8');
  try {
    records =
      format === 'json'
        ? JSON.parse(text)
        : text
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l));
  } catch (err) {
    if (converged) problem(`the rerun's ${format} output is not valid: ${err.message}`);
  }
  const seen = new Map();
  for (const r of records) seen.set(r.id, (seen.get(r.id) ?? 0) + 1);
  let dups = 0;
  let losses = 0;
  for (const [id, n] of seen) {
    if (n > 1) {
      dups += n - 1;
      problem(`record ${id} ×${n} in the output`);
    }
  }
  for (const id of contacts.keys()) {
    if (!seen.has(id)) {
      losses++;
      problem(`record ${id} missing from the output`);
    }
  }
  for (const r of records) {
    if (contacts.get(r.id) !== JSON.stringify(r)) {
      losses++;
      problem(`record ${r.id} differs from the server's`);
    }
  }
  return { rows: contacts.size, dups, losses, kills: landed, spikes };
}

/** A store of 20 recordings with transcripts, 3 still processing, and 400 contacts. */
function writeReadStore(file) {
  const at = (i) => new Date(Date.UTC(2026, 0, 5, 9) + i * 3_600_000).toISOString();
  const recordings = Array.from({ length: 23 }, (_, i) => ({
    id: `rec_faults_${String(i + 1).padStart(3, '0')}`,
    title: `Call ${i + 1}`,
    meeting_id: null,
    started_at: at(i),
    duration_seconds: 600 + i * 30,
    has_transcript: i < 20,
    transcript_status: i < 20 ? 'ready' : 'processing',
    transcript_url: null,
    recording_url: null,
    video_status: 'skipped',
    owner_id: 'usr_admin',
    created_at: at(i),
    updated_at: at(i),
  }));
  const contacts = Array.from({ length: 400 }, (_, i) => ({
    id: `con_faults_${String(i + 1).padStart(4, '0')}`,
    email: `list${i + 1}@faults.example`,
    first_name: `Name ${i + 1}`,
    owner_id: 'usr_admin',
    created_at: at(i),
    updated_at: at(i),
  }));
  writeFileSync(
    file,
    JSON.stringify({ format: 'crm-sandbox-store/1', seq: 423, records: { recordings, contacts }, links: [] }),
  );
}

// ---- the matrix ----
const RUNNERS = {
  'batch-faults': batchRun,
  'batch-kill': batchRun,
  'batch-restart': batchRun,
  'download-kill': downloadRun,
  'list-kill': listRun,
};
const SUMS = ['runs', 'kills', 'faults', 'rows', 'dups', 'losses', 'problems'];
const row0 = (name) => ({ name, ...Object.fromEntries(SUMS.map((k) => [k, 0])), t: performance.now() });
const add = (into, r) => SUMS.forEach((k) => (into[k] += r[k]));
const table = [];
const total = row0('total');
const readFile = path.join(work, 'read-store.json');
writeReadStore(readFile);
const sandboxes = {
  batch: await startSandbox(path.join(work, 'batch-store.json')),
  read: await startSandbox(readFile),
};
try {
  for (const [name, sc] of Object.entries(SCENARIOS)) {
    if (flags.only && flags.only !== name) continue;
    const sb = name.startsWith('batch') ? sandboxes.batch : sandboxes.read;
    const row = row0(name);
    const runs =
      flags.run !== undefined
        ? [Number(flags.run)]
        : Array.from({ length: sc.runs[flags.short ? 0 : 1] }, (_, i) => i + 1);
    for (const run of runs) {
      const repro = `node bench/faults.mjs --seed ${SEED} --only ${name} --run ${run}`;
      const found = [];
      const before = faultCount;
      const r = await RUNNERS[name](sb, runRng(name, run), sc, `s${SEED}${name}${run}`, (m) => found.push(m));
      await harvest(sb);
      const faults = faultCount - before + r.spikes;
      add(row, { ...r, runs: 1, kills: r.kills.length, faults, problems: found.length });
      if (found.length) {
        const more = found.length > 4 ? [`… and ${found.length - 4} more`] : [];
        problems.push(
          `${name} run ${run} (kill points ${r.kills.join(', ') || 'none'}), reproduce: ${repro}\n${[...found.slice(0, 4), ...more].map((m) => `    ${m}`).join('\n')}`,
        );
      }
      log(
        `${name} run ${run}: kill points [${r.kills.join(', ')}], ${faults} faults, ${r.rows} rows, ${r.dups} duplicates, ${r.losses} losses${found.length ? `, ${found.length} problems` : ''}`,
      );
    }
    table.push({ ...row, t: performance.now() - row.t });
    add(total, row);
  }
} finally {
  await Promise.all(Object.values(sandboxes).map((sb) => sb.stop()));
}

const cols = [
  'scenario',
  'runs',
  'kill points',
  'faults',
  'rows checked',
  'duplicates',
  'losses',
  'problems',
  'time s',
];
total.t = performance.now() - total.t;
console.log(`fault matrix (seed ${SEED}, ${flags.short ? 'short' : 'full'}, node ${process.version})`);
console.log(cols.map((c, i) => (i ? c.padStart(c.length + 2) : c.padEnd(14))).join(''));
for (const r of [...table, total])
  console.log(
    [
      r.name.padEnd(14),
      ...[r.runs, r.kills, r.faults, r.rows, r.dups, r.losses, r.problems, (r.t / 1000).toFixed(1)].map((v, i) =>
        String(v).padStart(cols[i + 1].length + 2),
      ),
    ].join(''),
  );
console.log(
  `faults by kind: ${
    Object.entries(faultsByKind)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ') || 'none'
  }; the rest are latency spikes and sandbox restarts`,
);
if (probeResult) console.log(`idempotency cache across a sandbox restart: ${probeResult}`);
if (problems.length) {
  console.log(
    `\nPROBLEMS in ${problems.length} runs (work folder kept: ${work}):\n${problems.map((p) => `  ${p}`).join('\n')}`,
  );
  process.exitCode = 1;
} else if (!flags.keep) rmSync(work, { recursive: true, force: true });
if (total.dups || total.losses) process.exitCode = 1;
