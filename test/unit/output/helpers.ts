// Fake standard output streams for the output tests.
import { PassThrough, Writable } from 'node:stream';

export interface FakeOut extends PassThrough {
  isTTY?: boolean;
  columns?: number;
  text(): string;
}

/** A PassThrough that collects everything written to it. */
export function fakeStdout(opts: { isTTY?: boolean; columns?: number } = {}): FakeOut {
  const chunks: Buffer[] = [];
  const out = new PassThrough() as FakeOut;
  out.on('data', (c: Buffer) => chunks.push(c));
  if (opts.isTTY !== undefined) out.isTTY = opts.isTTY;
  if (opts.isTTY) {
    // what a real tty.WriteStream has and ora uses to redraw
    out.columns = 80;
    Object.assign(out, { cursorTo: () => true, moveCursor: () => true, clearLine: () => true });
  }
  if (opts.columns !== undefined) out.columns = opts.columns;
  out.text = () => Buffer.concat(chunks).toString('utf8');
  return out;
}

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

/** A fake terminal stream: what ora needs of a tty.WriteStream (cursor moves are no-ops here). */
export function fakeTty(columns = 80): FakeOut {
  const out = fakeStdout({ isTTY: true, columns });
  const done = (cb?: () => void): boolean => {
    cb?.();
    return true;
  };
  Object.assign(out, {
    cursorTo: (_x: number, _y?: number | (() => void), cb?: () => void) => done(typeof _y === 'function' ? _y : cb),
    moveCursor: (_dx: number, _dy: number, cb?: () => void) => done(cb),
    clearLine: (_dir: number, cb?: () => void) => done(cb),
    clearScreenDown: (cb?: () => void) => done(cb),
    getColorDepth: () => 1,
    hasColors: () => false,
  });
  return out;
}
