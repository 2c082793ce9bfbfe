// The saved profile names for shell completion (`crm __complete profiles`): read straight from the
// config file, without conf or the schema (completion must answer quickly), and never a key.
import { readFileSync } from 'node:fs';
import { configDirFor, configFileIn } from './paths.js';
import { PROFILE_NAME } from './store.js';

/** Sorted names; none when there is no config or it cannot be read (completion prints no errors). */
export function profileNamesQuick(env: Record<string, string | undefined>): string[] {
  try {
    const data = JSON.parse(readFileSync(configFileIn(configDirFor(env)), 'utf8')) as { profiles?: unknown };
    const profiles = data.profiles;
    if (typeof profiles !== 'object' || profiles === null || Array.isArray(profiles)) return [];
    // only names crm accepts reach the shell: a hand-edited name could hold escape sequences
    return Object.keys(profiles)
      .filter((n) => PROFILE_NAME.test(n))
      .sort();
  } catch {
    return [];
  }
}
