import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/http/errors.js';
import { openConfigStore } from '../../../src/config/store.js';

const mode = (p: string) => fs.statSync(p).mode & 0o777;
const V2 = 'service_live_0123456789abcdefWXYZ';

let root: string;
let dir: string;
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'crm-store-'));
  dir = path.join(root, 'nested', 'crm');
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

describe('ConfigStore', () => {
  it('creates the file 0600 in a 0700 folder, in the given folder only', async () => {
    const store = await openConfigStore(dir);
    expect(store.path).toBe(path.join(dir, 'config.json'));
    expect(store.profileNames()).toEqual([]);
    store.setProfile('dev', { base_url: 'http://127.0.0.1:4010/api/v2', api_key: V2, auth_header: 'x-api-key' });
    expect(mode(dir)).toBe(0o700);
    expect(mode(store.path)).toBe(0o600);
    expect(JSON.parse(fs.readFileSync(store.path, 'utf8'))).toEqual({
      profiles: { dev: { base_url: 'http://127.0.0.1:4010/api/v2', api_key: V2, auth_header: 'x-api-key' } },
      default_profile: 'dev',
    });
  });

  it('puts a rewritten 0644 file and a 0755 folder back to 0600/0700', async () => {
    const store = await openConfigStore(dir);
    store.setProfile('dev', { base_url: 'https://a.example/api/v2', auth_header: 'x-api-key' });
    fs.chmodSync(store.path, 0o644);
    fs.chmodSync(dir, 0o755);
    store.setProfile('prod', { base_url: 'https://b.example/api/v2', auth_header: 'bearer' });
    expect(mode(store.path)).toBe(0o600);
    expect(mode(dir)).toBe(0o700);
    // and after every kind of write
    fs.chmodSync(store.path, 0o644);
    store.setDefault('prod');
    expect(mode(store.path)).toBe(0o600);
    fs.chmodSync(store.path, 0o666);
    store.removeProfile('dev');
    expect(mode(store.path)).toBe(0o600);
  });

  it('makes the first profile the default, keeps it when more are added, clears it on removal', async () => {
    const store = await openConfigStore(dir);
    store.setProfile('a', { base_url: 'https://a.example/api/v2', auth_header: 'x-api-key' });
    store.setProfile('b', { base_url: 'https://b.example/api/v2', auth_header: 'x-api-key' });
    expect(store.defaultProfile()).toBe('a');
    store.setDefault('b');
    const again = await openConfigStore(dir);
    expect(again.defaultProfile()).toBe('b');
    expect(again.profileNames()).toEqual(['a', 'b']);
    expect(again.removeProfile('b')).toBe(true);
    expect(again.defaultProfile()).toBeUndefined();
    expect(again.removeProfile('b')).toBe(false);
    expect((await openConfigStore(dir)).profileNames()).toEqual(['a']);
  });

  it('setDefault of an unknown profile names the profiles', async () => {
    const store = await openConfigStore(dir);
    store.setProfile('dev', { base_url: 'https://a.example/api/v2', auth_header: 'x-api-key' });
    expect(() => store.setDefault('nope')).toThrow(UsageError);
    expect(() => store.setDefault('nope')).toThrow(/Unknown profile "nope"\. Profiles: dev/);
  });

  it('refuses bad profile names', async () => {
    const store = await openConfigStore(dir);
    for (const bad of ['', '-x', 'a b', 'a/b', '..', 'x'.repeat(65)]) {
      expect(() => store.setProfile(bad, { base_url: 'https://a.example/api/v2', auth_header: 'x-api-key' })).toThrow(
        UsageError,
      );
    }
  });

  it('drops undefined and empty fields when storing', async () => {
    const store = await openConfigStore(dir);
    store.setProfile('p', {
      base_url: 'https://a.example/api/v2',
      v1_base_url: undefined,
      api_key: '',
      auth_header: 'bearer',
    });
    expect(JSON.parse(fs.readFileSync(store.path, 'utf8')).profiles.p).toEqual({
      base_url: 'https://a.example/api/v2',
      auth_header: 'bearer',
    });
  });

  it('a profile without auth_header reads as x-api-key', async () => {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(
      path.join(dir, 'config.json'),
      JSON.stringify({ profiles: { p: { base_url: 'https://a.example/api/v2' } } }),
    );
    const store = await openConfigStore(dir);
    expect(store.getProfile('p')).toEqual({ base_url: 'https://a.example/api/v2', auth_header: 'x-api-key' });
  });

  it('a file that is not JSON is a UsageError naming the file', async () => {
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, 'config.json');
    fs.writeFileSync(file, '{"profiles": ');
    const err = await openConfigStore(dir).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toContain(file);
    expect((err as Error).message).toMatch(/not valid JSON/);
    // and it was left alone (conf would clear it with clearInvalidConfig)
    expect(fs.readFileSync(file, 'utf8')).toBe('{"profiles": ');
  });

  it.each([
    ['a wrong type', { profiles: { x: { base_url: 5 } } }, /profiles\.x\.base_url/],
    [
      'an unknown auth header',
      { profiles: { x: { base_url: 'https://a/api/v2', auth_header: 'basic' } } },
      /profiles\.x\.auth_header/,
    ],
    ['profiles not an object', { profiles: [1] }, /profiles/],
    ['a missing base_url', { profiles: { x: { api_key: 'k' } } }, /profiles\.x\.base_url/],
    ['a top-level array', [], /top level/],
  ])('%s is a UsageError naming the file and field', async (_name, content, field) => {
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, 'config.json');
    fs.writeFileSync(file, JSON.stringify(content));
    const err = await openConfigStore(dir).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toContain(file);
    expect((err as Error).message).toMatch(field);
  });
});
