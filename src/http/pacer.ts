// Keeps every request of a process under the server's rate limit (CONTRACT §4), from the
// X-RateLimit-* headers, so bulk work flows instead of bouncing off 429s: pure arithmetic in
// paceDelay and window-units.ts, the state shared by concurrent requests in Pacer.
import { once, setMaxListeners } from 'node:events';
import { parseRateLimit } from './rate-headers.js';
import { MAX_RETRY_AFTER_MS, tooLongError } from './retry.js';
import { type Clock, linkSignals } from './clock.js';
import {
  type Unit,
  addUnit,
  dropUnit,
  keepUsed,
  markAnswered,
  nextGuessed,
  releaseGuessed,
  sharedUse,
} from './window-units.js';
import { type LengthGuess, guessUsable, guessedLength, judgeTrial, learnLength } from './window-length.js';

/** waited past an expected reset so a request never lands on the old window */
export const RESET_MARGIN_MS = 5;
/** a Reset in whole seconds (rounded up, or a Unix time) may be this much later than the window's end */
const SECOND_MS = 1_000;

export interface PaceState {
  now: number;
  /** no request before this (a 429's Retry-After) */
  blockedUntil: number;
  limit?: number;
  /** what the server last said remains in this window; undefined: nothing known */
  remaining?: number;
  /** undefined right after a reset we inferred, until a response tells the new one */
  resetAt?: number;
  /** past a reset we inferred: what the window had left before it (a reset frees more, never less); the requests in flight whose answer will tell what it has (default: pending) */
  leftBefore?: number;
  asking?: number;
  /** requests admitted and not answered yet: the last `remaining` may not count them (answers come in another order than the server counted their requests) */
  pending: number;
  /** when the oldest unit this process used in the window is surely free again, by the window's length (window-units.ts) */
  freeAt?: number;
  /** units other clients of the key took during our last request (from its sending to its answer): about what they keep in flight */
  shared?: number;
}

/**
 * How long the next request should wait: 0 to go now, Infinity until an answer arrives. What the
 * window has left goes at once: the least time a limit allows is windows used in full back to back,
 * fixed or sliding (a budget spread over the window put the run's last requests at its end). With
 * nothing left, wait until the first unit we used is surely free (a sliding window frees them one by
 * one, a fixed one all at its reset), at the latest until the window resets.
 */
export function paceDelay(s: PaceState): number {
  if (s.now < s.blockedUntil) return s.blockedUntil - s.now;
  if (s.remaining === undefined) return 0;
  // others sharing the key have requests in flight too: leave them room (each of ours in flight
  // stands for its share of theirs), but one request of ours may always go: its answer tells
  const free = (left: number) => left - s.pending - (s.pending > 0 ? (s.shared ?? 0) : 0) > 0;
  // past a reset we inferred, what was left before it goes, then one request, whose answer tells: a
  // Reset may name only the oldest request leaving a sliding window, not the window whole again, and
  // others on the key may have opened the new window (and used it) before us
  if (s.resetAt === undefined) return free(s.leftBefore ?? 0) || (s.asking ?? s.pending) === 0 ? 0 : Infinity;
  if (free(s.remaining)) return 0;
  if (s.pending > 0 && s.remaining - s.pending > 0) return Infinity; // until an answer
  const at = Math.min(s.resetAt, s.freeAt ?? Infinity);
  if (s.now >= at) return 0; // a unit is free: the caller counts it
  return at - s.now + RESET_MARGIN_MS;
}

/**
 * A slot admitted by the pacer: `sent` when its request goes out (answers are ordered by that),
 * then handed back with `done` (sent or not).
 */
export interface PacerTicket {
  seq?: number;
  /** what the pacer knew when it went out (sharedUse) */
  known?: { remaining?: number; seq: number };
  /** when it went out (our clock) */
  sentAt?: number;
  /** it went alone on the guessed length of the window (window-length.ts): its answer judges the guess */
  trial?: boolean;
  /** admitted past a reset the pacer inferred: its answer tells what the window has (paceDelay) */
  asks?: boolean;
}

export class Pacer {
  /** what the answers said of the window (PaceState without `now`, `pending`, `freeAt` and `asking`) */
  private readonly w: Omit<PaceState, 'now' | 'pending' | 'freeAt' | 'asking'> = { blockedUntil: 0 };
  /** the units of the window this process used, oldest first, and by when each is free again */
  private units: Unit[] = [];
  private seq = 0;
  /** the seq of the request whose headers set `remaining` */
  private appliedSeq = 0;
  /** how many requests had gone out when the last answer that set or lowered `remaining` came */
  private sentByApplied = 0;
  /** how long the request whose headers set `remaining` took, sending to answer (ms) */
  private appliedRttMs = 0;
  /** admitted slots not yet counted in `remaining` */
  private readonly pending = new Set<PacerTicket>();
  private wake = new AbortController();
  /** calls of sleepOrWake listening to `wake` now */
  private sleepers = 0;
  /** the window's length guessed from a coarse Reset, and how far it is trusted */
  private length: LengthGuess = {};
  /** a unit freed by the guessed length: the next slot admitted is its trial */
  private trialOpen = false;
  /** requests admitted; those that had to wait, and how long in all; 429s reported */
  readonly stats = { admitted: 0, waited: 0, waitedMs: 0, rateLimited: 0 };

  constructor(private readonly clock: Clock) {}

  /** Waits until a request may go, then admits it; `onWait` is told each wait and why. Rejects when `signal` aborts. */
  async acquire(
    signal?: AbortSignal,
    options: { onWait?: (ms: number, why: string) => void } = {},
  ): Promise<PacerTicket> {
    const started = this.clock.now();
    for (;;) {
      signal?.throwIfAborted();
      const now = this.clock.now();
      this.rollOver(now);
      const ask = this.w.resetAt === undefined ? this.asking(now) : undefined;
      let wait = paceDelay({ ...this.w, now, pending: this.pending.size, asking: ask?.n, freeAt: this.nextFreeAt() });
      if (wait === Infinity && ask?.slowAt !== undefined) wait = ask.slowAt - now; // then it no longer holds the others
      if (wait > MAX_RETRY_AFTER_MS && wait !== Infinity) throw tooLongError(wait, now, now < this.w.blockedUntil);
      if (wait > 0 && wait !== Infinity) options.onWait?.(wait, this.waitReason(now));
      if (wait <= 0) {
        const ticket: PacerTicket = {
          ...(this.trialOpen ? { trial: true } : {}),
          asks: this.w.remaining !== undefined && this.w.resetAt === undefined,
        };
        this.trialOpen = false;
        this.pending.add(ticket);
        this.stats.admitted++;
        if (now > started) {
          this.stats.waited++;
          this.stats.waitedMs += now - started;
        }
        return ticket;
      }
      await this.sleepOrWake(wait, signal);
    }
  }

  /**
   * Its request goes out now. Requests are ordered by when they are sent, not admitted (other work
   * may come between): an answer to one sent after another answer came was counted after it (apply).
   */
  sent(ticket: PacerTicket): void {
    if (!this.pending.has(ticket) || ticket.seq !== undefined) return;
    ticket.seq = ++this.seq;
    ticket.known = { remaining: this.w.remaining, seq: this.appliedSeq };
    ticket.sentAt = this.clock.now();
    addUnit(this.units, ticket.seq);
  }

  /** The answer (or failure) of a slot's request, or the slot unused: its headers update the window; `status`, the answer's. */
  done(ticket: PacerTicket, headers?: Record<string, string | undefined>, status?: number): void {
    const seq = ticket.seq ?? 0;
    const info = headers && seq > 0 ? parseRateLimit(headers, this.clock.now()) : undefined;
    if (info) {
      markAnswered(this.units, seq, this.clock.now());
      // a 429 took no unit: its Remaining 0 is not Limit - 1 of a window it opened (a Limit of 1)
      if (status !== 429) this.length = learnLength(this.length, { ...info, sentAt: ticket.sentAt });
    } else dropUnit(this.units, seq);
    if (info) this.apply(ticket, info);
    if (ticket.trial) this.length = judgeTrial(this.length, status);
    // without headers (a network error, a 5xx) it may or may not have counted: forget it
    this.pending.delete(ticket);
    this.notify();
  }

  /**
   * What an answer says of the window. It counts the requests the server took before it, not all
   * those sent before it: the ways there and back take their own times, so a newer request's answer
   * may carry a Remaining counted before an older one's. An answer to a request sent after the last
   * answer that set or lowered Remaining came was counted after that one: fresh, it may raise
   * Remaining (units left a sliding window). One in flight then may only lower it (and is then the
   * one a fresh answer must follow), while its Reset is ahead and of the same window (no earlier than
   * the applied one's less that one's latency and a second of rounding). Either way its window holds
   * its request: our units up to it are those that window counts (keepUsed), so one that left before
   * is not freed twice. Past a reset we inferred, the answer to a request admitted past it says the
   * window; one sent before it (its window may be the old one) only counts against what was left.
   */
  private apply(ticket: PacerTicket, info: NonNullable<ReturnType<typeof parseRateLimit>>): void {
    const now = this.clock.now();
    const seq = ticket.seq ?? 0;
    if (ticket.known) this.w.shared = sharedUse(ticket.known, info.remaining, seq);
    if (seq > this.sentByApplied || (this.w.resetAt === undefined && (ticket.asks || this.w.remaining === undefined))) {
      this.appliedSeq = Math.max(this.appliedSeq, seq);
      [this.sentByApplied, this.appliedRttMs] = [this.seq, now - (ticket.sentAt ?? now)];
      Object.assign(this.w, { remaining: info.remaining, resetAt: info.resetAt, limit: info.limit ?? this.w.limit });
      // without a Limit no unit is ever freed by the window's length (window-length.ts): keep none,
      // or they pile up for the whole run (each answer scans them)
      keepUsed(this.units, seq, this.w.limit === undefined ? 0 : this.w.limit - info.remaining);
    } else if (this.w.resetAt === undefined) {
      // past a reset we inferred, an answer to a request sent before it: the window it speaks of may
      // be the old one, or the new one, which its request then took a unit of
      if (this.w.leftBefore !== undefined) this.w.leftBefore = Math.max(0, this.w.leftBefore - 1);
    } else if (
      this.w.remaining !== undefined &&
      info.resetAt > now &&
      info.resetAt >= this.w.resetAt - this.appliedRttMs - SECOND_MS
    ) {
      // lower: it may have been counted after the applied one, and then its Reset is the later (one
      // that does not lower says nothing new: its Reset, read on arrival, is late by its way back)
      if (info.remaining < this.w.remaining) {
        [this.w.remaining, this.sentByApplied] = [info.remaining, this.seq];
        this.w.resetAt = Math.max(this.w.resetAt, info.resetAt);
      }
      this.appliedSeq = Math.max(this.appliedSeq, seq);
      if (this.w.limit !== undefined) keepUsed(this.units, this.appliedSeq, this.w.limit - this.w.remaining);
    }
  }

  /**
   * Past the reset, the window may be whole again (fixed; sliding, when its Reset names the newest
   * request leaving) or have freed only its oldest unit (sliding, when it names the oldest): what it
   * had left goes, then one request, whose Remaining tells what is free and which of ours it still
   * counts (keepUsed). Before it, a unit we used surely free by the window's length counts as
   * remaining, one at a time (window-length.ts).
   */
  private rollOver(now: number): void {
    if (this.w.resetAt !== undefined && now >= this.w.resetAt) {
      Object.assign(this.w, { resetAt: undefined, leftBefore: this.w.remaining, remaining: this.w.limit });
      return;
    }
    if (this.guessing() && releaseGuessed(this.units, this.appliedSeq, now, guessedLength(this.length), 1) > 0) {
      this.trialOpen = true;
      if (this.w.remaining !== undefined) this.w.remaining = Math.min(this.w.remaining + 1, this.w.limit ?? Infinity);
    }
  }

  /**
   * Past a reset we inferred, the requests in flight that will tell what the window has: admitted past
   * it, or sent before it and not slow yet (in flight under four times the last answer's latency, at
   * least a second: a slow upload would hold every other one, while one sent just before the reset
   * may find the window not free, a 429); `slowAt`, when the next of the latter turns slow.
   */
  private asking(now: number): { n: number; slowAt?: number } {
    const slowMs = Math.max(SECOND_MS, 4 * this.appliedRttMs);
    let n = 0;
    let slowAt: number | undefined;
    for (const t of this.pending) {
      const until = (t.sentAt ?? -Infinity) + slowMs;
      if (!t.asks && until <= now) continue; // slow: it no longer holds the others
      n++;
      if (!t.asks) slowAt = Math.min(slowAt ?? Infinity, until);
    }
    return { n, slowAt };
  }

  /** May units be counted free by the guessed window length now (window-length.ts)? */
  private guessing(): boolean {
    return !this.trialOpen && guessUsable(this.length, this.pending.size);
  }

  /** When the oldest unit we used is surely free, by the guessed length, when it may be used now. */
  private nextFreeAt(): number | undefined {
    return this.guessing() ? nextGuessed(this.units, this.appliedSeq, guessedLength(this.length)) : undefined;
  }

  /** A 429: nobody sends before `ms` from now. */
  block(ms: number): void {
    this.stats.rateLimited++;
    this.w.blockedUntil = Math.max(this.w.blockedUntil, this.clock.now() + Math.max(0, ms));
    this.notify();
  }

  /** The window's length as an answer that opened a window told it (window-length.ts); undefined when none did, or a 429 refuted it. */
  windowLength(): number | undefined {
    return guessedLength(this.length);
  }

  /** What the pacer believes now. */
  snapshot(): Omit<PaceState, 'now' | 'pending'> & { inFlight: number } {
    return { ...this.w, inFlight: this.pending.size };
  }

  private waitReason(now: number): string {
    if (now < this.w.blockedUntil) return 'held back by a 429 (Retry-After)';
    const left = (this.w.remaining ?? 0) - this.pending.size;
    return left <= 0
      ? `the rate limit's window is used up until it frees room (the server says ${this.w.remaining ?? 0} left, ${this.pending.size} of ours in flight)`
      : `${left} requests of the rate-limit window left`;
  }

  private notify(): void {
    // nobody sleeping: nothing to wake (a new controller and its abort per request cost a read of 10,000 pages ~0.5 s)
    if (this.sleepers === 0) return;
    const old = this.wake;
    this.wake = new AbortController();
    setMaxListeners(0, this.wake.signal); // every waiting request listens
    old.abort();
  }

  /** Sleeps `ms` (Infinity: until woken), returning early when the state changes; throws when `signal` aborts. */
  private async sleepOrWake(ms: number, signal?: AbortSignal): Promise<void> {
    const both = linkSignals(signal, this.wake.signal);
    this.sleepers++;
    try {
      if (!both.signal.aborted)
        await (ms === Infinity ? once(both.signal, 'abort') : this.clock.sleep(ms, both.signal));
    } catch (err) {
      if (!both.signal.aborted) throw err;
    } finally {
      this.sleepers--;
      both.dispose();
    }
    signal?.throwIfAborted();
  }
}

const defaultPacers = new WeakMap<Clock, Map<string, Pacer>>();

/** The process-wide pacer for one key at one origin (limits are per key), per clock (tests' fake ones apart). */
export function sharedPacer(clock: Clock, origin: string, apiKey: string): Pacer {
  let byKey = defaultPacers.get(clock);
  if (!byKey) defaultPacers.set(clock, (byKey = new Map<string, Pacer>()));
  const id = `${origin}\u0000${apiKey}`;
  let pacer = byKey.get(id);
  if (!pacer) byKey.set(id, (pacer = new Pacer(clock)));
  return pacer;
}
