// `GET /transcripts/download/{token}` (docs/sandbox.md, "Recordings and transcripts"): served on
// a listener of its own (another origin) and, for compatibility, on the API's origin too. The
// token is the credential: a request carrying an API key header is refused (400
// CREDENTIALS_NOT_ALLOWED), so a client that leaks its key to the link's origin fails its tests.
// Then 405 for another method, and the counted part of an API request: the download limiter
// (shared by all tokens), latency, and the same faults.
import { answer, latency, serveCounted, type Outcome } from './api-request.js';
import { newRequestId } from './random.js';
import { ApiError, errorResponse, type RequestMeta } from './responses.js';
import type { SandboxState } from './state.js';
import { DOWNLOAD_PATH, transcriptFor } from './transcripts.js';
import type { SandboxResponse } from './types.js';

/** Headers that carry an API key, as the error names them; none may reach the download endpoint. */
const CREDENTIAL_HEADERS = { authorization: 'Authorization', 'x-service-api-key': 'X-Service-Api-Key' } as const;

export async function handleDownloadRequest(
  state: SandboxState,
  method: string,
  token: string,
  headers: Partial<Record<string, string[]>>,
): Promise<Outcome> {
  const rm: RequestMeta = { requestId: newRequestId(), now: state.now(), version: '2' };
  const sent = (['x-service-api-key', 'authorization'] as const).filter((h) => headers[h] !== undefined).map((h) => CREDENTIAL_HEADERS[h]);
  if (sent.length > 0) {
    await latency(state);
    const message = `A transcript link is its own credential: it must be fetched without an API key, but this request sent ${sent.join(' and ')}`;
    const details = sent.map((field) => ({ field, issue: 'not_allowed' }));
    return answer(rm, errorResponse(rm, new ApiError(400, 'CREDENTIALS_NOT_ALLOWED', message, details)));
  }
  if (method !== 'GET') {
    const message = `${method} is not allowed on a transcript link (allowed: GET)`;
    return answer(rm, errorResponse(rm, new ApiError(405, 'METHOD_NOT_ALLOWED', message, [], { Allow: 'GET' })));
  }
  return serveCounted(state, method, rm, {
    what: 'Download rate limit',
    limits: [{ limiter: state.downloadLimiter, id: 'downloads' }],
    faultPath: DOWNLOAD_PATH + token,
    cutsReal: true,
    run: () => serve(state, token, rm),
  });
}

function serve(state: SandboxState, token: string, rm: RequestMeta): SandboxResponse {
  const recordingId = state.tokens.resolve(token);
  const recording = recordingId === undefined ? undefined : state.store.get('recordings', recordingId);
  if (!recording || recording.has_transcript !== true) {
    const message = 'This transcript link has expired or is unknown: get the recording again for a fresh link';
    return errorResponse(rm, new ApiError(404, 'LINK_EXPIRED', message));
  }
  const duration = typeof recording.duration_seconds === 'number' ? recording.duration_seconds : undefined;
  return { status: 200, headers: {}, body: transcriptFor(String(recording.id), duration) };
}
