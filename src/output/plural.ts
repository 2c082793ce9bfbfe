// Counts in messages: "1 row", "2 rows", "0 rows" (English: singular only for exactly one).

/** `n` as a count in prose: 2,003 (thousands separated, like every count in a summary). */
export function count(n: number): string {
  return n.toLocaleString('en-US');
}

/** `n` and the noun, singular for exactly 1: plural(1, 'row') → "1 row"; irregular: plural(n, 'entry', 'entries'). */
export function plural(n: number, noun: string, nouns = `${noun}s`): string {
  return `${count(n)} ${n === 1 ? noun : nouns}`;
}

/** "was" or "were" for `n` things. */
export function wasWere(n: number): string {
  return n === 1 ? 'was' : 'were';
}
