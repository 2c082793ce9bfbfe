// One recording's transcript (spec: Endpoints rule 6), shared by `transcript` and `download`: a
// fresh link from `GET /recordings/{id}`, fetched at once; an expired link (404) gets a fresh one
// (up to 3 times); 429s, network failures and 5xx are retried by the client's rules, each try with
// a fresh link.
import type { ApiRecord } from '../../api/envelopes.js';
import { NotFoundError } from '../../http/errors.js';
import type { Pacer, PacerTicket } from '../../http/pacer.js';
import { interrupted } from '../../http/retry-loop.js';
import { linkSignals } from '../../http/clock.js';
import type { Clock, HttpClient, Tried } from '../../http/types.js';
import { recordPath } from '../../http/url.js';
import { sanitizeForTerminal } from '../../output/sanitize.js';

/** Fresh links tried after the first one expired (CONTRACT §8: up to 3 times). */
export const MAX_LINK_REFRESHES = 3;

export interface TranscriptSourceDeps {
  /** gets the recordings; its retry policy, transport and waits serve the downloads too */
  client: HttpClient;
  clock: Clock;
  /** the download endpoint's own pacer (its limit is not the API's: spec, Limits rule 5) */
  pacer?: Pacer;
  /** aborts the waits; in-flight requests finish unless `requestSignal` aborts too */
  signal?: AbortSignal;
  requestSignal?: AbortSignal;
}

export type TranscriptResult =
  | { kind: 'ok'; body: object; recording: ApiRecord; linkRefreshes: number; retries: number }
  | { kind: 'none'; recording: ApiRecord; reason: string };

/** `/recordings/{id}`, the id one encoded segment (a usage error for `.`, `..` and ``). */
export function recordingPath(id: string): string {
  return recordPath('recordings', id, 'recording id');
}

/** Why a recording has no transcript (spec: Recording.has_transcript), in words for the user. */
export function noTranscriptReason(recording: ApiRecord): string {
  return recording.transcript_status === 'processing'
    ? 'it is still being transcribed, try again later'
    : 'the meeting produced no audio';
}

/**
 * The transcript of recording `id`, or why it has none; a CrmError when the retries run out. Each try
 * is one paced unit of the download pacer: its slot, then the recording (a fresh link), then the
 * download at once, so a link never ages in the pacer's queue (a short TTL under a tight limit).
 */
export async function getTranscript(id: string, deps: TranscriptSourceDeps): Promise<TranscriptResult> {
  const path = recordingPath(id);
  let linkRefreshes = 0;
  const attempt = async (retries: number): Promise<Tried<TranscriptResult>> => {
    for (;;) {
      const ticket = await takeSlot(deps);
      const res = await deps.client
        .request<{ data: ApiRecord }>({ method: 'GET', path, expect: 'success', signal: deps.requestSignal })
        .catch((err: unknown) => {
          if (ticket) deps.pacer?.done(ticket); // nothing was sent
          throw err;
        });
      const rec = res.body.data;
      if (rec.has_transcript !== true || typeof rec.transcript_url !== 'string') {
        if (ticket) deps.pacer?.done(ticket);
        return { ok: true, value: { kind: 'none', recording: rec, reason: noTranscriptReason(rec) } };
      }
      const { pacer, requestSignal: signal } = deps;
      const got = await deps.client.getLink(rec.transcript_url, { what: 'transcript', pacer, ticket, signal });
      if (!got.ok) return got;
      if ('body' in got.value)
        return { ok: true, value: { kind: 'ok', body: got.value.body, recording: rec, linkRefreshes, retries } };
      if (linkRefreshes >= MAX_LINK_REFRESHES) {
        const message = `the transcript link of recording ${sanitizeForTerminal(id)} kept expiring (${linkRefreshes + 1} links tried)`;
        throw new NotFoundError(message, { status: got.value.gone, code: 'LINK_EXPIRED' });
      }
      linkRefreshes += 1;
    }
  };
  return deps.client.retry(attempt, { pacer: deps.pacer, signal: deps.signal });
}

/** A slot of the download pacer (none without one); Ctrl-C (`signal`) stops the wait. */
async function takeSlot(deps: TranscriptSourceDeps): Promise<PacerTicket | undefined> {
  if (!deps.pacer) return undefined;
  const waits = linkSignals(deps.requestSignal, deps.signal);
  try {
    return await deps.pacer.acquire(waits.signal, { onWait: (ms, why) => deps.client.waits?.note(ms, why) });
  } catch (err) {
    throw interrupted(err);
  } finally {
    waits.dispose();
  }
}
