// The retry layer (CONTRACT §4) of API requests and transcript downloads alike: retry.ts's pure
// decisions plus the waits (and their notice), the counting and the final error naming the rule that stopped it.
import { type CrmError, InterruptedError, isCrmError, restated } from './errors.js';
import type { Pacer } from './pacer.js';
import {
  MAX_RETRY_AFTER_MS,
  backoffMs,
  budgetSpentText,
  comeBackText,
  formatWait,
  isRepeatable,
  rateLimitCharge,
  shouldRetry,
} from './retry.js';
import { retryAfterMs, serverClockOffset } from './rate-headers.js';
import { failureWords, neverReached } from './network-error.js';
import type { Clock, Failure, HttpMethod, Tried } from './types.js';

export interface RetryPolicy {
  clock: Clock;
  maxRetries: number;
  /** how long 429s with Retry-After may be waited out in all */
  budgetMs: number;
  method: HttpMethod;
  hasIdempotencyKey: boolean;
  /** every 429 holds this pacer back (all concurrent requests), not just this request */
  pacer?: Pacer;
  noteWait(ms: number, why: string): void;
  /** what stops the waits, read before each (it may change once a request is sent) */
  waitSignal(): AbortSignal | undefined;
  /** ", or lower --concurrency" for commands that have the flag */
  orConcurrency: string;
  /** told after each wait, before the next attempt */
  onRetry?(): void;
}

/** `counted`: retries that count against maxRetries (not the 429s with Retry-After, which the budget bounds) */
const newCount = () => ({ counted: 0, rateWaits: 0, rateCharged: 0 });
type Count = ReturnType<typeof newCount>;

/** Runs `attempt` (0, 1, …) until it succeeds or the rules say stop (then throws the final error). */
export async function withRetries<T>(policy: RetryPolicy, attempt: (n: number) => Promise<Tried<T>>): Promise<T> {
  const count = newCount();
  let carriedOut = false; // may an attempt so far have been carried out by the API?
  for (let n = 0; ; n++) {
    const stop = policy.waitSignal();
    if (stop?.aborted) throw interrupted(stop.reason);
    const tried = await attempt(n);
    if (tried.ok) return tried.value;
    const f = tried.failure;
    carriedOut ||= !(f.status === 429 || (f.status === undefined && neverReached(f.error.code)));
    let next: { wait: number; why: string };
    try {
      next = nextWait(f, n, count, policy);
    } catch (err) {
      throw carriedOut || !isCrmError(err) ? err : Object.assign(err, { unsent: true });
    }
    const { wait, why } = next;
    if (tried.failure.status === 429) policy.pacer?.block(wait);
    policy.noteWait(wait, why);
    await policy.clock.sleep(wait, policy.waitSignal()).catch((err: unknown) => {
      throw interrupted(err);
    });
    policy.onRetry?.();
  }
}

/** How long to wait before attempt `n + 1`, or the final error thrown. */
function nextWait(f: Failure, n: number, count: Count, p: RetryPolicy): { wait: number; why: string } {
  const now = p.clock.now();
  const fromHeader = retryAfterMs(f.retryAfter, now, serverClockOffset(f.serverDate, now));
  const charge = f.status === 429 ? rateLimitCharge(fromHeader) : undefined;
  if (fromHeader !== undefined && charge !== undefined) {
    // "later", not "never": waited out within the budget, whatever --max-retries says
    if (fromHeader > MAX_RETRY_AFTER_MS) {
      const hint = `the server asks to wait ${comeBackText(fromHeader, now)} (Retry-After); crm waits at most ${MAX_RETRY_AFTER_MS / 60_000} min: try again then`;
      throw finalError(f.error, n, true, hint, 'the wait asked for is too long');
    }
    if (count.rateCharged + charge > p.budgetMs) {
      const spent = budgetSpentText({
        askedMs: charge,
        waits: count.rateWaits,
        chargedMs: count.rateCharged,
        budgetMs: p.budgetMs,
      });
      throw finalError(
        f.error,
        n,
        true,
        `${spent}; try again later${p.orConcurrency}`,
        'the rate-limit budget is spent',
      );
    }
    count.rateWaits++;
    count.rateCharged += charge;
    return { wait: fromHeader, why: `the server answered 429 (Retry-After: ${f.retryAfter})` };
  }
  const { method, hasIdempotencyKey, maxRetries } = p;
  if (
    !shouldRetry({
      method,
      status: f.status,
      errorCode: f.errorCode,
      hasIdempotencyKey,
      attempt: count.counted,
      maxRetries,
    })
  ) {
    // a 429's Retry-After is waited out within the budget, not counted: say so when the total is more
    const uncounted = count.rateWaits > 0 ? ` (the ${count.rateWaits} after a 429's Retry-After not counted)` : '';
    throw finalError(f.error, n, retryable(f), noRetryHint(f, p), `--max-retries ${maxRetries}${uncounted}`);
  }
  count.counted++;
  const backoff = backoffMs(count.counted - 1, () => p.clock.random());
  const wait = f.status === 429 ? backoff : Math.max(backoff, fromHeader ?? 0);
  if (wait > MAX_RETRY_AFTER_MS) {
    throw finalError(
      f.error,
      n,
      true,
      `the server asks to wait ${comeBackText(wait, now)}; try again then`,
      'the wait asked for is too long',
    );
  }
  return { wait, why: `retry ${n + 1} after ${failureWords(f)}` };
}

function noRetryHint(f: Failure, p: RetryPolicy): string | undefined {
  if (!isRepeatable(p.method, p.hasIdempotencyKey) && retryable(f) && f.status !== 429) {
    return `not retried: a ${p.method} without an Idempotency-Key might be applied twice; check before running it again`;
  }
  if (f.status !== 429) return undefined;
  const said = f.retryAfter === undefined ? 'no Retry-After' : `Retry-After: ${f.retryAfter.slice(0, 40)}`;
  return `a 429 without a positive Retry-After (${said}) counts against --max-retries (${p.maxRetries}); try again later, or raise --max-retries${p.orConcurrency}`;
}

function retryable(f: Failure): boolean {
  return f.status === 429 || (f.status !== undefined && f.status >= 500) || f.errorCode !== undefined;
}

/** The error when no retry follows; after retries it says so and which `rule` stopped them. */
function finalError(error: CrmError, attempt: number, wasRetryable: boolean, hint?: string, rule?: string): CrmError {
  if (!wasRetryable || attempt === 0) {
    if (hint && !error.hint) Object.assign(error, { hint });
    return error;
  }
  const tries = `${attempt} ${attempt === 1 ? 'retry' : 'retries'}${rule ? `: ${rule}` : ''}`;
  return restated(error, {
    message: `${error.message} (gave up after ${tries})`,
    // the failure's own next step (a proxy's tunnels, HTTP_PROXY without HTTPS_PROXY) before the generic one
    hint: hint ?? error.hint ?? 'try again later, or raise --max-retries',
  });
}

export function interrupted(reason: unknown): CrmError {
  if (isCrmError(reason)) return reason;
  return new InterruptedError('interrupted', { cause: reason });
}

// "waiting 42 s: why" on standard error when crm waits long (CONTRACT §3: a silent minute looks like a
// hang): with --verbose from 1 s, else from 5 s (not with -q: the caller's `notice`); said once per wait.
/** waits from this long are said with --verbose */
export const VERBOSE_WAIT_MS = 1_000;
/** waits from this long are said always (unless --quiet) */
export const NOTICE_WAIT_MS = 5_000;
/** waits ending within this of one already said are the same wait */
const SAME_WAIT_MS = 1_000;

export type WaitNote = (ms: number, why: string) => void;

export function waitNotice(
  clock: Clock,
  verboseLog?: (line: string) => void,
  notice?: (line: string) => void,
): WaitNote {
  let saidUntil = -Infinity;
  return (ms, why) => {
    const threshold = verboseLog ? VERBOSE_WAIT_MS : NOTICE_WAIT_MS;
    const out = verboseLog ?? notice;
    if (!out || !(ms >= threshold)) return;
    const until = clock.now() + ms;
    if (Math.abs(until - saidUntil) <= SAME_WAIT_MS) return;
    saidUntil = until;
    out(`waiting ${formatWait(ms)}: ${why}`);
  };
}
