// One recording's transcript, the discovery way (spec: Endpoints rule 6): take a download slot,
// get the recording for a fresh link, fetch it at once, and recover on the way: an expired link
// (404) gets a fresh one (up to 3 times), a 429 waits Retry-After, a network failure or 5xx backs
// off, and every try after a wait starts again with a fresh link. Shared by `transcript` and
// `download`.
import type { ApiRecord } from '../../api/envelopes.js';
import { CrmError, InterruptedError, NotFoundError } from '../../http/errors.js';
import { Pacer, type PacerTicket } from '../../http/pacer.js';
import type { Tried } from '../../http/retry-loop.js';
import { linkSignals } from '../../http/signals.js';
import type { Clock, HttpClient } from '../../http/types.js';
import { recordPath } from '../../http/url.js';
import { sanitizeForTerminal } from '../../output/sanitize.js';

/** Fresh links tried after the first one expired (CONTRACT §8: up to 3 times). */
export const MAX_LINK_REFRESHES = 3;

export interface TranscriptSourceDeps {
  /** gets the recordings, and lends its retry policy (--max-retries, the 429 budget) and its transport to the downloads */
  client: HttpClient;
  clock: Clock;
  /** the download endpoint's own pacer, apart from the API client's */
  pacer?: Pacer;
  /** aborts the waits (Retry-After, backoff, pacer); in-flight requests finish unless `requestSignal` aborts too */
  signal?: AbortSignal;
  requestSignal?: AbortSignal;
}

export type TranscriptResult =
  | { kind: 'ok'; body: object; recording: ApiRecord; linkRefreshes: number; retries: number }
  | { kind: 'none'; recording: ApiRecord; reason: string };

/**
 * The download endpoint's pacer: an instance apart from the API client's (its limit is its own,
 * spec: Endpoints rule 5), shared by every download of the command. It spends each window's units
 * as soon as they are there (`spread: 'none'`) rather than spreading the last ones to the reset:
 * a slot is taken before the recording is got, so the download goes out a request after its slot,
 * and one sent at the window's edge would land in the next window (half the rate at 2/s). The
 * first download goes alone (`probe`): its answer tells the budget, so that a small limit is not
 * met by every worker at once.
 */
export function downloadPacer(clock: Clock): Pacer {
  return new Pacer(clock, { spread: 'none', probe: true });
}

/** `GET /recordings/{id}`: the id is encoded, whatever the server put in it. */
export async function getRecording(client: HttpClient, id: string, signal?: AbortSignal): Promise<ApiRecord> {
  const res = await client.request<{ data: ApiRecord }>({
    method: 'GET',
    path: recordingPath(id),
    expect: 'success',
    ...(signal ? { signal } : {}),
  });
  return res.body.data;
}

/** `/recordings/{id}`, the id one encoded segment (a usage error for `.`, `..` and ``). */
export function recordingPath(id: string): string {
  return recordPath('recordings', id, 'recording id');
}

/** Why a recording has no transcript (spec: Recording.has_transcript), in words for the user. */
export function noTranscriptReason(recording: ApiRecord): string {
  return recording.transcript_status === 'processing' ? 'it is still being transcribed, try again later' : 'the meeting produced no audio';
}

export function hasTranscript(recording: ApiRecord): boolean {
  return recording.has_transcript === true && typeof recording.transcript_url === 'string';
}

/**
 * A recording given by the caller is used for the first try only when the download slot came at
 * once (within this): its link was fetched just before. After any wait, a fresh one is got.
 */
export const GIVEN_LINK_MAX_WAIT_MS = 50;

/**
 * The transcript of recording `id`. `recording`, when given, is a copy just fetched by the caller
 * (its link is used first, if the download slot comes at once). Throws a CrmError when the retries
 * run out.
 *
 * Every try takes its download slot from the pacer first, then gets the recording (a fresh link),
 * then fetches it at once: a link is never left to age in the pacer's queue or behind a
 * Retry-After or a back-off, so a short TTL and a tight download limit do not make links expire.
 * That costs one `GET /recordings/{id}` per try, paced by the API client under the API's limit.
 */
export async function getTranscript(id: string, deps: TranscriptSourceDeps, recording?: ApiRecord): Promise<TranscriptResult> {
  let given = recording;
  let linkRefreshes = 0;
  const attempt = async (retries: number): Promise<Tried<TranscriptResult>> => {
    for (;;) {
      // 1. The download slot; 2. the recording, for a link that is fresh when it is sent.
      const before = deps.clock.now();
      const ticket = await acquireSlot(deps);
      let rec: ApiRecord;
      try {
        const waited = deps.clock.now() - before;
        rec = given && waited <= GIVEN_LINK_MAX_WAIT_MS ? given : await getRecording(deps.client, id, deps.requestSignal);
      } catch (err) {
        if (ticket) deps.pacer?.done(ticket); // nothing was sent to the download endpoint
        throw err;
      }
      given = undefined;
      if (!hasTranscript(rec)) {
        if (ticket) deps.pacer?.done(ticket);
        return { ok: true, value: { kind: 'none', recording: rec, reason: noTranscriptReason(rec) } };
      }
      // 3. The download, at once.
      const { pacer, requestSignal: signal } = deps;
      const got = await deps.client.getLink(rec.transcript_url as string, { what: 'transcript', pacer, ticket, signal });
      if (!got.ok) return got;
      if ('body' in got.value) return { ok: true, value: { kind: 'ok', body: got.value.body, recording: rec, linkRefreshes, retries } };
      if (linkRefreshes >= MAX_LINK_REFRESHES) {
        throw new NotFoundError(`the transcript link of recording ${sanitizeForTerminal(id)} kept expiring (${linkRefreshes + 1} links tried)`, {
          status: got.value.gone,
          code: 'LINK_EXPIRED',
        });
      }
      linkRefreshes += 1;
    }
  };
  // a 429 or a failure: waited and retried by the client's rules, each try with a fresh link
  return deps.client.retry(attempt, { ...(deps.pacer ? { pacer: deps.pacer } : {}), ...(deps.signal ? { signal: deps.signal } : {}) });
}

/** A slot of the download pacer (none without one); Ctrl-C (`signal`) stops the wait. */
async function acquireSlot(deps: TranscriptSourceDeps): Promise<PacerTicket | undefined> {
  if (!deps.pacer) return undefined;
  const waits = linkSignals(deps.requestSignal, deps.signal);
  try {
    const clientWaits = deps.client.waits;
    const onWait = clientWaits ? (ms: number, why: string) => clientWaits.note(ms, why) : undefined;
    return await deps.pacer.acquire(waits.signal, { sendLater: true, ...(onWait ? { onWait } : {}) });
  } catch (err) {
    throw err instanceof CrmError ? err : new InterruptedError('interrupted', { cause: err });
  } finally {
    waits.dispose();
  }
}
