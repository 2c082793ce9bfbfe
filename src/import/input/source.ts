// The rows' source: always a regular UTF-8 file that can be read twice; stdin, pipes and other encodings
// are copied to the journal folder (at most MAX_COPY_BYTES). Below: is it text, and in which encoding.
import { isAscii, isUtf8 } from 'node:buffer';
import { randomBytes } from 'node:crypto';
import { constants, createReadStream, open as openFd } from 'node:fs';
import { open, stat, unlink, type FileHandle } from 'node:fs/promises';
import { Socket } from 'node:net';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { InterruptedError, UsageError } from '../../http/errors.js';
import { removeOnExit } from '../../util/atomic-file.js';
import { fsReason } from '../../util/fs-error.js';
import { movedAsideHint } from '../../util/own-name.js';
import { CR, LF, LineCounter } from '../../util/lines.js';
import {
  completeUpTo,
  createTranscoder,
  detectBom,
  firstInvalid,
  render,
  UTF8,
  type Transcoder,
} from '../../util/text.js';
import { journalFolder } from '../shapes.js';

/** the most a stream (stdin, a pipe, a device) is copied: beyond it, save it to a file first */
export const MAX_COPY_BYTES = 1024 ** 3;
/** how much of the start is checked to be text */
const HEAD_BYTES = 4096;

export interface PreparedInput {
  /** a regular UTF-8 file that can be read more than once (the input itself, or a copy) */
  path: string;
  name: string;
  /** the file the user named, which identifies it across imports; `-` for a stream */
  origin: string;
  /** a stream that was copied (stdin, a pipe, a device): no file identity, rejects in the working folder */
  isStdin: boolean;
  encoding: string;
  cleanup(): Promise<void>;
}

export interface PrepareOptions {
  stdin?: Readable;
  tmpDir: string;
  /** `--encoding`: used when the file has no byte order mark */
  encoding?: string;
  signal?: AbortSignal;
  maxCopyBytes?: number;
}

export async function prepareInput(input: string | Readable, opts: PrepareOptions): Promise<PreparedInput> {
  const explicit = opts.encoding === undefined ? undefined : resolveEncoding(opts.encoding);
  if (typeof input !== 'string' || input === '-') {
    const stream = typeof input === 'string' ? opts.stdin : input;
    if (!stream) throw new UsageError('no standard input to read (-)');
    return copyInput(stream, { ...opts, explicit, name: '-', isStdin: true });
  }
  const st = await stat(input).catch(async (err: NodeJS.ErrnoException) => {
    const aside = err.code === 'ENOENT' ? await movedAsideHint(input) : undefined;
    throw new UsageError(`cannot read ${input}: ${fsReason(err)}`, { cause: err, ...(aside ? { hint: aside } : {}) });
  });
  if (st.isDirectory()) throw new UsageError(`cannot read ${input}: it is a directory`);
  if (!st.isFile())
    return copyInput(await openStream(input, st.isFIFO()), { ...opts, explicit, name: input, isStdin: true });
  const head = await readHead(input);
  const encoding = encodingOf(input, head, explicit);
  if (encoding !== UTF8)
    return copyInput(createReadStream(input), {
      ...opts,
      explicit,
      name: input,
      isStdin: false,
      maxCopyBytes: Infinity,
    });
  checkText(input, head);
  return { path: input, name: input, origin: input, isStdin: false, encoding, cleanup: async () => undefined };
}

export async function readHead(path: string): Promise<Buffer> {
  const fh = await open(path, 'r').catch((err: Error) => {
    throw new UsageError(`cannot read ${path}: ${fsReason(err)}`, { cause: err });
  });
  try {
    const buf = Buffer.alloc(HEAD_BYTES);
    const { bytesRead } = await fh.read(buf, 0, HEAD_BYTES, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

/** The BOM's encoding, else --encoding's, else UTF-8; a BOM contradicting --encoding is refused. */
function encodingOf(name: string, head: Uint8Array, explicit: string | undefined): string {
  const bom = detectBom(head)?.encoding;
  if (bom && explicit && bom !== explicit) {
    const what = name === '-' ? 'standard input' : name;
    throw new UsageError(
      `${what} starts with a ${bom} byte order mark, but --encoding says ${explicit}; nothing was sent`,
      {
        hint: `the byte order mark is right unless the file is damaged: rerun without --encoding (crm writes its rejects files in UTF-8, with a byte order mark when the input was in another encoding)`,
      },
    );
  }
  return bom ?? explicit ?? UTF8;
}

function checkText(name: string, head: Buffer): void {
  const why = notTextReason(head);
  if (why) throw new UsageError(`${name} cannot be imported: ${why}`, { hint: 'crm batch reads CSV or NDJSON text' });
}

/** A named pipe opened non-blocking and read as a socket, so Ctrl-C can stop a wait for a writer. */
async function openStream(path: string, fifo: boolean): Promise<Readable> {
  if (!fifo) return createReadStream(path);
  const fd = await new Promise<number>((resolve, reject) =>
    openFd(path, constants.O_RDONLY | constants.O_NONBLOCK, (err, n) =>
      err ? reject(new UsageError(`cannot read ${path}: ${err.message}`, { cause: err })) : resolve(n),
    ),
  );
  return new Socket({ fd, readable: true, writable: false });
}

interface CopyOptions extends PrepareOptions {
  explicit: string | undefined;
  name: string;
  isStdin: boolean;
}

/** Copies `src` into a temporary file in tmpDir, checking its start and transcoding it to UTF-8 if needed. */
async function copyInput(src: Readable, o: CopyOptions): Promise<PreparedInput> {
  const what = o.name === '-' ? 'standard input' : o.name;
  const interrupted = (): InterruptedError =>
    new InterruptedError(`interrupted while reading ${what}; nothing was sent`);
  // destroyed without an error: an 'error' with no listener yet (before the copy loop) would crash the process
  const onAbort = (): void => void src.destroy();
  if (o.signal?.aborted) {
    src.destroy();
    throw interrupted();
  }
  o.signal?.addEventListener('abort', onAbort, { once: true });
  const path = join(o.tmpDir, `stdin-${process.pid}-${randomBytes(6).toString('hex')}.buf`);
  let forget = (): void => {};
  const cleanup = async (): Promise<void> => {
    await unlink(path).catch(() => undefined);
    forget();
  };
  try {
    const out = await open(journalFolder(o.tmpDir) && path, 'wx', 0o600);
    forget = removeOnExit(path);
    try {
      const encoding = await copyTo(out, src, o, what);
      return { path, name: o.name, origin: o.isStdin ? '-' : o.name, isStdin: o.isStdin, encoding, cleanup };
    } finally {
      await out.close();
    }
  } catch (err) {
    await cleanup();
    src.destroy();
    if (o.signal?.aborted) throw interrupted();
    if (err instanceof UsageError) throw err;
    throw new UsageError(`cannot read ${what}: ${(err as Error).message}`, { cause: err });
  } finally {
    o.signal?.removeEventListener('abort', onAbort);
  }
}

/** The copy itself: the start checked (a BOM, --encoding, text), transcoded if not UTF-8; returns the encoding. */
async function copyTo(out: FileHandle, src: Readable, o: CopyOptions, what: string): Promise<string> {
  const cap = o.maxCopyBytes ?? MAX_COPY_BYTES;
  let encoding = o.explicit ?? UTF8;
  let head: Buffer | undefined = Buffer.alloc(0);
  let transcoder: Transcoder | undefined;
  let lookalike: Utf8Lookalike | undefined;
  let total = 0;
  const start = (bytes: Buffer): Buffer => {
    const bom = detectBom(bytes);
    encoding = encodingOf(o.name, bytes, o.explicit);
    if (encoding === UTF8) {
      checkText(o.name, bytes.subarray(0, HEAD_BYTES));
      return bytes;
    }
    transcoder = createTranscoder(encoding);
    // an 8-bit --encoding on what is UTF-8 would change every accented letter
    if (!bom && !encoding.startsWith('utf-16')) lookalike = new Utf8Lookalike();
    lookalike?.push(bytes);
    return transcoder.push(bytes.subarray(bom?.length ?? 0));
  };
  for await (const piece of src as AsyncIterable<Buffer | string>) {
    const chunk = typeof piece === 'string' ? Buffer.from(piece) : piece;
    total += chunk.length;
    if (total > cap) {
      throw new UsageError(`${what} is larger than ${cap} bytes, the most crm copies from a stream`, {
        hint: 'save it to a file and import the file',
      });
    }
    if (head) {
      head = Buffer.concat([head, chunk]);
      if (head.length < HEAD_BYTES) continue;
      await out.write(start(head));
      head = undefined;
      continue;
    }
    lookalike?.push(chunk);
    await out.write(transcoder ? transcoder.push(chunk) : chunk);
  }
  if (head) await out.write(start(head));
  if (transcoder) await out.write(transcoder.end());
  const mislabelled = lookalike?.error(o.name, encoding);
  if (mislabelled) throw mislabelled;
  return encoding;
}

// Is it text, and in which encoding: `--encoding` labels, the not-text check of a file's start, the per-row text
// check (the reader reads UTF-8 only), and the whole-file check.
export { UTF8 };

const ALIASES: Record<string, string> = {
  utf8: UTF8,
  'utf-8': UTF8,
  'unicode-1-1-utf-8': UTF8,
  utf16le: 'utf-16le',
  'utf-16le': 'utf-16le',
  'utf-16': 'utf-16le',
  ucs2: 'utf-16le',
  'ucs-2': 'utf-16le',
  utf16be: 'utf-16be',
  'utf-16be': 'utf-16be',
  // as in the WHATWG Encoding Standard (TextDecoder, browsers): Latin-1 labels mean Windows-1252,
  // which agrees with ISO-8859-1 except in 0x80–0x9F, where ISO-8859-1 has control characters
  'windows-1252': 'windows-1252',
  cp1252: 'windows-1252',
  'x-cp1252': 'windows-1252',
  latin1: 'windows-1252',
  'iso-8859-1': 'windows-1252',
  'iso8859-1': 'windows-1252',
  l1: 'windows-1252',
  ascii: 'windows-1252',
  'us-ascii': 'windows-1252',
};

/** `--encoding LABEL` → its canonical name; a label this Node.js cannot decode is a UsageError. */
export function resolveEncoding(label: string): string {
  const key = label.trim().toLowerCase();
  const known = ALIASES[key];
  if (known) return known;
  try {
    return new TextDecoder(key).encoding;
  } catch {
    throw new UsageError(`unknown or unsupported --encoding ${JSON.stringify(label)}`, {
      hint: 'utf-8, utf-16le, utf-16be and windows-1252 (latin1) always work; other WHATWG labels (e.g. iso-8859-15, shift_jis) need a Node.js built with full ICU',
    });
  }
}

/** Why a file's first line is not text (a NUL byte: binary, /dev/zero, UTF-16 without a BOM); undefined if it is. */
export function notTextReason(head: Uint8Array): string | undefined {
  const nul = head.indexOf(0);
  if (nul < 0) return undefined;
  const lf = head.indexOf(0x0a);
  const cr = head.indexOf(0x0d);
  if ((lf >= 0 && lf < nul) || (cr >= 0 && cr < nul)) return undefined;
  // UTF-16 text without a BOM: most code units are ASCII, so one byte of each pair is 0 and the other not
  let halves = 0;
  const pairs = Math.min(head.length >> 1, 256);
  for (let i = 0; i < pairs; i++) if ((head[2 * i] === 0) !== (head[2 * i + 1] === 0)) halves++;
  return pairs >= 2 && halves >= pairs * 0.75
    ? 'it looks like UTF-16 without a byte order mark; say which with --encoding utf-16le or --encoding utf-16be'
    : `it has a NUL byte at offset ${nul}, so it is not a text file`;
}

/** `_error_code` of a row with bytes its encoding cannot decode, and of a row with a NUL byte. */
export const INVALID_ENCODING = 'INVALID_ENCODING';
export const INVALID_CHARACTER = 'INVALID_CHARACTER';

/** A NUL byte, or a U+FFFD that the row's bytes show was undecodable (a file may hold U+FFFD itself). */
export function textProblem(
  cells: readonly string[],
  bytes: () => Uint8Array,
  encoding: string,
  where: (i: number) => string,
): { code: string; reason: string } | undefined {
  const nul = cells.findIndex((c) => c.includes('\0'));
  if (nul >= 0) return { code: INVALID_CHARACTER, reason: `${where(nul)} has a NUL byte (0x00), which text never has` };
  const bad = cells.findIndex((c) => c.includes('\ufffd'));
  if (bad < 0 || isUtf8(bytes())) return undefined;
  return { code: INVALID_ENCODING, reason: undecodable(encoding, where(bad)) };
}

export function undecodable(encoding: string, where: string): string {
  return encoding === UTF8
    ? `${where} has bytes that are not valid UTF-8; if the file is in another encoding, say which with --encoding (e.g. --encoding windows-1252)`
    : `${where} has bytes that cannot be decoded as ${encoding}`;
}

// The whole-file text check: any undecodable byte refuses the file (exit 2), naming its first lines.
/** lines listed in the message */
const SHOWN = 5;

export interface UndecodableLine {
  line: number;
  /** the text around the first undecodable byte, those bytes as \xNN (UTF-8 input only) */
  snippet: string;
}

/** Whole UTF-8 characters out of chunks: a character cut by a chunk's end waits for the next. */
class WholeChars {
  carry: Buffer = Buffer.alloc(0);

  feed(chunk: Buffer): Buffer {
    const buf = this.carry.length > 0 ? Buffer.concat([this.carry, chunk]) : chunk;
    const cut = completeUpTo(buf);
    this.carry = Buffer.from(buf.subarray(cut));
    return buf.subarray(0, cut);
  }
}

/** Fed every byte in order, it only runs isUtf8 (native, cheap); a file with a bad byte is read again by resolve() to name the lines. */
export class TextCheck extends WholeChars {
  readonly lines: UndecodableLine[] = [];
  /** more lines than listed have undecodable bytes */
  more = false;
  bad = false;

  push(chunk: Buffer): void {
    if (!this.bad) this.bad = !isUtf8(this.feed(chunk));
  }

  end(): void {
    if (!this.bad && this.carry.length > 0) this.bad = !isUtf8(this.carry);
    this.carry = Buffer.alloc(0);
  }

  /** Reads the file again, line by line, for the lines with undecodable bytes. */
  async resolve(path: string, signal?: AbortSignal): Promise<void> {
    if (!this.bad) return;
    const counter = new LineCounter();
    for await (const piece of createReadStream(path, { signal }) as AsyncIterable<Buffer>) {
      this.scan(this.feed(piece), counter);
      if (this.more) return;
    }
    this.scan(this.carry, counter);
    this.carry = Buffer.alloc(0);
  }

  private scan(b: Buffer, counter: LineCounter): void {
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
    if (!this.bad) return undefined;
    const utf8 = encoding === UTF8;
    const list =
      this.lines.length === 0
        ? 'a line'
        : this.lines.map((l) => `line ${l.line}${utf8 ? ` ("${l.snippet}")` : ''}`).join(', ') +
          (this.more ? ', …' : '');
    const what = name === '-' ? 'standard input' : name;
    const have = this.lines.length > 1 ? 'have' : 'has';
    const [message, hint] = utf8
      ? [
          `${what} is not UTF-8 text: ${list} ${have} bytes that are not valid UTF-8`,
          'if it was saved in another encoding, rerun with it: --encoding windows-1252 (Excel on Windows; latin1 means the same), ' +
            '--encoding utf-16le, …; otherwise fix the bytes on those lines',
        ]
      : [
          `${what} cannot be decoded as ${encoding}: ${list} ${have} bytes that ${encoding} has no character for`,
          "name the file's real encoding with --encoding, or fix the bytes on those lines",
        ];
    return new UsageError(`${message}. Nothing was sent.`, { code: 'INVALID_ENCODING', hint });
  }
}

/** An 8-bit --encoding on bytes that are valid UTF-8 with non-ASCII text would mangle it (Zoë → ZoÃ«): refused. */
export class Utf8Lookalike extends WholeChars {
  private valid = true;
  /** the text around the first non-ASCII character, for the message */
  private sample: Buffer | undefined;

  push(chunk: Buffer): void {
    if (!this.valid) return;
    const body = this.feed(chunk);
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
