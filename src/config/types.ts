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
