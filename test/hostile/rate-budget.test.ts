// Issue 9, class 8: a 429 with Retry-After is "later", not "never" (CONTRACT §4). It is waited out,
// any method, whatever --max-retries says, for as long as the request's total wait stays within the
// budget (10 minutes; CRM_RATE_LIMIT_BUDGET shrinks it here); after that, exit 7.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { runCrm } from '../helpers/run-crm.js';
import { contact, errorEnvelope, json, startHostile, success, type Hostile } from './server.js';

let h: Hostile;
beforeAll(async () => {
  h = await startHostile();
});
afterAll(async () => h?.close());
beforeEach(() => h.reset());

const tooMany = (res: Parameters<typeof json>[0]) =>
  json(res, 429, errorEnvelope('RATE_LIMITED', 'too many requests'), { 'retry-after': '0.05' });

it('a GET answered 429 (Retry-After: 0.05) twenty times, then 200, succeeds', async () => {
  h.route('GET', '/contacts/con_000001', (_req, res, ctx) =>
    ctx.count < 20 ? tooMany(res) : json(res, 200, success(contact(1))),
  );
  const r = await runCrm(['-o', 'json', 'contacts', 'get', 'con_000001'], { env: h.env(), timeoutMs: 15_000 });
  expect(r.code, r.stderr).toBe(0);
  expect(JSON.parse(r.stdout).id).toBe('con_000001');
  expect(h.log).toHaveLength(21);
});

it('a POST is retried the same way, with the same Idempotency-Key', async () => {
  h.route('POST', '/contacts', (_req, res, ctx) =>
    ctx.count < 8 ? tooMany(res) : json(res, 201, success(contact(2))),
  );
  const r = await runCrm(['-o', 'json', 'contacts', 'create', '--set', 'email=c2@example.com'], {
    env: h.env(),
    timeoutMs: 15_000,
  });
  expect(r.code, r.stderr).toBe(0);
  const keys = new Set(h.log.map((q) => q.headers['idempotency-key']));
  expect(h.log).toHaveLength(9);
  expect(keys.size).toBe(1);
});

it('a route that always answers 429 gives exit 7 once the (shrunk) budget is spent, saying so', async () => {
  h.route('GET', '/contacts/con_000001', (_req, res) => tooMany(res));
  const r = await runCrm(['contacts', 'get', 'con_000001'], {
    env: h.env({ CRM_RATE_LIMIT_BUDGET: '0.5' }),
    timeoutMs: 15_000,
  });
  expect(r.code, r.stderr).toBe(7);
  // each wait costs at least 0.1 s of the budget (a Retry-After of 1 ms for ever still ends)
  expect(r.stderr).toMatch(/gave up after 5 retries: the rate-limit budget is spent/);
  expect(r.stderr).toMatch(
    /after 5 waits for Retry-After \(0\.5 s\), the server asks to wait 0\.1 s \(Retry-After\) and nothing is left of the rate-limit budget/,
  );
  expect(h.log).toHaveLength(6);
});

it('a Retry-After longer than the budget says so at once, naming CRM_RATE_LIMIT_BUDGET; --concurrency only where it exists', async () => {
  h.route('GET', '/contacts/con_000001', (_req, res) =>
    json(res, 429, errorEnvelope('RATE_LIMITED', 'slow down'), { 'retry-after': '30' }),
  );
  const r = await runCrm(['contacts', 'get', 'con_000001'], {
    env: h.env({ CRM_RATE_LIMIT_BUDGET: '10' }),
    timeoutMs: 15_000,
  });
  expect(r.code, r.stderr).toBe(7);
  expect(r.stderr).toMatch(
    /the server asks to wait 30 s \(Retry-After\) and only 10 s is left of the rate-limit budget for one request \(10 s in all; CRM_RATE_LIMIT_BUDGET sets it/,
  );
  expect(r.stderr).not.toMatch(/0 waits|--concurrency/);
  expect(h.log).toHaveLength(1);

  h.route('POST', '/contacts/batch', (_req, res) =>
    json(res, 429, errorEnvelope('RATE_LIMITED', 'slow down'), { 'retry-after': '30' }),
  );
  const dir = mkdtempSync(join(tmpdir(), 'crm-rate-budget-'));
  const file = join(dir, 'r.csv');
  writeFileSync(file, `email\n${[1, 2, 3, 4, 5].map((i) => `r${i}@example.com`).join('\n')}\n`);
  // five chunks in a row failing stop the import, showing the last one's error and hint
  const b = await runCrm(['batch', 'contacts', file, '--chunk-size', '1', '--concurrency', '1'], {
    env: h.env({ CRM_RATE_LIMIT_BUDGET: '10' }),
    timeoutMs: 15_000,
  });
  rmSync(dir, { recursive: true, force: true });
  expect(b.code, b.stderr).toBe(7);
  expect(b.stderr).toMatch(/asks to wait 30 s \(Retry-After\) and only 10 s is left.*, or lower --concurrency/);
});

it('a 429 without a positive Retry-After stops at --max-retries, and the message names that rule', async () => {
  for (const headers of [{}, { 'retry-after': '0' }] as Array<Record<string, string>>) {
    h.reset();
    h.route('GET', '/contacts/con_000001', (_req, res) => json(res, 429, errorEnvelope('RATE_LIMITED', 'no'), headers));
    const r = await runCrm(['--max-retries', '2', 'contacts', 'get', 'con_000001'], {
      env: h.env(),
      timeoutMs: 15_000,
    });
    expect(r.code, r.stderr).toBe(7);
    expect(r.stderr).toMatch(/gave up after 2 retries: --max-retries 2/);
    expect(r.stderr).toMatch(
      /a 429 without a positive Retry-After \((no Retry-After|Retry-After: 0)\) counts against --max-retries \(2\)/,
    );
    expect(r.stderr).not.toMatch(/--concurrency/);
  }
});

it('a 429 without Retry-After still counts against --max-retries', async () => {
  h.route('GET', '/contacts/con_000001', (_req, res) => json(res, 429, errorEnvelope('RATE_LIMITED', 'no')));
  const r = await runCrm(['--max-retries', '2', 'contacts', 'get', 'con_000001'], { env: h.env(), timeoutMs: 15_000 });
  expect(r.code, r.stderr).toBe(7);
  expect(h.log).toHaveLength(3);
});

it('refuses a CRM_RATE_LIMIT_BUDGET that is not a number of seconds (exit 2)', async () => {
  const r = await runCrm(['contacts', 'get', 'con_000001'], { env: h.env({ CRM_RATE_LIMIT_BUDGET: 'lots' }) });
  expect(r.code, r.stderr).toBe(2);
  expect(r.stderr).toMatch(/CRM_RATE_LIMIT_BUDGET/);
  expect(h.log).toHaveLength(0);
});
