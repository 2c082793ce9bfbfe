// End to end: saving keys, checking them, config file modes, and the key never shown whole.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';

let t: TestSandbox;
beforeAll(async () => {
  t = await startTestSandbox({ seed: 5 });
});
afterAll(async () => t?.close());

const env = () => ({ CRM_CONFIG_DIR: t.configDir });

describe('keys', () => {
  it('add from stdin, list masked, check, use, remove', async () => {
    const add = await runCrm(['keys', 'add', 'local', '--base-url', t.sb.baseUrl], {
      env: env(),
      input: `${t.sb.keys.admin}\n`,
    });
    expect(add.code, add.stderr).toBe(0);
    const file = join(t.configDir, 'config.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(t.configDir).mode & 0o777).toBe(0o700);

    const addV1 = await runCrm(['keys', 'add', 'local', '--v1', '--base-url', t.sb.baseUrl], {
      env: env(),
      input: t.sb.keys.v1,
    });
    expect(addV1.code, addV1.stderr).toBe(0);

    const list = await runCrm(['-o', 'json', 'keys', 'list'], { env: env() });
    expect(list.code).toBe(0);
    expect(list.stdout).not.toContain(t.sb.keys.admin);
    expect(list.stdout).not.toContain(t.sb.keys.v1);
    expect(list.stdout).toContain(t.sb.keys.admin.slice(-4));

    const check = await runCrm(['-o', 'json', 'keys-check'], { env: env() });
    expect(check.code, check.stderr).toBe(0);
    const report = JSON.parse(check.stdout);
    expect(report).toMatchObject({ profile: 'local', key_kind: 'v2', authenticated: true });
    expect(report.scopes['contacts:read']).toBe(true);
    expect(report.rate_limit.limit).toBeGreaterThan(0);
    expect(check.stdout).not.toContain(t.sb.keys.admin);

    const list2 = await runCrm(['-o', 'json', 'contacts', 'list', '--limit', '1'], { env: env() });
    expect(list2.code, list2.stderr).toBe(0);

    expect((await runCrm(['keys', 'use', 'local'], { env: env() })).code).toBe(0);
    expect((await runCrm(['keys', 'use', 'nope'], { env: env() })).code).toBe(2);
    expect((await runCrm(['keys', 'remove', 'local'], { env: env() })).code).toBe(0);
    expect((await runCrm(['contacts', 'list'], { env: env() })).code).toBe(3);
  });

  it('refuses a v1 key as a v2 key and the reverse', async () => {
    const a = await runCrm(['keys', 'add', 'x', '--base-url', t.sb.baseUrl], { env: env(), input: t.sb.keys.v1 });
    expect(a.code).toBe(2);
    expect(a.stderr).toMatch(/version 1/);
    const b = await runCrm(['keys', 'add', 'x', '--v1', '--base-url', t.sb.baseUrl], {
      env: env(),
      input: t.sb.keys.admin,
    });
    expect(b.code).toBe(2);
    expect(a.stderr + b.stderr).not.toContain(t.sb.keys.admin);
  });

  it('refuses plain http to a non-loopback host', async () => {
    const r = await runCrm(['keys', 'add', 'x', '--base-url', 'http://crm.example.com/api/v2'], {
      env: env(),
      input: t.sb.keys.admin,
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/https/);
  });

  it('keys-check: a read-only key has read scopes; a bad key is exit 3; a v1 key is checked on version 1', async () => {
    const ro = await runCrm(['-o', 'json', 'keys-check'], { env: t.env('readonly') });
    expect(ro.code, ro.stderr).toBe(0);
    expect(Object.values(JSON.parse(ro.stdout).scopes).every((v) => v === true)).toBe(true);
    const bad = await runCrm(['-o', 'json', 'keys-check'], {
      env: t.env('admin', { CRM_API_KEY: 'service_live_wrongwrongwrong' }),
    });
    expect(bad.code).toBe(3);
    const v1 = await runCrm(['-o', 'json', 'keys-check'], { env: { ...t.env('admin', { CRM_API_KEY: undefined }) } });
    expect(v1.code, v1.stderr).toBe(0);
    expect(JSON.parse(v1.stdout).key_kind).toBe('v1');
    // a version 1 key given as CRM_API_KEY is told by its form and checked on version 1
    const byForm = await runCrm(['-o', 'json', 'keys-check'], {
      env: t.env('admin', { CRM_API_KEY: t.sb.keys.v1, CRM_V1_API_KEY: undefined }),
    });
    expect(byForm.code, byForm.stderr).toBe(0);
    expect(JSON.parse(byForm.stdout)).toMatchObject({ key_kind: 'v1', authenticated: true });
    // --v1 checks the profile's version 1 key even when a version 2 key is there too
    const flag = await runCrm(['-o', 'json', 'keys-check', '--v1'], { env: t.env('admin') });
    expect(flag.code, flag.stderr).toBe(0);
    expect(JSON.parse(flag.stdout)).toMatchObject({ key_kind: 'v1', base_url: t.sb.v1BaseUrl });
  });
});
