// Where a request may go: only under the configured base URL's origin, the one the key belongs to.
import { UsageError } from './errors.js';

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK.test(hostname);
}

/** Parses and checks a base URL: https, or http on a loopback host (the sandbox). */
export function parseBaseUrl(baseUrl: string): URL {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new UsageError(`invalid base URL: ${baseUrl}`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname))) {
    throw new UsageError(`base URL must use https (http only on loopback hosts): ${url.origin}`);
  }
  if (url.username || url.password) throw new UsageError('base URL must not carry a user name or password');
  url.search = '';
  url.hash = '';
  url.pathname = url.pathname.replace(/\/+$/, '');
  return url;
}

export type Query = Record<string, string | number | boolean | undefined>;

/**
 * The URL for `path` under `base`. A relative path is appended to the base path (`/contacts` →
 * `/api/v2/contacts`); an absolute URL is accepted only on the base's origin, since the key is
 * never sent anywhere else.
 */
export function resolveUrl(base: URL, path: string, query?: Query): URL {
  let url: URL;
  const absolute = /^[a-z][a-z0-9+.-]*:/i.test(path);
  if (absolute) {
    try {
      url = new URL(path);
    } catch {
      throw new UsageError(`invalid URL: ${path}`);
    }
  } else {
    url = new URL(base.href);
    const [pathPart, search = ''] = splitOnce(path, '?');
    url.pathname = base.pathname + (pathPart.startsWith('/') ? pathPart : `/${pathPart}`);
    url.search = search;
  }
  if (url.origin !== base.origin) {
    throw new UsageError(`refusing to send the API key to ${url.origin}: only ${base.origin} (the base URL's origin) gets it`);
  }
  // `..` segments (also as %2e%2e) are folded by the URL parser: a relative path must stay under the root
  if (!absolute && url.pathname !== base.pathname && !url.pathname.startsWith(`${base.pathname}/`)) {
    throw new UsageError(`refusing ${path}: it leaves the API root ${base.pathname || '/'}`);
  }
  url.hash = '';
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value !== undefined) url.searchParams.set(name, String(value));
  }
  return url;
}

function splitOnce(text: string, sep: string): [string, string?] {
  const i = text.indexOf(sep);
  return i < 0 ? [text] : [text.slice(0, i), text.slice(i + 1)];
}
