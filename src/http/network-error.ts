// What a failed connection means, in one wording for the API client and the transcript downloads:
// the class of failure (DNS, refused, TLS trust, proxy) and the next step, as a message and a hint.
import { notBypassed, routeFor, type NoProxyMatch, type NotBypassed, type ProxyChoice, type Env } from './proxy-env.js';
import { isLoopbackHost } from './url.js';
import { type CrmError, isCrmError } from './errors.js';
import { UNTRUSTED, describeTls } from './tls-error.js';

/** Codes of a connection that never reached the other end (with a proxy: the proxy itself). */
const UNREACHED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

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
  return Object.assign(new Error(`no answer to CONNECT within ${ms} ms`), {
    code: 'PROXY_TUNNEL_TIMEOUT',
    afterMs: ms,
  });
}

/** A CONNECT under way that no request waits for any more (stopped, timed out): given up. */
export function tunnelAbandoned(): Error {
  return Object.assign(new Error('a tunnel the proxy had not opened yet was given up'), {
    code: 'PROXY_TUNNEL_ABANDONED',
  });
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
  link?: boolean; // the URL came in an API answer (a transcript link), not from the base URL: the base URL worked, never to check
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
/** with a proxy: where a target reachable without it goes, unless NO_PROXY already says (proxy-env.ts, notBypassed) */
const noProxyHint = (f: Facts): string => {
  let why: NotBypassed = { why: 'unlisted', noProxyVariable: 'NO_PROXY' };
  try {
    why = notBypassed(new URL(`https://${f.ctx.target}`), f.ctx.env ?? {});
  } catch {
    // a target that is no URL host: the plain suggestion
  }
  const v = why.noProxyVariable;
  if (why.why === 'loopback') return `; ${f.host} goes through the proxy because ${v} holds <-loopback>`;
  if (why.why === 'port')
    return `; ${v} lists ${why.entry}, for port ${why.entry.replace(/^.*:/, '')} only; this request is to port ${f.ctx.target.replace(/^.*:/, '')}`;
  if (why.why === 'unread')
    return `; NO_PROXY lists ${why.entry}, but no_proxy is set and crm reads it instead (as curl does): put ${why.entry} in no_proxy`;
  return `; if ${f.host} is reachable without the proxy, add it to ${v}`;
};
/** what a DNS failure's hint says to check: the base URL, or where a link (from an API that answered) points */
const hostToCheck = (f: Facts): string =>
  f.ctx.link ? `that ${f.host}, where the API's links point, resolves here` : 'the host name in the base URL';
const proxyName = ({ proxy }: Facts): string => `the proxy ${proxy.display} (${proxy.variable})`;
const tunnelHint = (f: Facts): string =>
  `check ${f.proxy.variable} (http://[USER:PASSWORD@]HOST:PORT) and that the proxy lets tunnels to ${f.ctx.target} through${noProxyHint(f)}`;
/** the proxy's status to CONNECT */
const statusOf = (f: Facts): number => (f.err as { proxyStatus?: number }).proxyStatus ?? 407;
/** the proxy's URL as the user should write it */
const withCredentials = (f: Facts): string => f.proxy.display.replace('//', '//USER:PASSWORD@');
/** the time a tunnel was waited for: its own bound (the connect timeout) or the request's */
const secondsOf = (f: Facts): string => `${((f.err as { afterMs?: number }).afterMs ?? f.ctx.timeoutMs) / 1000} s`;

/** A connection closed before its answer, in words (ECONNRESET and its aliases). */
const RESET = 'connection reset';
const proxyUnreachable = (f: Facts): Words => {
  const cause = codeOf((f.err as { cause?: unknown }).cause);
  return {
    message: `cannot reach ${proxyName(f)}: ${(cause && shortWords(cause)) ?? cause ?? 'unreachable'}`,
    hint: `check ${f.proxy.variable} (http://[USER:PASSWORD@]HOST:PORT)${noProxyHint(f)}`,
  };
};

/**
 * Each code (aliases folded: `wordingKey`) in words: `short`, a few for the notice before a retry ("retry 2
 * after connection reset", one line at 80 columns); `words`, the failure's message and hint (none: its
 * own message). PROXY_*: set by routeError, so a proxy is there. Every code a retry can see is here.
 */
const WORDING: Record<string, { short: string; words?: (f: Facts) => Words }> = {
  ETIMEDOUT: {
    short: 'a timeout',
    words: (f) => ({
      message: `no complete answer within ${f.ctx.timeoutMs / 1000} s (timeout; --timeout covers the whole response)${f.via}`,
      hint: f.direct,
    }),
  },
  ECONNRESET: {
    short: RESET,
    words: (f) => ({ message: `the connection was closed before an answer (${RESET})${f.via}` }),
  },
  ENOTFOUND: {
    short: 'host not found',
    words: (f) => ({
      message: `host not found: ${f.host} (DNS lookup failed${f.code === 'EAI_AGAIN' ? ', temporarily' : ''})`,
      hint: f.direct
        ? `check ${hostToCheck(f)}. ${f.direct}`
        : f.ctx.env?.https_proxy || f.ctx.env?.HTTPS_PROXY
          ? `check ${hostToCheck(f)}.`
          : `check ${hostToCheck(f)}; where the internet is reached only through a proxy, set HTTPS_PROXY=http://PROXY:PORT.`,
    }),
  },
  ECONNREFUSED: {
    short: 'connection refused',
    words: (f) => ({
      message: `connection refused by ${f.ctx.target}`,
      hint: f.ctx.link
        ? `the API answered, but nothing listens at ${f.ctx.target}, where its links point: is the download server running?${also(f)}`
        : `is the server running, and is the port in the base URL right?${also(f)}`,
    }),
  },
  EHOSTUNREACH: { short: 'no route to the host' },
  ENETUNREACH: { short: 'network unreachable' },
  TRUNCATED_BODY: { short: 'an answer cut off' },
  PROXY_AUTH_REQUIRED: {
    short: 'the proxy asked for a password',
    words: (f) => ({
      message: `${proxyName(f)} asked for a user name and password, and ${f.proxy.variable} gives none (HTTP ${statusOf(f)}: proxy authentication required)`,
      hint: `put the proxy's user name and password in ${f.proxy.variable}: ${withCredentials(f)} (percent-encode @ : / %)`,
    }),
  },
  PROXY_AUTH_REFUSED: {
    short: 'the proxy refused the password',
    words: (f) => ({
      message: `${proxyName(f)} refused the user name and password in ${f.proxy.variable} (HTTP ${statusOf(f)}: the proxy's authentication failed)`,
      hint: `check the password and the user name (${f.proxy.user}) in ${f.proxy.variable}: ${withCredentials(f)} (percent-encode @ : / % in them)`,
    }),
  },
  PROXY_TUNNEL_REFUSED: {
    short: 'the proxy refused the tunnel',
    words: (f) => ({
      message: `${proxyName(f)} would not open a tunnel to ${f.ctx.target} (HTTP ${f.code.slice('PROXY_TUNNEL_REFUSED_'.length)})`,
      hint: f.ctx.link
        ? `the API answered, but the proxy blocks ${f.ctx.target} (where the API's links point) or cannot reach it: the proxy must let tunnels to ${f.ctx.target} through (ask your network administrators)${noProxyHint(f)}`
        : `the proxy blocks ${f.ctx.target} or cannot reach it: check the base URL's host and ask your network administrators${noProxyHint(f)}`,
    }),
  },
  PROXY_TUNNEL_DROPPED: {
    short: 'the proxy closed the tunnel',
    words: (f) => ({
      message: `${proxyName(f)} closed the connection while opening a tunnel to ${f.ctx.target} (CONNECT)`,
      hint: tunnelHint(f),
    }),
  },
  PROXY_TUNNEL_TIMEOUT: {
    short: 'no answer from the proxy',
    words: (f) => ({
      message: `${proxyName(f)} did not answer the request to open a tunnel to ${f.ctx.target} within ${secondsOf(f)} (CONNECT)`,
      hint: tunnelHint(f),
    }),
  },
  PROXY_TUNNEL_GARBAGE: {
    short: 'a proxy answer that is not HTTP',
    words: (f) => ({
      message: `${proxyName(f)} answered the request to open a tunnel to ${f.ctx.target} with something that is not HTTP (CONNECT)`,
      hint: `is ${f.proxy.display} an HTTP proxy? ${tunnelHint(f)}`,
    }),
  },
  PROXY_TUNNEL_ABANDONED: { short: 'a tunnel given up' },
  PROXY_REFUSED: { short: 'the proxy refused the connection', words: proxyUnreachable },
  PROXY_UNREACHABLE: { short: 'the proxy could not be reached', words: proxyUnreachable },
};

/** The WORDING key of a code: its aliases folded (undici's, the OS's). */
const wordingKey = (code: string): string =>
  code
    .replace(/^UND_ERR_(HEADERS|BODY|CONNECT)_TIMEOUT$/, 'ETIMEDOUT')
    .replace(/^(UND_ERR_SOCKET|EPIPE|ECONNABORTED)$/, 'ECONNRESET')
    .replace(/^EAI_AGAIN$/, 'ENOTFOUND')
    .replace(/^PROXY_TUNNEL_REFUSED_\d+$/, 'PROXY_TUNNEL_REFUSED');

/** A code in a few words ("connection reset"), never the code itself; undefined for a code not in WORDING. Pure. */
export function shortWords(code: string): string | undefined {
  const key = wordingKey(code);
  return Object.hasOwn(WORDING, key) ? WORDING[key]!.short : undefined;
}

/** What failed an attempt, for the notice before a retry: `HTTP 503`, `connection reset`, the proxy's doing; never a code. Pure. */
export function failureWords(f: { status?: number; errorCode?: string }): string {
  const words = f.errorCode === undefined ? undefined : shortWords(f.errorCode);
  return words ?? (f.status === undefined ? 'a network error' : `HTTP ${f.status}`);
}

/** The failure in words (after "… failed: ") and the next step. */
export function describeNetwork(err: unknown, ctx: NetworkContext): Words {
  const code = codeOf(err) ?? '';
  const raw = err instanceof Error ? err.message : String(err);
  const proxy = (err as { proxy?: ProxyChoice } | undefined)?.proxy;
  const via = proxy ? ` (through the proxy ${proxy.display} from ${proxy.variable})` : '';
  const host = ctx.target.replace(/:\d+$/, '');
  const key = wordingKey(code);
  const words = Object.hasOwn(WORDING, key) && (proxy || !key.startsWith('PROXY_')) ? WORDING[key]!.words : undefined;
  if (words) return words({ code, err, ctx, host, via, direct: directHint(ctx, host, proxy), proxy: proxy! });
  if (UNTRUSTED.test(code) || /CERT|SSL|TLS/.test(code))
    return describeTls(code, raw, via, host, ctx.env?.NODE_EXTRA_CA_CERTS, ctx.link);
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
