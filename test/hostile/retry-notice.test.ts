// The wait notice before a retry ("waiting 2.3 s: retry 3 after …"), end to end: it names what went
// wrong in plain words (the proxy refused the connection, connection reset, HTTP 503), never an
// internal code (PROXY_REFUSED, ECONNRESET, UND_ERR_SOCKET), and fits one line of 80 columns.
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCrm, startCrm } from '../helpers/run-crm.js';
import { NO_PROXY_VARS, startProxy, type TestProxy } from './proxy.js';
import { contact, json, listPage, startHostile, errorEnvelope, type Hostile } from './server.js';

/** an internal code: PROXY_REFUSED, ECONNRESET, UND_ERR_SOCKET, … */
const CODE = /\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b|\bE[A-Z]{4,}\b/;

let h: Hostile;
let proxy: TestProxy | undefined;
let child: ChildProcess | undefined;
beforeAll(async () => {
  h = await startHostile();
});
afterAll(async () => h?.close());
afterEach(async () => {
  child?.kill('SIGKILL');
  child = undefined;
  await proxy?.close();
  proxy = undefined;
  h.reset();
});

/** Runs crm until its first wait notice on standard error; that line (crm is then stopped). */
async function firstNotice(
  args: string[],
  env: Record<string, string | undefined>,
): Promise<{ notice: string; before: string[] }> {
  child = startCrm(args, { env });
  const before: string[] = [];
  const lines = createInterface({ input: child.stderr! });
  for await (const line of lines) {
    if (line.startsWith('waiting ')) return { notice: line, before };
    before.push(line);
  }
  throw new Error(`no wait notice; standard error:\n${before.join('\n')}`);
}

describe('the wait notice before a retry says what failed in plain words', () => {
  it('through a proxy that refuses connections: "after the proxy refused the connection", not PROXY_REFUSED (the -v request line keeps the code)', async () => {
    proxy = await startProxy();
    await proxy.close(); // its port now refuses connections
    const env = {
      ...NO_PROXY_VARS,
      CRM_BASE_URL: 'https://crm.example.test/api/v2',
      CRM_API_KEY: 'service_live_x',
      HTTPS_PROXY: proxy.url,
    };
    // -v: waits from 1 s are said (the backoff is random: the first of 1 s or more comes within a few retries)
    const { notice, before } = await firstNotice(['-v', '--max-retries', '12', 'contacts', 'list'], env);
    expect(notice).toMatch(/^waiting [\d.]+ s: retry \d+ after the proxy refused the connection$/);
    expect(notice).not.toMatch(CODE);
    expect(notice.length).toBeLessThanOrEqual(80);
    expect(
      before.some((l) => / PROXY_REFUSED \d+ ms/.test(l)),
      before.join('\n'),
    ).toBe(true);
  });

  it('a server that resets the connection: "after connection reset", not UND_ERR_SOCKET or ECONNRESET', async () => {
    h.route('GET', '/contacts', (_req, res) => void res.socket?.resetAndDestroy());
    const { notice } = await firstNotice(['-v', '--max-retries', '12', 'contacts', 'list'], h.env(NO_PROXY_VARS));
    expect(notice).toMatch(/^waiting [\d.]+ s: retry \d+ after connection reset$/);
    expect(notice).not.toMatch(CODE);
    expect(h.log.length).toBeGreaterThan(1); // the server saw the retries
  });

  it('a 503 with Retry-After: 5, without -v: "waiting 5 s: retry 1 after HTTP 503", then the list', async () => {
    h.route('GET', '/contacts', (_req, res, ctx) =>
      ctx.count === 0
        ? json(res, 503, errorEnvelope('UNAVAILABLE', 'down for a moment'), { 'retry-after': '5' })
        : json(res, 200, listPage([contact(1)], null, false)),
    );
    const r = await runCrm(['-o', 'json', 'contacts', 'list'], { env: h.env(NO_PROXY_VARS) });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr.trim()).toBe('waiting 5 s: retry 1 after HTTP 503');
    expect(h.log.filter((q) => q.path.endsWith('/contacts'))).toHaveLength(2);
  });
});
