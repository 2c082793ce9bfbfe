// The sandbox's API keys: the four built-in ones (random, or derived from --seed) and the
// extra ones of `--keys FILE`, validated entry by entry.
import { allScopes, readScopes } from '../api/resources.js';
import { readJsonFile } from './files.js';
import { cryptoRandom, mulberry32, randomString, type Random } from './random.js';
import type { KeyDef } from './types.js';
import { isPlainObject, needIn, type Need } from './validation.js';

export const ADMIN_USER = 'usr_admin';
export const BOUND_USER = 'usr_user';
const V2_PREFIX = 'service_live_';
const V1_PREFIX = 'service_pk_';

/** The four built-in keys; the same seed gives the same keys. */
export function builtinKeys(seed?: number): KeyDef[] {
  // A stream of its own, so the keys do not shift when the sample data changes.
  const random: Random = seed === undefined ? cryptoRandom : mulberry32((seed ^ 0x5eed1e55) >>> 0);
  const v2 = () => V2_PREFIX + randomString(random, 32);
  return [
    { key: v2(), version: 2, scopes: allScopes(), access: 'organization', user: ADMIN_USER },
    { key: v2(), version: 2, scopes: readScopes(), access: 'organization', user: ADMIN_USER },
    { key: v2(), version: 2, scopes: allScopes(), access: 'user', user: BOUND_USER },
    { key: V1_PREFIX + randomString(random, 24), version: 1, scopes: [], access: 'organization', user: ADMIN_USER },
  ];
}

/** Checks the parsed content of a keys file; throws an Error naming the first bad entry. */
export function validateKeys(value: unknown, source = 'keys file'): KeyDef[] {
  if (!Array.isArray(value)) throw new Error(`${source}: expected a JSON array of keys`);
  const known = new Set(allScopes());
  const seen = new Set<string>();
  return value.map((e: unknown, i): KeyDef => {
    const need: Need = needIn(`${source}: entry ${i}`);
    need(isPlainObject(e), 'expected an object');
    const unknown = Object.keys(e).find((field) => !['key', 'version', 'scopes', 'access', 'user'].includes(field));
    need(unknown === undefined, `unknown field "${unknown}"`);
    const { key, version, access = 'organization', user } = e;
    need(version === 1 || version === 2, '"version" must be 1 or 2');
    const prefix = version === 2 ? V2_PREFIX : V1_PREFIX;
    const keyOk = typeof key === 'string' && key.startsWith(prefix) && key.length > prefix.length && !/\s/.test(key);
    need(keyOk, `"key" must be a string "${prefix}…" for a version ${version} key`);
    need(!seen.has(key), 'key given twice');
    seen.add(key);
    const scopes = version === 1 && e.scopes === undefined ? [] : e.scopes;
    need(
      Array.isArray(scopes) && scopes.every((s) => typeof s === 'string'),
      '"scopes" must be an array of scope strings',
    );
    const unknownScope = scopes.find((s) => !known.has(s));
    need(unknownScope === undefined, `unknown scope "${unknownScope}"`);
    need(access === 'organization' || access === 'user', '"access" must be "organization" or "user"');
    need(user === undefined || (typeof user === 'string' && user !== ''), '"user" must be a non-empty string');
    need(access === 'organization' || user !== undefined, 'a user-bound key needs "user"');
    need(version === 2 || access === 'organization', 'version 1 keys have organization access');
    return { key, version, scopes, access, user: user ?? ADMIN_USER };
  });
}

/** Reads and validates `--keys FILE`; throws an Error naming the file and the bad entry. */
export function loadKeysFile(path: string): KeyDef[] {
  return validateKeys(readJsonFile(path, `keys file ${path}`), `keys file ${path}`);
}
