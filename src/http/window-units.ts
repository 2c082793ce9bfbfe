// The units of the rate limit's window that this process used, and when each is free again: pure
// bookkeeping for the Pacer. A unit is free by its answer's time plus the window's length (fixed
// windows, anchored or aligned, and sliding ones alike: window-length.ts). The Resets do not say
// which unit frees when: a fixed window's Reset is when all do, a sliding window's either when the
// window is whole again or only when its oldest request leaves, and answers arrive in another
// order than the server counted their requests, so a Reset cannot be pinned on one of our units
// (issue 20: that freed a unit the window still counted, a 429). A Reset passing is read whole in
// the Pacer: one request goes, and its Remaining tells. Also: the units others on the key took (sharedUse).

/** One request this process sent in the current window: `seq` in sending order. */
export interface Unit {
  seq: number;
  /** when its answer came (our clock): with the window's length, when its unit is surely free */
  answeredAt?: number;
}

/** A new request goes out. */
export function addUnit(units: Unit[], seq: number): void {
  units.push({ seq });
}

/** Request `seq` was answered without a word on the window (a replay, a failure): it is not counted here. */
export function dropUnit(units: Unit[], seq: number): void {
  const i = unitIndex(units, seq);
  if (i >= 0) units.splice(i, 1);
}

/** Request `seq` was answered at `at`. */
export function markAnswered(units: Unit[], seq: number, at: number): void {
  const u = units[unitIndex(units, seq)];
  if (u) u.answeredAt = at;
}

/**
 * Where request `seq` is, or -1: a binary search, the units being in sending order (pushed so, removed in place). With
 * no limit in sight the window's units run to thousands, and a search from the front cost a read of 10,000 pages ~0.8 s.
 */
function unitIndex(units: readonly Unit[], seq: number): number {
  let [lo, hi] = [0, units.length - 1];
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const at = units[mid]!.seq;
    if (at === seq) return mid;
    if (at < seq) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/**
 * The newest answer (to request `seq`) says `used` units of the window are taken: of our requests
 * sent by then, the newest `used` may be among them; older ones are free (the window moved on).
 */
export function keepUsed(units: Unit[], seq: number, used: number): void {
  let counted = units.length;
  while (counted > 0 && units[counted - 1]!.seq > seq) counted--; // sent after it: few, at the end
  let drop = Math.max(0, counted - Math.max(0, used));
  while (drop > 0 && units.length > 0 && units[0]!.seq <= seq) {
    units.shift();
    drop--;
  }
}

/** When the oldest counted unit (`seq` ≤ `appliedSeq`) is free by a window of `lengthMs` after its answer (undefined: not answered, or no length). */
export function nextGuessed(units: Unit[], appliedSeq: number, lengthMs: number | undefined): number | undefined {
  const u = units[0];
  return u && u.seq <= appliedSeq && u.answeredAt !== undefined && lengthMs !== undefined
    ? u.answeredAt + lengthMs
    : undefined;
}

/** How many of the oldest counted units are free by `now` by the window's length, at most `max`: removed and returned. */
export function releaseGuessed(
  units: Unit[],
  appliedSeq: number,
  now: number,
  lengthMs: number | undefined,
  max: number,
): number {
  if (lengthMs === undefined) return 0;
  let n = 0;
  for (; n < Math.min(max, units.length); n++) {
    const u = units[n]!;
    if (u.seq > appliedSeq || u.answeredAt === undefined || u.answeredAt + lengthMs > now) break;
  }
  units.splice(0, n);
  return n;
}

/**
 * The units others took while our request `seq` was under way: we knew `known` remained (counting
 * our requests up to `knownSeq`) when it went out, and its answer says `remaining`; what the server
 * counted beyond our own requests in between is theirs. Remaining that grew (a new window, units
 * freed) says nothing: 0.
 */
export function sharedUse(known: { remaining?: number; seq: number }, remaining: number, seq: number): number {
  if (known.remaining === undefined) return 0;
  return Math.max(0, known.remaining - remaining - (seq - known.seq));
}
