// Base URL rules (CONTRACT §2): the transport rules (https except on loopback, no credentials) live
// in src/http/url.ts, the one home both the config and the HTTP core use; here, what path a root
// must have. A profile's `base_url` is the version 2 root (`…/api/v2`), its `v1_base_url` the
// version 1 root, derived from the version 2 root unless given.
import { UsageError } from '../http/errors.js';
import { baseUrlText, parseBaseUrl } from '../http/url.js';

export { isLoopbackHost } from '../http/url.js';

export type ApiVersion = 'v1' | 'v2';

export interface BaseUrlOptions {
  /** which root this is: `v2` (--base-url, the default) or `v1` (--v1-base-url) */
  version?: ApiVersion;
  /** told when the URL was completed (a notice on standard error) */
  notice?: (message: string) => void;
}

/**
 * Checks a base URL and returns it normalized (no trailing slash). Throws UsageError naming
 * `what` (e.g. `--base-url`, `CRM_BASE_URL`) when it is not usable.
 *
 * A server's address alone (`http://127.0.0.1:4010`, or `…/api`) is completed with `/api/v2`
 * (`/api/v1` for the version 1 root), with a notice: used as given, every request went to
 * `//contacts` and the server's 404 read like "record not found". A root of the other version is
 * refused, since every request would reach the wrong API. Other paths (a gateway's
 * `/crm/api/v2`, a proxy prefix) are taken as they are.
 */
export function validateBaseUrl(url: string, what = 'base URL', opts: BaseUrlOptions = {}): string {
  const version = opts.version ?? 'v2';
  const other: ApiVersion = version === 'v2' ? 'v1' : 'v2';
  const parsed = parseBaseUrl(url, what);
  const text = baseUrlText(parsed);
  const path = parsed.pathname.replace(/\/+$/, '');
  if (path === '' || /\/api$/i.test(path)) {
    const completed = `${text}${path === '' ? '/api' : ''}/${version}`;
    opts.notice?.(`Note: the ${what} ${text} has no API root; using ${completed} (the version ${version.slice(1)} root).`);
    return completed;
  }
  if (new RegExp(`/api/${other}$`, 'i').test(path)) {
    const fixed = text.replace(new RegExp(`/api/${other}$`, 'i'), `/api/${version}`);
    throw new UsageError(
      `The ${what} "${text}" is a version ${other.slice(1)} root, but it should be the version ${version.slice(1)} root (ending in /api/${version}).`,
      {
        hint:
          version === 'v2'
            ? `Use ${fixed}; the version 1 root is derived from it (/api/v2 → /api/v1), or given with --v1-base-url or CRM_V1_BASE_URL.`
            : `Use ${fixed}, or leave the version 1 root out: it is derived from the version 2 root.`,
      },
    );
  }
  return text;
}

/** `…/api/v2` → `…/api/v1`; undefined when the URL does not end with `/api/v2`. */
export function deriveV1BaseUrl(baseUrl: string): string | undefined {
  const trimmed = baseUrl.replace(/\/+$/, '');
  if (!/\/api\/v2$/.test(trimmed)) return undefined;
  return trimmed.replace(/\/api\/v2$/, '/api/v1');
}
