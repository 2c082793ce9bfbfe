// The options of the `keys` commands, as src/cli/ passes them.

export interface KeysAddOptions {
  /** the profile to create or update */
  profile: string;
  /** the version 2 root; required for a new profile (falls back to the global --base-url) */
  baseUrl?: string;
  /** the version 1 root; default: baseUrl with its final /api/v2 replaced by /api/v1 */
  v1BaseUrl?: string;
  /** x-api-key (default) or bearer */
  authHeader?: string;
  /** the key read is a version 1 key (`service_pk_…`), stored as the profile's v1 key */
  v1?: boolean;
  /** make this profile the default (the first profile always becomes the default) */
  default?: boolean;
  /** the same as `default` (the name src/cli/ uses, since `default` reads oddly in code) */
  makeDefault?: boolean;
}

export interface KeysProfileOptions {
  profile: string;
}

export interface KeysCheckOptions {
  /** check the version 1 key even when a version 2 key is configured */
  v1?: boolean;
  /** probes in flight at once (default 4) */
  concurrency?: number;
}

/** `-o json`/`-o ndjson` given explicitly: machine output on stdout for commands that otherwise only confirm on stderr. */
export function wantsJson(output: string | undefined): boolean {
  return output === 'json' || output === 'ndjson';
}
