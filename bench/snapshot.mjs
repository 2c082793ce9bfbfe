// Benchmark of `crm snapshot DIR` (issue 19 "Tests and benchmark"), through the real binary against
// `crm sandbox --control --seed-records contacts=N,deals=M` in a child process, each figure beside
// its floor or target in the same run:
//   1. requests: the sandbox's log of the run: GET list pages per collection, which must be exactly
//      ceil(records / 100) for each (at least one), nothing else, no 429 answered;
//   2. pace: the wall time at the API's 200 requests a minute scaled in time (200 per 6 s by
//      default) beside the least time the limit allows those requests (the time taken must be
//      ≥ 0.95 of it: no faster than allowed; the ratio least / taken says how near crm keeps to the
//      limit), beside `node -e 0` and a bare undici loop (bench/snapshot-floor.mjs) reading the same
//      pages at the same limit;
//   3. memory: crm's peak RSS (target ≤ 150 MB at 100,000 contacts and 20,000 deals);
//   4. the output: each DIR/<name>.ndjson holds the records the sandbox holds, each id once, in the
//      order the bare loop read them (the ids' sha256 compared), and the manifest says complete with
//      those counts.
// Exit 1 when a check fails (requests, pace, the output) or the RSS target, measured at its own size
// or more, is missed; at a smaller size (--short) the RSS target is printed, not gating.
//
//   npm run bench:snapshot                  100,000 contacts + 20,000 deals at 200 per 6 s (~1 min)
//   npm run bench:snapshot:short            5,000 contacts + 1,000 deals at 20 per 1 s (< 15 s)
//   node bench/snapshot.mjs --contacts 50000 --deals 10000 --rate-limit 200 --rate-window-ms 3000 --json
//
// The least time: the sandbox's window is fixed (it opens at the first request, the next at the first
// request after it ended), so at best the windows follow each other back to back and the last of R
// requests starts (ceil(R / limit) - 1) windows after the first.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createHash } from 'node:crypto';
import { createReadStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { api, limits, megabytes, nodeStartMs, printColumns, RSS_METHOD, runCrm, secs, stats } from './measure.mjs';
import { startSandboxChild } from './sandbox-child.mjs';

const { values: flags } = parseArgs({
  options: {
    short: { type: 'boolean', default: false },
    contacts: { type: 'string' },
    deals: { type: 'string' },
    'rate-limit': { type: 'string' },
    'rate-window-ms': { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});
const [CONTACTS0, DEALS0, LIMIT0, WINDOW0] = flags.short ? [5000, 1000, 20, 1000] : [100_000, 20_000, 200, 6000];
const CONTACTS = Number(flags.contacts ?? CONTACTS0);
const DEALS = Number(flags.deals ?? DEALS0);
const L = Number(flags['rate-limit'] ?? LIMIT0);
const W = Number(flags['rate-window-ms'] ?? WINDOW0);
for (const [name, v] of Object.entries({ contacts: CONTACTS, deals: DEALS, 'rate-limit': L, 'rate-window-ms': W }))
  if (!Number.isInteger(v) || v < 1) throw new Error(`--${name} must be a whole number of 1 or more`);

/** The API's limits: per key, per organization (the organization's kept in the same proportion) */
const ORG_LIMIT = L * 5;
const PAGE = 100;
const PACE_TARGET = 0.95;
const [RSS_TARGET_MB, RSS_TARGET_CONTACTS, RSS_TARGET_DEALS] = [150, 100_000, 20_000];
const FLOOR = fileURLToPath(new URL('./snapshot-floor.mjs', import.meta.url));
const work = mkdtempSync(path.join(tmpdir(), 'crm-bench-snapshot-'));
const log = (m) => process.stderr.write(`[bench] ${m}\n`);
const elapsedMs = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;

/** The sandbox's request log since entry `since`: list GETs per collection, everything else, 429s. */
async function requestsByCollection(sb, since, names) {
  const entries = await api(sb, 'GET', `${sb.control_url}/requests?since=${since}`);
  const list = Object.fromEntries(names.map((n) => [n, 0]));
  let other = 0;
  for (const e of entries) {
    const name = /\/(\w+)$/.exec(e.path)?.[1];
    if (e.method === 'GET' && name !== undefined && Object.hasOwn(list, name)) list[name]++;
    else other++;
  }
  return { total: entries.length, list, other, rate_limited: entries.filter((e) => e.status === 429).length };
}

/** One snapshot file: its lines, its distinct ids, the sha256 of its ids in order (as the bare loop hashes them). */
async function readSnapshotFile(file) {
  const hash = createHash('sha256');
  const seen = new Set();
  let lines = 0;
  for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
    lines++;
    const { id } = JSON.parse(line);
    seen.add(id);
    hash.update(`${id}\n`);
  }
  return { lines, ids: seen.size, sha256: hash.digest('hex') };
}

const results = { contacts: CONTACTS, deals: DEALS, rate_limit: L, rate_window_ms: W, org_rate_limit: ORG_LIMIT };
const failures = [];
let sb;
try {
  results.node_start_ms = nodeStartMs();
  const t0 = process.hrtime.bigint();
  const seedArgs = ['--seed', '1', '--seed-records', `contacts=${CONTACTS},deals=${DEALS}`];
  sb = await startSandboxChild([
    '--control',
    ...seedArgs,
    '--rate-limit',
    String(L),
    '--rate-window-ms',
    String(W),
    '--org-rate-limit',
    String(ORG_LIMIT),
  ]);
  const seeded = (await stats(sb)).records;
  if (seeded.contacts !== CONTACTS || seeded.deals !== DEALS)
    throw new Error(`setup: the sandbox holds ${JSON.stringify(seeded)}`);
  log(`setup: a sandbox of ${CONTACTS} contacts and ${DEALS} deals in ${(elapsedMs(t0) / 1000).toFixed(1)} s`);
  const names = Object.keys(seeded);
  const expected = Object.fromEntries(names.map((n) => [n, Math.max(1, Math.ceil(seeded[n] / PAGE))]));
  const expectedTotal = Object.values(expected).reduce((a, b) => a + b, 0);

  // 1-3. the run, on fresh windows
  await limits(sb, { rate_limit: L, org_rate_limit: ORG_LIMIT, rate_window_ms: W });
  const since = (await stats(sb)).requests;
  const dir = path.join(work, 'snapshot');
  const env = {
    ...process.env,
    CRM_BASE_URL: sb.base_url,
    CRM_API_KEY: sb.keys.admin,
    CRM_CONFIG_DIR: mkdtempSync(path.join(work, 'config-')),
  };
  log(`run: crm snapshot of ${expectedTotal} pages at ${L} requests per ${W} ms`);
  const run = await runCrm(['--quiet', 'snapshot', dir], { env, work, stdoutFile: '/dev/null' });
  if (run.code !== 0) throw new Error(`crm snapshot exited ${run.code}:\n${run.stderr}`);
  const manifest = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
  const sent = await requestsByCollection(sb, since, names);
  const leastMs = (Math.ceil(sent.total / L) - 1) * W;
  results.run = {
    wall_ms: run.wallMs,
    least_ms: leastMs,
    peak_rss_mb: run.peakMb,
    cpu_s: run.cpuS,
    sent,
    expected,
    expected_total: expectedTotal,
  };

  // the floor: a bare undici loop reading the same pages at the same limit, on fresh windows
  await limits(sb, { rate_limit: L, org_rate_limit: ORG_LIMIT, rate_window_ms: W });
  log(`floor: a bare undici loop, the same pages at ${L} per ${W} ms`);
  const f0 = process.hrtime.bigint();
  const child = spawn(process.execPath, [FLOOR, sb.base_url, sb.keys.admin, names.join(',')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  const [code] = await once(child, 'exit');
  if (code !== 0) throw new Error(`the bare undici loop exited ${code}`);
  results.floor = { wall_ms: elapsedMs(f0), ...JSON.parse(out) };

  // 4. the output: every collection's file against what the sandbox holds and what the bare loop read
  results.output = {};
  for (const name of names) {
    const got = await readSnapshotFile(path.join(dir, `${name}.ndjson`));
    const m = manifest.collections?.[name];
    results.output[name] = {
      ...got,
      seeded: seeded[name],
      same_ids_as_floor: got.sha256 === results.floor.ids[name],
      manifest: m ? m.records : null,
      ok:
        got.lines === seeded[name] &&
        got.ids === seeded[name] &&
        got.sha256 === results.floor.ids[name] &&
        m?.complete &&
        m.records === seeded[name],
    };
  }
  results.manifest_complete = manifest.complete === true;
} finally {
  await sb?.stop();
  rmSync(work, { recursive: true, force: true });
}

// the checks (always gating) and the RSS target (gating at its own size or more)
const r = results.run;
const check = (what, ok, gating = true) => {
  if (!ok && gating) failures.push(what);
  return ok ? 'PASS' : gating ? 'FAIL' : 'FAIL (not gating)';
};
const names = Object.keys(r.expected);
const pagesOk = names.every((n) => r.sent.list[n] === r.expected[n]);
const requestsOk = check(
  'requests',
  pagesOk && r.sent.total === r.expected_total && r.sent.other === 0 && r.sent.rate_limited === 0,
);
const paceOk = check('pace', r.wall_ms >= PACE_TARGET * r.least_ms);
const rssMeasured = CONTACTS >= RSS_TARGET_CONTACTS && DEALS >= RSS_TARGET_DEALS;
const rssOk = check('peak RSS', r.peak_rss_mb <= RSS_TARGET_MB, rssMeasured);
const outputOk = check('output', results.manifest_complete && names.every((n) => results.output[n].ok));
results.failures = failures;

if (flags.json) {
  console.log(JSON.stringify(results, null, 2));
} else {
  const s = secs;
  const f = results.floor;
  console.log(
    `snapshot benchmark: crm snapshot DIR, ${CONTACTS} contacts and ${DEALS} deals (the other collections as --seed 1), ` +
      `${L} requests per ${W} ms (org ${ORG_LIMIT}), node ${process.version}, peak RSS and CPU by ${RSS_METHOD}`,
  );
  const startMs = results.node_start_ms;
  const big = names.filter((n) => r.expected[n] > 1);
  const small = names.filter((n) => r.expected[n] === 1);
  printColumns(
    [
      ['', 'measured', 'floor / target', ''],
      [
        '1. requests sent (sandbox log)',
        r.sent.total,
        `= ${r.expected_total}: ceil(records / ${PAGE}) pages a collection`,
        requestsOk,
      ],
      ...big.map((n) => [
        `   GET /${n} pages`,
        r.sent.list[n],
        `${r.expected[n]} (${results.output[n].seeded} records)`,
      ]),
      [
        `   GET pages of the ${small.length} other collections`,
        small.reduce((a, n) => a + r.sent.list[n], 0),
        `${small.length} (one each, ≤ ${PAGE} records)`,
      ],
      ['   other requests / 429s', `${r.sent.other} / ${r.sent.rate_limited}`, '0 / 0'],
      ['   bare undici loop: requests / 429s', `${f.requests} / ${f.rate_limited}`, ''],
      ['2. wall time (crm)', s(r.wall_ms), `CPU user+sys ${r.cpu_s.toFixed(2)} s`],
      ['   least time the limit allows', s(r.least_ms), `(ceil(${r.sent.total}/${L}) - 1) × ${W} ms`],
      [
        '   ratio taken / least',
        (r.wall_ms / r.least_ms).toFixed(3),
        `≥ ${PACE_TARGET} (no faster than allowed)`,
        paceOk,
      ],
      ['   ratio least / taken', (r.least_ms / r.wall_ms).toFixed(3), 'how near crm keeps to the limit (1 = at it)'],
      ['   least time + node -e 0', s(r.least_ms + startMs), `node -e 0: ${startMs.toFixed(0)} ms`],
      ['   bare undici loop, same pages, same limit', s(f.wall_ms), `its loop ${s(f.loop_ms)}`],
      ['   ratio crm / bare loop', `${(r.wall_ms / f.wall_ms).toFixed(3)}×`, ''],
      [
        '3. peak RSS (crm)',
        megabytes(r.peak_rss_mb),
        rssMeasured
          ? `≤ ${RSS_TARGET_MB} MB`
          : `(${RSS_TARGET_MB} MB is for ${RSS_TARGET_CONTACTS} contacts + ${RSS_TARGET_DEALS} deals)`,
        rssOk,
      ],
      [
        '4. output: records per file = seeded, each id once',
        names.filter((n) => results.output[n].ok).length,
        `${names.length} files`,
        outputOk,
      ],
      ...big.map((n) => {
        const o = results.output[n];
        return [
          `   ${n}.ndjson: lines / distinct ids`,
          `${o.lines} / ${o.ids}`,
          `${o.seeded}; ids as the bare loop read them: ${o.same_ids_as_floor ? 'yes' : 'NO'}`,
        ];
      }),
      ['   manifest complete', results.manifest_complete ? 'yes' : 'no', 'yes'],
    ],
    new Set([0, 2]),
  );
  const notGating = rssOk.startsWith('FAIL (') ? ' (the RSS target missed at another size: see above)' : '';
  console.log(
    failures.length
      ? `FAILED: ${failures.join(', ')}`
      : `all checks met, and the targets measured at their size${notGating}`,
  );
}
if (failures.length) process.exitCode = 1;
