// One request to `/api/v1` or `/api/v2`, in the order docs/sandbox.md implies: authenticate
// (401 is not counted), replay from the idempotency cache (not counted), take a rate-limit unit,
// wait the latency, inject a fault, run the route, cache what ran.
import type { IncomingHttpHeaders } from 'node:http';
import { authenticate, requireScope } from './auth.js';
import { ApiError } from './errors.js';
import { html502, injected429, internalError, truncated } from './fault-responses.js';
import { runsBeforeRequest } from './faults.js';
import type { HandlerCtx, Method, PathRoutes } from './handler.js';
import { fingerprint, isValidIdempotencyKey, type Claim } from './idempotency.js';
import { newRequestId } from './random.js';
import { takeAll } from './rate-limiter.js';
import { errorResponse, type RequestMeta } from './responses.js';
import { resolveV2 } from './routes.js';
import { ORGANIZATION, type SandboxState } from './state.js';
import type { FaultKind, KeyDef, SandboxResponse } from './types.js';
import { resolveV1 } from './v1-handlers.js';
import { parseJson } from './validation.js';

export interface IncomingRequest {
  method: string;
  /** the decoded path, e.g. /api/v2/contacts */
  path: string;
  /** path plus query string as received */
  url: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** every value of each header (a header sent twice has two) */
  headersDistinct: Partial<Record<string, string[]>>;
  rawBody: string;
}

export interface Outcome {
  /** absent when the connection is to be dropped */
  response?: SandboxResponse;
  fault?: FaultKind;
  replayed?: boolean;
  requestId: string;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function withRequestId(response: SandboxResponse, requestId: string): SandboxResponse {
  return { ...response, headers: { ...response.headers, 'X-Request-Id': requestId } };
}

export async function handleApiRequest(state: SandboxState, req: IncomingRequest, version: 1 | 2): Promise<Outcome> {
  const requestId = newRequestId();
  const rm: RequestMeta = { requestId, now: state.now(), version: version === 1 ? '1' : '2' };
  const answer = (response: SandboxResponse, extra: Partial<Outcome> = {}): Outcome => ({
    response: withRequestId(response, requestId),
    requestId,
    ...extra,
  });
  const latency = () => (state.faults.config.latencyMs > 0 ? sleep(state.faults.config.latencyMs) : undefined);

  let key: KeyDef;
  try {
    key = authenticate(req.headersDistinct, state.keys, version);
  } catch (err) {
    await latency();
    return answer(errorResponse(rm, err as ApiError));
  }

  // Idempotency: a replay is answered before counting; a conflict or a bad key is a counted 422.
  let claim: Claim | undefined;
  let early: ApiError | undefined;
  const idemHeader = req.headers['idempotency-key'];
  if ((req.method === 'POST' || req.method === 'PATCH') && idemHeader !== undefined) {
    if (typeof idemHeader !== 'string' || !isValidIdempotencyKey(idemHeader)) {
      early = new ApiError(422, 'INVALID_IDEMPOTENCY_KEY', 'Idempotency-Key must be 1 to 255 printable ASCII characters', [
        { header: 'Idempotency-Key', issue: 'invalid' },
      ]);
    } else {
      const fp = fingerprint(req.method, req.url, req.rawBody);
      for (;;) {
        const found = state.idempotency.lookup(key.key, idemHeader, fp);
        if (found.kind === 'wait') {
          await found.done;
          continue;
        }
        if (found.kind === 'replay') {
          await latency();
          return {
            response: { ...found.response, headers: { ...found.response.headers, 'Idempotent-Replayed': 'true' } },
            replayed: true,
            requestId: found.response.headers['X-Request-Id'] ?? requestId,
          };
        }
        if (found.kind === 'conflict') early = found.error;
        else claim = found.claim;
        break;
      }
    }
  }

  const limit = takeAll(
    [
      { limiter: state.keyLimiter, id: key.key },
      { limiter: state.orgLimiter, id: ORGANIZATION },
    ],
    state.rateFormat,
  );
  if (!limit.ok) {
    claim?.release();
    await latency();
    const seconds = limit.headers['Retry-After'];
    return answer(errorResponse(rm, new ApiError(429, 'RATE_LIMITED', `Rate limit exceeded; retry after ${seconds} s`, [], limit.headers)));
  }
  await latency();

  const fault = state.faults.choose(req.method, req.path);
  if (fault && runsBeforeRequest(fault)) {
    claim?.release();
    if (fault === 'drop') return { fault, requestId };
    const faulty =
      fault === '500'
        ? internalError(rm)
        : fault === '429'
          ? injected429(rm, state.rateFormat)
          : fault === 'html-502'
            ? html502()
            : truncated(rm);
    return answer(faulty, { fault });
  }

  // meta.timestamp is the server time of the response, read as the envelope is built (after the
  // latency and the write): a record created by this request has created_at at or before it, an
  // existing one (a relinked link) well before it.
  rm.clock = state.now;
  const ran = early ? errorResponse(rm, early) : run(state, req, version, key, rm);
  const response = withRequestId({ ...ran, headers: { ...limit.headers, ...ran.headers } }, requestId);
  if (claim) {
    if (response.status < 500) claim.store(response);
    else claim.release();
  }
  if (fault === 'drop-after-write') return { fault, requestId };
  if (fault === '500-after-write') return answer(internalError(rm), { fault });
  return { response, requestId };
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
    const segments = req.path.split('/').slice(3).map(decodeSegment);
    const routes: PathRoutes | undefined = version === 2 ? resolveV2(segments) : resolveV1(segments);
    if (!routes) throw new ApiError(404, 'NOT_FOUND', `No such path: ${req.method} ${req.path}`);
    const route = routes[req.method as Method];
    if (!route) {
      const allowed = Object.keys(routes).join(', ');
      throw new ApiError(
        405,
        'METHOD_NOT_ALLOWED',
        `${req.method} is not allowed on ${req.path} (allowed: ${allowed})`,
        [{ allowed: Object.keys(routes) }],
        { Allow: allowed },
      );
    }
    if (route.scope) requireScope(key, route.scope);
    let parsed: { value: unknown } | undefined;
    const ctx: HandlerCtx = {
      state,
      key,
      rm,
      query: req.query,
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
    throw new ApiError(422, 'INVALID_BODY', `The body must be sent as Content-Type: application/json (got ${type || 'none'})`);
  }
  return raw;
}
