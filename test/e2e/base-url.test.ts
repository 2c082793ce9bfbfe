// End to end: a base URL given as the server's address alone (no /api/v2), as a new user types it
// from the sandbox's banner, works for `keys add`, --base-url and CRM_BASE_URL alike; a version 1
// root in the version 2 slot is refused; and keys-check never calls a key working when nothing
// answered as the API.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';

let t: TestSandbox;
let origin: string;
beforeAll(async () => {
  t = await startTestSandbox({ seed: 7 });
  origin = new URL(t.sb.baseUrl).origin;
});
afterAll(async () => t?.close());

const freshDir = () => tempDir('crm-base-url-');

describe('a base URL without /api/v2', () => {
  it('keys add completes it with a notice; keys-check and contacts list then work', async () => {
    const env = { CRM_CONFIG_DIR: freshDir() };
    const add = await runCrm(['keys', 'add', 'x', '--base-url', `${origin}/`], { env, input: t.sb.keys.admin });
    expect(add.code, add.stderr).toBe(0);
    expect(add.stderr).toContain(`using ${origin}/api/v2 (the version 2 root)`);
    const list = await runCrm(['-o', 'json', 'keys', 'list'], { env });
    expect(JSON.parse(list.stdout)[0]).toMatchObject({ base_url: `${origin}/api/v2`, v1_base_url: `${origin}/api/v1` });

    const check = await runCrm(['-o', 'json', 'keys-check'], { env });
    expect(check.code, check.stderr).toBe(0);
    expect(JSON.parse(check.stdout)).toMatchObject({ authenticated: true, scopes: { 'contacts:read': true } });
    const contacts = await runCrm(['-o', 'json', 'contacts', 'list', '--limit', '1'], { env });
    expect(contacts.code, contacts.stderr).toBe(0);
  });

  it.each([
    [
      'CRM_BASE_URL',
      (env: Record<string, string | undefined>) => ({ args: [], env: { ...env, CRM_BASE_URL: origin } }),
    ],
    [
      '--base-url',
      (env: Record<string, string | undefined>) => ({
        args: ['--base-url', origin],
        env: { ...env, CRM_BASE_URL: undefined },
      }),
    ],
  ])('%s is completed the same way, and the version 1 root derived from it', async (what, setting) => {
    const { args, env } = setting(t.env('admin', { CRM_V1_BASE_URL: undefined }));
    const r = await runCrm([...args, '-o', 'json', 'contacts', 'list', '--limit', '1'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`Note: the ${what} ${origin} has no API root; using ${origin}/api/v2`);
    const v1 = await runCrm([...args, '-o', 'json', 'v1', 'people', 'query', '--limit', '1'], { env });
    expect(v1.code, v1.stderr).toBe(0);
  });

  it('a version 1 root as the version 2 root is refused before anything is sent (exit 2), with the fix', async () => {
    const add = await runCrm(['keys', 'add', 'x', '--base-url', `${origin}/api/v1`], {
      env: { CRM_CONFIG_DIR: freshDir() },
      input: t.sb.keys.admin,
    });
    expect(add.code).toBe(2);
    expect(add.stderr).toContain(`Use ${origin}/api/v2`);
    const env = t.env('admin', { CRM_BASE_URL: `${origin}/api/v1` });
    const r = await runCrm(['contacts', 'list'], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/CRM_BASE_URL .* is a version 1 root/);
  });
});

describe('keys-check against something that is not the API', () => {
  it('says the server did not answer as the CRM API, exit 8, and never "authenticated"', async () => {
    const env = t.env('admin', { CRM_BASE_URL: `${origin}/not-the-api` });
    const r = await runCrm(['-o', 'json', 'keys-check'], { env });
    expect(r.code).toBe(8);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('did not answer as the CRM API');
    expect(r.stderr).not.toMatch(/authenticated/);
    const table = await runCrm(['-o', 'table', 'keys-check'], { env });
    expect(table.code).toBe(8);
    expect(table.stdout).not.toMatch(/authenticated\s*│\s*yes/);
  });

  it('a read-only key: the table and JSON say which scopes were not checked', async () => {
    const r = await runCrm(['-o', 'json', 'keys-check'], { env: t.env('readonly') });
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.scopes['contacts:read']).toBe(true);
    expect(report.scopes_not_checked).toEqual(
      expect.arrayContaining(['contacts:write', 'contacts:delete', 'deals:write']),
    );
    expect(report.note).toMatch(/Only read scopes were checked/);
    const table = await runCrm(['-o', 'table', 'keys-check'], { env: t.env('readonly') });
    expect(table.stdout).toMatch(/not_checked\s*│\s*contacts:write/);
  });
});

// One loopback rule (src/http/url.ts) for `keys add` and for every request: `app.localhost` is not
// loopback to Node's resolver, so http: there is refused by both, never accepted by one and refused
// by the other (a profile that `keys add` took, then every request refused).
describe('http://app.localhost', () => {
  it('is refused alike by keys add and by a request (exit 2), nothing sent', async () => {
    const base = `http://app.localhost:${new URL(origin).port}/api/v2`;
    const add = await runCrm(['keys', 'add', 'x', '--base-url', base], {
      env: { CRM_CONFIG_DIR: freshDir() },
      input: t.sb.keys.admin,
    });
    expect(add.code, add.stderr).toBe(2);
    expect(add.stderr).toMatch(/uses http:, which would send the API key unencrypted/);
    const r = await runCrm(['contacts', 'list'], { env: t.env('admin', { CRM_BASE_URL: base }) });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/uses http:, which would send the API key unencrypted/);
  });
});
