// The rows' source: always a regular UTF-8 file that can be read twice; stdin, pipes and other encodings
// are copied to the journal folder (at most MAX_COPY_BYTES).
import { randomBytes } from 'node:crypto';
import { constants, createReadStream, open as openFd } from 'node:fs';
import { open, stat, unlink, type FileHandle } from 'node:fs/promises';
import { Socket } from 'node:net';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { InterruptedError, UsageError } from '../../http/errors.js';
import { fsReason } from '../../util/fs-error.js';
import { createTranscoder, detectBom, UTF8, type Transcoder } from '../../util/text.js';
import { notTextReason, resolveEncoding } from './text.js';
import { removeOnExit } from '../../util/atomic-file.js';
import { journalFolder } from '../shapes.js';
import { Utf8Lookalike } from './text.js';

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
  const st = await stat(input).catch((err: Error) => {
    throw new UsageError(`cannot read ${input}: ${fsReason(err)}`, { cause: err });
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
