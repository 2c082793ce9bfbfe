// The profile as every command sees it, after precedence (CONTRACT §2): flags, environment,
// the chosen profile, the default profile.
import type { AuthHeaderKind } from '../http/types.js';

export interface ResolvedProfile {
  /** the profile name used, if any came from the config file */
  name?: string;
  baseUrl?: string;
  v1BaseUrl?: string;
  apiKey?: string;
  v1ApiKey?: string;
  authHeader: AuthHeaderKind;
}

export interface ProfileFlags {
  profile?: string;
  baseUrl?: string;
  v1BaseUrl?: string;
}

/** A profile as written in the config file (snake_case, like the contract). */
export interface StoredProfile {
  base_url: string;
  v1_base_url?: string;
  api_key?: string;
  v1_api_key?: string;
  auth_header: AuthHeaderKind;
}

export interface ConfigData {
  profiles: Record<string, StoredProfile>;
  default_profile?: string;
}
