// Start-up time: `crm --version`, `crm --help` and `crm -o json contacts get ID` (against a running
// sandbox) beside `node -e 0` of the same Node, in interleaved rounds (in a new order each round) so
// that drift and other load hit every command alike. Prints the median and p90 of each, and the
// medians' ratios to `node -e 0` (the floor) beside the goals of issue 13: at most 1.15×, 1.4× and 2.0×
// on Node 24 (what users run).
// BENCH_NODE=/path/to/node runs the commands (and the floor) on that Node (default: the one running this;
// not NODE, which npm run sets to its own Node).
// A second floor: bench/undici-get.mjs, bundled, the same GET with undici and nothing else.
// BEFORE=/path/to/other/bin/crm adds the same three commands of another build to the same rounds,
// for a before/after table measured under the same load.
// ROUNDS (default 31) rounds are measured after WARMUP (default 3) unmeasured ones.
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { CRM, startSandboxChild } from './sandbox-child.mjs';

const ROUNDS = Number(process.env.ROUNDS ?? 31);
const WARMUP = Number(process.env.WARMUP ?? 3);
const sb = await startSandboxChild(['--seed', '1']);
try {
  const list = await fetch(`${sb.base_url}/contacts?limit=1`, { headers: { 'X-Service-Api-Key': sb.keys.admin } });
  const id = (await list.json()).data[0].id;
  const env = {
    ...process.env,
    CRM_BASE_URL: sb.base_url,
    CRM_API_KEY: sb.keys.admin,
    CRM_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'crm-bench-')),
  };
  const node = process.env.BENCH_NODE || process.execPath;
  const builds = { '': CRM, ...(process.env.BEFORE ? { 'before: ': process.env.BEFORE } : {}) };
  const bareDir = mkdtempSync(join(tmpdir(), 'crm-bench-'));
  await build({
    entryPoints: [new URL('undici-get.mjs', import.meta.url).pathname],
    outdir: bareDir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
    logLevel: 'warning',
  });
  const bare = join(bareDir, 'undici-get.js');
  const cases = { 'node -e 0': [node, ['-e', '0']], 'floor: undici GET alone': [node, [bare, id]] };
  const targets = {};
  for (const [label, crm] of Object.entries(builds)) {
    cases[`${label}crm --version`] = [node, [crm, '--version']];
    cases[`${label}crm --help`] = [node, [crm, '--help']];
    cases[`${label}crm contacts get ID`] = [node, [crm, '-o', 'json', 'contacts', 'get', id]];
    Object.assign(targets, {
      [`${label}crm --version`]: 1.15,
      [`${label}crm --help`]: 1.4,
      [`${label}crm contacts get ID`]: 2.0,
    });
  }
  const names = Object.keys(cases);
  const times = Object.fromEntries(names.map((k) => [k, []]));
  for (let round = 0; round < WARMUP + ROUNDS; round++) {
    for (const name of shuffled(names)) {
      const [cmd, args] = cases[name];
      const t0 = process.hrtime.bigint();
      const r = spawnSync(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      if (r.status !== 0) throw new Error(`${name} exited ${r.status}: ${r.stderr}`);
      if (round >= WARMUP) times[name].push(ms); // the first rounds warm the file cache and the sandbox
    }
  }
  const base = quantile(times['node -e 0'], 0.5);
  const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
  console.log(`startup benchmark, ${ROUNDS} interleaved rounds after ${WARMUP} warm-up, node ${version} (${node})`);
  console.log(
    `${'command'.padEnd(30)} ${'median ms'.padStart(10)} ${'p90 ms'.padStart(8)} ${'× floor'.padStart(8)} ${'goal'.padStart(8)}`,
  );
  let ok = true;
  for (const name of names) {
    const m = quantile(times[name], 0.5);
    const ratio = m / base;
    const target = targets[name];
    if (target && ratio > target && !name.startsWith('before')) ok = false;
    console.log(
      `${name.padEnd(30)} ${m.toFixed(1).padStart(10)} ${quantile(times[name], 0.9).toFixed(1).padStart(8)} ${ratio.toFixed(2).padStart(8)} ${(target ? `≤${target}` : '').padStart(8)}`,
    );
  }
  console.log(ok ? 'all within the goals' : 'SOME ABOVE THE GOAL');
} finally {
  await sb.stop();
}

/** The q-quantile, interpolated between the two nearest samples. */
function quantile(xs, q) {
  const s = [...xs].sort((a, b) => a - b);
  const pos = (s.length - 1) * q;
  const lo = Math.floor(pos);
  return s[lo] + (s[Math.min(lo + 1, s.length - 1)] - s[lo]) * (pos - lo);
}

function shuffled(xs) {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}
