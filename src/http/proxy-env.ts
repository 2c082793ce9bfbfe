// Which proxy a request goes through, read from the environment as curl reads it (https_proxy,
// HTTPS_PROXY; no_proxy, NO_PROXY with hosts and their subdomains, IPs (matched whole, never as a
// suffix), CIDR, host:port, `*`), with two rules
// of ours that keep the key safe: http targets (loopback only) are never proxied (the key would go in
// the clear to the proxy's loopback), nor is loopback unless NO_PROXY holds `<-loopback>`. Pure.
import { BlockList, isIP } from 'node:net';
import { UsageError } from './errors.js';
import { isLoopbackHost } from './url.js';

export type Env = Record<string, string | undefined>;

export interface ProxyChoice {
  /** the proxy URL as undici takes it (credentials still in it) */
  url: string;
  /** where it came from, e.g. `HTTPS_PROXY`, for messages */
  variable: string;
  /** `host:port` of the proxy with no credentials: safe to print */
  display: string;
  /** the proxy URL with its password masked (`http://alice:****@proxy:3128`): safe to print */
  shown: string;
  /** whether the URL carries a user name and password */
  hasCredentials: boolean;
  /** the user name as written in the URL (percent-encoded), '' without: safe to print, unlike the password */
  user: string;
}

/** How a request to a target goes: through `proxy`, or direct (`direct`: why, when a proxy variable is set). */
export type Route =
  | { proxy: ProxyChoice; direct?: undefined; why?: undefined }
  | { proxy?: undefined; direct?: 'NO_PROXY' | 'loopback' | 'http'; why?: NoProxyMatch };

/** Which NO_PROXY entry sent a target direct, with the variables' names as set (for hints). */
export interface NoProxyMatch {
  entry: string;
  noProxyVariable: string;
  proxyVariable: string;
}

/** The entries of a NO_PROXY value. */
const entriesOf = (value: string | undefined): string[] => (value ?? '').split(/[\s,]+/).filter(Boolean);
/** The NO_PROXY variable crm reads (no_proxy first, as curl), its entries, and the target as they are matched. */
function noProxyOf(target: URL, env: Env) {
  const noProxyVariable = env.no_proxy !== undefined ? 'no_proxy' : 'NO_PROXY';
  const host = target.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return { noProxyVariable, noProxy: entriesOf(env[noProxyVariable]), host, port: target.port || '443' };
}

/** The route to `target`; a UsageError for an unusable proxy URL. */
export function routeFor(target: URL, env: Env = process.env): Route {
  const variable = env.https_proxy ? 'https_proxy' : env.HTTPS_PROXY ? 'HTTPS_PROXY' : undefined;
  if (!variable) return {};
  if (target.protocol !== 'https:') return { direct: 'http' };
  const { noProxyVariable, noProxy, host, port } = noProxyOf(target, env);
  if (isLoopbackHost(target.hostname) && !noProxy.includes('<-loopback>')) return { direct: 'loopback' };
  const entry = noProxy.find((e) => noProxyMatches(e, host, port));
  if (entry !== undefined) return { direct: 'NO_PROXY', why: { entry, noProxyVariable, proxyVariable: variable } };
  return { proxy: parseProxyUrl(env[variable]!, variable) };
}

/**
 * Why NO_PROXY did not send `target` direct, when it went through the proxy (what a hint may suggest):
 * no entry covers it (`unlisted`: adding one would); loopback, proxied on purpose by `<-loopback>`; an
 * entry covers its host for another port (`port`); an entry of NO_PROXY covers it, but no_proxy is set
 * and read instead (`unread`). `noProxyVariable`: the one crm reads. Pure.
 */
export type NotBypassed =
  | { why: 'unlisted' | 'loopback'; noProxyVariable: string }
  | { why: 'port' | 'unread'; noProxyVariable: string; entry: string };

export function notBypassed(target: URL, env: Env): NotBypassed {
  const { noProxyVariable, noProxy, host, port } = noProxyOf(target, env);
  const otherPort = noProxy.find((e) => {
    const m = HOST_PORT.exec(e);
    return m !== null && m[2] !== port && noProxyMatches(e, host, m[2]!); // as routeFor would read it on its port
  });
  if (otherPort !== undefined) return { why: 'port', noProxyVariable, entry: otherPort };
  const unread =
    noProxyVariable === 'no_proxy' ? entriesOf(env.NO_PROXY).find((e) => noProxyMatches(e, host, port)) : undefined;
  if (unread !== undefined) return { why: 'unread', noProxyVariable, entry: unread };
  if (isLoopbackHost(target.hostname) && noProxy.includes('<-loopback>')) return { why: 'loopback', noProxyVariable };
  return { why: 'unlisted', noProxyVariable };
}

/** The proxy for `target`, or undefined to go direct; a UsageError for an unusable proxy URL. */
export function proxyFor(target: URL, env: Env = process.env): ProxyChoice | undefined {
  return routeFor(target, env).proxy;
}

const DIRECT: Record<NonNullable<Route['direct']>, string> = {
  NO_PROXY: 'NO_PROXY',
  loopback: 'loopback is not proxied without <-loopback> in NO_PROXY',
  http: 'http:// is never proxied',
};

/** What `--verbose` says of a route: ` via proxy URL (VARIABLE)` (password masked), ` direct (why)`, or nothing without a proxy variable. */
export function routeText(route: Route): string {
  if (route.proxy) return ` via proxy ${route.proxy.shown} (${route.proxy.variable})`;
  return route.direct ? ` direct (${DIRECT[route.direct]})` : '';
}

/** Checks a proxy variable's value; a UsageError (exit 2, nothing sent) names the variable, never the password. */
export function parseProxyUrl(value: string, variable: string): ProxyChoice {
  const text = /^[a-z][a-z0-9+.-]*:\/\//i.test(value.trim()) ? value.trim() : `http://${value.trim()}`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`${variable} is not a URL${whyNotUrl(text)} (expected http://[user:password@]host:port)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`${variable} uses ${url.protocol}//; crm supports http:// and https:// proxies (not SOCKS)`);
  }
  const display = `${url.protocol}//${url.host}`;
  const form = `a proxy URL is http://[USER:PASSWORD@]HOST:PORT`;
  if (url.pathname !== '/' && url.pathname !== '') {
    throw new UsageError(`${variable} has a path (${url.pathname.slice(0, 40)}); ${form}`);
  }
  if (url.search || url.hash || text.endsWith('?') || text.endsWith('#')) {
    throw new UsageError(`${variable} has a query or fragment; ${form}`);
  }
  if (!decodes(url.username) || !decodes(url.password)) {
    throw new UsageError(
      `${variable} holds a % in its user name or password that is not percent-encoding (write %25 for %, %40 for @)`,
    );
  }
  const shown = url.username ? `${url.protocol}//${url.username}:****@${url.host}` : display;
  return { url: url.href, variable, display, shown, hasCredentials: url.username !== '', user: url.username };
}

/** What in its host:port (never the user name or password) keeps `text` from being a URL: `: …`, or nothing when unsure. */
function whyNotUrl(text: string): string {
  const authority = text.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').split(/[/?#]/)[0]!;
  const hostPort = authority.slice(authority.lastIndexOf('@') + 1).slice(0, 60);
  if (hostPort.includes('%'))
    return `: a stray % in ${hostPort} (a % belongs only in a percent-encoded user name or password)`;
  const port = /^(?:\[[^\]]*\]|[^:[\]]*):(.*)$/.exec(hostPort)?.[1];
  if (port !== undefined && !/^\d*$/.test(port)) return `: its port (${port}) is not a number`;
  if (hostPort.startsWith('[') && !hostPort.includes(']'))
    return `: the IPv6 address in ${hostPort} lacks its closing ]`;
  return '';
}

/** Whether a URL part's percent-encoding is whole (undici decodes the proxy's user name and password). */
function decodes(part: string): boolean {
  try {
    decodeURIComponent(part);
    return true;
  } catch {
    return false;
  }
}

/** a NO_PROXY entry host:port (an IPv6 entry has more than one colon and no port unless bracketed) */
const HOST_PORT = /^(\[[^\]]+\]|[^:]+):(\d+)$/;

function noProxyMatches(rawEntry: string, host: string, port: string): boolean {
  let entry = rawEntry.toLowerCase();
  if (entry === '*') return true;
  if (entry.startsWith('<')) return false; // <-loopback> and friends are rules, not hosts
  const withPort = HOST_PORT.exec(entry);
  if (withPort) {
    if (withPort[2] !== port) return false;
    entry = withPort[1]!;
  }
  entry = entry.replace(/^\[|\]$/g, '');
  if (entry.includes('/')) return inCidr(host, entry);
  // an IP address (curl's rule): the same address, or a range; never a suffix (`.0.0.1` is no domain)
  const family = isIP(host);
  if (family !== 0) return inCidr(host, `${entry}/${family === 4 ? 32 : 128}`);
  if (entry.startsWith('*.')) entry = entry.slice(1);
  const bare = entry.startsWith('.') ? entry.slice(1) : entry;
  return host === bare || host.endsWith(`.${bare}`);
}

/** `host` (an IP literal) inside `cidr` of the same family; anything else (a name, a bad entry) is not. */
function inCidr(host: string, cidr: string): boolean {
  const [net = '', bits] = cidr.split('/');
  const family = isIP(host);
  // leading zeros in an IPv4 entry (`010.0.0.0`) read as decimal
  const base = family === 4 && /^\d{1,3}(\.\d{1,3}){3}$/.test(net) ? net.replace(/(^|\.)0+(?=\d)/g, '$1') : net;
  if (family === 0 || isIP(base) !== family || !Number.isInteger(Number(bits))) return false;
  const type = family === 4 ? 'ipv4' : 'ipv6';
  const list = new BlockList();
  try {
    list.addSubnet(base, Number(bits), type);
  } catch {
    return false; // a prefix longer than the address
  }
  return list.check(host, type);
}
