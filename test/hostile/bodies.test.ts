// Issue 9, class 2 "bodies without end": a 200 whose body never ends grew crm to 16 GB within the
// default timeout; a 300 MB body was read whole. Now API bodies stop at 64 MiB (exit 8, not retried),
// a Content-Length over the cap is refused before reading, transcripts stop at their own cap, and
// --timeout covers the whole response. Peak memory is measured with /usr/bin/time where it exists.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { CRM_BIN, cleanEnv, collect, runCrm, type CrmResult } from '../helpers/run-crm.js';
import { endlessBody, json, listPage, startHostile, success, type Hostile } from './server.js';

const MiB = 1024 * 1024;
const TIME = '/usr/bin/time';

let h: Hostile;
beforeAll(async () => {
  h = await startHostile();
});
afterAll(async () => h?.close());
beforeEach(() => h.reset());

/** When the server was last asked (a route's handler sets it): a bound on crm's time starts there, not at its start-up, which a loaded machine stretches. */
let asked = 0;

/** crm under GNU time when it is there: the result, and the peak RSS in MiB (undefined without it). */
async function measured(
  args: string[],
  env: Record<string, string | undefined>,
): Promise<CrmResult & { rssMiB?: number }> {
  if (!existsSync(TIME)) return runCrm(args, { env, timeoutMs: 30_000 });
  const child = spawn(TIME, ['-f', 'crm-max-rss-kb=%M', process.execPath, CRM_BIN, ...args], {
    env: cleanEnv(env),
    stdio: 'pipe',
  });
  const r = await collect(child, { timeoutMs: 30_000 });
  const kb = /crm-max-rss-kb=(\d+)/.exec(r.stderr);
  return { ...r, rssMiB: kb ? Math.round(Number(kb[1]) / 1024) : undefined };
}

/** Writes `total` bytes of a JSON-looking body in 64 KiB pieces, as fast as the client reads. */
function bigBody(res: ServerResponse, total: number, headers: Record<string, string> = {}): void {
  res.writeHead(200, { 'content-type': 'application/json', ...headers });
  const piece = Buffer.alloc(64 * 1024, 0x20);
  let sent = 0;
  const pump = (): void => {
    while (!res.destroyed && sent < total) {
      sent += piece.length;
      if (!res.write(piece)) return void res.once('drain', pump);
    }
    if (!res.destroyed) res.end();
  };
  pump();
}

it('stops reading an endless 200 at 64 MiB: exit 8 at once, not retried, memory bounded', async () => {
  // bounded at 512 MiB: before the cap crm read all of it (and then retried)
  h.route('GET', '/contacts', (_req, res) =>
    endlessBody(res, `{"object":"list","data":[${' '.repeat(65_536)}`, 512 * MiB),
  );
  const r = await measured(['contacts', 'list'], h.env());
  expect(r.code, r.stderr).toBe(8);
  expect(r.stderr).toMatch(/the response body passed 64 MiB, the most crm reads/);
  expect(h.log).toHaveLength(1);
  if (r.rssMiB !== undefined) {
    console.log(`endless body: crm peak RSS ${r.rssMiB} MiB`);
    expect(r.rssMiB).toBeLessThan(350);
  }
});

it('refuses a 300 MB body by its Content-Length without reading it', async () => {
  h.route('GET', '/contacts', (_req, res) => {
    asked = Date.now();
    bigBody(res, 300_000_000, { 'content-length': '300000000' });
  });
  const r = await measured(['contacts', 'list'], h.env());
  expect(r.code, r.stderr).toBe(8);
  expect(r.stderr).toMatch(/the response body is 286\.1 MiB \(Content-Length\), over the 64 MiB crm reads; not read/);
  expect(Date.now() - asked).toBeLessThan(5_000);
  if (r.rssMiB !== undefined) {
    console.log(`300 MB body with Content-Length: crm peak RSS ${r.rssMiB} MiB`);
    expect(r.rssMiB).toBeLessThan(200);
  }
});

it('stops a 300 MB chunked body (no Content-Length) at 64 MiB', async () => {
  h.route('GET', '/contacts', (_req, res) => bigBody(res, 300_000_000));
  const r = await measured(['contacts', 'list'], h.env());
  expect(r.code, r.stderr).toBe(8);
  expect(r.stderr).toMatch(/passed 64 MiB/);
  if (r.rssMiB !== undefined) {
    console.log(`300 MB chunked body: crm peak RSS ${r.rssMiB} MiB`);
    expect(r.rssMiB).toBeLessThan(350);
  }
});

it('still reads a large body under the cap (a 20 MB page)', async () => {
  const data = [{ id: 'con_1', note: 'x'.repeat(20_000_000) }];
  h.route('GET', '/contacts', (_req, res) => json(res, 200, listPage(data, null, false)));
  const r = await runCrm(['-o', 'ndjson', '--fields', 'id', 'contacts', 'list'], { env: h.env(), timeoutMs: 30_000 });
  expect(r.code, r.stderr).toBe(0);
  expect(JSON.parse(r.stdout).id).toBe('con_1');
});

it('--timeout covers the whole response: a body that drips forever fails after it (exit 8)', async () => {
  h.route('GET', '/contacts', (_req, res) => {
    asked = Date.now();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"object":"list","data":[');
    const t = setInterval(() => (res.destroyed ? clearInterval(t) : res.write(' ')), 50);
    res.on('close', () => clearInterval(t));
  });
  const r = await runCrm(['--timeout', '1', '--max-retries', '0', 'contacts', 'list'], {
    env: h.env(),
    timeoutMs: 15_000,
  });
  expect(r.code, r.stderr).toBe(8);
  expect(r.stderr).toMatch(/no complete answer within 1 s \(timeout/);
  expect(Date.now() - asked).toBeLessThan(4_000);
});

// Transcripts: a cap of their own (128 MiB), the same reading.
function transcriptRoutes(answer: (res: ServerResponse) => void): void {
  const rec = { id: 'rec_1', has_transcript: true, transcript_status: 'ready', transcript_url: `${h.origin}/dl/1` };
  h.route('GET', '/recordings/rec_1', (_req, res) => json(res, 200, success(rec)));
  h.route('GET', /^\/dl\//, (_req, res) => answer(res));
}

it('refuses a transcript whose Content-Length is over its cap without reading it (exit 8)', async () => {
  transcriptRoutes((res) => {
    asked = Date.now();
    bigBody(res, 300 * MiB, { 'content-length': String(300 * MiB) });
  });
  const r = await measured(['recordings', 'transcript', 'rec_1'], h.env());
  expect(r.code, r.stderr).toBe(8);
  expect(r.stderr).toMatch(
    /the transcript is too large: the response body is 300 MiB \(Content-Length\), over the 128 MiB/,
  );
  expect(Date.now() - asked).toBeLessThan(5_000);
  if (r.rssMiB !== undefined) console.log(`300 MiB transcript with Content-Length: crm peak RSS ${r.rssMiB} MiB`);
});

it('--timeout covers a whole transcript download too', async () => {
  transcriptRoutes((res) => {
    asked = Date.now();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"segments":[');
    const t = setInterval(() => (res.destroyed ? clearInterval(t) : res.write(' ')), 50);
    res.on('close', () => clearInterval(t));
  });
  const r = await runCrm(['--timeout', '1', '--max-retries', '0', 'recordings', 'transcript', 'rec_1'], {
    env: h.env(),
    timeoutMs: 15_000,
  });
  expect(r.code, r.stderr).toBe(8);
  expect(r.stderr).toMatch(/no complete answer within 1 s \(timeout/);
  expect(Date.now() - asked).toBeLessThan(4_000);
});
