// Every unit leaves the window within the window's length of being counted (fixed windows, anchored
// or aligned, and sliding ones alike), so a unit is free by its answer's time plus the length. The
// length is not in the headers. An answer that opened its window (Remaining = Limit - 1) was counted
// after it was sent, and a window anchored at its first request ends (or, sliding, frees that
// request) a length after it: so the length is at most Reset less that send time. That bound serves
// where the Resets alone say too little: a sliding window's Reset names either the window whole
// again or only its oldest request leaving, and one answer cannot tell which (window-units.ts), so
// the units after the oldest are freed by it, one by one. A Unix time in whole seconds hides up to a
// second more: windows are whole seconds long, so the most whole seconds below the bound are taken.
// Pure bookkeeping for the Pacer. The guess is a hypothesis (windows aligned to the clock make the
// bound too short, a window of fractions of a second breaks the whole seconds, and either may pass
// a trial by luck), so a unit freed by it alone goes alone, every time, and the first 429 to such a
// trial drops the guess for good: at most one 429 per run.

export interface LengthGuess {
  /** the least `resetAt - sentAt` of the answers that opened their window (ms) */
  boundMs?: number;
  /** the Resets are Unix times in whole seconds: the bound is a second coarse */
  coarse?: boolean;
  /** a trial was refused (429): the Resets alone tell from now on */
  refuted?: boolean;
}

/** What an answer (sent at `sentAt`, our clock) tells of the window's length. */
export function learnLength(
  g: LengthGuess,
  a: { coarse: boolean; limit?: number; remaining: number; resetAt: number; sentAt?: number },
): LengthGuess {
  if (a.limit === undefined || a.sentAt === undefined || a.remaining !== a.limit - 1) return g;
  const bound = a.resetAt - a.sentAt;
  return bound > 0 && bound < (g.boundMs ?? Infinity) ? { ...g, boundMs: bound, coarse: a.coarse } : g;
}

/** The window's length as guessed (the bound; from a coarse Reset, the most whole seconds below it), or undefined when none is known or the guess was refuted. */
export function guessedLength(g: LengthGuess): number | undefined {
  if (g.refuted || g.boundMs === undefined) return undefined;
  if (!g.coarse) return g.boundMs;
  const ms = (Math.ceil(g.boundMs / 1000) - 1) * 1000;
  return ms > 0 ? ms : undefined;
}

/** May a unit be counted free by the guess now: with nothing in flight (the trial goes alone; its answer tells the rest what remains). */
export function guessUsable(g: LengthGuess, inFlight: number): boolean {
  return !g.refuted && inFlight === 0;
}

/** The answer (its HTTP status) to a request that went on the guess: a 429 refutes the guess. */
export function judgeTrial(g: LengthGuess, status: number | undefined): LengthGuess {
  return status === 429 ? { ...g, refuted: true } : g;
}
