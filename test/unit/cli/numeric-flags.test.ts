// Every numeric flag goes through one parser with a range: NaN, negative, fractional (where whole
// numbers are wanted), hex, exponents and huge values are a usage error (exit 2) naming the flag
// and what is allowed, before anything runs.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runs } from '../../helpers/property.js';
import { main } from '../../../src/cli/main.js';
import { parseNumeric, RANGES, TIMER_MAX_MS } from '../../../src/commands/shared/numeric.js';
import { contact, json, listPage, startHostile, type Hostile } from '../../hostile/server.js';
import { fakeIO } from '../../helpers/fake-io.js';

async function run(argv: string[], env: Record<string, string | undefined> = {}) {
  const f = fakeIO();
  const code = await main(argv, { io: f.io, env, handleSignals: false });
  return { code, out: f.out(), err: f.err() };
}

describe('parseNumeric', () => {
  it('accepts every whole number in range and refuses every one outside', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -1000, max: 1000 }),
        fc.integer({ min: 0, max: 500 }),
        fc.integer({ min: 0, max: 500 }),
        (n, lo, span) => {
          const range = { min: lo, max: lo + span, integer: true };
          const r = parseNumeric(String(n), range);
          expect(r.ok).toBe(n >= lo && n <= lo + span);
          if (r.ok) expect(r.value).toBe(n);
        },
      ),
      runs(100),
    );
  });

  it('accepts decimals in range where decimals are allowed, never beyond the timer limit for --timeout', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true }), (x) => {
        const r = parseNumeric(String(x), RANGES.timeoutSeconds);
        if (r.ok) {
          expect(r.value * 1000).toBeLessThanOrEqual(TIMER_MAX_MS);
          expect(r.value).toBeGreaterThan(0);
        }
      }),
      runs(100),
    );
  });

  it.each([
    '',
    ' ',
    'abc',
    'NaN',
    'Infinity',
    '-1',
    '+5',
    '1.5',
    '1e3',
    '0x10',
    '1_000',
    '99999999999999999999',
    '5 5',
  ])('refuses %j as a whole number', (text) => {
    expect(parseNumeric(text, RANGES.maxRecords).ok).toBe(false);
  });

  it.each([
    ['0.5', 0.5],
    ['.5', 0.5],
    ['30', 30],
    [' 2 ', 2],
    ['86400', 86400],
  ])('--timeout %j is %d seconds', (text, n) => {
    expect(parseNumeric(text, RANGES.timeoutSeconds)).toEqual({ ok: true, value: n });
  });
});

describe('every numeric flag is range-checked (exit 2, naming the flag and the range)', () => {
  it.each([
    [['--timeout', '3000000', 'contacts', 'list'], '--timeout', 'a number from 0.001 to 86400 (seconds)'],
    [['--timeout', '0', 'contacts', 'list'], '--timeout', 'from 0.001'],
    [['--timeout', 'NaN', 'contacts', 'list'], '--timeout', 'from 0.001'],
    [['--max-retries', '1000000', 'contacts', 'list'], '--max-retries', 'a whole number from 0 to 100'],
    [['--max-retries', '-1', 'contacts', 'list'], '--max-retries', 'from 0 to 100'],
    [['contacts', 'list', '--limit', '0'], '--limit', 'a whole number from 1 to 100'],
    [['contacts', 'list', '--limit', '2.5'], '--limit', 'from 1 to 100'],
    [['contacts', 'list', '--all', '--max', '-3'], '--max', 'from 1 to 9007199254740991'],
    [['contacts', 'list', '--all', '--max', '1e9'], '--max', 'whole number'],
    [['contacts', 'list', '--all', '--max', '99999999999999999999'], '--max', 'whole number'],
    [['links', 'list', 'deals', 'd1', 'contacts', '--limit', '500'], '--limit', 'from 1 to 100'],
    [['batch', 'contacts', 'x.csv', '--chunk-size', '101'], '--chunk-size', 'from 1 to 100'],
    [['batch', 'contacts', 'x.csv', '--concurrency', '0'], '--concurrency', 'from 1 to 64'],
    [['batch', 'contacts', 'x.csv', '--concurrency', '1000000'], '--concurrency', 'from 1 to 64'],
    [['recordings', 'download', '--concurrency', '33'], '--concurrency', 'from 1 to 32'],
    [['v1', 'people', 'query', '--limit', '1000'], '--limit', 'from 1 to 100'],
    [['sandbox', '--port', '70000'], '--port', 'from 0 to 65535'],
    [['sandbox', '--seed', '-1'], '--seed', 'from 0 to 4294967295'],
    [['sandbox', '--rate-limit', '0'], '--rate-limit', 'from 1 to'],
    [['sandbox', '--org-rate-limit', '1.5'], '--org-rate-limit', 'from 1 to'],
    [['sandbox', '--rate-window-ms', '3000000000'], '--rate-window-ms', 'from 1 to 2147483647 (ms)'],
    [['sandbox', '--transcript-ttl-ms', '0'], '--transcript-ttl-ms', 'from 1 to 2147483647'],
    [['sandbox', '--download-rate-limit', 'x'], '--download-rate-limit', 'from 1 to'],
    [['sandbox', '--download-window-ms', '-5'], '--download-window-ms', 'from 1 to'],
    [['sandbox', '--fail-rate', '1.5'], '--fail-rate', 'a number from 0 to 1'],
    [['sandbox', '--fail-rate', 'NaN'], '--fail-rate', 'a number from 0 to 1'],
    [['sandbox', '--latency-ms', '99999999999'], '--latency-ms', 'from 0 to 600000 (ms)'],
  ])('%j', async (argv, flag, range) => {
    const r = await run(argv);
    expect(r.code, r.err).toBe(2);
    expect(r.err).toContain(flag);
    expect(r.err).toContain(range);
  });
});

describe('--timeout at its maximum still works (no timer overflow)', () => {
  let h: Hostile;
  beforeAll(async () => {
    h = await startHostile([
      { method: 'GET', path: '/contacts', handler: (_req, res) => json(res, 200, listPage([contact(1)], null, false)) },
    ]);
  });
  afterAll(async () => h?.close());

  it('--timeout 3000000 (once: every request timed out at once) is refused and nothing is sent', async () => {
    h.log.length = 0;
    const r = await run(['--timeout', '3000000', 'contacts', 'list'], h.env());
    expect(r.code, r.err).toBe(2);
    expect(h.log).toHaveLength(0);
  });

  it('--timeout 86400 lists normally', async () => {
    const r = await run(['--timeout', '86400', '-o', 'ndjson', 'contacts', 'list'], h.env());
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out).id).toBe('con_000001');
  });
});
