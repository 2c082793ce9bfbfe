// What a failed connection means, in one wording for the API client and the transcript downloads:
// the class of failure (DNS, refused, TLS trust, proxy) and the next step, as a message and a hint.
import type { ProxyChoice, Env } from './proxy-env.js';
import { isLoopbackHost } from './url.js';

/** An error met on the way through a proxy; `code` says which (see routeError). */
class ProxyRouteError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly proxy: ProxyChoice,
    options: { cause: unknown },
  ) {
    super(message, options);
    this.name = 'ProxyRouteError';
  }
}

/** Codes of a connection that never reached the other end (with a proxy: the proxy itself). */
const UNREACHED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
/** TLS codes that mean "this certificate is not signed by a CA Node trusts". */
const UNTRUSTED =
  /^(UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT(_LOCALLY)?|SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT|CERT_UNTRUSTED|UNABLE_TO_GET_CRL)$/;

/**
 * An error through `proxy`, re-coded when it is the proxy's doing (407, another answer to CONNECT,
 * unreachable); none of those is retried: nothing reached the API. Others keep their code.
 */
export function routeError(err: unknown, proxy: ProxyChoice): unknown {
  const message = err instanceof Error ? err.message : String(err);
  const code = (err as { code?: unknown } | undefined)?.code;
  const tunnel = /Proxy response \((\d{3})\)/.exec(message);
  if (tunnel) {
    const status = Number(tunnel[1]);
    return new ProxyRouteError(message, status === 407 ? 'PROXY_AUTH_REQUIRED' : `PROXY_TUNNEL_REFUSED_${status}`, proxy, { cause: err });
  }
  if (typeof code === 'string' && UNREACHED.has(code)) {
    return new ProxyRouteError(message, 'PROXY_UNREACHABLE', proxy, { cause: err });
  }
  if (err instanceof Error) Object.assign(err, { proxy });
  return err;
}

interface NetworkContext {
  /** `host:port` crm was trying to reach */
  target: string;
  timeoutMs: number;
  /** the proxy variables, for hints */
  env?: Env;
}

/** The failure in words (after "… failed: ") and the next step. */
export function describeNetwork(err: unknown, ctx: NetworkContext): { message: string; hint?: string } {
  const code = (err as { code?: unknown } | undefined)?.code;
  const c = typeof code === 'string' ? code : undefined;
  const raw = err instanceof Error ? err.message : String(err);
  const proxy = (err as { proxy?: ProxyChoice } | undefined)?.proxy;
  const via = proxy ? ` (through the proxy ${proxy.display} from ${proxy.variable})` : '';
  const viaProxyHint = proxy ? `; if ${ctx.target.replace(/:\d+$/, '')} is reachable without the proxy, add it to NO_PROXY` : '';

  const viaProxy = proxy ? describeProxy(c, err, ctx, proxy, viaProxyHint) : undefined;
  if (viaProxy) return viaProxy;
  if (c === 'ETIMEDOUT' || c === 'UND_ERR_HEADERS_TIMEOUT' || c === 'UND_ERR_BODY_TIMEOUT' || c === 'UND_ERR_CONNECT_TIMEOUT') {
    return {
      message: `no complete answer within ${ctx.timeoutMs / 1000} s (timeout; --timeout covers the whole response)${via}`,
      hint: directHint(ctx, proxy),
    };
  }
  if (c === 'UND_ERR_SOCKET' || c === 'ECONNRESET') return { message: `the connection was closed before an answer (connection reset)${via}` };
  if (c === 'ECONNREFUSED') {
    return {
      message: `connection refused by ${ctx.target}`,
      hint: `is the server running, and is the port in the base URL right?${directHint(ctx, proxy) ? ` ${directHint(ctx, proxy)}` : ''}`,
    };
  }
  if (c === 'ENOTFOUND' || c === 'EAI_AGAIN') {
    return {
      message: `host not found: ${ctx.target.replace(/:\d+$/, '')} (DNS lookup failed${c === 'EAI_AGAIN' ? ', temporarily' : ''})`,
      hint: `check the host name in the base URL; where the internet is reached only through a proxy, set HTTPS_PROXY=http://PROXY:PORT.${directHint(ctx, proxy) ? ` ${directHint(ctx, proxy)}` : ''}`,
    };
  }
  if (c && (UNTRUSTED.test(c) || /CERT|SSL|TLS/.test(c))) return describeTls(c, raw, via, ctx);
  return { message: `${raw}${via}` };
}

/** When the request went direct although only HTTP_PROXY is set: say why it was not used. */
function directHint(ctx: NetworkContext, proxy: ProxyChoice | undefined): string | undefined {
  const env = ctx.env ?? {};
  if (isLoopbackHost(ctx.target.replace(/:\d+$/, ''))) return undefined; // never proxied: proxy-env.ts
  if (proxy || env.https_proxy || env.HTTPS_PROXY || !(env.http_proxy || env.HTTP_PROXY)) return undefined;
  return 'HTTP_PROXY is set, but crm (like curl) uses HTTPS_PROXY for https:// URLs: set HTTPS_PROXY too.';
}

/** The proxy's own failures (407, a refused CONNECT, the proxy not reachable), or undefined. */
function describeProxy(
  c: string | undefined,
  err: unknown,
  ctx: NetworkContext,
  proxy: ProxyChoice,
  viaProxyHint: string,
): { message: string; hint?: string } | undefined {
  if (c === 'PROXY_AUTH_REQUIRED') {
    return {
      message: `the proxy ${proxy.display} (${proxy.variable}) requires authentication (HTTP 407 Proxy Authentication Required)`,
      hint: proxy.hasCredentials
        ? `the proxy refused the user name and password in ${proxy.variable}: check them (characters such as @ : / % must be percent-encoded)`
        : `put the proxy's user name and password in ${proxy.variable}: http://USER:PASSWORD@${proxy.display.replace(/^https?:\/\//, '')} (percent-encode @ : / %)`,
    };
  }
  if (c?.startsWith('PROXY_TUNNEL_REFUSED_')) {
    const status = c.slice('PROXY_TUNNEL_REFUSED_'.length);
    return {
      message: `the proxy ${proxy.display} (${proxy.variable}) would not open a tunnel to ${ctx.target} (HTTP ${status})`,
      hint: `the proxy blocks ${ctx.target} or cannot reach it: check the base URL's host and ask your network administrators${viaProxyHint}`,
    };
  }
  if (c === 'PROXY_UNREACHABLE') {
    const cause = (err as { cause?: { code?: string } }).cause?.code;
    const why =
      cause === 'ECONNREFUSED'
        ? 'connection refused'
        : cause === 'ENOTFOUND' || cause === 'EAI_AGAIN'
          ? 'host not found'
          : (cause ?? 'unreachable');
    return {
      message: `cannot reach the proxy ${proxy.display} (${proxy.variable}): ${why}`,
      hint: `check ${proxy.variable} (http://[USER:PASSWORD@]HOST:PORT)${viaProxyHint}`,
    };
  }
  return undefined;
}

/** A TLS failure: an untrusted CA (NODE_EXTRA_CA_CERTS), a wrong name, an expired certificate. */
function describeTls(c: string, raw: string, via: string, ctx: NetworkContext): { message: string; hint?: string } {
  const untrusted = UNTRUSTED.test(c);
  const what = untrusted
    ? "the server's certificate is not signed by a CA this machine trusts"
    : c === 'ERR_TLS_CERT_ALTNAME_INVALID'
      ? `the server's certificate is not for ${ctx.target.replace(/:\d+$/, '')}`
      : c === 'CERT_HAS_EXPIRED'
        ? "the server's certificate has expired"
        : 'the secure connection failed';
  return {
    message: `TLS: ${what} (${raw})${via}`,
    hint: untrusted
      ? 'a company proxy that inspects TLS, or a private CA, signs with its own CA: point NODE_EXTRA_CA_CERTS at that CA certificate (a PEM file) and run crm again'
      : 'check the base URL; behind a TLS-inspecting proxy, NODE_EXTRA_CA_CERTS names its CA certificate (a PEM file)',
  };
}
