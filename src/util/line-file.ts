// Lines of text appended to a temporary file and read back by their number: what the match index keeps of its records,
// and the strings a hash table (hash-table.ts) cannot keep, in a few bytes of memory a line.
import { closeSync, openSync, readSync, unlinkSync, writeSync } from 'node:fs';
import { removeOnExit } from './atomic-file.js';

const FLUSH_BYTES = 1 << 20;

/** The kept records' lines, appended to a file and read back by their number. */
export class LineFile {
  /** the last offset kept in 32 bits (tests lower it, to cross it without writing 4 GB) */
  static narrowMax = 0xffffffff;
  private readonly fd: number;
  private readonly forget: () => void;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private flushed = 0;
  /** where each line starts (its end: where the next one starts): 4 bytes a line, 8 once the file passes 4 GB */
  private offsets: Uint32Array | Float64Array = new Uint32Array(1024);
  count = 0;

  constructor(readonly path: string) {
    this.fd = openSync(path, 'w+', 0o600);
    this.forget = removeOnExit(path);
  }

  append(text: string): number {
    const buf = Buffer.from(text);
    const at = this.flushed + this.pendingBytes;
    if (this.count === this.offsets.length) this.growTo(this.count * 2);
    if (at > LineFile.narrowMax && this.offsets instanceof Uint32Array) this.growTo(this.offsets.length, true);
    this.offsets[this.count] = at;
    this.pending.push(buf);
    this.pendingBytes += buf.length;
    if (this.pendingBytes >= FLUSH_BYTES) this.flush();
    return this.count++;
  }

  read(n: number): string {
    const at = this.offsets[n]!;
    const length = (n + 1 < this.count ? this.offsets[n + 1]! : this.flushed + this.pendingBytes) - at;
    if (at + length > this.flushed) this.flush();
    const buf = Buffer.allocUnsafe(length);
    readSync(this.fd, buf, 0, length, at);
    return buf.toString('utf8');
  }

  private closed = false;

  /** Closes and removes the file (once: a second call does nothing). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.fd);
    try {
      unlinkSync(this.path);
    } catch {
      // already gone
    }
    this.forget();
  }

  private flush(): void {
    const all = Buffer.concat(this.pending);
    for (let done = 0; done < all.length;)
      done += writeSync(this.fd, all, done, all.length - done, this.flushed + done);
    this.flushed += all.length;
    [this.pending, this.pendingBytes] = [[], 0];
  }

  private growTo(n: number, wide = this.offsets instanceof Float64Array): void {
    const offsets = wide ? new Float64Array(n) : new Uint32Array(n);
    offsets.set(this.offsets);
    this.offsets = offsets;
  }
}
