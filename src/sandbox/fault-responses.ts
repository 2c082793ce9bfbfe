// The answers of injected faults (docs/sandbox.md, "Faults"): what a crashing server, a proxy
// or a cut connection would send.
import { ApiError } from './errors.js';
import { errorResponse, meta, type RequestMeta } from './responses.js';
import { resetHeader, retryAfterHeader, type HeaderFormat } from './rate-limiter.js';
import type { SandboxResponse } from './types.js';

/** The wait an injected 429 asks for: `Retry-After: 0.05` in the default (seconds) form. */
export const FAULT_RETRY_AFTER_MS = 50;

export function internalError(rm: RequestMeta, message = 'Internal server error (injected fault)'): SandboxResponse {
  return errorResponse(rm, new ApiError(500, 'INTERNAL_ERROR', message));
}

export function injected429(rm: RequestMeta, format?: HeaderFormat): SandboxResponse {
  return errorResponse(
    rm,
    new ApiError(429, 'RATE_LIMITED', 'Rate limit exceeded (injected fault)', [], {
      'Retry-After': retryAfterHeader(FAULT_RETRY_AFTER_MS, format),
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': resetHeader(FAULT_RETRY_AFTER_MS, format),
    }),
  );
}

export function html502(): SandboxResponse {
  return {
    status: 502,
    headers: { 'Content-Type': 'text/html; charset=utf-8' },
    raw: '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n',
  };
}

/** A 200 whose JSON body stops halfway, as a connection cut mid-body would leave it. */
export function truncated(rm: RequestMeta, real?: SandboxResponse): SandboxResponse {
  // A real 200 (a transcript download) is cut itself, keeping its headers.
  if (real && real.status === 200 && real.raw === undefined) {
    const text = JSON.stringify(real.body ?? null);
    return { ...real, raw: text.slice(0, Math.floor(text.length / 2)) };
  }
  const full = JSON.stringify({
    object: 'success',
    data: { id: 'truncated', note: 'this body was cut in half by an injected fault' },
    meta: meta(rm),
  });
  return { status: 200, headers: { 'Content-Type': 'application/json; charset=utf-8' }, raw: full.slice(0, Math.floor(full.length / 2)) };
}
