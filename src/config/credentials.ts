// What an HTTP client needs from the resolved profile, for version 2 or version 1: the root and the
// key of that version. Missing key → AuthError (exit 3, "no key configured"); a key of the other
// version is refused here, before it is sent anywhere (the server would only answer 401).
import { AuthError, UsageError } from '../http/errors.js';
import { keyKind, V1_KEY_PREFIX, V2_KEY_PREFIX } from './key-kind.js';
import type { ResolvedProfile } from './types.js';

export interface Credentials {
  baseUrl: string;
  apiKey: string;
}

/** A key is one token of visible ASCII: a space, line break or other control character means a bad paste. */
const KEY_SHAPE = /^[\x21-\x7e]+$/;

function checkShape(key: string, what: string, where: string): void {
  if (!KEY_SHAPE.test(key)) {
    throw new AuthError(`The ${what} key${where} contains a space, line break or other character a key cannot have.`, {
      hint: 'Check CRM_API_KEY / CRM_V1_API_KEY or the saved profile (a key pasted with a line break or from a Windows file?).',
    });
  }
}

export function credentialsFor(profile: ResolvedProfile, kind: 'v1' | 'v2' = 'v2'): Credentials {
  const where = profile.name === undefined ? '' : ` (profile "${profile.name}")`;
  const key = kind === 'v2' ? profile.apiKey : profile.v1ApiKey;
  if (key !== undefined) checkShape(key, kind === 'v2' ? 'version 2' : 'version 1', where);
  if (kind === 'v2') {
    if (profile.apiKey === undefined) {
      throw new AuthError(`No version 2 API key configured${where}.`, {
        hint:
          profile.v1ApiKey !== undefined
            ? 'Only a version 1 key is configured; version 1 commands are under `crm v1`. Add a version 2 key with `crm keys add <profile> --base-url URL` or set CRM_API_KEY.'
            : 'Add one with `crm keys add <profile> --base-url URL` (the key is read from stdin or a hidden prompt), or set CRM_API_KEY.',
      });
    }
    if (keyKind(profile.apiKey) === 'v1') {
      throw new AuthError(
        `The configured version 2 key${where} is a version 1 key (${V1_KEY_PREFIX}…); version 2 needs a ${V2_KEY_PREFIX}… key.`,
        { hint: 'Store version 1 keys with `crm keys add <profile> --v1 …` or set them as CRM_V1_API_KEY.' },
      );
    }
    if (profile.baseUrl === undefined) {
      throw new UsageError(`No base URL configured${where}.`, {
        hint: 'Pass --base-url, set CRM_BASE_URL, or add a profile with `crm keys add <profile> --base-url URL`.',
      });
    }
    return { baseUrl: profile.baseUrl, apiKey: profile.apiKey };
  }
  if (profile.v1ApiKey === undefined) {
    throw new AuthError(`No version 1 API key configured${where}.`, {
      hint: 'Add one with `crm keys add <profile> --v1 --base-url URL`, or set CRM_V1_API_KEY.',
    });
  }
  if (keyKind(profile.v1ApiKey) === 'v2') {
    throw new AuthError(
      `The configured version 1 key${where} is a version 2 key (${V2_KEY_PREFIX}…); version 1 needs a ${V1_KEY_PREFIX}… key.`,
      { hint: 'Store version 2 keys with `crm keys add <profile> …` (without --v1) or set them as CRM_API_KEY.' },
    );
  }
  if (profile.v1BaseUrl === undefined) {
    throw new UsageError(`No version 1 base URL configured${where}.`, {
      hint: 'Pass --v1-base-url or set CRM_V1_BASE_URL (it is derived from a base URL ending in /api/v2 otherwise).',
    });
  }
  return { baseUrl: profile.v1BaseUrl, apiKey: profile.v1ApiKey };
}
