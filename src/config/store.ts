// The profile store: one JSON file kept by conf, mode 0600 in a 0700 folder. conf and zod load
// dynamically, so commands whose environment supplies the key never load them (startup time).
import fs from 'node:fs';
import type Conf from 'conf';
import { UsageError } from '../http/errors.js';
import { ensureDir as makeDir } from '../util/fs.js';
import { CONFIG_FILE_NAME, PROJECT_NAME, configFileIn } from './paths.js';
import type { ConfigData, StoredProfile } from './types.js';

export type { ConfigData, StoredProfile } from './types.js';

const FILE_MODE = 0o600;
const DIR_MODE = 0o700;
const FIX = 'Fix it or delete it and add the profiles again.';

export type ConfigStore = Awaited<ReturnType<typeof openConfigStore>>;

/** Profile names: short, shell- and file-friendly. */
export const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function checkProfileName(name: string): string {
  if (!PROFILE_NAME.test(name)) {
    throw new UsageError(
      `Invalid profile name "${name}": use 1–64 letters, digits, ".", "_" or "-", starting with a letter or digit.`,
    );
  }
  return name;
}

/** "dev, prod" or "(none)": for messages about unknown profiles. */
export function listNames(names: readonly string[]): string {
  return names.length === 0 ? '(none; add one with `crm keys add <profile> --base-url URL`)' : names.join(', ');
}

export function unknownProfileError(name: string, names: readonly string[], file?: string): UsageError {
  return new UsageError(`Unknown profile "${name}". Profiles: ${listNames(names)}.`, {
    hint: file ? `Profiles are stored in ${file}.` : undefined,
  });
}

/** Opens (and validates) the config file in the folder `dir` (see configDirFor); creates the folder (0700) if missing. */
export async function openConfigStore(dir: string) {
  const { conf, data } = await load(dir);
  const write = (): void => save(conf, dir, data);
  const profileNames = (): string[] => Object.keys(data.profiles).sort();
  return {
    path: conf.path,
    dir,
    profileNames,
    getProfile: (name: string): StoredProfile | undefined =>
      Object.hasOwn(data.profiles, name) ? { ...data.profiles[name]! } : undefined,
    defaultProfile: (): string | undefined => data.default_profile,
    /** creates or replaces a profile; the first profile ever stored becomes the default */
    setProfile(name: string, profile: StoredProfile): void {
      checkProfileName(name);
      data.profiles[name] = stripEmpty(profile);
      if (data.default_profile === undefined) data.default_profile = name;
      write();
    },
    /** false when there was none; removing the default clears it */
    removeProfile(name: string): boolean {
      if (!Object.hasOwn(data.profiles, name)) return false;
      delete data.profiles[name];
      if (data.default_profile === name) delete data.default_profile;
      write();
      return true;
    },
    setDefault(name: string): void {
      if (!Object.hasOwn(data.profiles, name)) throw unknownProfileError(name, profileNames(), conf.path);
      data.default_profile = name;
      write();
    },
  };
}

type ConfFile = Conf<Record<string, unknown>>;

/** conf on the file in `dir`, and the file's profiles checked against the schema. */
async function load(dir: string): Promise<{ conf: ConfFile; data: ConfigData }> {
  const [{ default: ConfClass }, { parseConfigData }] = await Promise.all([import('conf'), import('./schema.js')]);
  const file = configFileIn(dir);
  ensureDir(dir);
  try {
    // conf reads the file in its constructor; an unreadable or broken file throws here.
    const conf = new ConfClass<Record<string, unknown>>({
      projectName: PROJECT_NAME,
      cwd: dir,
      configName: CONFIG_FILE_NAME.replace(/\.json$/, ''),
      configFileMode: FILE_MODE,
      accessPropertiesByDotNotation: false,
      clearInvalidConfig: false,
      watch: false,
      // conf would quietly turn a top-level array or string into {}; say so instead.
      deserialize: (text: string) => {
        const value: unknown = JSON.parse(text);
        if (typeof value === 'object' && value !== null && !Array.isArray(value))
          return value as Record<string, unknown>;
        throw new UsageError(
          `The config file ${file} is malformed: (top level) must be a JSON object with "profiles". ${FIX}`,
        );
      },
    });
    return { conf, data: parseConfigData(conf.store, conf.path) };
  } catch (err) {
    if (err instanceof UsageError) throw err;
    const e = err as Error | undefined;
    if (e?.name === 'SyntaxError')
      throw new UsageError(`The config file ${file} is not valid JSON (${e.message}). ${FIX}`, { cause: err });
    throw new UsageError(`Cannot read the config file ${file}: ${e?.message ?? String(err)}`, { cause: err });
  }
}

function save(conf: ConfFile, dir: string, data: ConfigData): void {
  ensureDir(dir);
  try {
    conf.store = data; // only the schema's fields: zod dropped any others
    // conf (atomically) keeps an existing file's mode on rewrite, so set ours every time.
    fs.chmodSync(conf.path, FILE_MODE);
    fs.chmodSync(dir, DIR_MODE);
  } catch (err) {
    throw new UsageError(`Cannot write the config file ${conf.path}: ${(err as Error).message}`, { cause: err });
  }
}

function ensureDir(dir: string): void {
  try {
    makeDir(dir, DIR_MODE);
  } catch (err) {
    throw new UsageError(`Cannot create the config folder ${dir}: ${(err as Error).message}`, { cause: err });
  }
}

/** `o` without its undefined and empty-string fields. */
export function stripEmpty<T extends object>(o: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined && v !== '') out[k] = v;
  return out as T;
}
