// End to end: how `crm` weathers the sandbox's faults — retries, idempotent replays, exit 7 and 8.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';

let t: TestSandbox;
beforeAll(async () => {
  t = await startTestSandbox({ seed: 3 });
});
afterAll(async () => t?.close());
beforeEach(async () => {
  await t.control('/faults', { fail_rate: 0, latency_ms: 0, faults: {}, next: [] });
});

const crm = (args: string[]) => runCrm(args, { env: t.env('admin') });

async function countContacts(email: string): Promise<number> {
  const res = await fetch(`${t.sb.baseUrl}/contacts?limit=100&email=${encodeURIComponent(email)}`, {
    headers: { 'X-Service-Api-Key': t.sb.keys.admin },
  });
  return ((await res.json()) as { data: unknown[] }).data.length;
}

describe('faults', () => {
  it('a create that succeeded but answered 500 is retried with the same key: one record', async () => {
    await t.control('/faults', { next: [{ kind: '500-after-write', method: 'POST', path: '/contacts$' }] });
    const r = await crm(['-o', 'json', '--verbose', 'contacts', 'create', '--set', 'email=once@example.com']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/ 500 .*\n.* 201 /s);
    expect(await countContacts('once@example.com')).toBe(1);
    const log = (await t.control('/requests')) as Array<{
      method: string;
      path: string;
      headers: Record<string, string>;
    }>;
    const posts = log.filter((e) => e.method === 'POST' && e.path.endsWith('/contacts'));
    const keys = posts.slice(-2).map((e) => e.headers['idempotency-key']);
    expect(keys[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(keys[0]).toBe(keys[1]);
  });

  it('a delete whose answer was lost (500 after the write) is retried and reported as done, not as not found', async () => {
    const created = await crm(['-o', 'json', 'contacts', 'create', '--set', 'email=gone@example.com']);
    const id = JSON.parse(created.stdout).id;
    await t.control('/faults', { next: [{ kind: '500-after-write', method: 'DELETE' }] });
    const r = await crm(['contacts', 'delete', id, '--yes', '--no-backup']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/already deleted/);
    expect(await countContacts('gone@example.com')).toBe(0);
  });

  it('a dropped connection on a read is retried', async () => {
    await t.control('/faults', { next: [{ kind: 'drop', method: 'GET' }] });
    const r = await crm(['-o', 'json', 'contacts', 'list', '--limit', '1']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toHaveLength(1);
  });

  it('a dropped connection after a write is retried without a duplicate', async () => {
    await t.control('/faults', { next: [{ kind: 'drop-after-write', method: 'POST', path: '/contacts$' }] });
    const r = await crm(['-o', 'json', 'contacts', 'create', '--set', 'email=dropped@example.com']);
    expect(r.code, r.stderr).toBe(0);
    expect(await countContacts('dropped@example.com')).toBe(1);
  });

  it('an HTML 502 from a proxy is retried, and when retries run out is exit 8 quoting the body', async () => {
    await t.control('/faults', { next: [{ kind: 'html-502', method: 'GET' }] });
    const ok = await crm(['-o', 'json', 'contacts', 'list', '--limit', '1']);
    expect(ok.code, ok.stderr).toBe(0);
    await t.control('/faults', { next: [{ kind: 'html-502', method: 'GET', count: 5 }] });
    const r = await crm(['--max-retries', '0', 'contacts', 'list']);
    expect(r.code).toBe(8);
    expect(r.stderr).toMatch(/<html/i);
  });

  it('429 waits Retry-After and retries, even with --max-retries 0; past the wait budget it is exit 7', async () => {
    await t.control('/faults', { next: [{ kind: '429', method: 'GET' }] });
    const ok = await crm(['-o', 'json', '--max-retries', '0', 'contacts', 'list', '--limit', '1']);
    expect(ok.code, ok.stderr).toBe(0);
    await t.control('/faults', { next: [{ kind: '429', method: 'GET' }] });
    const r = await runCrm(['contacts', 'list'], { env: t.env('admin', { CRM_RATE_LIMIT_BUDGET: '0' }) });
    expect(r.code).toBe(7);
  });

  it('500s that never stop are exit 8', async () => {
    await t.control('/faults', { next: [{ kind: '500', method: 'GET', count: 3 }] });
    const r = await crm(['--max-retries', '1', 'contacts', 'list']);
    expect(r.code).toBe(8);
    expect(r.stderr).toMatch(/500/);
  });

  it('a truncated JSON body is exit 8 quoting its start', async () => {
    await t.control('/faults', { next: [{ kind: 'truncated', method: 'GET', count: 3 }] });
    const r = await crm(['--max-retries', '0', 'contacts', 'list']);
    expect(r.code).toBe(8);
  });
});

describe('rate limits', () => {
  it('a small window: --all paces itself through it and succeeds', async () => {
    const small = await startTestSandbox({ seed: 3, rateLimit: 3, rateWindowMs: 300 });
    try {
      const r = await runCrm(['-o', 'ndjson', '--verbose', 'contacts', 'list', '--all', '--limit', '5'], {
        env: small.env('admin'),
      });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout.trim().split('\n').length).toBe(40);
    } finally {
      await small.close();
    }
  });
});
