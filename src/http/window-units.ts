// When each unit of the rate limit that this process used frees again, from the answers' Reset: pure
// bookkeeping for the Pacer. An answer's Reset is a time by which every request sent before it has
// left its window, in a fixed window (all free at the reset) and in a sliding one (Reset = when the
// window is whole again) alike; so request k's unit is surely free by the earliest Reset of the
// answers to requests k and later. A fixed window's first answer (Reset rounded up from almost a
// whole window) bounds its end within the latency, where the last answer may be a second late.

/** One request this process sent in the current window: `seq` in sending order; `freeAt` (our clock) by when its unit is free again. */
export interface Unit {
  seq: number;
  freeAt: number;
  /** when its answer came (our clock): with the window's length, another bound (window-length.ts) */
  answeredAt?: number;
}

/** A new request goes out: its unit is free again at an unknown time until an answer at or after it tells. */
export function addUnit(units: Unit[], seq: number): void {
  units.push({ seq, freeAt: Infinity });
}

/** Request `seq` was answered without a word on the window (a replay, a failure): it is not counted here. */
export function dropUnit(units: Unit[], seq: number): void {
  const i = units.findIndex((u) => u.seq === seq);
  if (i >= 0) units.splice(i, 1);
}

/**
 * The answer to request `seq` says the window is whole again by `resetAt`: so is every unit sent
 * at or before it. `freeAt` stays non-decreasing in `seq`, so the walk from the newest stops at the
 * first unit already as early.
 */
export function tightenUnits(units: Unit[], seq: number, resetAt: number): void {
  for (let i = units.length - 1; i >= 0; i--) {
    const u = units[i]!;
    if (u.seq > seq) continue;
    if (u.freeAt <= resetAt) break;
    u.freeAt = resetAt;
  }
}

/** Request `seq` was answered at `at`. */
export function markAnswered(units: Unit[], seq: number, at: number): void {
  const u = units.find((x) => x.seq === seq);
  if (u) u.answeredAt = at;
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

/** How many of the oldest units, counted in the answers so far (`seq` ≤ `appliedSeq`), are free by `now`: removed and returned. */
export function releaseFree(units: Unit[], appliedSeq: number, now: number): number {
  let n = 0;
  while (n < units.length && units[n]!.seq <= appliedSeq && units[n]!.freeAt <= now) n++;
  units.splice(0, n);
  return n;
}

/** When the oldest counted unit frees (undefined: none known). */
export function nextFree(units: Unit[], appliedSeq: number): number | undefined {
  const u = units[0];
  return u && u.seq <= appliedSeq && u.freeAt !== Infinity ? u.freeAt : undefined;
}

/** When the oldest counted unit is free by a window of `lengthMs` after its answer (undefined: not answered, or no length). */
export function nextGuessed(units: Unit[], appliedSeq: number, lengthMs: number | undefined): number | undefined {
  const u = units[0];
  return u && u.seq <= appliedSeq && u.answeredAt !== undefined && lengthMs !== undefined ? u.answeredAt + lengthMs : undefined;
}

/** Like `releaseFree`, by the guessed length instead of the Resets, at most `max` units. */
export function releaseGuessed(units: Unit[], appliedSeq: number, now: number, lengthMs: number | undefined, max: number): number {
  if (lengthMs === undefined) return 0;
  let n = 0;
  for (; n < Math.min(max, units.length); n++) {
    const u = units[n]!;
    if (u.seq > appliedSeq || u.answeredAt === undefined || u.answeredAt + lengthMs > now) break;
  }
  units.splice(0, n);
  return n;
}
