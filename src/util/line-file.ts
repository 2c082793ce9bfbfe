// Lines of text appended to a temporary file and read back by their number: what the match index keeps of its records,
// and the strings a hash table (hash-table.ts) cannot keep, in a few bytes of memory a line.
import { closeSync, openSync, readSync, unlinkSync, writeSync } from 'node:fs';
import { removeOnExit } from './atomic-file.js';

const FLUSH_BYTES = 1 << 20;

/** The kept records' lines, appended to a file and read back by their number. */
export class LineFile {
  private readonly fd: number;
  private readonly forget: () => void;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private flushed = 0;
  /** where each line starts (its end: where the next one starts) */
  private offsets = new Float64Array(1024);
  count = 0;

  constructor(readonly path: string) {
    this.fd = openSync(path, 'w+', 0o600);
    this.forget = removeOnExit(path);
  }

  append(text: string): number {
    const buf = Buffer.from(text);
    if (this.count === this.offsets.length) this.growTo(this.count * 2);
    this.offsets[this.count] = this.flushed + this.pendingBytes;
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

  private growTo(n: number): void {
    const offsets = new Float64Array(n);
    offsets.set(this.offsets);
    this.offsets = offsets;
  }
}
