// The sandbox's API keys: the four built-in ones (random, or derived from --seed) and the
// extra ones of `--keys FILE`, validated entry by entry.
import { allScopes, readScopes } from '../api/resources.js';
import { readJsonFile } from './files.js';
import { cryptoRandom, mulberry32, randomString, type Random } from './random.js';
import type { KeyDef, SandboxKeys } from './types.js';
import { isPlainObject } from './validation.js';

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

export function namedKeys(defs: KeyDef[]): SandboxKeys {
  const [admin, readonly, user, v1] = defs.map((d) => d.key);
  return { admin: admin!, readonly: readonly!, user: user!, v1: v1! };
}

/** Checks the parsed content of a keys file; throws an Error naming the first bad entry. */
export function validateKeys(value: unknown, source = 'keys file'): KeyDef[] {
  if (!Array.isArray(value)) throw new Error(`${source}: expected a JSON array of keys`);
  const known = new Set(allScopes());
  const seen = new Set<string>();
  return value.map((entry: unknown, i) => {
    const where = `${source}: entry ${i}`;
    if (!isPlainObject(entry)) throw new Error(`${where}: expected an object`);
    const e = entry;
    const unknown = Object.keys(e).find((field) => !['key', 'version', 'scopes', 'access', 'user'].includes(field));
    if (unknown !== undefined) throw new Error(`${where}: unknown field "${unknown}"`);
    if (e.version !== 1 && e.version !== 2) throw new Error(`${where}: "version" must be 1 or 2`);
    const prefix = e.version === 2 ? V2_PREFIX : V1_PREFIX;
    if (typeof e.key !== 'string' || !e.key.startsWith(prefix) || e.key.length === prefix.length || /\s/.test(e.key)) {
      throw new Error(`${where}: "key" must be a string "${prefix}…" for a version ${e.version} key`);
    }
    if (seen.has(e.key)) throw new Error(`${where}: key given twice`);
    seen.add(e.key);
    let scopes: string[] = [];
    if (e.version === 2 || e.scopes !== undefined) {
      if (!Array.isArray(e.scopes) || !e.scopes.every((s) => typeof s === 'string')) {
        throw new Error(`${where}: "scopes" must be an array of scope strings`);
      }
      const unknownScope = e.scopes.find((s) => !known.has(s));
      if (unknownScope !== undefined) throw new Error(`${where}: unknown scope "${unknownScope}"`);
      scopes = e.scopes;
    }
    const access = e.access ?? 'organization';
    if (access !== 'organization' && access !== 'user') throw new Error(`${where}: "access" must be "organization" or "user"`);
    if (e.user !== undefined && (typeof e.user !== 'string' || e.user === '')) throw new Error(`${where}: "user" must be a non-empty string`);
    if (access === 'user' && e.user === undefined) throw new Error(`${where}: a user-bound key needs "user"`);
    if (e.version === 1 && access === 'user') throw new Error(`${where}: version 1 keys have organization access`);
    return { key: e.key, version: e.version, scopes, access, user: e.user ?? ADMIN_USER };
  });
}

/** Reads and validates `--keys FILE`; throws an Error naming the file and the bad entry. */
export function loadKeysFile(path: string): KeyDef[] {
  return validateKeys(readJsonFile(path, `keys file ${path}`), `keys file ${path}`);
}
