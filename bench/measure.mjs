// What the benchmarks measure of one `crm` process (bench/import.mjs, bench/bulk-change.mjs): its
// wall time, its peak RSS and, from its `-v` lines, when each request started.
//
// Peak RSS is the process's own maximum resident set size (the kernel's ru_maxrss, i.e. VmHWM at
// exit), read with GNU `/usr/bin/time -v` when present (apt-get install time); without it,
// /proc/<pid>/status VmHWM is polled every 20 ms (a lower bound: the last poll may miss a final peak).
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { CRM } from './sandbox-child.mjs';

function spawnOk(cmd, args) {
  return new Promise((resolve) => {
    const c = spawn(cmd, args, { stdio: 'ignore' });
    c.once('error', () => resolve(false));
    c.once('exit', (code) => resolve(code === 0));
  });
}

export const GNU_TIME = existsSync('/usr/bin/time') && (await spawnOk('/usr/bin/time', ['-v', 'true']));
export const RSS_METHOD = GNU_TIME ? '/usr/bin/time -v (ru_maxrss)' : 'polling /proc/PID/status VmHWM';

/** A `kB` line of /proc/<pid>/status (NaN when unreadable). */
export function procKb(pid, field) {
  try {
    return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
  } catch {
    return NaN;
  }
}

/** Peak RSS (kB) from /proc/<pid>/status while the process runs (fallback without GNU time). */
function pollHwm(pid) {
  let peak = 0;
  const read = () => {
    const kb = procKb(pid, 'VmHWM');
    if (kb > 0) peak = Math.max(peak, kb);
  };
  read();
  const t = setInterval(read, 20);
  return () => {
    clearInterval(t);
    return peak;
  };
}

let runs = 0;
/**
 * Runs `node bin/crm …crmArgs` with `env`; `work` holds GNU time's report. Resolves with its exit
 * code, stdout, the stderr lines that are not requests, wall ms, peak RSS (MB) and the ms (on this
 * process's clock, from the spawn) at which each request matching `request` (a `-v` line whose
 * groups 1 and 2 are the status and the duration) started: the line's arrival less its duration;
 * with GNU time, also its user + system CPU seconds (`cpuS`, else NaN).
 * With `stdoutFile`, stdout goes to that file (or /dev/null) instead, and `stdout` is ''; with
 * `stdinFile`, stdin is read from that file (else it is empty).
 */
export async function runCrm(crmArgs, { env, work, request, stdoutFile, stdinFile }) {
  const timeOut = path.join(work, `time-${process.pid}-${++runs}.txt`);
  const [cmd, args] = GNU_TIME
    ? ['/usr/bin/time', ['-v', '-o', timeOut, process.execPath, CRM, ...crmArgs]]
    : [process.execPath, [CRM, ...crmArgs]];
  const t0 = process.hrtime.bigint();
  const out = stdoutFile === undefined ? 'pipe' : openSync(stdoutFile, 'w');
  const input = stdinFile === undefined ? 'ignore' : openSync(stdinFile, 'r');
  const child = spawn(cmd, args, { env, stdio: [input, out, 'pipe'] });
  for (const fd of [input, out]) if (typeof fd === 'number') closeSync(fd);
  const stop = GNU_TIME ? undefined : pollHwm(child.pid);
  let stdout = '';
  let stderr = '';
  const starts = [];
  child.stdout?.on('data', (d) => (stdout += d));
  createInterface({ input: child.stderr }).on('line', (line) => {
    const at = Number(process.hrtime.bigint() - t0) / 1e6;
    const m = request?.exec(line);
    if (m) starts.push({ at: at - Number(m[2]), status: Number(m[1]) });
    else stderr += `${line}\n`;
  });
  const [[code]] = await Promise.all([once(child, 'exit'), once(child.stderr, 'end')]);
  const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
  let peakKb = stop?.();
  let cpuS = NaN;
  if (GNU_TIME) {
    const report = readFileSync(timeOut, 'utf8');
    const seconds = (what) => Number(new RegExp(`${what} time \\(seconds\\): ([\\d.]+)`).exec(report)?.[1]);
    peakKb = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(report)?.[1]);
    cpuS = seconds('User') + seconds('System');
  }
  const at = starts.map((x) => x.at).sort((a, b) => a - b);
  return { code, stdout, stderr, wallMs, peakMb: peakKb / 1024, cpuS, starts: at };
}

/** `node -e 0`'s start-up (ms): the median of 7 runs after one to warm the cache. */
export function nodeStartMs() {
  const times = [];
  for (let i = 0; i < 8; i++) {
    const t0 = process.hrtime.bigint();
    spawnSync(process.execPath, ['-e', '0'], { stdio: 'ignore' });
    if (i > 0) times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return times.sort((a, b) => a - b)[times.length >> 1];
}

/** A JSON request to the sandbox `sb` with its admin key (`url`: a path under its base URL, or a whole URL); throws unless 2xx. */
export async function api(sb, method, url, body) {
  const res = await fetch(url.startsWith('http') ? url : `${sb.base_url}${url}`, {
    method,
    headers: { 'X-Service-Api-Key': sb.keys.admin, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
  return res.json();
}
/** Sets the sandbox's limits (/__sandbox/limits: new limits start fresh windows). */
export const limits = (sb, body) => api(sb, 'POST', `${sb.control_url}/limits`, body);
/** The sandbox's counts (/__sandbox/stats): records per resource, requests. */
export const stats = (sb) => api(sb, 'GET', `${sb.control_url}/stats`);

/** The sandbox's request log since entry `since`: how many requests, how many answered 429, and the next index. */
export async function requestLog(sb, since = 0) {
  const entries = await (await fetch(`${sb.control_url}/requests?since=${since}`)).json();
  return { total: entries.length, r429: entries.filter((e) => e.status === 429).length, next: since + entries.length };
}

/** Prints rows of cells as columns: the first left-aligned, the others right-aligned unless `left` has their index. */
/** `1.23 s` from ms (`-` for none), `12.3 MB`: the figures every bench prints */
export const secs = (ms) => (ms === null || ms === undefined ? '-' : `${(ms / 1000).toFixed(2)} s`);
export const megabytes = (x) => `${x.toFixed(1)} MB`;

export function printColumns(rows, left = new Set([0])) {
  const w = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i] ?? '').length)));
  for (const r of rows)
    console.log(
      r
        .map((c, i) => (left.has(i) ? String(c ?? '').padEnd(w[i]) : String(c ?? '').padStart(w[i])))
        .join('  ')
        .trimEnd(),
    );
}
