// Writes a file so that it is either absent or complete: a temp file beside it (same folder, so the
// rename stays on one file system), flushed, then renamed over the target. A cut download never
// leaves a file that looks finished, and a rerun's "already there" check can trust what it sees.
import { randomBytes } from 'node:crypto';
import { open, rename, unlink } from 'node:fs/promises';
import path from 'node:path';

/** Temp files being written, so an interrupted run can remove them. */
export class TempFiles {
  private readonly live = new Set<string>();

  /** A fresh temp path beside `target`: hidden, and not ending in `.json`, so it never looks complete. */
  next(target: string): string {
    const name = `.${path.basename(target)}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
    const tmp = path.join(path.dirname(target), name);
    this.live.add(tmp);
    return tmp;
  }

  forget(tmp: string): void {
    this.live.delete(tmp);
  }

  get size(): number {
    return this.live.size;
  }

  /** Removes every temp file still registered (best effort). */
  async removeAll(): Promise<void> {
    const all = [...this.live];
    this.live.clear();
    await Promise.all(all.map((tmp) => unlink(tmp).catch(() => undefined)));
  }
}

/** Writes `text` to `target` atomically. On any failure the temp file is removed and the error rethrown. */
export async function writeFileAtomic(target: string, text: string, temps: TempFiles = new TempFiles()): Promise<void> {
  const tmp = temps.next(target);
  try {
    const fh = await open(tmp, 'wx', 0o644);
    try {
      await fh.writeFile(text, 'utf8');
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, target);
    temps.forget(tmp);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    temps.forget(tmp);
    throw err;
  }
}
