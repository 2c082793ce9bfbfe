// Profiles and keys: where they are stored, how the active one is chosen, how keys are shown.
// The store's conf and zod load only when openConfigStore runs.
export type { ProfileFlags, ResolvedProfile } from './types.js';
export { keyKind, keyKindMismatch, describeKind, V1_KEY_PREFIX, V2_KEY_PREFIX } from './key-kind.js';
export type { KeyKind } from './key-kind.js';
// Masking lives with the HTTP core (it masks --verbose lines too); re-exported for convenience.
export { maskKey, redactKey } from '../http/mask.js';
export { validateBaseUrl, deriveV1BaseUrl, isLoopbackHost } from './base-url.js';
export { configDirFor, configFileIn, PROJECT_NAME, CONFIG_FILE_NAME } from './paths.js';
export {
  openConfigStore,
  checkProfileName,
  unknownProfileError,
  listNames,
  AUTH_HEADER_KINDS,
  FILE_MODE,
  DIR_MODE,
  PROFILE_NAME,
} from './store.js';
export type { ConfigStore, ConfigData, StoredProfile, OpenStoreOptions } from './store.js';
export { resolveProfile, parseAuthHeader, ENV } from './resolve.js';
export type { Env } from './resolve.js';
export { credentialsFor } from './credentials.js';
export type { Credentials } from './credentials.js';
