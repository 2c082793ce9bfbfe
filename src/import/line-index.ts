// Line numbers of CSV records from byte offsets (csv-parse's info.lines is the end line and counts a
// quoted CRLF twice). Only bytes not yet walked over are kept.
import { CR, LF, LineCounter } from '../util/lines.js';

export class LineIndex {
  private chunks: Buffer[] = [];
  /** absolute offset of chunks[0][0] */
  private base: number;
  /** absolute offset of the cursor, and the 1-based line it is on */
  private pos: number;
  private readonly lines = new LineCounter();

  /** `start`: the byte offset of the first byte pushed, at the start of line `line` */
  constructor(start = 0, line = 1) {
    this.base = start;
    this.pos = start;
    this.lines.line = line;
  }

  /** the cursor's absolute byte offset */
  get offset(): number {
    return this.pos;
  }

  /** the 1-based line the cursor is on */
  get cursorLine(): number {
    return this.lines.line;
  }

  /** A copy of the bytes from the cursor to `end` (absolute; default: all that was pushed). The cursor stays. */
  peek(end = Infinity): Buffer {
    const parts: Buffer[] = [];
    let at = this.base;
    for (const c of this.chunks) {
      const from = Math.max(this.pos - at, 0);
      const to = Math.min(c.length, end - at);
      if (to > from) parts.push(c.subarray(from, to));
      at += c.length;
      if (at >= end) break;
    }
    return Buffer.concat(parts);
  }

  push(chunk: Buffer): void {
    if (chunk.length > 0) this.chunks.push(chunk);
  }

  private byteAt(offset: number): number | undefined {
    let o = offset - this.base;
    for (const c of this.chunks) {
      if (o < c.length) return c[o];
      o -= c.length;
    }
    return undefined;
  }

  private drop(): void {
    while (this.chunks.length > 0 && this.base + this.chunks[0]!.length <= this.pos) {
      this.base += this.chunks.shift()!.length;
    }
  }

  /** Walk the cursor to `offset` (the end of the previous record), counting line breaks. */
  advanceTo(offset: number): void {
    while (this.pos < offset && this.chunks.length > 0) {
      const c = this.chunks[0]!;
      const end = Math.min(c.length, offset - this.base);
      this.lines.count(c, this.pos - this.base, end);
      this.pos = this.base + end;
      this.drop();
    }
  }

  /** The line a record starts on, blank lines (skipped by the parser) walked over. */
  startLine(): number {
    for (let b = this.byteAt(this.pos); b === CR || b === LF; b = this.byteAt(++this.pos)) this.lines.count(Buffer.of(b), 0, 1);
    this.drop();
    return this.lines.line;
  }
}
