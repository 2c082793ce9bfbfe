import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { allScopes, readScopes } from '../../../src/api/resources.js';
import { builtinKeys, loadKeysFile, validateKeys } from '../../../src/sandbox/keys.js';
import { tempDir } from '../../helpers/temp.js';

describe('builtinKeys', () => {
  it('gives admin, readonly, user and v1 keys with their scopes and access', () => {
    const [admin, readonly, user, v1] = builtinKeys();
    expect(admin).toMatchObject({ version: 2, scopes: allScopes(), access: 'organization', user: 'usr_admin' });
    expect(readonly).toMatchObject({ version: 2, scopes: readScopes(), access: 'organization' });
    expect(user).toMatchObject({ version: 2, scopes: allScopes(), access: 'user', user: 'usr_user' });
    expect(v1).toMatchObject({ version: 1, access: 'organization' });
    expect(admin!.key).toMatch(/^service_live_[a-z0-9]{32}$/);
    expect(v1!.key).toMatch(/^service_pk_[a-z0-9]+$/);
  });

  it('derives the same keys from the same seed, other keys from another seed or none', () => {
    expect(builtinKeys(42)).toEqual(builtinKeys(42));
    expect(builtinKeys(42)[0]!.key).not.toBe(builtinKeys(43)[0]!.key);
    expect(builtinKeys()[0]!.key).not.toBe(builtinKeys()[0]!.key);
  });
});

describe('validateKeys', () => {
  const good = { key: 'service_live_abc', version: 2, scopes: ['contacts:read'], access: 'user', user: 'usr_x' };

  it('accepts valid entries and fills defaults', () => {
    expect(
      validateKeys([good, { key: 'service_pk_1', version: 1 }, { key: 'service_live_org', version: 2, scopes: [] }]),
    ).toEqual([
      good,
      { key: 'service_pk_1', version: 1, scopes: [], access: 'organization', user: 'usr_admin' },
      { key: 'service_live_org', version: 2, scopes: [], access: 'organization', user: 'usr_admin' },
    ]);
  });

  it.each([
    [{}, /expected a JSON array/],
    [[42], /entry 0: expected an object/],
    [[good, { ...good, key: 'service_live_other', version: 3 }], /entry 1: "version" must be 1 or 2/],
    [[{ ...good, key: 'service_pk_1' }], /entry 0: "key" must be a string "service_live_…"/],
    [[{ key: 'service_live_1', version: 1 }], /entry 0: "key" must be a string "service_pk_…"/],
    [[{ ...good, scopes: 'contacts:read' }], /entry 0: "scopes" must be an array/],
    [[{ ...good, scopes: ['contacts:fly'] }], /entry 0: unknown scope "contacts:fly"/],
    [[{ key: 'service_live_x', version: 2 }], /entry 0: "scopes"/],
    [[{ ...good, access: 'team' }], /entry 0: "access"/],
    [[{ ...good, user: undefined }], /entry 0: a user-bound key needs "user"/],
    [[{ ...good, colour: 'red' }], /entry 0: unknown field "colour"/],
    [[good, good], /entry 1: key given twice/],
  ])('refuses %j', (value, message) => {
    expect(() => validateKeys(value, 'keys.json')).toThrow(message);
  });
});

describe('loadKeysFile', () => {
  const dir = tempDir('crm-sb-keys-');

  it('reads a valid file', () => {
    const file = path.join(dir, 'ok.json');
    fs.writeFileSync(file, JSON.stringify([{ key: 'service_pk_9', version: 1 }]));
    expect(loadKeysFile(file)).toHaveLength(1);
  });

  it('names the file when it is missing or not JSON', () => {
    const bad = path.join(dir, 'bad.json');
    fs.writeFileSync(bad, '[{');
    expect(() => loadKeysFile(bad)).toThrow(`keys file ${bad}: not valid JSON`);
    expect(() => loadKeysFile(path.join(dir, 'missing.json'))).toThrow(/cannot read it \(ENOENT\)/);
  });
});
