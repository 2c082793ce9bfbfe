// Base URL rules (CONTRACT §2): what path a root must have (the transport rules are src/http/url.ts).
// `v1_base_url` is derived from the version 2 root `base_url` unless given.
import { UsageError } from '../http/errors.js';
import { baseUrlText, parseBaseUrl } from '../http/url.js';

type ApiVersion = 'v1' | 'v2';

/**
 * The base URL normalized, or a UsageError naming `what`. A bare address (or `…/api`) is completed
 * with `/api/v2` (or v1, `opts.version`) and `opts.notice`: as given, its 404s read like "record not
 * found". A root of the other version is refused; other paths (a gateway's prefix) are taken as they are.
 */
export function validateBaseUrl(
  url: string,
  what = 'base URL',
  opts: { version?: ApiVersion; notice?: (message: string) => void } = {},
): string {
  const version = opts.version ?? 'v2';
  const other: ApiVersion = version === 'v2' ? 'v1' : 'v2';
  const parsed = parseBaseUrl(url, what);
  const text = baseUrlText(parsed);
  const path = parsed.pathname.replace(/\/+$/, '');
  if (path === '' || /\/api$/i.test(path)) {
    const completed = `${text}${path === '' ? '/api' : ''}/${version}`;
    opts.notice?.(
      `Note: the ${what} ${text} has no API root; using ${completed} (the version ${version.slice(1)} root).`,
    );
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
  return /\/api\/v2$/.test(trimmed) ? trimmed.replace(/\/api\/v2$/, '/api/v1') : undefined;
}
