// Strings → a number each, in flat memory: a 64-bit hash of the string in an open-addressed table of typed arrays
// (12 bytes a slot, 16 with a second column, at most half full: 25 MB for a million), the strings themselves not
// kept. Two strings sharing a hash (odds about n²/2⁶⁵: 3·10⁻⁸ at a million) read as one: a hit is only a hint, and
// every caller checks it against the string itself (first-seen.ts keeps them on disk; the match index, its records).

/** Two 32-bit lanes over the UTF-16 code units: FNV-1a and a multiply-xorshift, not correlated. */
export function hash64(text: string): [number, number] {
  let a = 0x811c9dc5 | 0;
  let b = 0x9e3779b9 | 0;
  for (let i = 0; i < text.length; i++) {
    const k = text.charCodeAt(i);
    a = Math.imul(a ^ k, 16777619);
    b = Math.imul(b ^ k, 0x5bd1e995);
    b ^= b >>> 15;
  }
  b = Math.imul(b ^ (b >>> 13), 0x85ebca6b);
  return [a >>> 0, (b ^ (b >>> 16)) >>> 0];
}

let hashOf = hash64;
/** Tests only: a weak hash, so that chosen strings share one (undefined: back to hash64). */
export function setHashForTests(hash?: (text: string) => [number, number]): void {
  hashOf = hash ?? hash64;
}

const EMPTY = 0xffffffff;
/** the largest value a slot holds */
export const MAX_VALUE = 0xfffffffe;

/**
 * `columns` 2: each string holds a second number too (`get(text, 1)`), for two tables keyed by the same strings
 * in the memory of one (4 more bytes a slot): the match stage's file keys and the index's records for them.
 */
export class HashTable {
  private hi: Uint32Array;
  private lo: Uint32Array;
  /** column 0; EMPTY: an empty slot */
  private val: Uint32Array;
  /** column 1 (EMPTY: not set) */
  private more: Uint32Array | undefined;
  size = 0;

  /** `expected`: the strings it will likely hold, its slots made for them at once (a hint: it grows past it, and
   * the garbage of growing from 1,024 to a million is not made) */
  constructor(columns: 1 | 2 = 1, expected = 0) {
    let n = 1024;
    while (n < 2 * expected + 2) n *= 2;
    [this.hi, this.lo, this.val] = [new Uint32Array(n), new Uint32Array(n), new Uint32Array(n).fill(EMPTY)];
    if (columns === 2) this.more = new Uint32Array(n).fill(EMPTY);
  }

  get(text: string, column: 0 | 1 = 0): number | undefined {
    const [h, l] = hashOf(text);
    const at = this.find(h, l);
    const v = column === 0 || this.val[at] === EMPTY ? this.val[at]! : this.more![at]!;
    return v === EMPTY ? undefined : v;
  }

  /** `value`: a whole number from 0 to MAX_VALUE; a string new to the table and set in column 1 has 0 in column 0 */
  set(text: string, value: number, column: 0 | 1 = 0): void {
    if (!(value >= 0 && value <= MAX_VALUE)) throw new RangeError(`a hash table value must be from 0 to ${MAX_VALUE}`);
    const [h, l] = hashOf(text);
    let at = this.find(h, l);
    if (this.val[at] === EMPTY) {
      [this.hi[at], this.lo[at], this.val[at]] = [h, l, 0];
      if (++this.size * 2 > this.val.length) {
        this.grow();
        at = this.find(h, l);
      }
    }
    if (column === 0) this.val[at] = value;
    else this.more![at] = value;
  }

  private find(h: number, l: number): number {
    const mask = this.val.length - 1;
    let i = (h ^ Math.imul(l, 0x27d4eb2d)) & mask;
    while (this.val[i] !== EMPTY && (this.hi[i] !== h || this.lo[i] !== l)) i = (i + 1) & mask;
    return i;
  }

  private grow(): void {
    const [hi, lo, val, more] = [this.hi, this.lo, this.val, this.more];
    const n = val.length * 2;
    [this.hi, this.lo, this.val] = [new Uint32Array(n), new Uint32Array(n), new Uint32Array(n).fill(EMPTY)];
    if (more) this.more = new Uint32Array(n).fill(EMPTY);
    for (let i = 0; i < val.length; i++) {
      if (val[i] === EMPTY) continue;
      const at = this.find(hi[i]!, lo[i]!);
      [this.hi[at], this.lo[at], this.val[at]] = [hi[i]!, lo[i]!, val[i]!];
      if (more) this.more![at] = more[i]!;
    }
  }
}
