// Issue 9, class 2 "absurd rate-limit headers": X-RateLimit-Reset as a Unix time in milliseconds, or
// a reset days away, made the pacer wait for years (a timer Node cannot hold fires at once: a busy
// loop flooding stderr with TimeoutOverflowWarning). Now: milliseconds are read as such, a wait
// beyond 5 minutes fails at once (exit 7) saying when to come back, and a long wait is said on stderr.
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { collect, runCrm, startCrm } from '../helpers/run-crm.js';
import { contact, errorEnvelope, json, listPage, startHostile, success, type Hostile } from './server.js';

let h: Hostile;
beforeAll(async () => {
  h = await startHostile();
});
afterAll(async () => h?.close());
beforeEach(() => h.reset());

/** Two pages; the first says the window is spent until `reset` (the header's text). */
function twoPages(reset: () => string): void {
  h.route('GET', '/contacts', (req, res) => {
    if (req.query.get('cursor') === 'p2') {
      json(res, 200, listPage([contact(2)], null, false));
      return;
    }
    json(res, 200, listPage([contact(1)], 'p2', true), {
      'x-ratelimit-limit': '100',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': reset(),
    });
  });
}

const listAll = (extra: string[] = []) =>
  runCrm(['-o', 'ndjson', ...extra, 'contacts', 'list', '--all'], { env: h.env(), timeoutMs: 10_000 });

it('reads an X-RateLimit-Reset in Unix milliseconds as such: waits ~0.3 s, not millennia', async () => {
  twoPages(() => String(Date.now() + 300));
  const started = Date.now();
  const r = await listAll();
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout.trim().split('\n')).toHaveLength(2);
  expect(Date.now() - started).toBeLessThan(5_000);
  expect(r.stderr).not.toMatch(/TimeoutOverflowWarning/);
});

it.each([
  ['seconds from now', () => String(3 * 86_400)],
  ['a Unix time in seconds', () => String(Math.floor(Date.now() / 1000) + 3 * 86_400)],
  ['a Unix time in milliseconds', () => String(Date.now() + 3 * 86_400_000)],
])(
  'fails at once (exit 7) when the window resets days away, given as %s, saying when to come back',
  async (_form, reset) => {
    twoPages(reset);
    const r = await listAll();
    expect(r.code, r.stderr).toBe(7);
    expect(r.stdout.trim().split('\n')).toHaveLength(1); // the first page was printed
    expect(r.stderr).toMatch(/rate limit is used up until the window resets in 3 days \(at 20\d\d-\d\d-\d\dT[\d:]+Z\)/);
    expect(r.stderr).not.toMatch(/TimeoutOverflowWarning/);
    expect(h.log).toHaveLength(1); // nothing more was sent
  },
);

it('fails at once on a Retry-After no timer can hold, without TimeoutOverflowWarning', async () => {
  h.route('GET', '/contacts', (_req, res) =>
    json(res, 429, errorEnvelope('RATE_LIMITED', 'slow down'), { 'retry-after': '99999999999' }),
  );
  const r = await runCrm(['contacts', 'list'], { env: h.env(), timeoutMs: 10_000 });
  expect(r.code, r.stderr).toBe(7);
  expect(r.stderr).toMatch(/try again then/);
  expect(r.stderr).not.toMatch(/TimeoutOverflowWarning/);
});

it('says on stderr that it waits, how long and why (a minute to the reset), and Ctrl-C still stops it', async () => {
  twoPages(() => '60');
  const child = startCrm(['-o', 'ndjson', 'contacts', 'list', '--all'], { env: h.env() });
  const done = collect(child, { timeoutMs: 10_000 });
  let stderr = '';
  await new Promise<void>((resolve) => {
    child.stderr!.on('data', (d: Buffer | string) => {
      stderr += String(d);
      if (/waiting/.test(stderr)) resolve();
    });
  });
  child.kill('SIGINT');
  const r = await done;
  expect(stderr).toMatch(
    /waiting (59|60) s: the rate limit.s window is used up until it frees room \(the server says 0 left, \d+ of ours in flight\)/,
  );
  expect(r.code).toBe(130);
});

it('keeps -q quiet about the wait', async () => {
  twoPages(() => String(Date.now() + 1500));
  const r = await listAll(['-q']);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stderr).toBe('');
});

it('says a wait of a second or more with -v', async () => {
  // the wait said is the reset less what crm took between the answer and its next request (on a loaded
  // machine, a Reset of 1.2 was said "waiting 1.1 s"): 1.5 leaves room for that, and is still a second or more
  twoPages(() => '1.5');
  const r = await listAll(['-v']);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stderr).toMatch(/waiting 1(\.[0-5])? s: the rate limit.s window is used up/);
});

// The transcript downloads have their own pacer (spec: Limits rule 5); the same rules hold there.
function recordings(reset: () => string): void {
  const rec = (n: number) => ({
    id: `rec_${n}`,
    has_transcript: true,
    transcript_status: 'ready',
    transcript_url: `${h.origin}/dl/${n}`,
    started_at: '2026-01-01T00:00:00Z',
  });
  h.route('GET', '/recordings', (_req, res) => json(res, 200, listPage([rec(1), rec(2)], null, false)));
  h.route('GET', /^\/api\/v2\/recordings\/rec_\d$/, (req, res) =>
    json(res, 200, success(rec(Number(req.path.slice(-1))))),
  );
  h.route('GET', /^\/dl\//, (_req, res) =>
    json(
      res,
      200,
      { segments: [] },
      { 'x-ratelimit-limit': '2', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': reset() },
    ),
  );
}

it('transcript downloads: a Reset in Unix milliseconds is a short wait, not millennia', async () => {
  recordings(() => String(Date.now() + 300));
  const dir = `${h.configDir}/t-ms`;
  const r = await runCrm(['recordings', 'download', '--dir', dir, '--concurrency', '2'], {
    env: h.env(),
    timeoutMs: 10_000,
  });
  expect(r.code, r.stderr).toBe(0);
  expect(h.log.filter((q) => q.path.startsWith('/dl/'))).toHaveLength(2);
});

it('transcript downloads: a reset days away fails the rest (exit 9) saying when to come back', async () => {
  recordings(() => String(2 * 86_400));
  const dir = `${h.configDir}/t-days`;
  const r = await runCrm(['-o', 'json', 'recordings', 'download', '--dir', dir, '--concurrency', '2'], {
    env: h.env(),
    timeoutMs: 10_000,
  });
  expect(r.code, r.stderr).toBe(9);
  expect(r.stderr).toMatch(/used up until the window resets in 2 days/);
  expect(h.log.filter((q) => q.path.startsWith('/dl/'))).toHaveLength(1);
});
