// Start-up time: medians of `crm --version`, `crm --help` and `crm contacts get ID` (against a
// running sandbox) beside `node -e 0`, in interleaved rounds so drift hits every command alike.
// Targets (issue 3): at most 1.3×, 1.6× and 2.2× of `node -e 0`.
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CRM, startSandboxChild } from './sandbox-child.mjs';

const ROUNDS = Number(process.env.ROUNDS ?? 21);
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
  const cases = {
    'node -e 0': [process.execPath, ['-e', '0']],
    'crm --version': [process.execPath, [CRM, '--version']],
    'crm --help': [process.execPath, [CRM, '--help']],
    'crm contacts get ID': [process.execPath, [CRM, '-o', 'json', 'contacts', 'get', id]],
  };
  const times = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
  for (let round = 0; round < ROUNDS + 1; round++) {
    for (const [name, [cmd, args]] of Object.entries(cases)) {
      const t0 = process.hrtime.bigint();
      const r = spawnSync(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      if (r.status !== 0) throw new Error(`${name} exited ${r.status}: ${r.stderr}`);
      if (round > 0) times[name].push(ms); // round 0 warms the file cache
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const base = median(times['node -e 0']);
  const targets = { 'crm --version': 1.3, 'crm --help': 1.6, 'crm contacts get ID': 2.2 };
  console.log(`startup benchmark, ${ROUNDS} interleaved rounds, node ${process.version}`);
  console.log(`${'command'.padEnd(22)} ${'median ms'.padStart(10)} ${'× node'.padStart(8)} ${'target'.padStart(8)}`);
  let ok = true;
  for (const name of Object.keys(cases)) {
    const m = median(times[name]);
    const ratio = m / base;
    const target = targets[name];
    if (target && ratio > target) ok = false;
    console.log(`${name.padEnd(22)} ${m.toFixed(1).padStart(10)} ${ratio.toFixed(2).padStart(8)} ${(target ? `≤${target}` : '').padStart(8)}`);
  }
  console.log(ok ? 'all within target' : 'SOME ABOVE TARGET');
} finally {
  await sb.stop();
}
