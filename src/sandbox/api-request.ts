// One request to `/api/v1` or `/api/v2` (docs/sandbox.md): authenticate and replay from the idempotency
// cache (neither counted), then the part shared with downloads: rate limit, latency, fault, run, cache.
import type { IncomingMessage } from 'node:http';
import { authenticate, requireScope } from './auth.js';
import type { HandlerCtx, Method, PathRoutes } from './handler.js';
import { fingerprint, isValidIdempotencyKey, type Claim } from './idempotency.js';
import { newRequestId } from './random.js';
import { takeAll, type WindowLimiter } from './rate-limiter.js';
import { ApiError, cut, errorResponse, faultResponse, type RequestMeta } from './responses.js';
import { resolveV2 } from './resource-handlers.js';
import { ORGANIZATION, type SandboxState } from './state.js';
import type { FaultKind, KeyDef, SandboxResponse } from './types.js';
import { resolveV1 } from './v1-handlers.js';
import { parseJson } from './validation.js';

/** `headersDistinct`: every value of each header (a header sent twice has two). */
type IncomingRequest = Pick<IncomingMessage, 'headers' | 'headersDistinct'> & {
  method: string;
  url: URL;
  rawBody: string;
};

export interface Outcome {
  /** absent when the connection is to be dropped */
  response?: SandboxResponse;
  fault?: FaultKind;
  replayed?: boolean;
  /** the handler ran and answered 2xx (its write happened), whether or not an after-write fault hid that answer */
  applied?: boolean;
  requestId: string;
}

/** The latency every answer waits (not the 405 of a download link, which comes first). */
export async function latency(state: SandboxState): Promise<void> {
  const ms = state.faults.config.latencyMs;
  if (ms > 0) await new Promise<void>((resolve) => setTimeout(resolve, ms));
}

/** An answer carrying its request id (replays show the first answer's). */
export function answer(rm: RequestMeta, response: SandboxResponse, fault?: FaultKind): Outcome {
  return {
    response: { ...response, headers: { ...response.headers, 'X-Request-Id': rm.requestId } },
    requestId: rm.requestId,
    fault,
  };
}

/** The counted part of a request (API or download). */
interface Counted {
  /** the 429's words: `Rate limit` or `Download rate limit` */
  what: string;
  limits: Array<{ limiter: WindowLimiter; id: string }>;
  faultPath: string;
  run(): SandboxResponse;
  /** downloads: a `truncated` fault cuts the real answer instead of replacing the request */
  cutsReal?: boolean;
  /** told what ran, or nothing when the request did not run (the idempotency claim listens) */
  settle?(ran?: SandboxResponse): void;
}

export async function serveCounted(state: SandboxState, method: string, rm: RequestMeta, c: Counted): Promise<Outcome> {
  const limit = takeAll(c.limits, state.rateFormat);
  if (!limit.ok) {
    c.settle?.();
    await latency(state);
    const message = `${c.what} exceeded; retry after ${limit.headers['Retry-After']} s`;
    return answer(rm, errorResponse(rm, new ApiError(429, 'RATE_LIMITED', message, [], limit.headers)));
  }
  await latency(state);
  const fault = state.faults.choose(method, c.faultPath);
  // every fault but the *-after-write ones (and a download's `truncated`) replaces the request
  if (fault && fault !== '500-after-write' && fault !== 'drop-after-write' && !(c.cutsReal && fault === 'truncated')) {
    c.settle?.();
    return fault === 'drop'
      ? { fault, requestId: rm.requestId }
      : answer(rm, faultResponse(rm, fault, state.rateFormat), fault);
  }
  // meta.timestamp is read as the envelope is built: a record this request created is not newer than it.
  rm.clock = state.now;
  const ran = c.run();
  const response = answer(rm, { ...ran, headers: { ...limit.headers, ...ran.headers } }).response!;
  c.settle?.(response);
  const applied = response.status >= 200 && response.status < 300;
  if (fault === 'truncated') {
    const real = response.status === 200 && response.raw === undefined;
    return { ...answer(rm, real ? cut(response) : faultResponse(rm, fault, state.rateFormat), fault), applied };
  }
  if (fault === 'drop-after-write') return { fault, requestId: rm.requestId, applied };
  if (fault === '500-after-write') return { ...answer(rm, faultResponse(rm, '500', state.rateFormat), fault), applied };
  return { response, requestId: rm.requestId, applied };
}

export async function handleApiRequest(state: SandboxState, req: IncomingRequest, version: 1 | 2): Promise<Outcome> {
  const rm: RequestMeta = { requestId: newRequestId(), now: state.now(), version: version === 1 ? '1' : '2' };
  let key: KeyDef;
  try {
    key = authenticate(req.headersDistinct, state.keys, version);
  } catch (err) {
    await latency(state);
    return answer(rm, errorResponse(rm, err as ApiError));
  }
  const idem = await claimKey(state, req, key);
  if ('replay' in idem) {
    await latency(state);
    const response = { ...idem.replay, headers: { ...idem.replay.headers, 'Idempotent-Replayed': 'true' } };
    return { response, replayed: true, requestId: idem.replay.headers['X-Request-Id'] ?? rm.requestId };
  }
  return serveCounted(state, req.method, rm, {
    what: 'Rate limit',
    limits: [
      { limiter: state.keyLimiter, id: key.key },
      { limiter: state.orgLimiter, id: ORGANIZATION },
    ],
    faultPath: req.url.pathname,
    run: () => ('error' in idem ? errorResponse(rm, idem.error) : run(state, req, version, key, rm)),
    settle: 'settle' in idem ? idem.settle : undefined,
  });
}

/** The Idempotency-Key of a POST or PATCH: a replay, the claim to answer it, or a (counted) 422; a running twin is awaited. */
async function claimKey(
  state: SandboxState,
  req: IncomingRequest,
  key: KeyDef,
): Promise<Claim | Record<string, never>> {
  const header = req.headers['idempotency-key'];
  if ((req.method !== 'POST' && req.method !== 'PATCH') || header === undefined) return {};
  if (typeof header !== 'string' || !isValidIdempotencyKey(header)) {
    const details = [{ header: 'Idempotency-Key', issue: 'invalid' }];
    return {
      error: new ApiError(
        422,
        'INVALID_IDEMPOTENCY_KEY',
        'Idempotency-Key must be 1 to 255 printable ASCII characters',
        details,
      ),
    };
  }
  return state.idempotency.claim(
    key.key,
    header,
    fingerprint(req.method, req.url.pathname + req.url.search, req.rawBody),
  );
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new ApiError(404, 'NOT_FOUND', `Malformed path segment: ${segment}`);
  }
}

/** Resolves the route (404/405), checks the scope (403) and runs the handler. */
function run(state: SandboxState, req: IncomingRequest, version: 1 | 2, key: KeyDef, rm: RequestMeta): SandboxResponse {
  try {
    const path = req.url.pathname;
    const segments = path.split('/').slice(3).map(decodeSegment);
    const routes: PathRoutes | undefined = version === 2 ? resolveV2(segments) : resolveV1(segments);
    if (!routes) throw new ApiError(404, 'NOT_FOUND', `No such path: ${req.method} ${path}`);
    const route = routes[req.method as Method];
    if (!route) {
      const allowed = Object.keys(routes).join(', ');
      const message = `${req.method} is not allowed on ${path} (allowed: ${allowed})`;
      throw new ApiError(405, 'METHOD_NOT_ALLOWED', message, [{ allowed: Object.keys(routes) }], { Allow: allowed });
    }
    if (route.scope) requireScope(key, route.scope);
    let parsed: { value: unknown } | undefined;
    const ctx: HandlerCtx = {
      state,
      key,
      rm,
      query: req.url.searchParams,
      body: () => (parsed ??= { value: parseJson(requireJsonType(req.headers['content-type'], req.rawBody)) }).value,
    };
    return route.run(ctx);
  } catch (err) {
    if (err instanceof ApiError) return errorResponse(rm, err);
    return errorResponse(rm, new ApiError(500, 'INTERNAL_ERROR', `Internal error: ${(err as Error).message}`));
  }
}

/** Spec: "All version 2 requests … use application/json": a body of another declared type is refused. */
function requireJsonType(contentType: string | undefined, raw: string): string {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (raw.trim() !== '' && type !== 'application/json' && !type.endsWith('+json')) {
    throw new ApiError(
      422,
      'INVALID_BODY',
      `The body must be sent as Content-Type: application/json (got ${type || 'none'})`,
    );
  }
  return raw;
}
