// One recording's transcript, the discovery way (spec: Endpoints rule 6): take a download slot,
// get the recording for a fresh link, fetch it at once, and recover on the way: an expired link
// (404) gets a fresh one (up to 3 times), a 429 waits Retry-After, a network failure or 5xx backs
// off, and every try after a wait starts again with a fresh link. Shared by `transcript` and
// `download`.
import type { ApiRecord } from '../../api/envelopes.js';
import { CrmError, InterruptedError, NotFoundError, RateLimitError, UsageError } from '../../http/errors.js';
import { Pacer, type PacerTicket } from '../../http/pacer.js';
import { linkSignals } from '../../http/signals.js';
import { fetchTranscript, type TranscriptOutcome } from '../../http/transcript-fetch.js';
import type { Clock, HttpClient } from '../../http/types.js';
import {
  DEFAULT_RATE_LIMIT_BUDGET_MS,
  MAX_RETRY_AFTER_MS,
  backoffMs,
  budgetSpentText,
  comeBackText,
  rateLimitCharge,
} from '../../http/retry.js';
import { sanitizeForTerminal } from '../../output/sanitize.js';

/** Fresh links tried after the first one expired (CONTRACT §8: up to 3 times). */
export const MAX_LINK_REFRESHES = 3;

export interface TranscriptSourceDeps {
  client: HttpClient;
  clock: Clock;
  timeoutMs: number;
  /** 429s and transient failures tolerated per transcript */
  maxRetries: number;
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

/**
 * `/recordings/{id}` with the id as one encoded path segment. `.` and `..` cannot be one (URL
 * parsers resolve them, and encoded as `%2E%2E` too, so the request would go to another path).
 */
export function recordingPath(id: string): string {
  if (id === '' || id === '.' || id === '..') {
    throw new UsageError(`${JSON.stringify(sanitizeForTerminal(id))} is not a usable recording id`);
  }
  return `/recordings/${encodeURIComponent(id)}`;
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
  let rateLimited = 0;
  /** 429s with Retry-After waited out and their cost: bounded by the client's budget, not by maxRetries (CONTRACT §4) */
  let rateWaits = 0;
  let rateCharged = 0;
  let failures = 0;
  const budgetMs = deps.client.waits?.budgetMs ?? DEFAULT_RATE_LIMIT_BUDGET_MS;
  for (;;) {
    // 1. The download slot.
    const before = deps.clock.now();
    const ticket = await acquireSlot(deps);
    const waited = deps.clock.now() - before;
    // 2. The recording, for a link that is fresh when it is sent.
    let rec: ApiRecord;
    try {
      rec = given && waited <= GIVEN_LINK_MAX_WAIT_MS ? given : await getRecording(deps.client, id, deps.requestSignal);
    } catch (err) {
      if (ticket) deps.pacer?.done(ticket); // nothing was sent to the download endpoint
      throw err;
    }
    given = undefined;
    if (!hasTranscript(rec)) {
      if (ticket) deps.pacer?.done(ticket);
      return { kind: 'none', recording: rec, reason: noTranscriptReason(rec) };
    }
    // 3. The download, at once.
    const outcome = maskKeys(
      deps,
      await fetchTranscript(rec.transcript_url as string, {
        timeoutMs: deps.timeoutMs,
        clock: deps.clock,
        ...(deps.pacer ? { pacer: deps.pacer } : {}),
        ...(ticket ? { ticket } : {}),
        ...(deps.requestSignal ? { signal: deps.requestSignal } : {}),
        ...(deps.client.redact ? { redact: (text: string) => deps.client.redact!.text(text) } : {}),
      }),
    );
    switch (outcome.kind) {
      case 'ok':
        return {
          kind: 'ok',
          body: outcome.body,
          recording: rec,
          linkRefreshes,
          retries: rateLimited + failures,
        };
      case 'expired':
        if (linkRefreshes >= MAX_LINK_REFRESHES) {
          throw new NotFoundError(
            `the transcript link of recording ${sanitizeForTerminal(id)} kept expiring (${linkRefreshes + 1} links tried)`,
            { status: outcome.status, code: 'LINK_EXPIRED' },
          );
        }
        linkRefreshes += 1;
        break;
      case 'rateLimited': {
        if (outcome.retryAfterMs > MAX_RETRY_AFTER_MS) {
          const when = comeBackText(outcome.retryAfterMs, deps.clock.now());
          throw new RateLimitError(`transcript downloads are rate limited ${when} (Retry-After); try again then`, {
            status: 429,
          });
        }
        const charge = outcome.retryAfterGiven ? rateLimitCharge(outcome.retryAfterMs) : undefined;
        if (charge !== undefined ? rateCharged + charge > budgetMs : rateLimited - rateWaits >= deps.maxRetries) {
          const why =
            charge !== undefined
              ? budgetSpentText({ askedMs: charge, waits: rateWaits, chargedMs: rateCharged, budgetMs })
              : `still rate limited after ${rateLimited - rateWaits} retries (a 429 without a positive Retry-After counts against --max-retries, ${deps.maxRetries})`;
          throw new RateLimitError(`transcript downloads: ${why}`, { status: 429 });
        }
        rateLimited += 1;
        if (charge !== undefined) {
          rateWaits += 1;
          rateCharged += charge;
        }
        await wait(deps, outcome.retryAfterMs, 'the transcript download answered 429 (Retry-After)');
        break;
      }
      case 'failed':
        if (!outcome.retryable || failures >= deps.maxRetries) throw outcome.error;
        failures += 1;
        await wait(
          deps,
          backoffMs(failures - 1, () => deps.clock.random()),
          `retry ${failures} of a transcript download`,
        );
        break;
    }
  }
}

/** The outcome with the keys masked: a transcript is server text like any other, printed or kept in files. */
function maskKeys(deps: TranscriptSourceDeps, outcome: TranscriptOutcome): TranscriptOutcome {
  const redact = deps.client.redact;
  if (!redact) return outcome;
  if (outcome.kind === 'ok') return { ...outcome, body: redact.value(outcome.body) };
  if (outcome.kind === 'failed') return { ...outcome, error: redact.error(outcome.error) };
  return outcome;
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

async function wait(deps: TranscriptSourceDeps, ms: number, why: string): Promise<void> {
  if (deps.signal?.aborted) throw new InterruptedError('interrupted');
  deps.client.waits?.note(ms, why);
  try {
    await deps.clock.sleep(ms, deps.signal);
  } catch (err) {
    if (err instanceof CrmError) throw err;
    throw new InterruptedError('interrupted', { cause: err });
  }
}
