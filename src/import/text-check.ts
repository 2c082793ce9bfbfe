// The whole-file text check: any undecodable byte refuses the file (exit 2), naming its first lines.
import { isAscii, isUtf8 } from 'node:buffer';
import { createReadStream } from 'node:fs';
import { UsageError } from '../http/errors.js';
import { CR, LF, LineCounter } from './quote-scan.js';
import { completeUpTo, createTranscoder, firstInvalid, render, UTF8 } from '../util/text.js';

/** lines listed in the message */
const SHOWN = 5;

export interface UndecodableLine {
  line: number;
  /** the text around the first undecodable byte, those bytes as \xNN (UTF-8 input only) */
  snippet: string;
}

/** Fed every byte in order; lines are counted only from the first bad chunk on (resolve counts those before). */
export class TextCheck {
  readonly lines: UndecodableLine[] = [];
  /** more lines than listed have undecodable bytes */
  more = false;
  private carry: Buffer = Buffer.alloc(0);
  /** bytes checked so far, and whether the last was a CR */
  private offset = 0;
  private lastCR = false;
  /** from the first chunk with a bad byte: where it starts, and the lines counted from there */
  private countFrom: number | undefined;
  private counter: LineCounter | undefined;

  push(chunk: Buffer): void {
    if (this.more) return;
    const buf = this.carry.length > 0 ? Buffer.concat([this.carry, chunk]) : chunk;
    // a character cut by the chunk's end is checked with the next chunk
    const cut = completeUpTo(buf);
    this.carry = Buffer.from(buf.subarray(cut));
    this.check(buf.subarray(0, cut));
  }

  end(): void {
    if (this.carry.length > 0 && !this.more) this.check(this.carry);
    this.carry = Buffer.alloc(0);
  }

  /** Turns the lines counted from the first bad chunk into line numbers in the file (reads the bytes before it). */
  async resolve(path: string, signal?: AbortSignal): Promise<void> {
    if (this.countFrom === undefined || this.countFrom === 0) return;
    const before = new LineCounter();
    for await (const piece of createReadStream(path, { start: 0, end: this.countFrom - 1, signal }) as AsyncIterable<Buffer>) {
      before.count(piece, 0, piece.length);
    }
    for (const l of this.lines) l.line += before.line - 1;
  }

  private check(b: Buffer): void {
    if (b.length === 0) return;
    if (!this.counter && isUtf8(b)) {
      this.offset += b.length;
      this.lastCR = b[b.length - 1] === CR;
      return;
    }
    if (!this.counter) {
      this.countFrom = this.offset;
      this.counter = new LineCounter(this.lastCR);
    }
    const counter = this.counter;
    this.offset += b.length;
    if (isUtf8(b)) {
      counter.count(b, 0, b.length);
      return;
    }
    let pos = 0;
    while (pos < b.length && !this.more) {
      let brk = b.indexOf(LF, pos);
      const cr = b.indexOf(CR, pos);
      if (brk < 0 || (cr >= 0 && cr < brk)) brk = cr;
      const end = brk < 0 ? b.length : brk;
      const part = b.subarray(pos, end);
      if (!isUtf8(part)) this.report(part, counter.line);
      counter.count(b, pos, brk < 0 ? end : brk + 1);
      if (brk < 0) break;
      pos = brk + 1;
    }
  }

  private report(part: Buffer, line: number): void {
    const last = this.lines[this.lines.length - 1];
    if (last?.line === line) return;
    if (this.lines.length === SHOWN) {
      this.more = true;
      return;
    }
    const at = firstInvalid(part, 0);
    let from = Math.max(0, at - 24);
    while (from < at && (part[from]! & 0xc0) === 0x80) from++;
    this.lines.push({ line, snippet: render(part.subarray(from, Math.min(part.length, at + 16))) });
  }

  /** The UsageError refusing the file, or undefined when every byte decoded. */
  error(name: string, encoding: string): UsageError | undefined {
    if (this.lines.length === 0) return undefined;
    const utf8 = encoding === UTF8;
    const list = this.lines.map((l) => `line ${l.line}${utf8 ? ` ("${l.snippet}")` : ''}`).join(', ') + (this.more ? ', …' : '');
    const what = name === '-' ? 'standard input' : name;
    return utf8
      ? new UsageError(
          `${what} is not UTF-8 text: ${list} ${this.lines.length > 1 ? 'have' : 'has'} bytes that are not valid UTF-8. Nothing was sent.`,
          {
            code: 'INVALID_ENCODING',
            hint:
              'if it was saved in another encoding, rerun with it: --encoding windows-1252 (Excel on Windows; latin1 means the same), ' +
              '--encoding utf-16le, …; otherwise fix the bytes on those lines',
          },
        )
      : new UsageError(
          `${what} cannot be decoded as ${encoding}: ${list} ${this.lines.length > 1 ? 'have' : 'has'} bytes that ${encoding} has no character for. Nothing was sent.`,
          {
            code: 'INVALID_ENCODING',
            hint: "name the file's real encoding with --encoding, or fix the bytes on those lines",
          },
        );
  }
}

/** An 8-bit --encoding on bytes that are valid UTF-8 with non-ASCII text would mangle it (Zoë → ZoÃ«): refused. */
export class Utf8Lookalike {
  private valid = true;
  private carry: Buffer = Buffer.alloc(0);
  /** the text around the first non-ASCII character, for the message */
  private sample: Buffer | undefined;

  push(chunk: Buffer): void {
    if (!this.valid) return;
    const buf = this.carry.length > 0 ? Buffer.concat([this.carry, chunk]) : chunk;
    const cut = completeUpTo(buf);
    this.carry = Buffer.from(buf.subarray(cut));
    const body = buf.subarray(0, cut);
    if (!isUtf8(body)) {
      this.valid = false;
      return;
    }
    if (this.sample || isAscii(body)) return;
    let i = 0;
    while (body[i]! < 0x80) i++;
    // up to 12 bytes either side, on the character's line
    let from = i;
    while (from > 0 && i - from < 12 && body[from - 1] !== LF && body[from - 1] !== CR) from--;
    while (from < i && (body[from]! & 0xc0) === 0x80) from++;
    let to = i;
    while (to < body.length && to - i < 12 && body[to] !== LF && body[to] !== CR) to++;
    const slice = body.subarray(from, to);
    this.sample = Buffer.from(slice.subarray(0, completeUpTo(slice)));
  }

  /** After the last push: the refusal, if the bytes were UTF-8 with non-ASCII text. */
  error(name: string, encoding: string): UsageError | undefined {
    if (!this.valid || this.carry.length > 0 || !this.sample) return undefined;
    const t = createTranscoder(encoding);
    const as = Buffer.concat([t.push(this.sample), t.end()]);
    return new UsageError(
      `${name === '-' ? 'standard input' : name} is UTF-8 text ("${render(this.sample)}"), but --encoding ${encoding} would import it as "${render(as)}"; nothing was sent`,
      { code: 'INVALID_ENCODING', hint: 'rerun without --encoding (crm writes its rejects files in UTF-8 too)' },
    );
  }
}
