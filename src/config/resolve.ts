// The active profile after precedence (CONTRACT §2): flags, environment (CRM_*), the chosen profile,
// the default profile. When flags and environment give a key and a base URL and name no profile,
// the config file is not read (conf never loads: startup time).
import type { AuthHeaderKind } from '../http/types.js';
import { UsageError } from '../http/errors.js';
import { deriveV1BaseUrl, validateBaseUrl } from './base-url.js';
import type { ConfigStore } from './store.js';
import { listNames, stripEmpty, unknownProfileError } from './store.js';
import type { ProfileFlags, ResolvedProfile, StoredProfile } from './types.js';
import { once } from '../util/once.js';

export type Env = Record<string, string | undefined>;

/** One layer of the precedence: what it says about the two roots. */
type UrlLayer = { base?: () => string; v1?: () => string };

export async function resolveProfile(
  flags: ProfileFlags,
  env: Env,
  loadStore: () => Promise<ConfigStore>,
  /** where a notice goes (a base URL completed with /api/v2); standard error in the CLI */
  notice?: (message: string) => void,
): Promise<ResolvedProfile> {
  const read = (name: string): string | undefined => nonEmpty(env[name]);
  const named = nonEmpty(flags.profile) ?? read('CRM_PROFILE');
  const envApiKey = read('CRM_API_KEY');
  const envAuth = read('CRM_AUTH_HEADER');
  const authFromEnv = envAuth === undefined ? undefined : parseAuthHeader(envAuth, 'CRM_AUTH_HEADER');

  // each root validated only when used (an overridden layer's broken URL does not matter), once (one notice)
  const root = (url: string | undefined, what: string, version: 'v1' | 'v2') =>
    url === undefined ? undefined : once(() => validateBaseUrl(url, what, { version, notice }));
  const urlLayer = (base: string | undefined, v1: string | undefined, what: string, v1What: string): UrlLayer => ({
    base: root(base, what, 'v2'),
    v1: root(v1, v1What, 'v1'),
  });
  const flagLayer = urlLayer(nonEmpty(flags.baseUrl), nonEmpty(flags.v1BaseUrl), '--base-url', '--v1-base-url');
  const envLayer = urlLayer(read('CRM_BASE_URL'), read('CRM_V1_BASE_URL'), 'CRM_BASE_URL', 'CRM_V1_BASE_URL');
  const environmentSuffices =
    named === undefined && envApiKey !== undefined && (flagLayer.base ?? envLayer.base) !== undefined;
  const { name, stored } = environmentSuffices ? {} : chooseProfile(await loadStore(), named);

  const where = `profile "${name}"`;
  const profileLayer = stored
    ? urlLayer(stored.base_url, stored.v1_base_url, `base_url of ${where}`, `v1_base_url of ${where}`)
    : {};
  const layers = [flagLayer, envLayer, profileLayer];
  return stripEmpty<ResolvedProfile>({
    authHeader: authFromEnv ?? stored?.auth_header ?? 'x-api-key',
    name,
    baseUrl: layers.find((l) => l.base)?.base?.(),
    v1BaseUrl: resolveV1BaseUrl(layers),
    apiKey: envApiKey ?? stored?.api_key,
    v1ApiKey: read('CRM_V1_API_KEY') ?? stored?.v1_api_key,
  });
}

/** The profile named (--profile or CRM_PROFILE), else the default one, if any. */
function chooseProfile(store: ConfigStore, named: string | undefined): { name?: string; stored?: StoredProfile } {
  const names = store.profileNames();
  if (named !== undefined) {
    const stored = store.getProfile(named);
    if (!stored) throw unknownProfileError(named, names, store.path);
    return { name: named, stored };
  }
  const dflt = store.defaultProfile();
  if (dflt === undefined) return {};
  const stored = store.getProfile(dflt);
  if (!stored) {
    throw new UsageError(
      `The default profile "${dflt}" named in ${store.path} does not exist. Profiles: ${listNames(names)}.`,
      {
        hint: 'Choose one with `crm keys use <profile>`, or name one with --profile.',
      },
    );
  }
  return { name: dflt, stored };
}

// The v1 root of the highest layer that names a URL (its own, else derived from its v2 URL): so
// `--base-url` of another server never pairs with the stored v1 URL of the old one.
function resolveV1BaseUrl(layers: UrlLayer[]): string | undefined {
  for (const layer of layers) {
    if (layer.v1) return layer.v1();
    if (layer.base) return deriveV1BaseUrl(layer.base());
  }
  return undefined;
}

export function parseAuthHeader(value: string, what = '--auth-header'): AuthHeaderKind {
  const v = value.trim().toLowerCase();
  if (v === 'x-api-key' || v === 'bearer') return v;
  throw new UsageError(
    `${what} must be "x-api-key" (sends X-Service-Api-Key: KEY) or "bearer" (sends Authorization: Bearer KEY), not "${value}".`,
  );
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}
