// Line numbers of CSV records from byte offsets. csv-parse's `info.lines` is the line where a record
// ends, and it counts a CRLF inside a quoted field as two lines, so we count ourselves: the bytes go
// through here on their way to the parser, and for each record (whose end offset csv-parse reports
// as `info.bytes`) we walk from the previous record's end, over skipped blank lines, to where it
// starts. Only bytes not yet walked over are kept, so memory stays at the parser's read-ahead.
// Offsets are in bytes (csv-parse counts bytes, not characters), absolute in the file: a reader that
// resumes after an unclosed quote starts a new index at the resume offset and line.
const CR = 0x0d;
const LF = 0x0a;

export class LineIndex {
  private chunks: Buffer[] = [];
  /** absolute offset of chunks[0][0] */
  private base: number;
  /** absolute offset of the cursor, and the 1-based line it is on */
  private pos: number;
  private line: number;
  private prevCR = false;

  /** `start`: the byte offset of the first byte pushed, at the start of line `line` */
  constructor(start = 0, line = 1) {
    this.base = start;
    this.pos = start;
    this.line = line;
  }

  /** the cursor's absolute byte offset */
  get offset(): number {
    return this.pos;
  }

  /** the 1-based line the cursor is on */
  get cursorLine(): number {
    return this.line;
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

  private step(b: number): void {
    if (b === CR || (b === LF && !this.prevCR)) this.line++;
    this.prevCR = b === CR;
    this.pos++;
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
      for (let i = this.pos - this.base; i < end; i++) this.step(c[i]!);
      this.drop();
    }
  }

  /**
   * The line a record starts on, the cursor being at the end of the previous record: blank lines
   * (skipped by the parser) are walked over first. The cursor stays there.
   */
  startLine(): number {
    for (;;) {
      const b = this.byteAt(this.pos);
      if (b !== CR && b !== LF) break;
      this.step(b);
    }
    this.drop();
    return this.line;
  }
}
