// Issue 20, "a real proxy": `crm` (the built binary) through tinyproxy, Debian's package, started here
// on loopback with a config of its own (not as a daemon), in front of the sandbox serving https with
// its own CA (`--tls`: crm never proxies an http:// URL, and proxies loopback only with <-loopback> in
// NO_PROXY). A port policy's 403, Basic authentication right and wrong (tinyproxy answers a wrong
// password with 401, not 407), a 2,000-row import and every transcript through reused tunnels (the
// CONNECTs counted in tinyproxy's log), tinyproxy killed and started again in the middle of an import
// (one run finishes, no duplicate: the sandbox's records counted), and NO_PROXY (no CONNECT reaches it).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { collect, runCrm, startCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';

// .ci/run installs tinyproxy and sets CRM_REQUIRE_SHELLS; elsewhere a missing tinyproxy skips the file
const required = process.env.CRM_REQUIRE_SHELLS === '1';
const missing = spawnSync('tinyproxy', ['-v'], { stdio: 'ignore' }).status !== 0;

const USER = 'alice';
/** tinyproxy's config syntax takes letters and digits here */
const PASSWORD = 'pwZq7x9k';

let t: TestSandbox;
let dir: string;
let caFile: string;
let apiTarget: string;
let downloadTarget: string;
const proxies: Tinyproxy[] = [];

beforeAll(async () => {
  if (missing) return;
  t = await startTestSandbox({
    tls: true,
    seed: 4,
    rateLimit: 1_000_000,
    orgRateLimit: 1_000_000,
    downloadRateLimit: 1_000_000,
  });
  dir = tempDir('crm-real-proxy-');
  caFile = t.sb.caFile!;
  apiTarget = new URL(t.sb.url).host;
  downloadTarget = new URL(t.sb.downloadUrl).host;
});
afterEach(async () => {
  for (const p of proxies.splice(0)) await p.stop();
  if (t) await t.control('/faults', { fail_rate: 0, latency_ms: 0, faults: {}, next: [] });
});
afterAll(async () => {
  await t?.close();
});

interface Tinyproxy {
  port: number;
  /** everything tinyproxy logged (LogLevel Connect: a line per connection and per request) */
  log(): string;
  /** the CONNECTs it received for `target` (`host:port`), refused or not */
  connects(target: string): number;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** tinyproxy in the foreground (-d) with its own config file: loopback only, tunnels to `connectPorts` only, Basic auth. */
async function startTinyproxy(opts: { connectPorts: number[]; port?: number; auth?: boolean }): Promise<Tinyproxy> {
  const port = opts.port ?? (await freePort());
  const conf = join(dir, `tinyproxy-${port}.conf`);
  const lines = [
    `Port ${port}`,
    'Listen 127.0.0.1',
    'Timeout 30',
    'LogLevel Connect',
    'MaxClients 100',
    'Allow 127.0.0.1',
    ...opts.connectPorts.map((p) => `ConnectPort ${p}`),
    ...(opts.auth === false ? [] : [`BasicAuth ${USER} ${PASSWORD}`]),
  ];
  writeFileSync(conf, `${lines.join('\n')}\n`);
  const child: ChildProcess = spawn('tinyproxy', ['-d', '-c', conf], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const proxy: Tinyproxy = {
    port,
    log: () => out,
    connects: (target) => out.split('\n').filter((l) => l.includes(`: CONNECT ${target} HTTP/`)).length,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
  proxies.push(proxy);
  for (let tries = 0; ; tries++) {
    const up = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1', () => (s.destroy(), resolve(true))).on('error', () => resolve(false));
    });
    if (up) return proxy;
    if (child.exitCode !== null || tries > 100) throw new Error(`tinyproxy did not start on port ${port}:\n${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const ports = () => [Number(apiTarget.split(':')[1]), Number(downloadTarget.split(':')[1])];

/** the environment crm runs in: the sandbox's key and URLs, the proxy variables given (and only those) */
function env(extra: Record<string, string | undefined>): Record<string, string | undefined> {
  return {
    ...t.env('admin'),
    HTTP_PROXY: undefined,
    http_proxy: undefined,
    https_proxy: undefined,
    no_proxy: undefined,
    NO_PROXY: '<-loopback>',
    NODE_EXTRA_CA_CERTS: caFile,
    ...extra,
  };
}
const through = (p: Tinyproxy, password = PASSWORD) =>
  env({ HTTPS_PROXY: `http://${USER}:${encodeURIComponent(password)}@127.0.0.1:${p.port}` });

function csv(tag: string, n: number): string {
  const path = join(dir, `${tag}.csv`);
  const rows = Array.from({ length: n }, (_, i) => `${tag}.${i + 1}@example.com,Row${i + 1}`);
  writeFileSync(path, `email,first_name\n${rows.join('\n')}\n`);
  return path;
}

describe.skipIf(missing && !required)('through tinyproxy (a real proxy from a Debian package)', () => {
  it('tinyproxy is installed (apt-get install tinyproxy; .ci/run installs it)', () => {
    expect(missing, 'tinyproxy is not installed: apt-get install tinyproxy').toBe(false);
  });

  it("a port policy that refuses the API's port: crm explains the 403, exit 8, not retried", async () => {
    const p = await startTinyproxy({ connectPorts: [443], auth: false });
    const r = await runCrm(['contacts', 'list', '--max', '1'], {
      env: env({ HTTPS_PROXY: `http://127.0.0.1:${p.port}` }),
    });
    expect(r.code, r.stderr).toBe(8);
    expect(r.stderr).toContain(
      `the proxy http://127.0.0.1:${p.port} (HTTPS_PROXY) would not open a tunnel to ${apiTarget} (HTTP 403)`,
    );
    expect(r.stderr).toContain(`Hint: the proxy blocks ${apiTarget} or cannot reach it`);
    // loopback is proxied on purpose (NO_PROXY=<-loopback>): not "add it to NO_PROXY" (new-user trial)
    expect(r.stderr).not.toMatch(/add it to NO_PROXY/);
    expect(r.stderr).toContain('127.0.0.1 goes through the proxy because NO_PROXY holds <-loopback>');
    expect(p.connects(apiTarget)).toBe(1);
  });

  it("a port policy that lets only the API's port through: the hint names the transcripts' host:port, never the base URL; every recording counted (new-user trial)", async () => {
    const p = await startTinyproxy({ connectPorts: [ports()[0]!], auth: false });
    const out = join(dir, 'transcripts-port-policy');
    const d = await runCrm(['-o', 'json', 'recordings', 'download', '--dir', out], {
      env: env({ HTTPS_PROXY: `http://127.0.0.1:${p.port}` }),
    });
    expect(d.code, d.stderr).toBe(8);
    const hint = /^Hint: .*$/m.exec(d.stderr)?.[0] ?? '';
    expect(hint, d.stderr).toContain(`the proxy must let tunnels to ${downloadTarget} through`);
    expect(hint).not.toMatch(/base URL/);
    const s = JSON.parse(d.stdout) as Record<
      'downloaded' | 'skipped' | 'without_transcript' | 'failed' | 'not_started' | 'before_since' | 'listed',
      number
    >;
    expect(s.downloaded + s.skipped + s.without_transcript + s.failed + s.not_started + s.before_since).toBe(s.listed);
    expect(s.not_started).toBeGreaterThan(0);
    expect(p.connects(downloadTarget)).toBe(1);
  });

  it('Basic authentication right: a 2,000-row import and every transcript go through a few reused tunnels', async () => {
    const p = await startTinyproxy({ connectPorts: ports() });
    const before = (await t.control('/stats')) as { requests: number };
    const path = csv('tiny', 2000);
    const r = await runCrm(['-o', 'json', 'batch', 'contacts', path, '--chunk-size', '50'], {
      env: through(p),
      timeoutMs: 60_000,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ created: 2000, failed: 0 });
    const counts = await t.countByEmail('tiny');
    expect(counts.size).toBe(2000);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    // 40 batch requests (and the read of the fields before them) in at most a CONNECT per concurrent request
    const log = (await t.control(`/requests?since=${before.requests}`)) as Array<{
      method: string;
      path: string;
      listener: string;
    }>;
    const batches = log.filter((e) => e.method === 'POST' && e.path.endsWith('/contacts/batch')).length;
    expect(batches).toBeGreaterThanOrEqual(40);
    expect(p.connects(apiTarget)).toBeGreaterThan(0);
    expect(p.connects(apiTarget)).toBeLessThanOrEqual(5);

    const out = join(dir, 'transcripts');
    const d = await runCrm(['-o', 'json', 'recordings', 'download', '--dir', out], {
      env: through(p),
      timeoutMs: 60_000,
    });
    expect(d.code, d.stderr).toBe(0);
    const summary = JSON.parse(d.stdout) as { downloaded: number; failed: number };
    const files = readdirSync(out).filter((f) => f.endsWith('.json'));
    const all = (await t.control(`/requests?since=${before.requests}`)) as Array<{
      method: string;
      listener: string;
      status: number;
    }>;
    const downloads = all.filter((e) => e.listener === 'download' && e.status === 200).length;
    expect(summary.failed).toBe(0);
    expect(summary.downloaded).toBeGreaterThan(3);
    expect(files).toHaveLength(summary.downloaded);
    expect(downloads).toBe(summary.downloaded); // every transcript came from the download listener, through the proxy
    expect(p.connects(downloadTarget)).toBeGreaterThan(0);
    expect(p.connects(downloadTarget)).toBeLessThan(summary.downloaded);
  });

  it.each([
    [
      'a wrong password',
      401,
      (p: Tinyproxy) => through(p, 'not-the-pw'),
      'refused the user name and password in HTTPS_PROXY',
    ],
    [
      'no credentials',
      407,
      (p: Tinyproxy) => env({ HTTPS_PROXY: `http://127.0.0.1:${p.port}` }),
      'asked for a user name and password',
    ],
  ])(
    'Basic authentication with %s (tinyproxy answers %i): the proxy authentication failing is said so, never the password',
    async (_what, status, e, words) => {
      const p = await startTinyproxy({ connectPorts: ports() });
      const r = await runCrm(['-v', 'contacts', 'list', '--max', '1'], { env: e(p) });
      expect(r.code).toBe(8);
      expect(r.stderr).toContain(`the proxy http://127.0.0.1:${p.port} (HTTPS_PROXY) ${words}`);
      expect(r.stderr).toContain(
        status === 401 ? "(HTTP 401: the proxy's authentication failed)" : '(HTTP 407: proxy authentication required)',
      );
      expect(r.stderr).not.toMatch(/blocks|administrators|would not open a tunnel/);
      expect(`${r.stdout}${r.stderr}`).not.toMatch(/not-the-pw|pwZq7x9k/);
      expect(p.connects(apiTarget)).toBe(1); // not retried
    },
  );

  it('an import through tinyproxy with a wrong password stops before sending anything, says why, and says no row may have been created; the right one then creates each row once', async () => {
    const p = await startTinyproxy({ connectPorts: ports() });
    const path = csv('wrongpw', 400);
    const before = (await t.control('/stats')) as { requests: number };
    const r = await runCrm(['-o', 'json', 'batch', 'contacts', path, '--chunk-size', '50'], {
      env: through(p, 'not-the-pw'),
    });
    expect(r.code).toBe(8);
    expect(r.stderr).toContain(
      `the proxy http://127.0.0.1:${p.port} (HTTPS_PROXY) refused the user name and password in HTTPS_PROXY`,
    );
    expect(r.stderr).not.toMatch(/may have been created|without an answer|in doubt/i);
    expect(`${r.stdout}${r.stderr}`).not.toMatch(/not-the-pw|pwZq7x9k/);
    expect(((await t.control('/stats')) as { requests: number }).requests).toBe(before.requests); // nothing reached the API
    expect(p.connects(apiTarget)).toBe(1); // the column check's, then it stopped
    const ok = await runCrm(['-o', 'json', 'batch', 'contacts', path, '--chunk-size', '50'], { env: through(p) });
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stderr).not.toMatch(/without an answer|created twice/);
    const counts = await t.countByEmail('wrongpw');
    expect(counts.size).toBe(400);
    expect([...counts.values()].filter((n) => n > 1)).toEqual([]);
  });

  it('tinyproxy killed and started again 300 ms later in the middle of an import: the same run finishes, no duplicate', async () => {
    const first = await startTinyproxy({ connectPorts: ports() });
    const path = csv('restart', 2000);
    await t.control('/faults', { latency_ms: 60 });
    const before = (await t.control('/stats')) as { records: { contacts: number } };
    const child = startCrm(['-o', 'json', 'batch', 'contacts', path, '--chunk-size', '50'], { env: through(first) });
    const run = collect(child, { timeoutMs: 60_000 });
    // once a quarter of the rows are in: kill -9, then the same proxy (same port) again
    let createdAtKill: number;
    for (;;) {
      const now = (await t.control('/stats')) as { records: { contacts: number } };
      createdAtKill = now.records.contacts - before.records.contacts;
      if (createdAtKill >= 500) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    await first.stop('SIGKILL');
    expect(createdAtKill).toBeLessThan(2000); // in the middle of it
    await new Promise((r) => setTimeout(r, 300));
    const again = await startTinyproxy({ connectPorts: ports(), port: first.port });
    // one run: the connections the dead proxy refused were retried with backoff (nothing reached the API)
    const r = await run;
    expect(r.code, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout) as { created: number; failed: number };
    expect(summary).toMatchObject({ created: 2000, failed: 0 });
    const counts = await t.countByEmail('restart');
    expect(counts.size).toBe(2000);
    expect([...counts.values()].filter((n) => n > 1)).toEqual([]);
    expect(again.connects(apiTarget)).toBeGreaterThan(0);
  });

  it('NO_PROXY covering the sandbox host: no CONNECT reaches tinyproxy', async () => {
    const p = await startTinyproxy({ connectPorts: ports() });
    const e = { ...through(p), NO_PROXY: '<-loopback>,127.0.0.1' };
    const list = await runCrm(['-o', 'json', 'recordings', 'list', '--max', '50'], { env: e });
    expect(list.code, list.stderr).toBe(0);
    const rec = (JSON.parse(list.stdout) as Array<{ id: string; transcript_status: string }>).find(
      (x) => x.transcript_status === 'ready',
    );
    const tr = await runCrm(['-o', 'json', 'recordings', 'transcript', rec!.id], { env: e });
    expect(tr.code, tr.stderr).toBe(0);
    const imp = await runCrm(['-o', 'json', 'batch', 'contacts', csv('direct', 150)], { env: e });
    expect(imp.code, imp.stderr).toBe(0);
    expect(p.connects(apiTarget) + p.connects(downloadTarget)).toBe(0);
    expect(p.log()).not.toMatch(/Request \(file descriptor/); // no request of any kind reached it
  });
});
