// Where a request may go: only under the base URL's origin, the one the key belongs to. The one home
// of the base URL's transport rules (src/config/base-url.ts adds the path rules).
import { USER_AGENT } from '../version.js';
import { UsageError } from './errors.js';
import type { AuthHeaderKind } from './types.js';

// localhost, 127.0.0.0/8, [::1] (as URL normalises them). Not `*.localhost`: Node asks the system
// resolver, which may send it to DNS, and an http: key would leave the machine in the clear.
const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK.test(hostname);
}

/** A base URL: https, or http on loopback; no credentials, query or fragment; trailing slashes dropped. */
export function parseBaseUrl(baseUrl: string, what = 'base URL'): URL {
  let url: URL;
  try {
    url = new URL(baseUrl.trim());
  } catch {
    throw new UsageError(`The ${what} "${baseUrl}" is not a valid URL (expected e.g. https://crm.example.com/api/v2).`);
  }
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    throw new UsageError(
      `The ${what} "${url.origin}" uses http:, which would send the API key unencrypted. Use https: (http: is allowed only for loopback hosts: localhost, 127.0.0.0/8, [::1]).`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`The ${what} "${baseUrl}" must use https: (or http: on a loopback host).`);
  }
  if (url.username !== '' || url.password !== '')
    throw new UsageError(`The ${what} must not carry a user name or password.`);
  if (url.search !== '' || url.hash !== '')
    throw new UsageError(`The ${what} "${baseUrl}" must not carry a query string or fragment.`);
  url.pathname = url.pathname.replace(/\/+$/, ''); // an http(s) URL keeps at least `/`
  return url;
}

/** The base URL as text, without a trailing slash (also for an empty path: `https://h`). */
export function baseUrlText(url: URL): string {
  return url.href.replace(/\/+$/, '');
}

export type Query = Record<string, string | number | boolean | undefined>;

/** a path from the root the URL parser takes as it is: no dot (no `..` segment), `%` only before other than `2e`, no `?#\\` */
const PLAIN_PATH = /^\/(?:[A-Za-z0-9_~!$&'()*+,;=:@/-]|%(?![2][eE])[0-9A-Fa-f]{2})*$/;

/**
 * The URL for `path` under `base`; an absolute URL only on the base's origin (the key goes nowhere else). A plain
 * path (every request crm builds: `/contacts`, a record's path, its encoded id) is joined as text and parsed once;
 * resolveUrlChecked's setters and checks cost a list read of 10,000 pages ~0.2 s, and give the same URL for it
 * (property-tested).
 */
export function resolveUrl(base: URL, path: string, query?: Query): URL {
  if (!PLAIN_PATH.test(path)) return resolveUrlChecked(base, path, query);
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) if (value !== undefined) search.set(name, String(value));
  const qs = search.toString();
  const root = base.pathname.replace(/\/+$/, '');
  return new URL(`${base.origin}${root}${path}${qs === '' ? '' : `?${qs}`}`);
}

/** resolveUrl for any path: absolute (on the base's origin only), with a query of its own, `..` refused. */
export function resolveUrlChecked(base: URL, path: string, query?: Query): URL {
  let url: URL;
  // A base with an empty path has pathname `/`: joined as is, `/contacts` became `//contacts`.
  const root = base.pathname.replace(/\/+$/, '');
  const absolute = /^[a-z][a-z0-9+.-]*:/i.test(path);
  if (absolute) {
    try {
      url = new URL(path);
    } catch {
      throw new UsageError(`invalid URL: ${path}`);
    }
  } else {
    url = new URL(base.href);
    const [pathPart = '', ...search] = path.split('?');
    url.pathname = root + (pathPart.startsWith('/') ? pathPart : `/${pathPart}`);
    url.search = search.join('?');
  }
  if (url.origin !== base.origin) {
    throw new UsageError(
      `refusing to send the API key to ${url.origin}: only ${base.origin} (the base URL's origin) gets it`,
    );
  }
  // `..` segments (also as %2e%2e) are folded by the URL parser: a relative path must stay under the root
  if (!absolute && url.pathname !== root && !url.pathname.startsWith(`${root}/`)) {
    throw new UsageError(`refusing ${path}: it leaves the API root ${root || '/'}`);
  }
  url.hash = '';
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value !== undefined) url.searchParams.set(name, String(value));
  }
  return url;
}

/** One path segment, percent-encoded; `.` and `..` refused (URL parsers resolve them, even encoded). */
export function pathSegment(value: string, what = 'id'): string {
  if (value === '' || value === '.' || value === '..') throw new UsageError(`invalid ${what} '${value}'`);
  return encodeURIComponent(value);
}

/** `/{resource}/{id}` with the id as one encoded segment. */
export function recordPath(resource: string, id: string, what = 'id'): string {
  return `/${resource}/${pathSegment(id, what)}`;
}

/** The URL and headers of an API request: the one assembly, which `--dry-run` prints (with the key masked). */
export function plannedRequest(
  api: { base: URL; apiKey: string; authHeader: AuthHeaderKind },
  req: { path: string; query?: Query; hasBody: boolean; idempotencyKey?: string },
): { url: URL; headers: Record<string, string> } {
  const { apiKey, authHeader } = api;
  return {
    url: resolveUrl(api.base, req.path, req.query),
    headers: {
      ...(authHeader === 'bearer' ? { authorization: `Bearer ${apiKey}` } : { 'x-service-api-key': apiKey }),
      accept: 'application/json',
      'user-agent': USER_AGENT,
      ...(req.hasBody ? { 'content-type': 'application/json' } : {}),
      ...(req.idempotencyKey === undefined ? {} : { 'idempotency-key': req.idempotencyKey }),
    },
  };
}
