// Issue 17, "proxies that misbehave": a proxy that closed the connection on CONNECT made crm reconnect
// thousands of times a second for ever; one that never answered CONNECT hung it for ever; --timeout,
// --max-retries and the first SIGTERM were ignored. A dropped, silent or garbled tunnel is now a
// network failure like any other: each attempt bounded by --timeout, retried with backoff up to
// --max-retries (CONNECTs counted here: max-retries + 1), exit 8 naming the proxy; a signal stops it at once.
import { afterEach, describe, expect, it } from 'vitest';
import { collect, runCrm, startCrm } from '../helpers/run-crm.js';
import { HOSTILE_KEY } from './server.js';
import { startProxy, type TestProxy } from './proxy.js';

let proxy: TestProxy | undefined;
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});

/** an https API the proxy is asked to tunnel to (it never resolves it: nothing goes direct) */
const TARGET = 'api.crm-test.invalid:443';

function env(p: TestProxy, extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return {
    CRM_BASE_URL: `https://${TARGET.replace(/:443$/, '')}/api/v2`,
    CRM_API_KEY: HOSTILE_KEY,
    CRM_CONFIG_DIR: `/tmp/crm-proxy-misbehaving-${process.pid}`,
    HTTPS_PROXY: `http://user:s3cret@127.0.0.1:${p.port}`,
    https_proxy: undefined,
    NO_PROXY: undefined,
    no_proxy: undefined,
    ...extra,
  };
}

const WHAT = {
  drop: `closed the connection while opening a tunnel to ${TARGET} (CONNECT)`,
  silent: `did not answer the request to open a tunnel to ${TARGET} within 1 s (CONNECT)`,
  garbage: `answered the request to open a tunnel to ${TARGET} with something that is not HTTP (CONNECT)`,
} as const;

describe('a proxy that misbehaves on CONNECT', () => {
  it.each(['drop', 'silent', 'garbage'] as const)(
    '%s: bounded by --timeout, retried up to --max-retries, exit 8 naming the proxy',
    async (kind) => {
      proxy = await startProxy({ misbehave: kind });
      const started = Date.now();
      const r = await runCrm(['--timeout', '1', '--max-retries', '2', 'contacts', 'list'], {
        env: env(proxy),
        timeoutMs: 15_000,
      });
      expect(r.code, r.stderr).toBe(8);
      expect(r.stderr).toContain(`the proxy http://127.0.0.1:${proxy.port} (HTTPS_PROXY) ${WHAT[kind]}`);
      expect(r.stderr).toContain('(gave up after 2 retries: --max-retries 2)');
      expect(r.stderr).toContain(
        `Hint: ${kind === 'garbage' ? `is http://127.0.0.1:${proxy.port} an HTTP proxy? ` : ''}check HTTPS_PROXY`,
      );
      expect(r.stderr).not.toContain('s3cret');
      expect(proxy.seen.connects.map((c) => c.target)).toEqual([TARGET, TARGET, TARGET]);
      // three attempts of at most 1 s, two backoffs of at most 0.5 s and 1 s, start-up
      expect(Date.now() - started).toBeLessThan(8_000);
    },
  );

  it.each([
    ['silent', 'SIGTERM'],
    ['silent', 'SIGINT'],
    ['drop', 'SIGTERM'],
  ] as const)('%s: the first %s stops it at once (exit 130)', async (kind, signal) => {
    proxy = await startProxy({ misbehave: kind });
    const child = startCrm(['--max-retries', '50', 'contacts', 'list'], { env: env(proxy) });
    const done = collect(child, { timeoutMs: 15_000 });
    while (proxy.seen.connects.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    const signalled = Date.now();
    child.kill(signal);
    const r = await done;
    expect(Date.now() - signalled).toBeLessThan(1_500);
    expect(r.code, r.stderr).toBe(130);
    expect(proxy.seen.connects.length).toBeLessThan(10);
  });
});
