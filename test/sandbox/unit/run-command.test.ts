// `crm sandbox` in-process: flag checks, the one JSON line, serving until the signal aborts.
import { describe, expect, it } from 'vitest';
import { fakeCtx } from '../../helpers/fake-ctx.js';
import { runSandbox, sandboxOptions } from '../../../src/commands/sandbox/run.js';
import { UsageError } from '../../../src/http/errors.js';
import { main } from '../../../src/cli/main.js';
import { fakeIO } from '../../helpers/fake-io.js';

/** a Ctx whose signal the test aborts (Ctrl-C) */
function sandboxCtx(signal: AbortSignal, quiet = false) {
  const ctx = fakeCtx({ signal, globals: { quiet } });
  return { ctx, out: () => ctx.stdoutText(), err: () => ctx.stderrText() };
}

describe('sandboxOptions', () => {
  it('turns flags into options', async () => {
    const o = await sandboxOptions({
      port: 0,
      seed: 7,
      rateLimit: 5,
      failRate: 0.25,
      faults: 'drop:0.1',
      control: true,
    });
    expect(o).toMatchObject({
      port: 0,
      seed: 7,
      rateLimit: 5,
      failRate: 0.25,
      faults: { drop: 0.1 },
      control: true,
      v1InteractionsCursor: false,
    });
    expect((await sandboxOptions({ seedRecords: 'contacts=100000, deals=300' })).seedRecords).toEqual({
      contacts: 100000,
      deals: 300,
    });
  });

  // commander checks the numbers and choices (src/commands/shared/numeric.ts): through the real parsing
  it.each([
    [['--port', '70000'], /--port.*expected a whole number from 0 to 65535/],
    [['--port', 'abc'], /--port/],
    [['--rate-limit', '0'], /--rate-limit.*expected a whole number from 1/],
    [['--rate-window-ms', '1.5'], /--rate-window-ms/],
    [['--fail-rate', '2'], /--fail-rate.*expected a number from 0 to 1/],
    [['--latency-ms', '-1'], /--latency-ms/],
    [['--rate-reset-format', 'unix'], /--rate-reset-format.*Allowed choices are delta, seconds, epoch, none/],
    [['--retry-after-format', 'http-date'], /--retry-after-format.*Allowed choices are seconds, date/],
  ])('crm sandbox %j is a usage error (exit 2)', async (args, message) => {
    const f = fakeIO();
    expect(await main(['sandbox', ...args], { io: f.io, env: {}, handleSignals: false })).toBe(2);
    expect(f.err()).toMatch(message);
    expect(f.out()).toBe('');
  });

  it.each([
    [{ faults: 'boom:1' }, /--faults: fault "boom:1": unknown kind/],
    [{ faultPaths: '(' }, /--fault-paths/],
    [{ host: '0.0.0.0' }, /--host must be a loopback address/],
    [{ keys: '/nonexistent/keys.json' }, /keys file \/nonexistent\/keys.json: cannot read it/],
    [{ seedRecords: 'contact=10' }, /--seed-records: "contact=10": no resource "contact" \(did you mean contacts\?\)/],
    [{ seedRecords: 'contacts' }, /--seed-records: "contacts": expected RESOURCE=N/],
    [{ seedRecords: 'contacts=0' }, /--seed-records: "contacts=0": N must be a whole number from 1 to 10000000/],
    [{ seedRecords: 'contacts=1e5' }, /--seed-records: "contacts=1e5": N must be a whole number/],
    [{ seedRecords: 'contacts=5,contacts=6' }, /--seed-records: "contacts=6": contacts given twice/],
  ])('refuses %j with a UsageError', async (flags, message) => {
    const p = sandboxOptions(flags);
    await expect(p).rejects.toBeInstanceOf(UsageError);
    await expect(p).rejects.toThrow(message);
  });
});

describe('runSandbox', () => {
  it('prints one JSON line, serves, and returns when the signal aborts', async () => {
    const ac = new AbortController();
    const { ctx, out, err } = sandboxCtx(ac.signal);
    const done = runSandbox({ port: 0, seed: 3, control: true }, ctx);
    while (!out().includes('\n')) await new Promise((r) => setTimeout(r, 5));
    const line = JSON.parse(out().trim());
    expect(Object.keys(line)).toEqual(['base_url', 'v1_base_url', 'keys', 'control_url', 'download_url']);
    expect(line.base_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v2$/);
    expect(line.download_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(new URL(line.download_url).port).not.toBe(new URL(line.base_url).port);
    expect(Object.keys(line.keys)).toEqual(['admin', 'readonly', 'user', 'v1']);
    const res = await fetch(`${line.base_url}/contacts?limit=1`, { headers: { 'X-Service-Api-Key': line.keys.admin } });
    expect(res.status).toBe(200);
    expect(err()).toContain('Ctrl-C');
    ac.abort();
    await done;
    await expect(fetch(`${line.base_url}/contacts`)).rejects.toThrow();
    await expect(fetch(`${line.download_url}/transcripts/download/x`)).rejects.toThrow();
  });

  it('leaves control_url out without --control and is silent with --quiet', async () => {
    const ac = new AbortController();
    const { ctx, out, err } = sandboxCtx(ac.signal, true);
    const done = runSandbox({ port: 0 }, ctx);
    while (!out().includes('\n')) await new Promise((r) => setTimeout(r, 5));
    expect(JSON.parse(out()).control_url).toBeUndefined();
    ac.abort();
    await done;
    expect(err()).toBe('');
  });
});
