// keys add + keys-check in-process against the real sandbox over loopback, with the real HTTP
// client: the fake-client tests pin the logic, this one pins the wiring to the real server.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keysAdd } from '../../../../src/commands/keys/add.js';
import { keysCheck } from '../../../../src/commands/keys/check.js';
import { credentialsFor } from '../../../../src/config/credentials.js';
import { AuthError } from '../../../../src/http/errors.js';
import { createClient } from '../../../../src/http/client.js';
import { fakeCtx, type FakeCtx, type FakeCtxOptions } from '../../../helpers/fake-ctx.js';
import { startSandbox, type Sandbox } from '../../../helpers/sandbox.js';

const LIMITED = 'service_live_limitedKey00000000000000lim1';
let sb: Sandbox;
let dir: string;

beforeAll(async () => {
  sb = await startSandbox({
    seed: 7,
    rateLimit: 100_000,
    orgRateLimit: 100_000,
    extraKeys: [
      {
        key: LIMITED,
        version: 2,
        scopes: ['contacts:read', 'deals:read', 'deals:write'],
        access: 'organization',
        user: 'usr_admin',
      },
    ],
  });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'crm-keys-sandbox-'));
});
afterAll(async () => {
  await sb?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A fake ctx whose client() is the real HTTP client for the resolved profile. */
function liveCtx(o: FakeCtxOptions = {}): FakeCtx {
  const ctx: FakeCtx = fakeCtx({
    configDir: dir,
    globals: { output: 'json', ...o.globals },
    ...o,
    client: async (opts) => {
      const p = await ctx.profile();
      const c = credentialsFor(p, opts?.v1 ? 'v1' : 'v2');
      return createClient({ ...c, authHeader: p.authHeader, maxRetries: 1 });
    },
  });
  return ctx;
}

async function add(
  profile: string,
  key: string,
  extra: { v1?: true; authHeader?: 'x-api-key' | 'bearer' } = {},
): Promise<void> {
  await keysAdd({ profile, baseUrl: sb.baseUrl, ...extra }, fakeCtx({ configDir: dir, stdin: `${key}\n` }));
}

describe('keys-check against the sandbox', () => {
  it('admin key from a stored profile: every read scope', async () => {
    await add('admin', sb.keys.admin);
    const ctx = liveCtx({ globals: { profile: 'admin' } });
    await keysCheck({}, ctx);
    const out = JSON.parse(ctx.stdoutText());
    expect(out).toMatchObject({ profile: 'admin', base_url: sb.baseUrl, key_kind: 'v2', authenticated: true });
    expect(Object.values(out.scopes).every((v) => v === true)).toBe(true);
    expect(out.rate_limit.limit).toBe(100_000);
    expect(typeof out.rate_limit.remaining).toBe('number');
    expect(ctx.stdoutText()).not.toContain(sb.keys.admin);
  });

  it('a limited key: its read scopes true, the others false (403)', async () => {
    await add('limited', LIMITED, { authHeader: 'bearer' });
    const ctx = liveCtx({ globals: { profile: 'limited' } });
    await keysCheck({}, ctx);
    const out = JSON.parse(ctx.stdoutText());
    expect(out.authenticated).toBe(true);
    expect(out.scopes['contacts:read']).toBe(true);
    expect(out.scopes['deals:read']).toBe(true);
    expect(out.scopes['companies:read']).toBe(false);
    expect(out.scopes['recordings:read']).toBe(false);
  });

  it('an unknown key from the environment: not authenticated, exit 3', async () => {
    const ctx = liveCtx({ env: { CRM_API_KEY: 'service_live_unknownKey000000000000000', CRM_BASE_URL: sb.baseUrl } });
    const err = await keysCheck({}, ctx).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AuthError);
    expect((err as AuthError).exitCode).toBe(3);
    expect(JSON.parse(ctx.stdoutText()).authenticated).toBe(false);
  });

  it('the v1 key stored with --v1 is checked against version 1', async () => {
    await add('old', sb.keys.v1, { v1: true });
    const ctx = liveCtx({ globals: { profile: 'old' } });
    await keysCheck({}, ctx);
    const out = JSON.parse(ctx.stdoutText());
    expect(out).toMatchObject({
      profile: 'old',
      base_url: sb.v1BaseUrl,
      key_kind: 'v1',
      authenticated: true,
      scopes: {},
    });
  });
});
