// Benchmark of a long list as a table (issue 13, "Large lists as tables"): `crm contacts list --all`
// of 100 000 contacts through the real binary against `crm sandbox` in a child process, as NDJSON
// (the floor) and as a table (`-o table`: stdout is a file, not a terminal), stdout to a file.
// Goal: the table at most 3× the NDJSON time; peak RSS of each (the table must not grow with the list).
//
//   npm run bench:list-table                  (builds first; 100 000 contacts)
//   node bench/list-table.mjs --quick         (10 000 contacts)
//   node bench/list-table.mjs --rows 300000 --runs 3 --json
//
// The contacts are written straight into a sandbox data file (--data-file) rather than created
// through the API: quicker, and the same records every run. The sandbox runs with `--seed 1` (its
// keys) and no rate limit to speak of. With --runs N the two formats alternate N times; the
// medians are printed. Peak RSS as bench/measure.mjs reads it.
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { printColumns, RSS_METHOD, runCrm, secs, megabytes } from './measure.mjs';
import { startSandboxChild } from './sandbox-child.mjs';

const { values: flags } = parseArgs({
  options: {
    rows: { type: 'string' },
    quick: { type: 'boolean', default: false },
    runs: { type: 'string', default: '1' },
    json: { type: 'boolean', default: false },
  },
});
const ROWS = Number(flags.rows ?? (flags.quick ? 10_000 : 100_000));
const RUNS = Number(flags.runs);
if (!Number.isInteger(ROWS) || ROWS < 1) throw new Error('--rows must be a positive integer');
if (!Number.isInteger(RUNS) || RUNS < 1) throw new Error('--runs must be a positive integer');

const RATIO_GOAL = 3;
const HIGH = String(1_000_000_000);
const work = mkdtempSync(path.join(tmpdir(), 'crm-bench-list-table-'));
const log = (m) => process.stderr.write(`[bench] ${m}\n`);

/** A sandbox data file with `n` contacts shaped as the seeded ones (varied widths, a few empty cells). */
function writeDataFile(file, n) {
  const titles = ['Engineer', 'Head of Partnerships', 'CTO', 'Account Executive', ''];
  const sources = ['referral', 'website', 'import', 'event'];
  const contacts = [];
  for (let i = 1; i <= n; i++) {
    const at = new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString();
    contacts.push({
      id: `con_${i.toString(36).padStart(14, '0')}`,
      email: `person${i}@bench${i % 97}.example.com`,
      first_name: `First${i % 1000}`,
      last_name: `Last ${'x'.repeat(i % 23)}${i}`,
      company_id: `cmp_${(i % 500).toString(36).padStart(14, '0')}`,
      phone: `+1555${String(i).padStart(7, '0')}`,
      title: titles[i % titles.length],
      source: sources[i % sources.length],
      owner_id: 'usr_admin',
      created_at: at,
      updated_at: at,
    });
  }
  writeFileSync(file, JSON.stringify({ format: 'crm-sandbox-store/1', seq: n + 1, records: { contacts }, links: [] }));
}

/** One `crm -o FORMAT contacts list --all`, stdout to a file; its wall ms, peak RSS and output size. */
async function runList(sb, format) {
  const env = {
    ...process.env,
    CRM_BASE_URL: sb.base_url,
    CRM_API_KEY: sb.keys.admin,
    CRM_CONFIG_DIR: mkdtempSync(path.join(work, 'config-')),
  };
  const out = path.join(work, `out.${format}`);
  const r = await runCrm(['-o', format, '--quiet', 'contacts', 'list', '--all'], { env, work, stdoutFile: out });
  if (r.code !== 0) throw new Error(`crm -o ${format} contacts list --all exited ${r.code}:\n${r.stderr}`);
  const bytes = statSync(out).size;
  rmSync(out);
  return { wallMs: r.wallMs, peakMb: r.peakMb, bytes };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const runs = { ndjson: [], table: [] };
let sb;
try {
  const dataFile = path.join(work, 'store.json');
  writeDataFile(dataFile, ROWS);
  sb = await startSandboxChild([
    '--seed',
    '1',
    '--data-file',
    dataFile,
    '--rate-limit',
    HIGH,
    '--org-rate-limit',
    HIGH,
  ]);
  for (let i = 0; i < RUNS; i++) {
    for (const format of ['ndjson', 'table']) {
      const r = await runList(sb, format);
      log(
        `${format}: ${ROWS} contacts in ${(r.wallMs / 1000).toFixed(2)} s, peak RSS ${r.peakMb.toFixed(1)} MB, ${r.bytes} bytes`,
      );
      runs[format].push(r);
    }
  }
} finally {
  await sb?.stop();
  rmSync(work, { recursive: true, force: true });
}

const summary = (rs) => ({
  wall_ms: median(rs.map((r) => r.wallMs)),
  peak_rss_mb: Math.max(...rs.map((r) => r.peakMb)),
  bytes: rs[0].bytes,
});
const nd = summary(runs.ndjson);
const table = summary(runs.table);
const results = { rows: ROWS, runs: RUNS, ndjson: nd, table, ratio: table.wall_ms / nd.wall_ms, goal: RATIO_GOAL };
if (flags.json) {
  console.log(JSON.stringify(results, null, 2));
} else {
  const s = secs;
  const mb = megabytes;
  console.log(
    `list-table benchmark: crm contacts list --all of ${ROWS} contacts, node ${process.version}, median of ${RUNS}, peak RSS by ${RSS_METHOD}`,
  );
  const met = results.ratio <= RATIO_GOAL;
  printColumns(
    [
      ['', 'time', 'peak RSS', 'output', 'goal', 'met'],
      ['ndjson (floor)', s(nd.wall_ms), mb(nd.peak_rss_mb), `${nd.bytes} B`, '', ''],
      ['table (-o table)', s(table.wall_ms), mb(table.peak_rss_mb), `${table.bytes} B`, '', ''],
      ['table / ndjson', `${results.ratio.toFixed(2)}×`, '', '', `≤ ${RATIO_GOAL}×`, met ? 'yes' : 'NO'],
    ],
    new Set([0, 4, 5]),
  );
  console.log(met ? 'goal met' : 'GOAL MISSED');
}
