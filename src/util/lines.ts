// Lines of bytes. In input files CR, LF and CRLF each end one line (files from two systems mix them);
// journals (streamLines) end lines with LF.
import type { FileHandle } from 'node:fs/promises';

export const CR = 0x0d;
export const LF = 0x0a;

/** Line numbers over bytes fed in order: CR, and LF not after a CR, end a line (as the readers count). */
export class LineCounter {
  line = 1;

  constructor(private prevCR = false) {}

  count(b: Buffer, from: number, to: number): void {
    if (from >= to) return;
    for (let i = b.indexOf(CR, from); i >= 0 && i < to; i = b.indexOf(CR, i + 1)) this.line++;
    for (let i = b.indexOf(LF, from); i >= 0 && i < to; i = b.indexOf(LF, i + 1)) {
      if (!(i === from ? this.prevCR : b[i - 1] === CR)) this.line++;
    }
    this.prevCR = b[to - 1] === CR;
  }
}

/** Line breaks in `bytes` (CRLF, LF, CR: one each). */
export function countLines(bytes: Buffer): number {
  const c = new LineCounter();
  c.count(bytes, 0, bytes.length);
  return c.line - 1;
}

/** A line's bytes (without its line break), or null when it was over the limit. */
export async function* splitLines(
  src: AsyncIterable<Buffer>,
  max: number,
): AsyncGenerator<Buffer | null, void, undefined> {
  let parts: Buffer[] = [];
  let size = 0;
  let over = false;
  let skipLF = false;
  let any = false;
  const take = (): Buffer | null => {
    const line = over ? null : parts.length === 1 ? parts[0]! : Buffer.concat(parts);
    parts = [];
    size = 0;
    over = false;
    any = false;
    return line;
  };
  const add = (piece: Buffer): void => {
    any = true;
    if (over || piece.length === 0) return;
    size += piece.length;
    if (size > max) {
      over = true;
      parts = [];
    } else parts.push(piece);
  };
  for await (const chunk of src) {
    let pos = 0;
    if (skipLF && chunk.length > 0) {
      if (chunk[0] === LF) pos = 1;
      skipLF = false;
    }
    while (pos < chunk.length) {
      let brk = chunk.indexOf(LF, pos);
      const cr = chunk.indexOf(CR, pos);
      if (cr >= 0 && (brk < 0 || cr < brk)) brk = cr;
      if (brk < 0) {
        add(chunk.subarray(pos));
        break;
      }
      add(chunk.subarray(pos, brk));
      yield take();
      pos = brk + 1;
      if (chunk[brk] === CR) {
        if (pos < chunk.length) {
          if (chunk[pos] === LF) pos++;
        } else skipLF = true;
      }
    }
  }
  if (any) yield take();
}

/** Calls `onLine(text, offset, length)` for each complete line; returns the bytes up to the last one. */
export async function streamLines(
  fh: FileHandle,
  onLine: (line: string, offset: number, length: number) => void,
): Promise<number> {
  const buf = Buffer.alloc(1024 * 1024);
  let carry: Buffer = Buffer.alloc(0);
  let pos = 0;
  let lineStart = 0;
  for (let n = 0; (n = (await fh.read(buf, 0, buf.length, pos)).bytesRead) > 0; pos += n) {
    const data = carry.length ? Buffer.concat([carry, buf.subarray(0, n)]) : buf.subarray(0, n);
    let from = 0;
    for (let nl = data.indexOf(10); nl !== -1; nl = data.indexOf(10, from)) {
      onLine(data.toString('utf8', from, nl), lineStart, nl - from);
      lineStart += nl - from + 1;
      from = nl + 1;
    }
    carry = Buffer.from(data.subarray(from));
  }
  return lineStart;
}
