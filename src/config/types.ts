// The profile as every command sees it, after precedence (CONTRACT §2); the stored one is the schema's.
import type { AuthHeaderKind } from '../http/types.js';

export type { ConfigData, StoredProfile } from './schema.js';

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
