// "did you mean …?": the one name close to a mistyped word (another case, a letter missing, added, changed or two swapped).

/** Edit distance with adjacent swaps (optimal string alignment), stopping early past `max`. */
export function editDistance(a: string, b: string, max = Infinity): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev2: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, prev2[j - 2]! + 1);
      row.push(d);
    }
    [prev2, prev] = [prev, row];
  }
  return prev[b.length]!;
}

/** The nearest of `names` to `word` (case ignored) within 2 edits (1 for words of up to 4 letters), or undefined. */
export function nearestName(word: string, names: readonly string[]): string | undefined {
  const w = word.toLowerCase();
  const max = w.length <= 4 ? 1 : 2;
  let best: { name: string; d: number } | undefined;
  for (const name of names) {
    const d = editDistance(w, name.toLowerCase(), max);
    if (d <= max && (!best || d < best.d)) best = { name, d };
  }
  return best?.name;
}

/**
 * nearestName for a hint someone will follow: a word of 4 letters or fewer only with its letters kept (moved, one
 * added or left out), since a letter changed there leaves two or three in common: another word (`zip`, `vip`);
 * and never between names under 3 letters (`a.b` is not a typo of `b`: the hint wrote its values into `b`).
 */
export function nearestTypo(word: string, names: readonly string[]): string | undefined {
  const w = word.toLowerCase();
  return nearestName(
    w,
    names.filter((n) => {
      const shorter = Math.min(n.length, w.length);
      return shorter >= 3 && (shorter > 4 || sameLetters(n.toLowerCase(), w));
    }),
  );
}

/** `a` and `b` differ by letters moved, added or left out, none changed: `nmae` and `name`, `emal` and `email`. */
function sameLetters(a: string, b: string): boolean {
  const [short, long] = a.length <= b.length ? [a, b] : [b, a];
  const left = [...long];
  return [...short].every((ch) => {
    const i = left.indexOf(ch);
    return i >= 0 && left.splice(i, 1).length === 1;
  });
}
