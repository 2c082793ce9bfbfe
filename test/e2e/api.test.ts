// End to end: `crm api`, the escape hatch for any request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';

let t: TestSandbox;
beforeAll(async () => {
  t = await startTestSandbox({ seed: 17 });
});
afterAll(async () => t?.close());
const crm = (args: string[], input?: string) => runCrm(args, { env: t.env('admin'), input });

describe('crm api', () => {
  it('GET prints the whole envelope', async () => {
    const r = await crm(['api', 'GET', '/contacts?limit=2']);
    expect(r.code, r.stderr).toBe(0);
    const env = JSON.parse(r.stdout);
    expect(env).toMatchObject({ object: 'list', page_info: { has_next_page: true }, meta: { api_version: '2' } });
    expect(env.data).toHaveLength(2);
  });

  it('--paginate concatenates every page (keeping other query parameters)', async () => {
    const r = await crm(['api', 'GET', '/contacts?limit=7', '--paginate']);
    expect(r.code, r.stderr).toBe(0);
    const all = JSON.parse(r.stdout);
    expect(all).toHaveLength(40);
    expect(new Set(all.map((c: { id: string }) => c.id)).size).toBe(40);
  });

  it('--paginate is refused on anything but GET', async () => {
    const r = await crm(['api', 'POST', '/contacts', '--paginate', '--data', '{}']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--paginate works only with GET/);
  });

  it('POST with --data - creates and prints the success envelope; errors keep their exit code', async () => {
    const r = await crm(['api', 'POST', '/companies', '--data', '-'], '{"name":"Via api"}');
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ object: 'success', data: { name: 'Via api' } });
    expect((await crm(['api', 'GET', '/companies/cmp_nope'])).code).toBe(5);
    expect((await crm(['api', 'DELETE', '/recordings/rec_x'])).code).toBe(6);
  });

  it('--v1 goes to the version 1 root with the v1 key', async () => {
    const r = await crm(['api', 'POST', '/people/query', '--v1', '--data', '{"limit":2}']);
    expect(r.code, r.stderr).toBe(0);
    const body = JSON.parse(r.stdout);
    expect(body.success).toBe(true);
    expect(body.data.people).toHaveLength(2);
    expect(typeof body.nextCursor).toBe('string');
  });

  it('refuses an absolute URL (the key never leaves the configured origin)', async () => {
    const r = await crm(['api', 'GET', 'https://evil.example.com/steal']);
    expect(r.code).toBe(2);
  });
});
