// Base URL rules (CONTRACT §2): https everywhere except loopback, where http is allowed so the
// sandbox works; the version 1 root is derived from the version 2 root unless given.
import { UsageError } from '../http/errors.js';

/** localhost, 127.0.0.0/8 and [::1] (as WHATWG URL normalizes them). */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (host === '[::1]') return true;
  // URL has already normalized IPv4 forms (127.1, 0x7f.1, …) to dotted quads.
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/**
 * Checks a base URL and returns it normalized (no trailing slash). Throws UsageError naming
 * `what` (e.g. `--base-url`, `CRM_BASE_URL`) when it is not usable.
 */
export function validateBaseUrl(url: string, what = 'base URL'): string {
  let parsed: URL;
  try {
    parsed = new URL(url.trim());
  } catch {
    throw new UsageError(`The ${what} "${url}" is not a valid URL (expected e.g. https://crm.example.com/api/v2).`);
  }
  if (parsed.protocol === 'http:') {
    if (!isLoopbackHost(parsed.hostname)) {
      throw new UsageError(
        `The ${what} "${parsed.origin}" uses http:, which would send the API key unencrypted. Use https: (http: is allowed only for loopback hosts: localhost, 127.0.0.0/8, [::1]).`,
      );
    }
  } else if (parsed.protocol !== 'https:') {
    throw new UsageError(`The ${what} "${url}" must use https: (or http: on a loopback host).`);
  }
  if (parsed.username !== '' || parsed.password !== '') {
    throw new UsageError(`The ${what} must not carry a user name or password.`);
  }
  if (parsed.search !== '' || parsed.hash !== '') {
    throw new UsageError(`The ${what} "${url}" must not carry a query string or fragment.`);
  }
  return parsed.href.replace(/\/+$/, '');
}

/** `…/api/v2` → `…/api/v1`; undefined when the URL does not end with `/api/v2`. */
export function deriveV1BaseUrl(baseUrl: string): string | undefined {
  const trimmed = baseUrl.replace(/\/+$/, '');
  if (!/\/api\/v2$/.test(trimmed)) return undefined;
  return trimmed.replace(/\/api\/v2$/, '/api/v1');
}
