// Transcripts (docs/sandbox.md, "Recordings and transcripts"): tokenized links that expire, served on
// their own origin (and the API's); content derived from the recording id. The token is the credential:
// a request carrying an API key is 400, so a client that leaks its key to the link's origin fails its tests.
import { createHash } from 'node:crypto';
import { RESOURCES } from '../api/resources.js';
import { RawNumber } from '../json/exact-json.js';
import { answer, latency, serveCounted } from './api-request.js';
import { mulberry32, newRequestId, pick } from './random.js';
import { ApiError, errorResponse, type RequestMeta } from './responses.js';
import { snapshotTranscript } from './snapshot-transcripts.js';
import type { SandboxState } from './state.js';
import type { SandboxResponse } from './types.js';

/** Where transcript links point, on the download origin (the resource table's `download`). */
export const DOWNLOAD_PATH = RESOURCES.find((r) => r.download)!.download!.path;

const SPEAKERS = ['Alex Morgan', 'Sam Lee', 'Jordan Diaz', 'Riley Chen'];
const LINES = [
  'Thanks for making the time today.',
  'Could you walk me through your current process?',
  'We mostly track this in spreadsheets right now.',
  'That is exactly the gap we want to close.',
  'What would a successful rollout look like for you?',
  'Pricing depends on the number of seats.',
  'Let me loop in our technical lead for the integration.',
  'Can we schedule a follow-up for next week?',
  'I will send over the proposal this afternoon.',
  'Security review usually takes about two weeks.',
];

/** The transcript of a recording: the same id always gives the same transcript. */
export function transcriptFor(recordingId: string, durationSeconds?: unknown) {
  const random = mulberry32(createHash('sha256').update(recordingId).digest().readUInt32BE(0));
  const count = 4 + Math.floor(random() * 9);
  const speakers = [pick(random, SPEAKERS), pick(random, SPEAKERS.slice().reverse())];
  const segments: Array<{ speaker: string; start_ms: number; end_ms: number; text: string }> = [];
  let at = 0;
  for (let i = 0; i < count; i++) {
    const length = 2000 + Math.floor(random() * 8000);
    segments.push({ speaker: speakers[i % 2]!, start_ms: at, end_ms: at + length, text: pick(random, LINES) });
    at += length + Math.floor(random() * 500);
  }
  // the recording's own duration, a RawNumber's digits too (a record of `--from` or `--data-file`)
  const known = typeof durationSeconds === 'number' || durationSeconds instanceof RawNumber;
  const duration = known ? durationSeconds : Math.ceil(at / 1000);
  return { recording_id: recordingId, language: 'en', duration_seconds: duration, segments };
}

/** Headers that carry an API key, as the error names them; none may reach the download endpoint. */
const CREDENTIAL_HEADERS = { 'x-service-api-key': 'X-Service-Api-Key', authorization: 'Authorization' };

export async function handleDownloadRequest(
  state: SandboxState,
  method: string,
  token: string,
  headers: Partial<Record<string, string[]>>,
) {
  const rm: RequestMeta = { requestId: newRequestId(), now: state.now(), version: '2' };
  const sent = Object.entries(CREDENTIAL_HEADERS).flatMap(([h, name]) => (headers[h] === undefined ? [] : [name]));
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
  // --from DIR: the snapshot's transcript when it has one (snapshot-transcripts.ts)
  const fromSnapshot = snapshotTranscript(state.snapshotTranscripts, String(recording.id));
  return (
    fromSnapshot ?? { status: 200, headers: {}, body: transcriptFor(String(recording.id), recording.duration_seconds) }
  );
}
