import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { keysList } from '../../../../src/commands/keys/list.js';
import { keysRemove } from '../../../../src/commands/keys/remove.js';
import { keysUse } from '../../../../src/commands/keys/use.js';
import { openConfigStore } from '../../../../src/config/store.js';
import { UsageError } from '../../../../src/http/errors.js';
import { fakeCtx, type FakeCtxOptions } from '../../../helpers/fake-ctx.js';

const DEV_KEY = 'service_live_DevSecret0123456789wxyz';
const DEV_V1 = 'service_pk_DevV1Secret0123456789v1k1';
const PROD_KEY = 'service_live_ProdSecret0123456789p7q8';
const ALL_KEYS = [DEV_KEY, DEV_V1, PROD_KEY];

let dir: string;
beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'crm-keys-list-'));
  const s = await openConfigStore(dir);
  s.setProfile('dev', {
    base_url: 'http://127.0.0.1:4010/api/v2',
    api_key: DEV_KEY,
    v1_api_key: DEV_V1,
    auth_header: 'x-api-key',
  });
  s.setProfile('prod', {
    base_url: 'https://crm.example.com/api/v2',
    v1_base_url: 'https://legacy.example.com/api/v1',
    api_key: PROD_KEY,
    auth_header: 'bearer',
  });
  s.setProfile('nokey', { base_url: 'https://other.example.com/api/v2', auth_header: 'x-api-key' });
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const ctxWith = (o: FakeCtxOptions = {}) => fakeCtx({ configDir: dir, ...o });
const noWholeKey = (text: string) => {
  for (const k of ALL_KEYS) {
    expect(text).not.toContain(k);
    // nor a long piece of its secret part
    expect(text).not.toContain(k.slice(-16));
  }
};

describe('keys list', () => {
  it('json: every profile with roots, masked keys, auth header and default flag', async () => {
    const ctx = ctxWith({ globals: { output: 'json' } });
    await keysList({}, ctx);
    expect(JSON.parse(ctx.stdoutText())).toEqual([
      {
        profile: 'dev',
        default: true,
        base_url: 'http://127.0.0.1:4010/api/v2',
        v1_base_url: 'http://127.0.0.1:4010/api/v1',
        api_key: 'service_live_…wxyz',
        v1_api_key: 'service_pk_…v1k1',
        auth_header: 'x-api-key',
      },
      {
        profile: 'nokey',
        default: false,
        base_url: 'https://other.example.com/api/v2',
        v1_base_url: 'https://other.example.com/api/v1',
        api_key: null,
        v1_api_key: null,
        auth_header: 'x-api-key',
      },
      {
        profile: 'prod',
        default: false,
        base_url: 'https://crm.example.com/api/v2',
        v1_base_url: 'https://legacy.example.com/api/v1',
        api_key: 'service_live_…p7q8',
        v1_api_key: null,
        auth_header: 'bearer',
      },
    ]);
    noWholeKey(ctx.stdoutText() + ctx.stderrText());
  });

  it.each(['table', 'ndjson', 'csv', 'tsv'] as const)('%s: the whole key never appears', async (output) => {
    const ctx = ctxWith({ globals: { output } });
    await keysList({}, ctx);
    const text = ctx.stdoutText();
    expect(text).toContain('service_live_…wxyz');
    expect(text).toContain('service_pk_…v1k1');
    noWholeKey(text + ctx.stderrText());
  });

  it('table: a default marker on the default profile', async () => {
    const ctx = ctxWith({ stdoutTTY: true });
    await keysList({}, ctx);
    const lines = ctx.stdoutText().split('\n');
    const devLine = lines.find((l) => l.includes(' dev '))!;
    const prodLine = lines.find((l) => l.includes(' prod '))!;
    expect(devLine).toContain('*');
    expect(prodLine).not.toContain('*');
    expect(ctx.stdoutText()).toContain('bearer');
  });

  it('no profiles: [] in json, a hint on stderr for a table', async () => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'crm-keys-empty-'));
    try {
      const json = fakeCtx({ configDir: empty, globals: { output: 'json' } });
      await keysList({}, json);
      expect(JSON.parse(json.stdoutText())).toEqual([]);
      const table = fakeCtx({ configDir: empty, stdoutTTY: true });
      await keysList({}, table);
      expect(table.stdoutText()).toBe('');
      expect(table.stderrText()).toMatch(/No profiles yet.*crm keys add/);
    } finally {
      fs.rmSync(empty, { recursive: true, force: true });
    }
  });
});

describe('keys use', () => {
  it('makes a profile the default', async () => {
    const ctx = ctxWith();
    await keysUse({ profile: 'prod' }, ctx);
    expect((await openConfigStore(dir)).defaultProfile()).toBe('prod');
    expect(ctx.stderrText()).toBe('Default profile: prod (https://crm.example.com/api/v2)\n');
    expect(ctx.stdoutText()).toBe('');
  });

  it('-o json prints the result', async () => {
    const ctx = ctxWith({ globals: { output: 'json' } });
    await keysUse({ profile: 'prod' }, ctx);
    expect(JSON.parse(ctx.stdoutText())).toEqual({
      profile: 'prod',
      base_url: 'https://crm.example.com/api/v2',
      default: true,
    });
  });

  it('an unknown profile is a UsageError naming the profiles', async () => {
    await expect(keysUse({ profile: 'staging' }, ctxWith())).rejects.toThrow(UsageError);
    await expect(keysUse({ profile: 'staging' }, ctxWith())).rejects.toThrow(
      'Unknown profile "staging". Profiles: dev, nokey, prod.',
    );
    expect((await openConfigStore(dir)).defaultProfile()).toBe('dev');
  });
});

describe('keys remove', () => {
  it('removes a profile that is not the default', async () => {
    const ctx = ctxWith();
    await keysRemove({ profile: 'prod' }, ctx);
    const s = await openConfigStore(dir);
    expect(s.profileNames()).toEqual(['dev', 'nokey']);
    expect(s.defaultProfile()).toBe('dev');
    expect(ctx.stderrText()).toBe('Removed profile "prod" and its keys.\n');
    expect(fs.readFileSync(s.path, 'utf8')).not.toContain(PROD_KEY);
  });

  it('removing the default clears it and says how to choose another', async () => {
    const ctx = ctxWith({ globals: { output: 'json' } });
    await keysRemove({ profile: 'dev' }, ctx);
    const s = await openConfigStore(dir);
    expect(s.defaultProfile()).toBeUndefined();
    expect(JSON.parse(fs.readFileSync(s.path, 'utf8'))).not.toHaveProperty('default_profile');
    expect(ctx.stderrText()).toMatch(/It was the default.*crm keys use <profile> \(nokey, prod\)/);
    expect(JSON.parse(ctx.stdoutText())).toEqual({ profile: 'dev', removed: true, default_cleared: true });
  });

  it('an unknown profile is a UsageError naming the profiles; nothing changes', async () => {
    const before = fs.readFileSync(path.join(dir, 'config.json'), 'utf8');
    const err = await keysRemove({ profile: 'nope' }, ctxWith()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toBe('Unknown profile "nope". Profiles: dev, nokey, prod.');
    expect(fs.readFileSync(path.join(dir, 'config.json'), 'utf8')).toBe(before);
  });

  it('keeps the file 0600 after removing', async () => {
    fs.chmodSync(path.join(dir, 'config.json'), 0o644);
    await keysRemove({ profile: 'nokey' }, ctxWith());
    expect(fs.statSync(path.join(dir, 'config.json')).mode & 0o777).toBe(0o600);
  });
});
