// Rows of a create whose record repeats an earlier row's (the same row pasted twice): found in the check pass
// by a 64-bit hash of the record's JSON in an open-addressed table (12 bytes a slot, at most half full:
// about 24 bytes per distinct row, 24 MB for a million), so a repeated row is skipped and named, never
// created twice. Two different records sharing a hash (odds about n²/2⁶⁵: 3·10⁻⁸ at a million rows) would
// skip the second; the warning names it.

/** Two 32-bit lanes over the UTF-16 code units: FNV-1a and a multiply-xorshift, not correlated. */
function hash64(text: string): [number, number] {
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

export class RowRepeats {
  private hi = new Uint32Array(1024);
  private lo = new Uint32Array(1024);
  /** the first line with this record; 0: an empty slot (lines start at 1) */
  private first = new Uint32Array(1024);
  private size = 0;

  /** The line an identical record came on earlier, or undefined (then this one is remembered). */
  seen(json: string, line: number): number | undefined {
    const [h, l] = hash64(json);
    const at = this.find(h, l);
    if (this.first[at] !== 0) return this.first[at];
    this.hi[at] = h;
    this.lo[at] = l;
    this.first[at] = line;
    if (++this.size * 2 > this.first.length) this.grow();
    return undefined;
  }

  private find(h: number, l: number): number {
    const mask = this.first.length - 1;
    let i = (h ^ Math.imul(l, 0x27d4eb2d)) & mask;
    while (this.first[i] !== 0 && (this.hi[i] !== h || this.lo[i] !== l)) i = (i + 1) & mask;
    return i;
  }

  private grow(): void {
    const [hi, lo, first] = [this.hi, this.lo, this.first];
    const n = first.length * 2;
    [this.hi, this.lo, this.first] = [new Uint32Array(n), new Uint32Array(n), new Uint32Array(n)];
    for (let i = 0; i < first.length; i++) {
      if (first[i] === 0) continue;
      const at = this.find(hi[i]!, lo[i]!);
      [this.hi[at], this.lo[at], this.first[at]] = [hi[i]!, lo[i]!, first[i]!];
    }
  }
}
