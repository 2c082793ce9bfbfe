// One wording for network failures (src/http/network-error.ts), shared by API requests and
// transcript downloads: the class of the failure and the next step.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  describeNetwork,
  failureWords,
  neverReached,
  neverSent,
  routeError,
  tunnelError,
  tunnelStatusCode,
} from '../../../src/http/network-error.js';
import { ServerError } from '../../../src/http/errors.js';
import { parseProxyUrl } from '../../../src/http/proxy-env.js';
import { RETRYABLE_ERROR_CODES, shouldRetry } from '../../../src/http/retry.js';
import { runs } from '../../helpers/property.js';

const err = (code: string, message = 'boom') => Object.assign(new Error(message), { code });
const ctx = { target: 'api.example.com:443', timeoutMs: 30_000 };
const proxy = parseProxyUrl('http://u:secret@proxy.corp:3128', 'HTTPS_PROXY');

describe('describeNetwork', () => {
  it.each([
    'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
    'SELF_SIGNED_CERT_IN_CHAIN',
    'DEPTH_ZERO_SELF_SIGNED_CERT',
    'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  ])('%s: an untrusted certificate, next step NODE_EXTRA_CA_CERTS', (code) => {
    const d = describeNetwork(err(code, 'unable to verify'), ctx);
    expect(d.message).toBe(
      "TLS: the server's certificate is not signed by a CA this machine trusts (unable to verify)",
    );
    expect(d.hint).toMatch(/NODE_EXTRA_CA_CERTS/);
  });

  it('other TLS failures say what is wrong and still name NODE_EXTRA_CA_CERTS', () => {
    expect(describeNetwork(err('ERR_TLS_CERT_ALTNAME_INVALID'), ctx).message).toMatch(
      /^TLS: the server's certificate is not for api\.example\.com /,
    );
    expect(describeNetwork(err('CERT_HAS_EXPIRED'), ctx).message).toMatch(/^TLS: the server's certificate has expired/);
    expect(describeNetwork(err('CERT_HAS_EXPIRED'), ctx).hint).toMatch(/NODE_EXTRA_CA_CERTS/);
  });

  it('DNS: ENOTFOUND and EAI_AGAIN', () => {
    expect(describeNetwork(err('ENOTFOUND'), ctx).message).toBe('host not found: api.example.com (DNS lookup failed)');
    expect(describeNetwork(err('EAI_AGAIN'), ctx).message).toBe(
      'host not found: api.example.com (DNS lookup failed, temporarily)',
    );
    expect(describeNetwork(err('ENOTFOUND'), ctx).hint).toMatch(/HTTPS_PROXY/);
  });

  it('says HTTP_PROXY is not used for https (as curl) when only it is set, and not for loopback', () => {
    expect(describeNetwork(err('ECONNREFUSED'), { ...ctx, env: { HTTP_PROXY: 'http://p:1' } }).hint).toMatch(
      /uses HTTPS_PROXY for https:\/\/ URLs/,
    );
    expect(
      describeNetwork(err('ECONNREFUSED'), { ...ctx, env: { HTTP_PROXY: 'http://p:1', HTTPS_PROXY: 'http://p:1' } })
        .hint,
    ).not.toMatch(/HTTP_PROXY/);
    expect(
      describeNetwork(err('ECONNREFUSED'), { ...ctx, target: '127.0.0.1:4010', env: { HTTP_PROXY: 'http://p:1' } })
        .hint,
    ).not.toMatch(/HTTP_PROXY/);
  });

  it('timeouts and resets keep their wording, naming the proxy when one was used', () => {
    expect(describeNetwork(err('ETIMEDOUT'), ctx).message).toBe(
      'no complete answer within 30 s (timeout; --timeout covers the whole response)',
    );
    const viaProxy = routeError(err('ECONNRESET'), proxy);
    expect(describeNetwork(viaProxy, ctx).message).toBe(
      'the connection was closed before an answer (connection reset) (through the proxy http://proxy.corp:3128 from HTTPS_PROXY)',
    );
  });
});

describe('routeError', () => {
  it("re-codes the proxy's answers to CONNECT and a proxy that cannot be reached (refused: PROXY_REFUSED, retried)", () => {
    expect(routeError(err('UND_ERR_ABORTED', 'Proxy response (407) !== 200 when HTTP Tunneling'), proxy)).toMatchObject(
      {
        code: 'PROXY_AUTH_REFUSED',
        proxyStatus: 407,
      },
    );
    expect(routeError(err('UND_ERR_ABORTED', 'Proxy response (502) !== 200 when HTTP Tunneling'), proxy)).toMatchObject(
      {
        code: 'PROXY_TUNNEL_REFUSED_502',
      },
    );
    expect(routeError(err('ECONNREFUSED'), proxy)).toMatchObject({ code: 'PROXY_REFUSED' });
    expect(routeError(err('ENOTFOUND'), proxy)).toMatchObject({ code: 'PROXY_UNREACHABLE' });
    expect(routeError(err('UNABLE_TO_VERIFY_LEAF_SIGNATURE'), proxy)).toMatchObject({
      code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
    });
  });

  it('a connection the proxy refused reads as before: cannot reach the proxy, connection refused', () => {
    const d = describeNetwork(routeError(err('ECONNREFUSED'), proxy), ctx);
    expect(d.message).toBe('cannot reach the proxy http://proxy.corp:3128 (HTTPS_PROXY): connection refused');
    expect(d.hint).toMatch(/^check HTTPS_PROXY /);
  });

  it('property: through a proxy, only a refused connection to it is retried for every method (a restart: nothing reached the API), up to --max-retries', () => {
    const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
    const codes = ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH'];
    fc.assert(
      fc.property(
        fc.constantFrom(...codes),
        fc.constantFrom(...methods),
        fc.boolean(),
        fc.nat(10),
        fc.nat(10),
        fc.constantFrom(
          ...[401, 403, 407, 502].map((s) => `Proxy response (${s}) !== 200 when HTTP Tunneling`),
          'connect failed',
        ),
        (code, method, hasIdempotencyKey, attempt, maxRetries, message) => {
          const answered = message.startsWith('Proxy response');
          const routed = routeError(err(answered ? 'UND_ERR_ABORTED' : code, message), proxy) as { code: string };
          const retried = shouldRetry({ method, errorCode: routed.code, hasIdempotencyKey, attempt, maxRetries });
          expect(retried).toBe(!answered && code === 'ECONNREFUSED' && attempt < maxRetries);
          // without a proxy a refused connection stays not retried: a wrong base URL fails at once
          expect(shouldRetry({ method, errorCode: code, hasIdempotencyKey, attempt, maxRetries })).toBe(false);
        },
      ),
      runs(),
    );
  });

  it('never puts the proxy password in a message', () => {
    for (const e of ['Proxy response (407) !== 200', 'Proxy response (401) !== 200', 'Proxy response (403) !== 200']) {
      const d = describeNetwork(routeError(err('UND_ERR_ABORTED', e), proxy), ctx);
      expect(`${d.message} ${d.hint}`).not.toContain('secret');
    }
    const d = describeNetwork(routeError(err('ECONNREFUSED'), proxy), ctx);
    expect(`${d.message} ${d.hint}`).not.toContain('secret');
  });
});

describe("the proxy's authentication failing: 407, or 401 (tinyproxy's answer to a wrong password)", () => {
  const bare = parseProxyUrl('http://proxy.corp:3128', 'https_proxy');
  const tunnel = (status: number) => err('UND_ERR_ABORTED', `Proxy response (${status}) !== 200 when HTTP Tunneling`);

  it.each([401, 407])(
    '%i with no credentials in the proxy URL: the proxy asked for them, and how to give them',
    (status) => {
      const e = routeError(tunnel(status), bare);
      expect(e).toMatchObject({ code: 'PROXY_AUTH_REQUIRED', proxyStatus: status });
      const d = describeNetwork(e, ctx);
      expect(d.message).toBe(
        `the proxy http://proxy.corp:3128 (https_proxy) asked for a user name and password, and https_proxy gives none (HTTP ${status}: proxy authentication required)`,
      );
      expect(d.hint).toBe(
        "put the proxy's user name and password in https_proxy: http://USER:PASSWORD@proxy.corp:3128 (percent-encode @ : / %)",
      );
    },
  );

  it.each([401, 407])(
    '%i with credentials: the proxy refused them; the user is named, never the password, no word of blocking',
    (status) => {
      const p = parseProxyUrl('https://al%40ice:s3cr%3At@proxy.corp:3128', 'HTTPS_PROXY');
      const e = routeError(tunnel(status), p);
      expect(e).toMatchObject({ code: 'PROXY_AUTH_REFUSED', proxyStatus: status });
      const d = describeNetwork(e, ctx);
      expect(d.message).toBe(
        `the proxy https://proxy.corp:3128 (HTTPS_PROXY) refused the user name and password in HTTPS_PROXY (HTTP ${status}: the proxy's authentication failed)`,
      );
      expect(d.hint).toBe(
        'check the password and the user name (al%40ice) in HTTPS_PROXY: https://USER:PASSWORD@proxy.corp:3128 (percent-encode @ : / % in them)',
      );
      expect(`${d.message} ${d.hint}`).not.toMatch(/s3cr|blocks|administrators/);
    },
  );

  it('only 401 and 407 are read as authentication; any other status to CONNECT is a tunnel refused (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 100, max: 599 }), fc.boolean(), (status, hasCredentials) => {
        const code = tunnelStatusCode(status, hasCredentials);
        if (status === 401 || status === 407)
          expect(code).toBe(hasCredentials ? 'PROXY_AUTH_REFUSED' : 'PROXY_AUTH_REQUIRED');
        else expect(code).toBe(`PROXY_TUNNEL_REFUSED_${status}`);
      }),
      runs(),
    );
  });
});

describe('tunnelError: a CONNECT that failed without a status', () => {
  it.each([
    [
      'UND_ERR_SOCKET',
      'PROXY_TUNNEL_DROPPED',
      'closed the connection while opening a tunnel to api.example.com:443 (CONNECT)',
    ],
    [
      'ECONNRESET',
      'PROXY_TUNNEL_DROPPED',
      'closed the connection while opening a tunnel to api.example.com:443 (CONNECT)',
    ],
    [
      'HPE_INVALID_CONSTANT',
      'PROXY_TUNNEL_GARBAGE',
      'answered the request to open a tunnel to api.example.com:443 with something that is not HTTP',
    ],
    [
      'UND_ERR_HEADERS_TIMEOUT',
      'PROXY_TUNNEL_TIMEOUT',
      'did not answer the request to open a tunnel to api.example.com:443 within 10 s',
    ],
  ])(
    '%s is %s (never UND_ERR_SOCKET: undici would reconnect at once, for ever), worded with the proxy',
    (code, tunnel, words) => {
      const e = routeError(tunnelError(err(code), 10_000), proxy);
      expect(e).toMatchObject({ code: tunnel });
      const d = describeNetwork(e, ctx);
      expect(d.message).toBe(
        `the proxy http://proxy.corp:3128 (HTTPS_PROXY) ${d.message.slice(d.message.indexOf(') ') + 2)}`,
      );
      expect(d.message).toContain(words);
      expect(d.hint).toMatch(
        /^(is http:\/\/proxy\.corp:3128 an HTTP proxy\? )?check HTTPS_PROXY .*add it to NO_PROXY$/,
      );
      expect(`${d.message} ${d.hint}`).not.toContain('secret');
    },
  );

  it('an abort by the tunnel timeout is a timeout; a refused or unreachable proxy keeps its error', () => {
    const timeout = Object.assign(new Error('The operation was aborted due to timeout'), { name: 'TimeoutError' });
    expect(tunnelError(timeout, 2_000)).toMatchObject({ code: 'PROXY_TUNNEL_TIMEOUT', afterMs: 2_000 });
    const refused = err('ECONNREFUSED');
    expect(tunnelError(refused, 2_000)).toBe(refused);
  });
});

describe('neverReached: a failure before any of the request reached the API (a write so failed is "not sent", never "in doubt")', () => {
  it.each([
    'ECONNREFUSED',
    'ENOTFOUND',
    'EAI_AGAIN',
    'EHOSTUNREACH',
    'ENETUNREACH',
    'UND_ERR_CONNECT_TIMEOUT',
    'PROXY_AUTH_REQUIRED',
    'PROXY_AUTH_REFUSED',
    'PROXY_TUNNEL_REFUSED_403',
    'PROXY_REFUSED',
    'PROXY_UNREACHABLE',
    'PROXY_TUNNEL_TIMEOUT',
    'PROXY_TUNNEL_DROPPED',
    'PROXY_TUNNEL_GARBAGE',
    'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
    'DEPTH_ZERO_SELF_SIGNED_CERT',
    'ERR_TLS_CERT_ALTNAME_INVALID',
    'CERT_HAS_EXPIRED',
  ])('%s: never reached', (code) => {
    expect(neverReached(code)).toBe(true);
  });
  it.each([
    undefined,
    'ECONNRESET',
    'UND_ERR_SOCKET',
    'UND_ERR_HEADERS_TIMEOUT',
    'UND_ERR_BODY_TIMEOUT',
    'TIMEOUT',
    'NETWORK_ERROR',
    'EPIPE',
    'BODY_TOO_LARGE',
  ])('%s: it may have reached the API (a write so failed is in doubt)', (code) => {
    expect(neverReached(code)).toBe(false);
  });
});

describe('neverSent: a final error none of whose attempts reached the API', () => {
  it('needs the retry layer to have marked it unsent and its own code to be one that never reached', () => {
    const marked = (code: string, unsent?: boolean) =>
      Object.assign(new ServerError('x', { code }), unsent === undefined ? {} : { unsent });
    expect(neverSent(marked('PROXY_REFUSED', true))).toBe(true);
    expect(neverSent(marked('PROXY_AUTH_REFUSED', true))).toBe(true);
    expect(neverSent(marked('PROXY_REFUSED'))).toBe(false); // an earlier attempt may have reached it
    expect(neverSent(marked('ECONNRESET', true))).toBe(false);
    expect(neverSent(err('PROXY_REFUSED'))).toBe(false); // not a request's final error
  });
});

describe('failureWords: what failed an attempt, in the notice before a retry (new-user trial: "retry 5 after PROXY_REFUSED")', () => {
  /** an internal code: PROXY_REFUSED, ECONNRESET, UND_ERR_SOCKET, … */
  const CODE = /\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b|\bE[A-Z]{4,}\b/;
  const notice = (words: string) => `waiting 30 s: retry 10 after ${words}`;

  it.each([...RETRYABLE_ERROR_CODES])(
    '%s, which a retry can see: words of its own, no code, one line at 80 columns',
    (code) => {
      const words = failureWords({ errorCode: code, status: code === 'TRUNCATED_BODY' ? 200 : undefined });
      expect(words).not.toMatch(CODE);
      expect(words).not.toBe('a network error');
      expect(notice(words).length).toBeLessThanOrEqual(80);
    },
  );

  it('the words the trial asked for; statuses as HTTP 503', () => {
    expect(failureWords({ errorCode: 'PROXY_REFUSED' })).toBe('the proxy refused the connection');
    expect(failureWords({ errorCode: 'ECONNRESET' })).toBe('connection reset');
    expect(failureWords({ errorCode: 'UND_ERR_SOCKET' })).toBe('connection reset');
    expect(failureWords({ status: 503 })).toBe('HTTP 503');
    expect(failureWords({ status: 429 })).toBe('HTTP 429');
    expect(failureWords({ status: 200, errorCode: 'TRUNCATED_BODY' })).toBe('an answer cut off');
  });

  it('the short words are those of the full message where it has them (one wording)', () => {
    expect(describeNetwork(err('UND_ERR_SOCKET'), ctx).message).toContain(
      `(${failureWords({ errorCode: 'UND_ERR_SOCKET' })})`,
    );
    const refused = routeError(err('ECONNREFUSED'), proxy);
    expect(describeNetwork(refused, ctx).message).toBe(
      'cannot reach the proxy http://proxy.corp:3128 (HTTPS_PROXY): connection refused',
    );
  });

  it('never names a code, whatever the code (property)', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[A-Z][A-Z0-9_]{2,30}$/),
        fc.option(fc.integer({ min: 100, max: 599 }), { nil: undefined }),
        (code, status) => {
          const words = failureWords({ errorCode: code, status });
          expect(words).not.toContain(code);
          expect(notice(words).length).toBeLessThanOrEqual(80);
        },
      ),
      runs(),
    );
  });
});

describe('a link (a transcript download): the base URL worked, so no hint says to check it (new-user trial)', () => {
  const codes = [
    'ENOTFOUND',
    'EAI_AGAIN',
    'ECONNREFUSED',
    'ETIMEDOUT',
    'ECONNRESET',
    'CERT_HAS_EXPIRED',
    'ERR_TLS_CERT_ALTNAME_INVALID',
    'SELF_SIGNED_CERT_IN_CHAIN',
    'EPROTO',
  ];
  const tunnels = [403, 502, 400].map((s) => `Proxy response (${s}) !== 200 when HTTP Tunneling`);
  const envs = [
    {},
    { HTTP_PROXY: 'http://p:1' },
    { HTTPS_PROXY: 'http://p:1' },
    { HTTPS_PROXY: 'http://p:1', NO_PROXY: 'dl.example.com' },
  ];

  it('never "base URL", for any failure, through a proxy or not', () => {
    const failure = fc.oneof(
      fc.constantFrom(...codes).map((c) => err(c)),
      fc.constantFrom(...tunnels).map((m) => routeError(err('UND_ERR_ABORTED', m), proxy)),
      fc.constantFrom(...codes).map((c) => routeError(err(c), proxy)),
    );
    fc.assert(
      fc.property(failure, fc.constantFrom(...envs), (e, env) => {
        const d = describeNetwork(e, { target: 'dl.example.com:8443', timeoutMs: 30_000, env, link: true });
        expect(`${d.message} ${d.hint ?? ''}`).not.toMatch(/base URL/);
      }),
      runs(200),
    );
  });

  it('a tunnel refused to the link host: the hint names that host:port and says the proxy must let it through', () => {
    const e = routeError(err('UND_ERR_ABORTED', tunnels[0]), proxy);
    const hint = describeNetwork(e, {
      target: 'dl.example.com:8443',
      timeoutMs: 30_000,
      env: { HTTPS_PROXY: 'x' },
      link: true,
    }).hint!;
    expect(hint).toContain('the proxy must let tunnels to dl.example.com:8443 through');
    expect(hint).toContain('if dl.example.com is reachable without the proxy, add it to NO_PROXY');
    // NO_PROXY lists the host for another port: says so, not "add it"
    const port = describeNetwork(e, {
      target: 'dl.example.com:8443',
      timeoutMs: 30_000,
      env: { NO_PROXY: 'dl.example.com:443' },
      link: true,
    });
    expect(port.hint).toContain('NO_PROXY lists dl.example.com:443, for port 443 only');
    expect(port.hint).not.toMatch(/add it to NO_PROXY/);
  });
});
