// A Reset given as a Unix time in whole seconds says when the window ends only to the second: a window
// that opened just after a whole second (as the next one does, when requests wait for the Reset) ends
// up to a second before it. Its length bounds it better: every unit leaves the window within the
// window's length of being counted (fixed windows, anchored or aligned, and sliding ones alike), so a
// unit is free by its answer's time plus the length. The length is not in the headers. An answer that
// opened its window (Remaining = Limit - 1) was counted after it was sent, so the window is shorter
// than Reset less that send time; windows are whole seconds long, so the most whole seconds below
// that bound are the guess. Pure bookkeeping for the Pacer. The guess is a hypothesis (windows
// aligned to the clock, or of fractions of a second, break it, and may pass a trial by luck), so a
// unit freed by it alone goes alone, every time, and the first 429 to such a trial drops the guess
// for good: at most one 429 per run.

export interface LengthGuess {
  /** the least `resetAt - sentAt` of the answers that opened their window (ms) */
  boundMs?: number;
  /** a trial was refused (429): the Resets alone tell from now on */
  refuted?: boolean;
}

/** What an answer (sent at `sentAt`, our clock) tells of the window's length; only a coarse Reset (a Unix time in whole seconds) needs it. */
export function learnLength(
  g: LengthGuess,
  a: { coarse: boolean; limit?: number; remaining: number; resetAt: number; sentAt?: number },
): LengthGuess {
  if (!a.coarse || a.limit === undefined || a.sentAt === undefined || a.remaining !== a.limit - 1) return g;
  const bound = a.resetAt - a.sentAt;
  return bound > 0 && bound < (g.boundMs ?? Infinity) ? { ...g, boundMs: bound } : g;
}

/** The window's length as guessed (the most whole seconds below the bound), or undefined when none is known or the guess was refuted. */
export function guessedLength(g: LengthGuess): number | undefined {
  if (g.refuted || g.boundMs === undefined) return undefined;
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
