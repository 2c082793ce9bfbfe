// `crm keys add <profile> --base-url URL [--v1-base-url URL] [--auth-header x-api-key|bearer] [--v1] [--default]`:
// reads a key (stdin or hidden prompt), checks its form against the version asked for, stores it.
import { deriveV1BaseUrl, validateBaseUrl } from '../../config/base-url.js';
import { keyKindMismatch } from '../../config/key-kind.js';
import { parseAuthHeader } from '../../config/resolve.js';
import { checkProfileName, openConfigStore, type StoredProfile } from '../../config/store.js';
import { UsageError } from '../../http/errors.js';
import { maskKey } from '../../http/mask.js';
import type { Ctx } from '../context.js';
import { printIfJson } from '../shared/output-options.js';
import type { KeysAddOptions } from './command.js';
import { readKey } from './read-key.js';

export async function keysAdd(opts: KeysAddOptions, ctx: Ctx): Promise<void> {
  const name = checkProfileName(opts.profile);
  const version = opts.v1 ? 'v1' : 'v2';
  // Everything that can be refused is checked before the key is asked for.
  const store = await openConfigStore(ctx.configDir());
  const existing = store.getProfile(name);

  const givenBase = opts.baseUrl ?? ctx.globals.baseUrl;
  if (givenBase === undefined && existing === undefined) {
    throw new UsageError(
      `--base-url is required for a new profile (the version 2 root, e.g. https://crm.example.com/api/v2).`,
    );
  }
  // A server's address alone is completed with /api/v2 (and said); a version 1 root is refused.
  const notice = (message: string): void => ctx.warn(message);
  const baseUrl =
    givenBase === undefined ? existing!.base_url : validateBaseUrl(givenBase, '--base-url', { version: 'v2', notice });
  const givenV1 = opts.v1BaseUrl ?? ctx.globals.v1BaseUrl;
  let v1BaseUrl: string | undefined;
  if (givenV1 !== undefined) v1BaseUrl = validateBaseUrl(givenV1, '--v1-base-url', { version: 'v1', notice });
  else if (existing?.base_url === baseUrl) v1BaseUrl = existing.v1_base_url;
  const derivedV1 = deriveV1BaseUrl(baseUrl);
  if (v1BaseUrl === derivedV1) v1BaseUrl = undefined; // nothing to store: it is the default
  const authHeader =
    opts.authHeader !== undefined ? parseAuthHeader(opts.authHeader) : (existing?.auth_header ?? 'x-api-key');

  const prompt =
    version === 'v1' ? `Version 1 API key for "${name}" (service_pk_…): ` : `API key for "${name}" (service_live_…): `;
  const key = await readKey(ctx, prompt);
  const mismatch = keyKindMismatch(key, version);
  if (mismatch) throw new UsageError(mismatch);

  const profile: StoredProfile = {
    ...existing,
    base_url: baseUrl,
    v1_base_url: v1BaseUrl,
    auth_header: authHeader,
    ...(version === 'v1' ? { v1_api_key: key } : { api_key: key }),
  };
  const replaced = version === 'v1' ? existing?.v1_api_key !== undefined : existing?.api_key !== undefined;
  store.setProfile(name, profile);
  if (opts.default && store.defaultProfile() !== name) store.setDefault(name);
  const isDefault = store.defaultProfile() === name;

  const masked = maskKey(key);
  const what = version === 'v1' ? 'version 1 key' : 'key';
  ctx.warn(
    `${replaced ? 'Replaced the' : 'Saved the'} ${what} ${masked} in profile "${name}" (${version === 'v1' ? (v1BaseUrl ?? derivedV1 ?? baseUrl) : baseUrl})` +
      `${isDefault ? ', the default profile' : ''}. Check it with: crm keys-check${isDefault ? '' : ` --profile ${name}`}${version === 'v1' ? ' --v1' : ''}`,
  );
  if (version === 'v2' && derivedV1 === undefined && v1BaseUrl === undefined) {
    ctx.warn(
      `Note: ${baseUrl} does not end in /api/v2, so no version 1 root can be derived; give one with --v1-base-url if you use \`crm v1\`.`,
    );
  }
  await printIfJson(ctx, { profile: name, base_url: baseUrl, key: masked, key_kind: version, default: isDefault });
}
