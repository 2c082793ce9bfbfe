// The root and key a client of version 2 or 1 needs. A missing key is an AuthError (exit 3); a key
// of the other version is refused here, before it is sent anywhere (the server would only say 401).
import { AuthError, UsageError } from '../http/errors.js';
import { KEY_SHAPE, keyKind, V1_KEY_PREFIX, V2_KEY_PREFIX } from './key-kind.js';
import type { ResolvedProfile } from './types.js';

const VERSION = {
  v2: {
    name: 'version 2',
    key: 'apiKey',
    root: 'baseUrl',
    prefix: V2_KEY_PREFIX,
    missingHint:
      'Add one with `crm keys add <profile> --base-url URL` (the key is read from stdin or a hidden prompt), or set CRM_API_KEY.',
    otherHint: 'Store version 1 keys with `crm keys add <profile> --v1 …` or set them as CRM_V1_API_KEY.',
    noRoot: [
      'No base URL configured',
      'Pass --base-url, set CRM_BASE_URL, or add a profile with `crm keys add <profile> --base-url URL`.',
    ],
  },
  v1: {
    name: 'version 1',
    key: 'v1ApiKey',
    root: 'v1BaseUrl',
    prefix: V1_KEY_PREFIX,
    missingHint: 'Add one with `crm keys add <profile> --v1 --base-url URL`, or set CRM_V1_API_KEY.',
    otherHint: 'Store version 2 keys with `crm keys add <profile> …` (without --v1) or set them as CRM_API_KEY.',
    noRoot: [
      'No version 1 base URL configured',
      'Pass --v1-base-url or set CRM_V1_BASE_URL (it is derived from a base URL ending in /api/v2 otherwise).',
    ],
  },
} as const;

export function credentialsFor(
  profile: ResolvedProfile,
  kind: 'v1' | 'v2' = 'v2',
): { baseUrl: string; apiKey: string } {
  const where = profile.name === undefined ? '' : ` (profile "${profile.name}")`;
  const v = VERSION[kind];
  const other = VERSION[kind === 'v2' ? 'v1' : 'v2'];
  const key = profile[v.key];
  if (key !== undefined && !KEY_SHAPE.test(key)) {
    throw new AuthError(
      `The ${v.name} key${where} contains a space, line break or other character a key cannot have.`,
      {
        hint: 'Check CRM_API_KEY / CRM_V1_API_KEY or the saved profile (a key pasted with a line break or from a Windows file?).',
      },
    );
  }
  if (key === undefined) {
    const onlyV1 = kind === 'v2' && profile.v1ApiKey !== undefined;
    throw new AuthError(`No ${v.name} API key configured${where}.`, {
      hint: onlyV1
        ? 'Only a version 1 key is configured; version 1 commands are under `crm v1`. Add a version 2 key with `crm keys add <profile> --base-url URL` or set CRM_API_KEY.'
        : v.missingHint,
    });
  }
  if (keyKind(key) !== 'unknown' && keyKind(key) !== kind) {
    throw new AuthError(
      `The configured ${v.name} key${where} is a ${other.name} key (${other.prefix}…); ${v.name} needs a ${v.prefix}… key.`,
      {
        hint: v.otherHint,
      },
    );
  }
  const baseUrl = profile[v.root];
  if (baseUrl === undefined) throw new UsageError(`${v.noRoot[0]}${where}.`, { hint: v.noRoot[1] });
  return { baseUrl, apiKey: key };
}
