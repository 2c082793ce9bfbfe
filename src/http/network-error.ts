// What a failed connection means, in one wording for the API client and the transcript downloads:
// the class of failure (DNS, refused, TLS trust, proxy) and the next step, as a message and a hint.
import { readFileSync, statSync } from 'node:fs';
import { routeFor, type NoProxyMatch, type ProxyChoice, type Env } from './proxy-env.js';
import { fsReason } from '../util/fs-error.js';
import { isLoopbackHost } from './url.js';
import { type CrmError, isCrmError } from './errors.js';

/** Codes of a connection that never reached the other end (with a proxy: the proxy itself). */
const UNREACHED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
/** TLS codes that mean "this certificate is not signed by a CA Node trusts". */
const UNTRUSTED =
  /^(UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT(_LOCALLY)?|SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT|CERT_UNTRUSTED|UNABLE_TO_GET_CRL)$/;

/**
 * Whether a failed request's code (`CrmError.code`, as attempt.ts sets it) says none of it reached the
 * API: no connection (refused, no such host, no route, the connect timed out), no tunnel (every
 * `PROXY_*`: the proxy's answer to CONNECT, or no proxy), no TLS trust (the handshake comes before the
 * request). A write that failed so was not carried out: "not sent", never "in doubt". Pure.
 */
export function neverReached(code: string | undefined): boolean {
  if (code === undefined) return false;
  return (
    UNREACHED.has(code) ||
    code === 'UND_ERR_CONNECT_TIMEOUT' ||
    code.startsWith('PROXY_') ||
    UNTRUSTED.test(code) ||
    /^(ERR_TLS_|CERT_)/.test(code)
  );
}

/**
 * A request's final error saying none of it reached the API: the retry layer marked it `unsent` (no
 * attempt can have been carried out) and the last attempt never reached it (no connection, the proxy
 * refusing its tunnel, no TLS trust). Every later request to that host would fail alike. Pure.
 */
export function neverSent(err: unknown): err is CrmError {
  return isCrmError(err) && err.unsent === true && neverReached(err.code);
}

const codeOf = (err: unknown): string | undefined => {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
};

/**
 * What a proxy's answer to CONNECT means: 407 (the standard) or 401 (tinyproxy, to a wrong password) is
 * its authentication failing, `PROXY_AUTH_REQUIRED` when the proxy URL gives no credentials, else
 * `PROXY_AUTH_REFUSED`; any other status, a tunnel refused. Pure.
 */
export function tunnelStatusCode(status: number, hasCredentials: boolean): string {
  if (status === 401 || status === 407) return hasCredentials ? 'PROXY_AUTH_REFUSED' : 'PROXY_AUTH_REQUIRED';
  return `PROXY_TUNNEL_REFUSED_${status}`;
}

/**
 * An error through `proxy`, re-coded when it is the proxy's doing (its authentication failing (401,
 * 407), another answer to CONNECT, unreachable): nothing reached the API. Not retried, but for a
 * connection the proxy refused (`PROXY_REFUSED`: a proxy restarting, retry.ts), worded as unreachable.
 * Others keep their code.
 */
export function routeError(err: unknown, proxy: ProxyChoice): unknown {
  const message = err instanceof Error ? err.message : String(err);
  const tunnel = /Proxy response \((\d{3})\)/.exec(message)?.[1];
  const code = tunnel ? tunnelStatusCode(Number(tunnel), proxy.hasCredentials) : undefined;
  const unreached = codeOf(err) ?? '';
  if (code || UNREACHED.has(unreached)) {
    return Object.assign(new Error(message, { cause: err }), {
      code: code ?? (unreached === 'ECONNREFUSED' ? 'PROXY_REFUSED' : 'PROXY_UNREACHABLE'),
      proxy,
      proxyStatus: Number(tunnel) || undefined,
    });
  }
  return err instanceof Error ? Object.assign(err, { proxy }) : err;
}

/** A proxy that has not answered CONNECT within `ms`. */
export function tunnelTimeout(ms: number): Error {
  return Object.assign(new Error(`no answer to CONNECT within ${ms} ms`), { code: 'PROXY_TUNNEL_TIMEOUT', afterMs: ms });
}

/** A CONNECT under way that no request waits for any more (stopped, timed out): given up. */
export function tunnelAbandoned(): Error {
  return Object.assign(new Error('a tunnel the proxy had not opened yet was given up'), { code: 'PROXY_TUNNEL_ABANDONED' });
}

/**
 * A failed CONNECT, re-coded: closed, unanswered within `timeoutMs`, or answered with what is not
 * HTTP. undici retries a connection closed while connecting (UND_ERR_SOCKET) at once and for ever;
 * any other code fails the request. A proxy not reached, or answering a status, keeps its error.
 */
export function tunnelError(err: unknown, timeoutMs: number): unknown {
  const code = codeOf(err) ?? '';
  const name = (err as { name?: unknown } | undefined)?.name;
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || name === 'TimeoutError') return tunnelTimeout(timeoutMs);
  const tunnel =
    code === 'UND_ERR_SOCKET' || code === 'ECONNRESET' || code === 'EPIPE'
      ? 'PROXY_TUNNEL_DROPPED'
      : code.startsWith('HPE_') || name === 'HTTPParserError'
        ? 'PROXY_TUNNEL_GARBAGE'
        : undefined;
  const message = err instanceof Error ? err.message : String(err);
  return tunnel ? Object.assign(new Error(message, { cause: err }), { code: tunnel }) : err;
}

interface NetworkContext {
  /** `host:port` crm was trying to reach */
  target: string;
  timeoutMs: number;
  /** the proxy variables, for hints */
  env?: Env;
}

type Words = { message: string; hint?: string };
/** What a wording reads: the code, the target's host, ` (through the proxy …)`, the hint on HTTP_PROXY. */
interface Facts {
  code: string;
  err: unknown;
  ctx: NetworkContext;
  host: string;
  via: string;
  direct?: string;
  proxy: ProxyChoice;
}

const also = (f: Facts): string => (f.direct ? ` ${f.direct}` : '');
/** with a proxy: where a target reachable without it goes */
const noProxyHint = (f: Facts): string => `; if ${f.host} is reachable without the proxy, add it to NO_PROXY`;
const proxyName = ({ proxy }: Facts): string => `the proxy ${proxy.display} (${proxy.variable})`;
const tunnelHint = (f: Facts): string =>
  `check ${f.proxy.variable} (http://[USER:PASSWORD@]HOST:PORT) and that the proxy lets tunnels to ${f.ctx.target} through${noProxyHint(f)}`;
/** the proxy's status to CONNECT */
const statusOf = (f: Facts): number => (f.err as { proxyStatus?: number }).proxyStatus ?? 407;
/** the proxy's URL as the user should write it */
const withCredentials = (f: Facts): string => f.proxy.display.replace('//', '//USER:PASSWORD@');
/** the time a tunnel was waited for: its own bound (the connect timeout) or the request's */
const secondsOf = (f: Facts): string => `${((f.err as { afterMs?: number }).afterMs ?? f.ctx.timeoutMs) / 1000} s`;

/** The wording of each code, aliases folded (see describeNetwork); PROXY_*: set by routeError, so a proxy is there. */
const WORDING: Record<string, (f: Facts) => Words> = {
  ETIMEDOUT: (f) => ({
    message: `no complete answer within ${f.ctx.timeoutMs / 1000} s (timeout; --timeout covers the whole response)${f.via}`,
    hint: f.direct,
  }),
  ECONNRESET: (f) => ({ message: `the connection was closed before an answer (connection reset)${f.via}` }),
  ENOTFOUND: (f) => ({
    message: `host not found: ${f.host} (DNS lookup failed${f.code === 'EAI_AGAIN' ? ', temporarily' : ''})`,
    hint: f.direct
      ? `check the host name in the base URL. ${f.direct}`
      : f.ctx.env?.https_proxy || f.ctx.env?.HTTPS_PROXY
        ? 'check the host name in the base URL.'
        : 'check the host name in the base URL; where the internet is reached only through a proxy, set HTTPS_PROXY=http://PROXY:PORT.',
  }),
  ECONNREFUSED: (f) => ({
    message: `connection refused by ${f.ctx.target}`,
    hint: `is the server running, and is the port in the base URL right?${also(f)}`,
  }),
  PROXY_AUTH_REQUIRED: (f) => ({
    message: `${proxyName(f)} asked for a user name and password, and ${f.proxy.variable} gives none (HTTP ${statusOf(f)}: proxy authentication required)`,
    hint: `put the proxy's user name and password in ${f.proxy.variable}: ${withCredentials(f)} (percent-encode @ : / %)`,
  }),
  PROXY_AUTH_REFUSED: (f) => ({
    message: `${proxyName(f)} refused the user name and password in ${f.proxy.variable} (HTTP ${statusOf(f)}: the proxy's authentication failed)`,
    hint: `check the password and the user name (${f.proxy.user}) in ${f.proxy.variable}: ${withCredentials(f)} (percent-encode @ : / % in them)`,
  }),
  PROXY_TUNNEL_REFUSED: (f) => ({
    message: `${proxyName(f)} would not open a tunnel to ${f.ctx.target} (HTTP ${f.code.slice('PROXY_TUNNEL_REFUSED_'.length)})`,
    hint: `the proxy blocks ${f.ctx.target} or cannot reach it: check the base URL's host and ask your network administrators${noProxyHint(f)}`,
  }),
  PROXY_TUNNEL_DROPPED: (f) => ({
    message: `${proxyName(f)} closed the connection while opening a tunnel to ${f.ctx.target} (CONNECT)`,
    hint: tunnelHint(f),
  }),
  PROXY_TUNNEL_TIMEOUT: (f) => ({
    message: `${proxyName(f)} did not answer the request to open a tunnel to ${f.ctx.target} within ${secondsOf(f)} (CONNECT)`,
    hint: tunnelHint(f),
  }),
  PROXY_TUNNEL_GARBAGE: (f) => ({
    message: `${proxyName(f)} answered the request to open a tunnel to ${f.ctx.target} with something that is not HTTP (CONNECT)`,
    hint: `is ${f.proxy.display} an HTTP proxy? ${tunnelHint(f)}`,
  }),
  PROXY_UNREACHABLE: (f) => {
    const cause = codeOf((f.err as { cause?: unknown }).cause);
    const why =
      cause === 'ECONNREFUSED'
        ? 'connection refused'
        : cause === 'ENOTFOUND' || cause === 'EAI_AGAIN'
          ? 'host not found'
          : (cause ?? 'unreachable');
    return {
      message: `cannot reach ${proxyName(f)}: ${why}`,
      hint: `check ${f.proxy.variable} (http://[USER:PASSWORD@]HOST:PORT)${noProxyHint(f)}`,
    };
  },
};

/** The failure in words (after "… failed: ") and the next step. */
export function describeNetwork(err: unknown, ctx: NetworkContext): Words {
  const code = codeOf(err) ?? '';
  const raw = err instanceof Error ? err.message : String(err);
  const proxy = (err as { proxy?: ProxyChoice } | undefined)?.proxy;
  const via = proxy ? ` (through the proxy ${proxy.display} from ${proxy.variable})` : '';
  const host = ctx.target.replace(/:\d+$/, '');
  const key = code
    .replace(/^UND_ERR_(HEADERS|BODY|CONNECT)_TIMEOUT$/, 'ETIMEDOUT')
    .replace(/^UND_ERR_SOCKET$/, 'ECONNRESET')
    .replace(/^EAI_AGAIN$/, 'ENOTFOUND')
    .replace(/^PROXY_TUNNEL_REFUSED_\d+$/, 'PROXY_TUNNEL_REFUSED')
    .replace(/^PROXY_REFUSED$/, 'PROXY_UNREACHABLE');
  const words = Object.hasOwn(WORDING, key) && (proxy || !key.startsWith('PROXY_')) ? WORDING[key] : undefined;
  if (words) return words({ code, err, ctx, host, via, direct: directHint(ctx, host, proxy), proxy: proxy! });
  if (UNTRUSTED.test(code) || /CERT|SSL|TLS/.test(code)) return describeTls(code, raw, via, host, ctx.env?.NODE_EXTRA_CA_CERTS);
  return { message: `${raw}${via}` };
}

/** When the request went direct although a proxy variable is set: why (a NO_PROXY entry; only HTTP_PROXY set). */
function directHint(ctx: NetworkContext, host: string, proxy: ProxyChoice | undefined): string | undefined {
  const env = ctx.env ?? {};
  if (proxy || isLoopbackHost(host)) return undefined; // loopback is never proxied: proxy-env.ts
  if (env.https_proxy || env.HTTPS_PROXY) {
    let why: NoProxyMatch | undefined;
    try {
      why = routeFor(new URL(`https://${ctx.target}`), env).why;
    } catch {
      return undefined; // an unusable proxy URL stopped crm before any connection
    }
    return why
      ? `${host} matches ${why.entry} in ${why.noProxyVariable}, so crm connected directly, not through ${why.proxyVariable}: if ${host} is reached only through the proxy, remove ${why.entry} from ${why.noProxyVariable}.`
      : undefined;
  }
  if (!(env.http_proxy || env.HTTP_PROXY)) return undefined;
  return 'HTTP_PROXY is set, but crm (like curl) uses HTTPS_PROXY for https:// URLs: set HTTPS_PROXY too.';
}

/** A TLS failure: an untrusted CA (NODE_EXTRA_CA_CERTS), a wrong name, an expired certificate. */
function describeTls(code: string, raw: string, via: string, host: string, extraCa: string | undefined): Words {
  const untrusted = UNTRUSTED.test(code);
  const what = untrusted
    ? "the server's certificate is not signed by a CA this machine trusts"
    : code === 'ERR_TLS_CERT_ALTNAME_INVALID'
      ? `the server's certificate is not for ${host}`
      : code === 'CERT_HAS_EXPIRED'
        ? "the server's certificate has expired"
        : 'the secure connection failed';
  return {
    message: `TLS: ${what} (${raw})${via}`,
    hint: untrusted
      ? extraCa
        ? `NODE_EXTRA_CA_CERTS names ${extraCa}, ${extraCaProblem(extraCa)}: point it at the CA certificate of the proxy that inspects TLS or of the private CA (a PEM file)`
        : 'a company proxy that inspects TLS, or a private CA, signs with its own CA: point NODE_EXTRA_CA_CERTS at that CA certificate (a PEM file) and run crm again'
      : 'check the base URL; behind a TLS-inspecting proxy, NODE_EXTRA_CA_CERTS names its CA certificate (a PEM file)',
  };
}

/** Why the certificates of NODE_EXTRA_CA_CERTS (read by Node at start, a warning at most) did not help. */
function extraCaProblem(path: string): string {
  let text: string;
  try {
    if (statSync(path).isDirectory()) return 'which cannot be read (a folder, not a file)';
    text = readFileSync(path, 'latin1');
  } catch (err) {
    return `which cannot be read (${fsReason(err)})`;
  }
  if (!text.includes('-----BEGIN CERTIFICATE-----')) return 'which holds no PEM certificate (-----BEGIN CERTIFICATE-----)';
  return "but no certificate in it signed this server's";
}
