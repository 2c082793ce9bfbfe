// Keeps every request of a process under the server's rate limit (CONTRACT §4), from the
// X-RateLimit-* headers, so bulk work flows instead of bouncing off 429s. The arithmetic is in
// pure functions; the Pacer class holds the state shared by concurrent requests.
import { setMaxListeners } from 'node:events';
import { RateLimitError } from './errors.js';
import { parseRateLimit } from './rate-headers.js';
import { MAX_RETRY_AFTER_MS, comeBackText } from './retry.js';
import { linkSignals } from './signals.js';
import type { Clock } from './clock.js';

/** waited past an expected reset so a request never lands on the old window */
export const RESET_MARGIN_MS = 5;

export interface PaceState {
  now: number;
  /** no request before this (a 429's Retry-After) */
  blockedUntil: number;
  limit?: number;
  /** what the server last said remains in this window; undefined: nothing known */
  remaining?: number;
  /** undefined right after a reset we inferred, until a response tells the new one */
  resetAt?: number;
  /** requests sent that the last `remaining` does not count yet */
  pending: number;
  lastSendAt?: number;
  /** how the budget below the reserve is spread; see PacerOptions */
  spread?: SpreadMode;
  /** nothing answered yet and PacerOptions.probe: one request alone until the first answer */
  probing?: boolean;
}

/**
 * `to-reset` (the API client's): once half the window's budget is used, the rest is spread over
 * the time left, the last request just before the reset. `none`: every unit goes as soon as it is
 * there. For bulk work under a fixed window (transcript downloads) holding units back gains
 * nothing, and a unit held back to the window's edge is lost when a little latency (for a
 * transcript, the `GET /recordings/{id}` between the slot and the download) carries its request
 * into the next window, which then starts a unit short: with a limit of 2 per second that made
 * 1 per second.
 */
export type SpreadMode = 'to-reset' | 'none';

export interface PacerOptions {
  spread?: SpreadMode;
  /**
   * While nothing is known of the window, send one request and wait for its answer (its headers
   * tell the budget) before the others, instead of letting every concurrent request go blind and
   * some bounce off a small limit with 429s. After the first answer, with headers or not, no more.
   */
  probe?: boolean;
}

/**
 * How long the next request should wait: 0 to go now, Infinity to wait for a response to arrive.
 * While more than half the window's budget is left, requests go at once (a short burst costs
 * nothing in a fixed window and keeps interactive use fast); below that, the rest is spread
 * evenly over the time left (with `spread: 'none'`, they go at once too); with nothing left, wait
 * for the reset.
 */
export function paceDelay(s: PaceState): number {
  if (s.now < s.blockedUntil) return s.blockedUntil - s.now;
  if (s.remaining === undefined) return s.probing && s.pending > 0 ? Infinity : 0;
  const available = s.remaining - s.pending;
  if (s.resetAt === undefined) return available > 0 ? 0 : Infinity;
  if (s.now >= s.resetAt) return 0; // the window is over: the caller rolls the state over
  if (available <= 0) return s.resetAt - s.now + RESET_MARGIN_MS;
  if (s.spread === 'none') return 0;
  // A window longer than crm would ever wait is a quota, not a rate: spreading the rest over it
  // would hold each request for minutes or days. Send while it lasts (the Pacer fails once it is out).
  if (s.resetAt - s.now > MAX_RETRY_AFTER_MS) return 0;
  const reserve = Math.ceil((s.limit ?? s.remaining) / 2);
  if (available > reserve) return 0;
  if (s.lastSendAt === undefined) return 0;
  const interval = (s.resetAt - s.now) / available;
  return Math.max(0, Math.ceil(s.lastSendAt + interval - s.now));
}

export interface AcquireOptions {
  /** other work comes between this and the request (call `sending` when it goes) */
  sendLater?: boolean;
  /** told each time this request has to wait, and why (for the "waiting 42 s: …" notice) */
  onWait?: (ms: number, why: string) => void;
}

/** A request admitted by the pacer; hand it back with `done` when its answer (or failure) arrives. */
export interface PacerTicket {
  readonly seq: number;
}

export interface PacerStats {
  /** requests admitted */
  admitted: number;
  /** requests that had to wait, and for how long in all */
  waited: number;
  waitedMs: number;
  /** 429s reported */
  rateLimited: number;
}

export class Pacer {
  private limit?: number;
  private remaining?: number;
  private resetAt?: number;
  private blockedUntil = 0;
  private lastSendAt?: number;
  private seq = 0;
  /** the seq of the request whose headers set `remaining` */
  private appliedSeq = 0;
  /** admitted requests not yet counted in `remaining` */
  private readonly pending = new Set<number>();
  /**
   * admitted with `sendLater`, not sent yet: they hold budget, but take their place in the order of
   * requests only when `sending` says they go (see there)
   */
  private readonly held = new Set<number>();
  private wake = new AbortController();
  readonly stats: PacerStats = { admitted: 0, waited: 0, waitedMs: 0, rateLimited: 0 };

  private readonly spread: SpreadMode;
  private probing: boolean;

  constructor(
    private readonly clock: Clock,
    options: PacerOptions = {},
  ) {
    this.spread = options.spread ?? 'to-reset';
    this.probing = options.probe ?? false;
  }

  /**
   * Waits until a request may go, then admits it. Rejects when `signal` aborts. `sendLater`: other
   * work comes between this and the request (call `sending` when it goes).
   */
  async acquire(signal?: AbortSignal, options: AcquireOptions = {}): Promise<PacerTicket> {
    const started = this.clock.now();
    for (;;) {
      signal?.throwIfAborted();
      const now = this.clock.now();
      this.rollOver(now);
      const wait = paceDelay(this.state(now));
      if (wait > MAX_RETRY_AFTER_MS && wait !== Infinity) throw this.tooLong(wait, now);
      if (wait > 0 && wait !== Infinity) options.onWait?.(wait, this.waitReason(now));
      if (wait <= 0) {
        const seq = ++this.seq;
        (options.sendLater ? this.held : this.pending).add(seq);
        this.lastSendAt = now;
        this.stats.admitted++;
        if (now > started) {
          this.stats.waited++;
          this.stats.waitedMs += now - started;
        }
        return { seq };
      }
      await this.sleepOrWake(wait, signal);
    }
  }

  /**
   * A request admitted with `sendLater` goes out now; hand the returned ticket to `done`. Answers
   * are read newest-request-wins, and an answer counts every request sent before it: so requests
   * are ordered by when they are sent, not by when they were admitted. (A transcript's slot is
   * taken before its recording is got; two downloads admitted A then B may be sent B then A, and
   * B's answer must not be read as counting A.)
   */
  sending(ticket: PacerTicket): PacerTicket {
    if (!this.held.delete(ticket.seq)) return ticket;
    const seq = ++this.seq;
    this.pending.add(seq);
    return { seq };
  }

  /** The answer to an admitted request: its headers update the window (latest request wins). */
  done(ticket: PacerTicket, headers?: Record<string, string | undefined>): void {
    if (this.held.delete(ticket.seq)) {
      // admitted, never sent (its recording could not be got): the budget is free again
      this.notify();
      return;
    }
    const now = this.clock.now();
    const info = headers ? parseRateLimit(headers, now) : undefined;
    if (info && ticket.seq > this.appliedSeq) {
      this.appliedSeq = ticket.seq;
      this.remaining = info.remaining;
      this.resetAt = info.resetAt;
      if (info.limit !== undefined) this.limit = info.limit;
      // the server counted every request sent before this one
      for (const seq of this.pending) if (seq <= ticket.seq) this.pending.delete(seq);
    }
    // Without headers (a network error, a 5xx) it may or may not have counted; forget it rather than
    // hold budget for it forever.
    this.pending.delete(ticket.seq);
    this.probing = false;
    this.notify();
  }

  /** A 429: nobody sends before `ms` from now. */
  block(ms: number): void {
    this.stats.rateLimited++;
    const until = this.clock.now() + Math.max(0, ms);
    if (until > this.blockedUntil) this.blockedUntil = until;
    this.notify();
  }

  /** For --verbose and keys-check: what the pacer believes now. */
  snapshot(): { limit?: number; remaining?: number; resetAt?: number; blockedUntil: number; inFlight: number } {
    return {
      limit: this.limit,
      remaining: this.remaining,
      resetAt: this.resetAt,
      blockedUntil: this.blockedUntil,
      inFlight: this.pending.size + this.held.size,
    };
  }

  /** A wait crm does not do (CONTRACT §4): fail now, saying when to come back. */
  private tooLong(wait: number, now: number): RateLimitError {
    const when = comeBackText(wait, now);
    const message =
      now < this.blockedUntil
        ? `the server asked to wait ${when} (429 Retry-After); crm waits at most ${MAX_RETRY_AFTER_MS / 60_000} min`
        : `the rate limit is used up until the window resets ${when} (X-RateLimit-Reset); crm waits at most ${MAX_RETRY_AFTER_MS / 60_000} min`;
    return new RateLimitError(message, { status: 429, code: 'RATE_LIMITED', hint: `try again ${when}` });
  }

  private waitReason(now: number): string {
    if (now < this.blockedUntil) return 'held back by a 429 (Retry-After)';
    const left = (this.remaining ?? 0) - this.pending.size - this.held.size;
    return left <= 0
      ? `the rate limit is used up (X-RateLimit-Remaining ${this.remaining ?? 0}) until the window resets`
      : `spreading the ${this.remaining} requests left over the rate-limit window`;
  }

  private state(now: number): PaceState {
    return {
      now,
      blockedUntil: this.blockedUntil,
      limit: this.limit,
      remaining: this.remaining,
      resetAt: this.resetAt,
      pending: this.pending.size + this.held.size,
      lastSendAt: this.lastSendAt,
      spread: this.spread,
      probing: this.probing,
    };
  }

  /** Past the reset, a fresh window: the full limit, less what is still in flight (it may land there). */
  private rollOver(now: number): void {
    if (this.resetAt === undefined || now < this.resetAt) return;
    this.resetAt = undefined;
    this.remaining = this.limit;
  }

  private notify(): void {
    const old = this.wake;
    this.wake = new AbortController();
    setMaxListeners(0, this.wake.signal); // every waiting request listens
    old.abort();
  }

  /** Sleeps `ms` (Infinity: until woken), returning early when the state changes. */
  private async sleepOrWake(ms: number, signal?: AbortSignal): Promise<void> {
    const wake = this.wake.signal;
    const both = linkSignals(signal, wake);
    try {
      if (ms === Infinity) {
        await new Promise<void>((_, reject) => {
          if (both.signal.aborted) reject(both.signal.reason);
          both.signal.addEventListener('abort', () => reject(both.signal.reason), { once: true });
        });
      } else {
        await this.clock.sleep(ms, both.signal);
      }
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      if (!wake.aborted) throw err;
    } finally {
      both.dispose();
    }
  }
}

const defaultPacers = new WeakMap<Clock, Map<string, Pacer>>();

/**
 * The process-wide pacer for one key at one origin (limits are per key), per clock so that a test's
 * fake clock never shares state with the real one.
 */
export function sharedPacer(clock: Clock, origin: string, apiKey: string): Pacer {
  let byKey = defaultPacers.get(clock);
  if (!byKey) defaultPacers.set(clock, (byKey = new Map<string, Pacer>()));
  const id = `${origin}\u0000${apiKey}`;
  let pacer = byKey.get(id);
  if (!pacer) byKey.set(id, (pacer = new Pacer(clock)));
  return pacer;
}
