// The one output collector of the tests: streams that keep what is written to them, optionally
// looking like a terminal (isTTY, columns, and the cursor moves a spinner redraws with).
import { PassThrough, Readable, Writable } from 'node:stream';
import type { IO } from '../../src/commands/context.js';

export type FakeOut = PassThrough & { isTTY?: boolean; columns?: number; text(): string };

export interface FakeOutOptions {
  isTTY?: boolean;
  /** terminal width when isTTY (default 80) */
  columns?: number;
}

/** A PassThrough that collects everything written to it; with isTTY, what ora needs of a tty.WriteStream. */
export function fakeStdout(opts: FakeOutOptions = {}): FakeOut {
  const chunks: Buffer[] = [];
  const out = new PassThrough() as FakeOut;
  out.on('data', (c: Buffer | string) => chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(c)));
  out.text = () => Buffer.concat(chunks).toString('utf8');
  if (opts.isTTY !== undefined) out.isTTY = opts.isTTY;
  if (opts.columns !== undefined) out.columns = opts.columns;
  if (!opts.isTTY) return out;
  out.columns ??= 80;
  const done = (cb?: () => void): boolean => {
    cb?.();
    return true;
  };
  Object.assign(out, {
    cursorTo: (_x: number, y?: number | (() => void), cb?: () => void) => done(typeof y === 'function' ? y : cb),
    moveCursor: (_dx: number, _dy: number, cb?: () => void) => done(cb),
    clearLine: (_dir: number, cb?: () => void) => done(cb),
    clearScreenDown: (cb?: () => void) => done(cb),
    getColorDepth: () => 1,
    hasColors: () => false,
  });
  return out;
}

/** A fake terminal stream `columns` wide. */
export const fakeTty = (columns = 80): FakeOut => fakeStdout({ isTTY: true, columns });

/** A Writable with a tiny buffer whose consumer only proceeds when `release()` is called. */
export function slowStdout(highWaterMark = 16) {
  const chunks: string[] = [];
  const pending: Array<() => void> = [];
  let drains = 0;
  const stream = new Writable({
    highWaterMark,
    write(chunk: Buffer, _enc, cb) {
      chunks.push(chunk.toString('utf8'));
      pending.push(cb);
    },
  });
  stream.on('drain', () => drains++);
  return {
    stream,
    chunks,
    get drains() {
      return drains;
    },
    get pendingCount() {
      return pending.length;
    },
    /** let the consumer finish everything it has been given so far */
    release() {
      // a callback lets the stream hand over its next buffered chunk, which lands in `pending` again
      while (pending.length > 0) pending.shift()!();
    },
    text: () => chunks.join(''),
  };
}

export interface FakeIO {
  io: IO & { stdout: FakeOut; stderr: FakeOut };
  out(): string;
  err(): string;
}

/** IO for running the CLI in-process: `stdin` as the input (then its end); with tty, stdin and stdout look like a terminal (120 columns unless given). */
export function fakeIO(opts: { stdin?: string; tty?: boolean; columns?: number } = {}): FakeIO {
  const stdout = fakeStdout({ isTTY: opts.tty, columns: opts.columns ?? (opts.tty ? 120 : undefined) });
  const stderr = fakeStdout();
  const stdin = Readable.from(opts.stdin ? [opts.stdin] : []) as IO['stdin'];
  if (opts.tty) Object.assign(stdin, { isTTY: true });
  return { io: { stdin, stdout, stderr }, out: () => stdout.text(), err: () => stderr.text() };
}
