// `GET /transcripts/download/{token}` (docs/sandbox.md, "Recordings and transcripts"): served on
// a listener of its own (another origin) and, for compatibility, on the API's origin too. The
// token is the credential: a request carrying an API key header is refused (400
// CREDENTIALS_NOT_ALLOWED), so a client that leaks its key to the link's origin fails its tests.
// Then, as for the API: 405 for another method, the download limiter (shared by all tokens),
// latency, and the same faults (random ones narrowed by `paths`, and the `next` queue).
import { sleep, type Outcome } from './api-request.js';
import { ApiError } from './errors.js';
import { html502, injected429, internalError, truncated } from './fault-responses.js';
import { runsBeforeRequest } from './faults.js';
import { newRequestId } from './random.js';
import { takeAll } from './rate-limiter.js';
import { errorResponse, type RequestMeta } from './responses.js';
import type { SandboxState } from './state.js';
import { DOWNLOAD_PATH, transcriptFor } from './transcripts.js';
import type { SandboxResponse } from './types.js';

/** Headers that carry an API key; none may reach the download endpoint. */
const CREDENTIAL_HEADERS = ['x-service-api-key', 'authorization'] as const;

export async function handleDownloadRequest(
  state: SandboxState,
  method: string,
  token: string,
  headers: Partial<Record<string, string[]>>,
): Promise<Outcome> {
  const requestId = newRequestId();
  const rm: RequestMeta = { requestId, now: state.now(), version: '2' };
  const answer = (response: SandboxResponse, extra: Partial<Outcome> = {}): Outcome => ({ response, requestId, ...extra });
  const latency = () => (state.faults.config.latencyMs > 0 ? sleep(state.faults.config.latencyMs) : undefined);

  const sent = CREDENTIAL_HEADERS.filter((h) => headers[h] !== undefined);
  if (sent.length > 0) {
    await latency();
    const names = sent.map((h) => (h === 'authorization' ? 'Authorization' : 'X-Service-Api-Key')).join(' and ');
    return answer(
      errorResponse(
        rm,
        new ApiError(
          400,
          'CREDENTIALS_NOT_ALLOWED',
          `A transcript link is its own credential: it must be fetched without an API key, but this request sent ${names}`,
          sent.map((h) => ({ field: h === 'authorization' ? 'Authorization' : 'X-Service-Api-Key', issue: 'not_allowed' })),
        ),
      ),
    );
  }
  if (method !== 'GET') {
    return answer(
      errorResponse(
        rm,
        new ApiError(405, 'METHOD_NOT_ALLOWED', `${method} is not allowed on a transcript link (allowed: GET)`, [], { Allow: 'GET' }),
      ),
    );
  }
  const limit = takeAll([{ limiter: state.downloadLimiter, id: 'downloads' }], state.rateFormat);
  if (!limit.ok) {
    await latency();
    return answer(
      errorResponse(
        rm,
        new ApiError(429, 'RATE_LIMITED', `Download rate limit exceeded; retry after ${limit.headers['Retry-After']} s`, [], limit.headers),
      ),
    );
  }
  await latency();

  const fault = state.faults.choose(method, DOWNLOAD_PATH + token);
  if (fault && runsBeforeRequest(fault) && fault !== 'truncated') {
    if (fault === 'drop') return { fault, requestId };
    return answer(fault === '500' ? internalError(rm) : fault === '429' ? injected429(rm, state.rateFormat) : html502(), { fault });
  }
  rm.clock = state.now;
  const response = serve(state, token, rm, limit.headers);
  if (fault === 'truncated') return answer(truncated(rm, response), { fault });
  if (fault === 'drop-after-write') return { fault, requestId };
  if (fault === '500-after-write') return answer(internalError(rm), { fault });
  return answer(response);
}

function serve(state: SandboxState, token: string, rm: RequestMeta, limitHeaders: Record<string, string>): SandboxResponse {
  const recordingId = state.tokens.resolve(token);
  const recording = recordingId === undefined ? undefined : state.store.get('recordings', recordingId);
  if (!recording || recording.has_transcript !== true) {
    const expired = new ApiError(
      404,
      'LINK_EXPIRED',
      'This transcript link has expired or is unknown: get the recording again for a fresh link',
    );
    const res = errorResponse(rm, expired);
    return { ...res, headers: { ...res.headers, ...limitHeaders } };
  }
  const duration = typeof recording.duration_seconds === 'number' ? recording.duration_seconds : undefined;
  return { status: 200, headers: limitHeaders, body: transcriptFor(String(recording.id), duration) };
}
