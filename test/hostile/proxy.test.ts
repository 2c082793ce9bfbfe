// A company network, end to end: `crm` (the built binary) against the sandbox serving https with a
// CA of its own (`--tls`), through a real CONNECT proxy (./proxy.ts), as an admin behind a
// TLS-inspecting proxy meets it. What is checked is what the proxy sees: only CONNECT to the API's
// host:port, never the key (not in a header, not in the tunnelled bytes), nothing in the clear.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makeSandboxTls } from '../../src/sandbox/tls-cert.js';
import { collect, runCrm, startCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { HAS_TMUX, sh, startTmux } from '../helpers/tmux.js';
import { NO_PROXY_VARS, startProxy, type TestProxy } from './proxy.js';

let tls: TestSandbox;
let plain: TestSandbox;
let proxy: TestProxy;
let caFile: string;
let apiTarget: string;
let downloadTarget: string;

beforeAll(async () => {
  tls = await startTestSandbox({ tls: true, seed: 3, downloadRateLimit: 1000 });
  plain = await startTestSandbox({ seed: 3 });
  caFile = tls.sb.caFile!;
  apiTarget = new URL(tls.sb.url).host;
  downloadTarget = new URL(tls.sb.downloadUrl).host;
});
afterAll(async () => {
  await tls?.close();
  await plain?.close();
});
afterEach(async () => {
  await proxy?.close();
});

function crm(args: string[], extra: Record<string, string | undefined>, sb = tls) {
  return runCrm(['-o', 'json', ...args], { env: { ...sb.env('admin'), ...NO_PROXY_VARS, ...extra } });
}

/** A file in the sandbox's throw-away config folder. */
function writeTemp(name: string, text: string): string {
  const path = join(tls.configDir, name);
  writeFileSync(path, text);
  return path;
}

/** Everything the proxy saw, as one string, to search for the key. */
function proxySawText(p: TestProxy): string {
  return (
    JSON.stringify({ connects: p.seen.connects, plain: p.seen.plain }) +
    Buffer.concat(p.seen.tunnelled).toString('latin1')
  );
}

describe('crm sandbox --tls and NODE_EXTRA_CA_CERTS', () => {
  it('serves https; crm works when NODE_EXTRA_CA_CERTS names the CA file', async () => {
    expect(tls.sb.baseUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/api\/v2$/);
    const r = await crm(['contacts', 'list', '--max', '2'], { NODE_EXTRA_CA_CERTS: caFile });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toHaveLength(2);
  });

  it('`crm sandbox --tls` names its CA file in its start line, serves https, and removes the file on exit', async () => {
    const child = startCrm(['sandbox', '--tls', '--port', '0', '--seed', '5'], { env: NO_PROXY_VARS });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      const line = await new Promise<string>((resolve) =>
        createInterface({ input: child.stdout! }).once('line', resolve),
      );
      const info = JSON.parse(line) as {
        base_url: string;
        download_url: string;
        ca_file: string;
        keys: { admin: string };
      };
      expect(info.base_url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/api\/v2$/);
      expect(info.download_url).toMatch(/^https:\/\//);
      expect(existsSync(info.ca_file)).toBe(true);
      const env = {
        CRM_BASE_URL: info.base_url,
        CRM_API_KEY: info.keys.admin,
        CRM_CONFIG_DIR: tls.configDir,
        ...NO_PROXY_VARS,
      };
      const ok = await runCrm(['-o', 'json', 'contacts', 'list', '--max', '1'], {
        env: { ...env, NODE_EXTRA_CA_CERTS: info.ca_file },
      });
      expect(ok.code, ok.stderr).toBe(0);
      const refused = await runCrm(['-o', 'json', 'contacts', 'list', '--max', '1'], { env });
      expect(refused.code).toBe(8);
      expect(refused.stderr).toContain('NODE_EXTRA_CA_CERTS');
      child.kill('SIGTERM');
      await exited;
      expect(existsSync(info.ca_file)).toBe(false);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it.each([
    ['a file that does not exist', () => '/nonexistent/company-ca.pem', 'which cannot be read (no such file)'],
    ['a folder', () => tls.configDir, 'which cannot be read (a folder, not a file)'],
    [
      'a file with no certificate in it',
      () => writeTemp('not-a-cert.pem', 'hello\n'),
      'which holds no PEM certificate (-----BEGIN CERTIFICATE-----)',
    ],
  ])('NODE_EXTRA_CA_CERTS naming %s: the hint says so, not "set it" (exit 8)', async (_what, file, words) => {
    const path = file();
    const r = await crm(['contacts', 'list', '--max', '1'], { NODE_EXTRA_CA_CERTS: path });
    expect(r.code).toBe(8);
    expect(r.stderr).toMatch(/TLS: the server's certificate is not signed by a CA this machine trusts/);
    expect(r.stderr).toContain(`Hint: NODE_EXTRA_CA_CERTS names ${path}, ${words}`);
  });

  it('NODE_EXTRA_CA_CERTS naming a readable CA that did not sign the server: the hint says it is the wrong CA', async () => {
    const other = writeTemp('other-ca.pem', makeSandboxTls(['127.0.0.1']).caPem);
    const r = await crm(['contacts', 'list', '--max', '1'], { NODE_EXTRA_CA_CERTS: other });
    expect(r.code).toBe(8);
    expect(r.stderr).toContain(
      `Hint: NODE_EXTRA_CA_CERTS names ${other}, but no certificate in it signed this server's`,
    );
  });

  it('without the CA, fails with a TLS error that names NODE_EXTRA_CA_CERTS (exit 8)', async () => {
    const r = await crm(['contacts', 'list', '--max', '2'], { NODE_EXTRA_CA_CERTS: undefined });
    expect(r.code).toBe(8);
    expect(r.stderr).toMatch(/TLS: the server's certificate is not signed by a CA this machine trusts/);
    expect(r.stderr).toMatch(/Hint: .*NODE_EXTRA_CA_CERTS/);
  });
});

describe('through a CONNECT proxy (HTTPS_PROXY)', () => {
  it('tunnels API requests and transcript downloads; the proxy sees only CONNECT host:port, never the key', async () => {
    proxy = await startProxy();
    // `<-loopback>` (Chrome's rule): proxy loopback too, which crm otherwise never does
    const env = { HTTPS_PROXY: proxy.url, NO_PROXY: '<-loopback>', NODE_EXTRA_CA_CERTS: caFile };
    const list = await crm(['recordings', 'list', '--max', '50'], env);
    expect(list.code, list.stderr).toBe(0);
    const rec = (JSON.parse(list.stdout) as Array<{ id: string; transcript_status: string }>).find(
      (x) => x.transcript_status === 'ready',
    );
    const t = await crm(['recordings', 'transcript', rec!.id], env);
    expect(t.code, t.stderr).toBe(0);
    expect(JSON.parse(t.stdout)).toBeTypeOf('object');

    const targets = new Set(proxy.seen.connects.map((c) => c.target));
    expect(targets).toEqual(new Set([apiTarget, downloadTarget]));
    expect(proxy.seen.plain).toEqual([]);
    expect(proxy.seen.tunnelled.length).toBeGreaterThan(0);
    const seen = proxySawText(proxy);
    expect(seen).not.toContain(tls.sb.keys.admin);
    expect(seen).not.toContain(tls.sb.keys.admin.slice(-12));
    expect(seen).not.toMatch(/x-service-api-key/i);
  });

  it('a port policy that refuses the transcript host: the downloads stop at the first, with the proxy\'s message once, exit 8, not "run it again"', async () => {
    proxy = await startProxy({ refuseWith: 403, refuseOnly: downloadTarget });
    const r = await crm(
      ['recordings', 'download', '--dir', join(tls.configDir, 'transcripts-refused'), '--concurrency', '4'],
      {
        HTTPS_PROXY: proxy.url,
        NO_PROXY: '<-loopback>',
        NODE_EXTRA_CA_CERTS: caFile,
      },
    );
    expect(r.code, r.stderr).toBe(8);
    expect(r.stderr.match(/^Error: .*would not open a tunnel to \S+ \(HTTP 403\)/gm), r.stderr).toHaveLength(1);
    expect(r.stderr).toContain(`would not open a tunnel to ${downloadTarget} (HTTP 403)`);
    expect(r.stderr).toContain(`Hint: the API answered, but the proxy blocks ${downloadTarget}`);
    expect(r.stderr).not.toMatch(/run the same command again/i);
    // the first refusal stops the rest: one CONNECT per download that had started, no more
    expect(proxy.seen.connects.filter((c) => c.target === downloadTarget).length).toBeLessThanOrEqual(4);
  });

  it('a refused transcript host: the hint names that host:port, never the base URL, and the summary counts every recording (new-user trial)', async () => {
    proxy = await startProxy({ refuseWith: 403, refuseOnly: downloadTarget });
    const env = { HTTPS_PROXY: proxy.url, NO_PROXY: '<-loopback>', NODE_EXTRA_CA_CERTS: caFile };
    const r = await crm(['recordings', 'download', '--dir', join(tls.configDir, 'transcripts-hint')], env);
    expect(r.code, r.stderr).toBe(8);
    const hint = /^Hint: .*$/m.exec(r.stderr)?.[0] ?? '';
    expect(hint, r.stderr).toContain(`let tunnels to ${downloadTarget} through`);
    expect(hint).not.toMatch(/base URL/);
    // loopback is proxied on purpose (<-loopback>): not "add it to NO_PROXY"
    expect(hint).toContain('127.0.0.1 goes through the proxy because NO_PROXY holds <-loopback>');
    // every recording the API lists is in one count: none left out of the summary
    const listed = await crm(['recordings', 'list', '--all'], { NO_PROXY: '<-loopback>', NODE_EXTRA_CA_CERTS: caFile });
    const total = (JSON.parse(listed.stdout) as unknown[]).length;
    const s = JSON.parse(r.stdout) as Record<
      'downloaded' | 'skipped' | 'without_transcript' | 'failed' | 'not_started' | 'before_since' | 'listed',
      number
    >;
    expect(s.failed).toBe(1);
    expect(s.not_started).toBeGreaterThan(0);
    expect(s.listed).toBe(total);
    expect(s.downloaded + s.skipped + s.without_transcript + s.failed + s.not_started + s.before_since).toBe(total);
  });

  // .ci/run installs tmux and sets CRM_REQUIRE_SHELLS; elsewhere a missing tmux skips it
  it.skipIf(!HAS_TMUX && process.env.CRM_REQUIRE_SHELLS !== '1')(
    'a refused transcript host on an 80-column terminal: the table says what was not started; crm wraps the failure line itself',
    async () => {
      proxy = await startProxy({ refuseWith: 403, refuseOnly: downloadTarget });
      const tm = await startTmux();
      try {
        const env = {
          ...tls.env('admin'),
          ...NO_PROXY_VARS,
          HTTPS_PROXY: proxy.url,
          NO_PROXY: '<-loopback>',
          NODE_EXTRA_CA_CERTS: caFile,
        };
        const pane = await tm.run(`crm recordings download --dir ${sh(join(tls.configDir, 'transcripts-tty'))}`, {
          env,
          height: 50,
        });
        const { status, lines } = await pane.waitExit();
        const screen = lines.join('\n');
        expect(status, screen).toBe(8);
        expect(screen).toMatch(/│ not started +│ \d+ /);
        // the terminal wrapped nothing: every line is one crm wrote (not a failure cut at column 80 with a leading space)
        expect(await pane.capture({ history: true, joinWrapped: true })).toEqual(await pane.capture({ history: true }));
        expect(screen).not.toMatch(/^ \S/m);
      } finally {
        await tm.close();
      }
    },
  );

  it('reads https_proxy in lower case too, and takes the lower-case one first (as curl)', async () => {
    proxy = await startProxy();
    const r = await crm(['contacts', 'list', '--max', '1'], {
      https_proxy: proxy.url,
      HTTPS_PROXY: 'http://127.0.0.1:1',
      NO_PROXY: '<-loopback>',
      NODE_EXTRA_CA_CERTS: caFile,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(proxy.seen.connects.map((c) => c.target)).toEqual([apiTarget]);
  });

  it('never proxies loopback unless NO_PROXY says <-loopback>', async () => {
    proxy = await startProxy();
    const r = await crm(['contacts', 'list', '--max', '1'], { HTTPS_PROXY: proxy.url, NODE_EXTRA_CA_CERTS: caFile });
    expect(r.code, r.stderr).toBe(0);
    expect(proxy.seen.connects).toEqual([]);
  });

  it.each([['127.0.0.1'], ['127.0.0.0/8'], ['*']])('honours NO_PROXY=%s: the request goes direct', async (entry) => {
    proxy = await startProxy();
    const r = await crm(['contacts', 'list', '--max', '1'], {
      HTTPS_PROXY: proxy.url,
      NO_PROXY: `<-loopback>, ${entry}`,
      NODE_EXTRA_CA_CERTS: caFile,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(proxy.seen.connects).toEqual([]);
  });

  it.each([['.0.0.1'], ['0.0.1'], ['*.0.0.1'], ['127.0.0.2'], ['127.0.0.1/32:1']])(
    'NO_PROXY=%s does not match 127.0.0.1: an IP matches only an IP or a CIDR range, never by suffix',
    async (entry) => {
      proxy = await startProxy();
      const r = await crm(['contacts', 'list', '--max', '1'], {
        HTTPS_PROXY: proxy.url,
        NO_PROXY: `<-loopback>,${entry}`,
        NODE_EXTRA_CA_CERTS: caFile,
      });
      expect(r.code, r.stderr).toBe(0);
      expect(proxy.seen.connects.map((c) => c.target)).toEqual([apiTarget]);
    },
  );

  it('honours NO_PROXY host:port only for that port', async () => {
    proxy = await startProxy();
    const other = await crm(['contacts', 'list', '--max', '1'], {
      HTTPS_PROXY: proxy.url,
      NO_PROXY: '<-loopback>,127.0.0.1:1',
      NODE_EXTRA_CA_CERTS: caFile,
    });
    expect(other.code, other.stderr).toBe(0);
    expect(proxy.seen.connects.map((c) => c.target)).toEqual([apiTarget]);
    const same = await crm(['contacts', 'list', '--max', '1'], {
      HTTPS_PROXY: proxy.url,
      NO_PROXY: `<-loopback>,${apiTarget}`,
      NODE_EXTRA_CA_CERTS: caFile,
    });
    expect(same.code, same.stderr).toBe(0);
    expect(proxy.seen.connects).toHaveLength(1);
  });

  it('never sends an http:// (loopback) base URL to a proxy: the key would travel in the clear', async () => {
    proxy = await startProxy();
    const r = await crm(
      ['contacts', 'list', '--max', '1'],
      { HTTP_PROXY: proxy.url, http_proxy: proxy.url, HTTPS_PROXY: proxy.url, NO_PROXY: '<-loopback>' },
      plain,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(proxy.seen.plain).toEqual([]);
    expect(proxy.seen.connects).toEqual([]);
  });

  it('sends the proxy user name and password from the URL, to the proxy only', async () => {
    proxy = await startProxy({ auth: { user: 'alice', password: 'p@ss:w/rd' } });
    const r = await crm(['contacts', 'list', '--max', '1'], {
      HTTPS_PROXY: `http://alice:${encodeURIComponent('p@ss:w/rd')}@127.0.0.1:${proxy.port}`,
      NO_PROXY: '<-loopback>',
      NODE_EXTRA_CA_CERTS: caFile,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(proxy.seen.connects[0]!.headers['proxy-authorization']).toBe(
      `Basic ${Buffer.from('alice:p@ss:w/rd').toString('base64')}`,
    );
    expect(proxySawText(proxy)).not.toContain(tls.sb.keys.admin);
  });

  it('-v says for each request whether it went through the proxy (its password masked) or direct, and why', async () => {
    proxy = await startProxy({ auth: { user: 'alice', password: 'p@ss' } });
    const HTTPS_PROXY = `http://alice:${encodeURIComponent('p@ss')}@127.0.0.1:${proxy.port}`;
    const base = { HTTPS_PROXY, NODE_EXTRA_CA_CERTS: caFile };
    const line = (r: { stderr: string }) => r.stderr.split('\n').find((l) => l.startsWith('GET '));
    const through = await crm(['-v', 'contacts', 'list', '--max', '1'], { ...base, NO_PROXY: '<-loopback>' });
    expect(through.code, through.stderr).toBe(0);
    expect(line(through)).toMatch(
      new RegExp(` 200 \\d+ ms via proxy http://alice:\\*\\*\\*\\*@127\\.0\\.0\\.1:${proxy.port} \\(HTTPS_PROXY\\)$`),
    );
    expect(through.stderr).not.toMatch(/p@ss|p%40ss/);
    const bypassed = await crm(['-v', 'contacts', 'list', '--max', '1'], {
      ...base,
      NO_PROXY: '<-loopback>,127.0.0.1',
    });
    expect(line(bypassed)).toMatch(/ 200 \d+ ms direct \(NO_PROXY\)$/);
    const loopback = await crm(['-v', 'contacts', 'list', '--max', '1'], base);
    expect(line(loopback)).toMatch(/ 200 \d+ ms direct \(loopback is not proxied without <-loopback> in NO_PROXY\)$/);
    const http = await crm(['-v', 'contacts', 'list', '--max', '1'], { ...base, NO_PROXY: '<-loopback>' }, plain);
    expect(line(http)).toMatch(/ 200 \d+ ms direct \(http:\/\/ is never proxied\)$/);
    const none = await crm(['-v', 'contacts', 'list', '--max', '1'], { NODE_EXTRA_CA_CERTS: caFile });
    expect(line(none)).toMatch(/ 200 \d+ ms$/); // no proxy variable: nothing to say
    expect(proxy.seen.connects).toHaveLength(1);
  });

  it.each([407, 401])(
    '%i to CONNECT without credentials: the proxy asked for a user name and password, how to give them (exit 8, not retried)',
    async (status) => {
      proxy = await startProxy({ auth: { user: 'alice', password: 'secret', missing: status } });
      const r = await crm(['contacts', 'list'], {
        HTTPS_PROXY: proxy.url,
        NO_PROXY: '<-loopback>',
        NODE_EXTRA_CA_CERTS: caFile,
      });
      expect(r.code).toBe(8);
      expect(r.stderr).toContain(
        `the proxy ${proxy.url} (HTTPS_PROXY) asked for a user name and password, and HTTPS_PROXY gives none (HTTP ${status}: proxy authentication required)`,
      );
      expect(r.stderr).toContain(
        `Hint: put the proxy's user name and password in HTTPS_PROXY: http://USER:PASSWORD@127.0.0.1:${proxy.port}`,
      );
      expect(r.stderr).not.toMatch(/blocks|network administrators|would not open a tunnel/);
      expect(proxy.seen.connects).toHaveLength(1); // not retried
    },
  );

  it.each([407, 401])(
    '%i to CONNECT with wrong credentials: the proxy refused them; the user named, never the password (exit 8, not retried)',
    async (status) => {
      proxy = await startProxy({ auth: { user: 'alice', password: 'secret', wrong: status } });
      const r = await crm(['-v', 'contacts', 'list'], {
        HTTPS_PROXY: `http://alice:wr%40ngpass@127.0.0.1:${proxy.port}`,
        NO_PROXY: '<-loopback>',
        NODE_EXTRA_CA_CERTS: caFile,
      });
      expect(r.code).toBe(8);
      expect(r.stderr).toContain(
        `the proxy http://127.0.0.1:${proxy.port} (HTTPS_PROXY) refused the user name and password in HTTPS_PROXY (HTTP ${status}: the proxy's authentication failed)`,
      );
      expect(r.stderr).toContain(
        `Hint: check the password and the user name (alice) in HTTPS_PROXY: http://USER:PASSWORD@127.0.0.1:${proxy.port}`,
      );
      expect(r.stderr).not.toMatch(/wr@ngpass|wr%40ngpass|ngpass/);
      expect(r.stderr).not.toMatch(/blocks|network administrators|would not open a tunnel/);
      expect(proxy.seen.connects).toHaveLength(1);
    },
  );

  it('a proxy that refuses the tunnel is named as such', async () => {
    proxy = await startProxy({ refuseWith: 403 });
    const r = await crm(['contacts', 'list'], {
      HTTPS_PROXY: proxy.url,
      NO_PROXY: '<-loopback>',
      NODE_EXTRA_CA_CERTS: caFile,
    });
    expect(r.code).toBe(8);
    expect(r.stderr).toContain(`would not open a tunnel to ${apiTarget} (HTTP 403)`);
  });

  it('a proxy that refuses the tunnels of an import (403 to every CONNECT after the first): it stops at once, its rows not sent, never "may have been created"; the rerun creates each row once', async () => {
    proxy = await startProxy({ refuseWith: 403, refuseAfter: 1 });
    const rows = Array.from({ length: 300 }, (_, i) => `refused.${i + 1}@example.com,Row${i + 1}`);
    const path = writeTemp('proxy-refused.csv', `email,first_name\n${rows.join('\n')}\n`);
    const env = { ...tls.env('admin'), ...NO_PROXY_VARS, NO_PROXY: '<-loopback>', NODE_EXTRA_CA_CERTS: caFile };
    await tls.control('/faults', { latency_ms: 40 }); // the chunks overlap: each needs a tunnel of its own
    try {
      const r = await runCrm(['-o', 'json', 'batch', 'contacts', path, '--chunk-size', '25', '--concurrency', '4'], {
        env: { ...env, HTTPS_PROXY: proxy.url },
      });
      expect(r.code, r.stderr).toBe(8);
      expect(r.stderr).toContain(`would not open a tunnel to ${apiTarget} (HTTP 403)`);
      expect(r.stderr).not.toMatch(/may have been created|without an answer|in doubt/i);
      const summary = JSON.parse(r.stdout) as { created: number; in_doubt: number; not_sent: number };
      expect(summary.in_doubt).toBe(0);
      expect(summary.created + summary.not_sent).toBe(300);
      expect(summary.not_sent).toBeGreaterThan(0);
      // through a proxy that lets it: no chunk of the first run is in doubt, each row created once
      await proxy.close();
      proxy = await startProxy();
      const again = await runCrm(['-o', 'json', 'batch', 'contacts', path, '--chunk-size', '25'], {
        env: { ...env, HTTPS_PROXY: proxy.url },
      });
      expect(again.code, again.stderr).toBe(0);
      expect(again.stderr).not.toMatch(/without an answer|created twice/);
      const counts = await tls.countByEmail('refused');
      expect(counts.size).toBe(300);
      expect([...counts.values()].filter((n) => n > 1)).toEqual([]);
    } finally {
      await tls.control('/faults', { latency_ms: 0 });
    }
  });

  it('a proxy gone mid-import (its tunnels reset, then refused): chunks it cut off after sending are in doubt, never "not sent"; those it refused are; the rerun creates each row once', async () => {
    proxy = await startProxy();
    const rows = Array.from({ length: 200 }, (_, i) => `gone.${i + 1}@example.com,Row${i + 1}`);
    const path = writeTemp('proxy-gone.csv', `email,first_name\n${rows.join('\n')}\n`);
    const env = {
      ...tls.env('admin'),
      ...NO_PROXY_VARS,
      HTTPS_PROXY: proxy.url,
      NO_PROXY: '<-loopback>',
      NODE_EXTRA_CA_CERTS: caFile,
    };
    const stats = async () => ((await tls.control('/stats')) as { records: { contacts: number } }).records.contacts;
    await tls.control('/faults', { latency_ms: 400 }); // chunks in flight when the proxy goes
    try {
      const before = await stats();
      const child = startCrm(
        ['-o', 'json', '--max-retries', '2', 'batch', 'contacts', path, '--chunk-size', '10', '--concurrency', '2'],
        {
          env,
        },
      );
      const run = collect(child, { timeoutMs: 60_000 });
      while ((await stats()) - before < 40) await new Promise((r) => setTimeout(r, 20));
      // the chunks answered so far were run; wait until the next ones are written into the tunnels (they
      // then wait the 400 ms latency at the server), so the reset cuts requests sent, not the gap between two
      const mark = proxy.seen.tunnelled.length;
      while (proxy.seen.tunnelled.length === mark) await new Promise((r) => setTimeout(r, 5));
      await new Promise((r) => setTimeout(r, 50));
      const back = proxy.restart(8_000); // every tunnel reset now (the chunks in flight cut off mid-request), refused for 8 s
      const r = await run;
      expect(r.code, r.stderr).toBe(8);
      const summary = JSON.parse(r.stdout) as { created: number; in_doubt: number; not_sent: number; rows: number };
      await tls.control('/faults', { latency_ms: 0 });
      await new Promise((res) => setTimeout(res, 500)); // the cut-off requests the sandbox still runs
      const applied = (await stats()) - before;
      // every row the server created is created or in doubt: none of them is called "not sent"
      expect(applied).toBeLessThanOrEqual(summary.created + summary.in_doubt);
      expect(summary.in_doubt).toBeGreaterThan(0);
      expect(summary.not_sent).toBeGreaterThan(0);
      await back;
      const again = await runCrm(['-o', 'json', 'batch', 'contacts', path, '--chunk-size', '10'], { env });
      expect(again.code, again.stderr).toBe(0);
      const counts = await tls.countByEmail('gone');
      expect(counts.size).toBe(200);
      expect([...counts.values()].filter((n) => n > 1)).toEqual([]);
    } finally {
      await tls.control('/faults', { latency_ms: 0 });
    }
  });

  it('a proxy restarted mid-import (its tunnels reset, connections refused for 1 s): the same run finishes, each row once', async () => {
    proxy = await startProxy();
    const rows = Array.from({ length: 600 }, (_, i) => `restart.${i + 1}@example.com,Row${i + 1}`);
    const path = writeTemp('proxy-restart.csv', `email,first_name\n${rows.join('\n')}\n`);
    const stats = async () => ((await tls.control('/stats')) as { records: { contacts: number } }).records.contacts;
    await tls.control('/faults', { latency_ms: 40 });
    try {
      const before = await stats();
      const child = startCrm(['-v', '-o', 'json', 'batch', 'contacts', path, '--chunk-size', '25'], {
        env: {
          ...tls.env('admin'),
          ...NO_PROXY_VARS,
          HTTPS_PROXY: proxy.url,
          NO_PROXY: '<-loopback>',
          NODE_EXTRA_CA_CERTS: caFile,
        },
      });
      const run = collect(child, { timeoutMs: 60_000 });
      while ((await stats()) - before < 150) await new Promise((r) => setTimeout(r, 20));
      const connectsBefore = proxy.seen.connects.length;
      await proxy.restart(1_000);
      const r = await run;
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ created: 600, failed: 0 });
      // the refused connections were retried (POST: nothing reached the API), and went through the proxy again
      expect(r.stderr).toMatch(/POST \S+\/contacts\/batch PROXY_REFUSED \d+ ms/);
      expect(proxy.seen.connects.length).toBeGreaterThan(connectsBefore);
      const counts = await tls.countByEmail('restart');
      expect(counts.size).toBe(600);
      expect([...counts.values()].filter((n) => n > 1)).toEqual([]);
    } finally {
      await tls.control('/faults', { latency_ms: 0 });
    }
  });

  it('an unreachable proxy is named as such, not as the API being down, after the retries', async () => {
    proxy = await startProxy();
    await proxy.close(); // its port is now closed
    const r = await crm(['--max-retries', '2', 'contacts', 'list'], {
      HTTPS_PROXY: `http://u:hidden@127.0.0.1:${proxy.port}`,
      NO_PROXY: '<-loopback>',
      NODE_EXTRA_CA_CERTS: caFile,
    });
    expect(r.code).toBe(8);
    expect(r.stderr).toContain(
      `cannot reach the proxy http://127.0.0.1:${proxy.port} (HTTPS_PROXY): connection refused (gave up after 2 retries: --max-retries 2)`,
    );
    expect(r.stderr).toContain('Hint: check HTTPS_PROXY');
    expect(r.stderr).not.toContain('hidden');
  });

  it.each([
    [
      'a bare % in the password',
      (port: number) => `http://alice:50%off@127.0.0.1:${port}`,
      'a % in its user name or password that is not percent-encoding',
    ],
    [
      'a % not followed by two hex digits in the user name',
      (port: number) => `http://a%zz:pw@127.0.0.1:${port}`,
      'write %25',
    ],
    ['a stray % after the port', (port: number) => `http://127.0.0.1:${port}%`, `a stray % in 127.0.0.1:`],
    ['a port that is no number', () => `http://127.0.0.1:80x`, 'its port (80x) is not a number'],
    ['a path', (port: number) => `http://127.0.0.1:${port}/proxy`, 'has a path (/proxy)'],
    ['a query', (port: number) => `http://127.0.0.1:${port}/?x=1`, 'has a query or fragment'],
    ['a fragment', (port: number) => `http://127.0.0.1:${port}#f`, 'has a query or fragment'],
  ])('a proxy URL with %s is a usage error naming the variable (exit 2), nothing sent', async (_what, value, words) => {
    proxy = await startProxy();
    const r = await crm(['contacts', 'list'], {
      HTTPS_PROXY: value(proxy.port),
      NO_PROXY: '<-loopback>',
      NODE_EXTRA_CA_CERTS: caFile,
    });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/^Error: HTTPS_PROXY /);
    expect(r.stderr).toContain(words);
    expect(r.stderr).not.toMatch(/50%off|pw@/);
    expect(proxy.seen.connects).toEqual([]);
  });

  it('refuses a proxy URL it cannot use before sending anything (exit 2)', async () => {
    const r = await crm(['contacts', 'list'], { HTTPS_PROXY: 'socks5://127.0.0.1:1080', NO_PROXY: '<-loopback>' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('HTTPS_PROXY uses socks5://; crm supports http:// and https:// proxies');
  });
});

describe('network errors name their class and the next step', () => {
  it('DNS failure', async () => {
    const r = await crm(['contacts', 'list'], { CRM_BASE_URL: 'https://api.crm-test.invalid/api/v2' });
    expect(r.code).toBe(8);
    expect(r.stderr).toMatch(/host not found: api\.crm-test\.invalid \(DNS lookup failed/);
    expect(r.stderr).toMatch(/Hint: check the host name in the base URL; .*HTTPS_PROXY/);
  });

  it('DNS failure of a host that went direct because it matched NO_PROXY: the hint says so, and never to set HTTPS_PROXY (set)', async () => {
    const env = {
      CRM_BASE_URL: 'https://api.crm-test.invalid/api/v2',
      HTTPS_PROXY: 'http://127.0.0.1:9',
      NO_PROXY: 'crm-test.invalid',
    };
    const r = await crm(['contacts', 'list', '-v'], env);
    expect(r.code, r.stderr).toBe(8);
    expect(r.stderr).toContain('direct (NO_PROXY)');
    expect(r.stderr).toMatch(/host not found: api\.crm-test\.invalid/);
    expect(r.stderr).toContain(
      'api.crm-test.invalid matches crm-test.invalid in NO_PROXY, so crm connected directly, not through HTTPS_PROXY',
    );
    expect(r.stderr).toContain('remove crm-test.invalid from NO_PROXY');
    expect(r.stderr).not.toMatch(/set HTTPS_PROXY/);
    // lower-case names are named as they are set
    const lower = await crm(['contacts', 'list'], {
      ...env,
      HTTPS_PROXY: undefined,
      NO_PROXY: undefined,
      https_proxy: env.HTTPS_PROXY,
      no_proxy: '*',
    });
    expect(lower.stderr).toContain('matches * in no_proxy, so crm connected directly, not through https_proxy');
  });

  it('connection refused', async () => {
    proxy = await startProxy();
    await proxy.close();
    const r = await crm(['contacts', 'list'], { CRM_BASE_URL: `https://127.0.0.1:${proxy.port}/api/v2` });
    expect(r.code).toBe(8);
    expect(r.stderr).toContain(`connection refused by 127.0.0.1:${proxy.port}`);
    expect(r.stderr).toContain('Hint: is the server running, and is the port in the base URL right?');
  });
});

describe("the hint on a proxy's refusal (a port policy's 403) suggests NO_PROXY only where it would help (new-user trial)", () => {
  const refused = async (baseUrl: string | undefined, vars: Record<string, string>) => {
    proxy = await startProxy({ refuseWith: 403 });
    const r = await crm(['contacts', 'list'], {
      ...(baseUrl ? { CRM_BASE_URL: baseUrl } : {}),
      HTTPS_PROXY: proxy.url,
      NODE_EXTRA_CA_CERTS: caFile,
      ...vars,
    });
    expect(r.code, r.stderr).toBe(8);
    expect(r.stderr).toMatch(/would not open a tunnel to \S+ \(HTTP 403\)/);
    return { hint: /^Hint: (.*)$/m.exec(r.stderr)?.[1] ?? '', connects: proxy.seen.connects.map((c) => c.target) };
  };

  it('a host NO_PROXY does not cover: add it to NO_PROXY', async () => {
    const { hint, connects } = await refused('https://crm.example.test/api/v2', {
      NO_PROXY: '<-loopback>,other.example',
    });
    expect(connects).toEqual(['crm.example.test:443']);
    expect(hint).toMatch(/; if crm\.example\.test is reachable without the proxy, add it to NO_PROXY$/);
  });

  it('loopback sent through the proxy on purpose (NO_PROXY=<-loopback>): no "add it to NO_PROXY", but why it went through the proxy', async () => {
    const { hint, connects } = await refused(undefined, { NO_PROXY: '<-loopback>' });
    expect(connects).toEqual([apiTarget]);
    expect(hint).not.toMatch(/add it to NO_PROXY/);
    expect(hint).toMatch(/127\.0\.0\.1 goes through the proxy because NO_PROXY holds <-loopback>/);
  });

  it('NO_PROXY lists the host for another port: says so, not "add it"', async () => {
    const { hint, connects } = await refused('https://crm.example.test/api/v2', { NO_PROXY: 'crm.example.test:8443' });
    expect(connects).toEqual(['crm.example.test:443']);
    expect(hint).not.toMatch(/add it to NO_PROXY/);
    expect(hint).toMatch(/NO_PROXY lists crm\.example\.test:8443, for port 8443 only; this request is to port 443$/);
  });

  it('NO_PROXY lists the host but no_proxy is set (crm reads it first, as curl): says so', async () => {
    const { hint, connects } = await refused('https://crm.example.test/api/v2', {
      NO_PROXY: '.example.test',
      no_proxy: 'localhost',
    });
    expect(connects).toEqual(['crm.example.test:443']);
    expect(hint).not.toMatch(/add it to NO_PROXY/);
    expect(hint).toMatch(
      /NO_PROXY lists \.example\.test, but no_proxy is set and crm reads it instead \(as curl does\): put \.example\.test in no_proxy$/,
    );
  });
});
