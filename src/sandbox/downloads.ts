// `GET /transcripts/download/{token}`: the token is the credential; the download limiter is
// shared by all tokens (docs/sandbox.md, "Rate limits", "Recordings and transcripts").
import { ApiError } from './errors.js';
import { takeAll } from './rate-limiter.js';
import { errorResponse, type RequestMeta } from './responses.js';
import type { SandboxState } from './state.js';
import { transcriptFor } from './transcripts.js';
import type { SandboxResponse } from './types.js';

export function handleDownload(state: SandboxState, method: string, token: string, rm: RequestMeta): SandboxResponse {
  if (method !== 'GET') {
    return errorResponse(rm, new ApiError(405, 'METHOD_NOT_ALLOWED', `${method} is not allowed on a transcript link (allowed: GET)`, [], { Allow: 'GET' }));
  }
  const limit = takeAll([{ limiter: state.downloadLimiter, id: 'downloads' }]);
  if (!limit.ok) {
    return errorResponse(rm, new ApiError(429, 'RATE_LIMITED', `Download rate limit exceeded; retry after ${limit.headers['Retry-After']} s`, [], limit.headers));
  }
  const recordingId = state.tokens.resolve(token);
  const recording = recordingId === undefined ? undefined : state.store.get('recordings', recordingId);
  if (!recording || recording.has_transcript !== true) {
    const expired = new ApiError(404, 'LINK_EXPIRED', 'This transcript link has expired or is unknown: get the recording again for a fresh link');
    return { ...errorResponse(rm, expired), headers: { ...limit.headers } };
  }
  const duration = typeof recording.duration_seconds === 'number' ? recording.duration_seconds : undefined;
  return { status: 200, headers: limit.headers, body: transcriptFor(String(recording.id), duration) };
}
