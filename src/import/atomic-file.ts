// Files that appear whole or not at all: written to a temporary file beside the target, fsynced,
// then renamed over it. A crash leaves at most a `*.tmp-*` file, never a half-written file under
// the real name that looks complete. A target that exists and is not a regular file (/dev/null, a
// named pipe, a terminal) is written in place: renaming over it would replace the device with a
// regular file (as root, /dev/null itself).
import { randomBytes } from 'node:crypto';
import { unlinkSync } from 'node:fs';
import { lstat, open, rename, stat, unlink, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';

/** Synchronous last steps of this process, run if it exits before they are withdrawn. */
const lastSteps = new Set<() => void>();
let exitHook = false;

/**
 * Run `step` (synchronous) if the process exits before the returned function is called. A second
 * Ctrl-C calls process.exit() while writes, commits and discards are still awaited; these steps
 * keep what they would have done from being lost (kill -9 is left to the stale-file sweeps).
 */
export function atExit(step: () => void): () => void {
  if (!exitHook) {
    exitHook = true;
    process.on('exit', () => {
      for (const s of lastSteps) {
        try {
          s();
        } catch {
          // best effort: the process is going away
        }
      }
    });
  }
  lastSteps.add(step);
  return () => lastSteps.delete(step);
}

/** Remove `path` if the process exits before the returned function is called (`*.tmp-*` copies of user data). */
export function removeOnExit(path: string): () => void {
  return atExit(() => unlinkSync(path));
}

export function tempPathFor(target: string): string {
  return `${target}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
}

/** fsync a folder so a rename in it survives a power cut (a no-op where folders cannot be opened). */
export async function syncDir(dir: string): Promise<void> {
  let fh: FileHandle | undefined;
  try {
    fh = await open(dir, 'r');
    await fh.sync();
  } catch {
    // Windows cannot open a folder; the rename is still atomic there
  } finally {
    await fh?.close().catch(() => undefined);
  }
}

/** True when `target` exists and is not a regular file or folder: a device, a pipe, a socket. */
export async function isSpecialFile(target: string): Promise<boolean> {
  try {
    const st = await stat(target);
    return !st.isFile() && !st.isDirectory();
  } catch {
    return false;
  }
}

/** Remove `target` when it is a regular file (or a link to one); a device or pipe is left alone. */
export async function removeRegularFile(target: string): Promise<void> {
  try {
    const st = await lstat(target);
    if (st.isFile() || (st.isSymbolicLink() && !(await isSpecialFile(target)))) await unlink(target);
  } catch {
    // not there
  }
}

/** Write `content` to `target` atomically (temp file, fsync, rename, fsync the folder). */
export async function writeFileAtomic(target: string, content: string, mode = 0o600): Promise<void> {
  if (await isSpecialFile(target)) {
    const fh = await open(target, 'w');
    try {
      await fh.writeFile(content, 'utf8');
    } finally {
      await fh.close();
    }
    return;
  }
  const tmp = tempPathFor(target);
  const fh = await open(tmp, 'wx', mode);
  try {
    await fh.writeFile(content, 'utf8');
    await fh.sync();
  } catch (err) {
    await fh.close().catch(() => undefined);
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
  await fh.close();
  await rename(tmp, target);
  await syncDir(dirname(target));
}

const FLUSH_AT = 64 * 1024;

/** A text file written in pieces, buffered, that appears under its name only on commit(). */
export class AtomicTextFile {
  private buffer = '';
  private chain: Promise<void> = Promise.resolve();
  /** the first write error, boxed so that even a thrown `undefined` counts; thrown again as caught */
  private failure: { error: unknown } | undefined;
  private done = false;

  private constructor(
    readonly target: string,
    readonly tempPath: string,
    private readonly fh: FileHandle,
    private readonly settled: () => void,
    /** writing straight into a device or pipe: no temp file, no sync, no rename */
    private readonly direct = false,
  ) {}

  static async create(target: string, mode = 0o600): Promise<AtomicTextFile> {
    if (await isSpecialFile(target)) return new AtomicTextFile(target, target, await open(target, 'w'), () => undefined, true);
    const tmp = tempPathFor(target);
    const fh = await open(tmp, 'wx', mode);
    return new AtomicTextFile(target, tmp, fh, removeOnExit(tmp));
  }

  /** Queue text; it reaches the disk in 64 KiB pieces. Errors surface at commit(). */
  write(text: string): void {
    if (this.done) throw new Error(`${this.target}: write after commit/discard`);
    this.buffer += text;
    if (this.buffer.length >= FLUSH_AT) this.flush();
  }

  private flush(): void {
    const piece = this.buffer;
    this.buffer = '';
    if (piece === '') return;
    this.chain = this.chain.then(async () => {
      if (this.failure !== undefined) return;
      try {
        await this.fh.write(piece, null, 'utf8');
      } catch (err) {
        this.failure = { error: err };
      }
    });
  }

  /** Flush what is queued and wait until it is written (backpressure for long writers). */
  async drain(): Promise<void> {
    this.flush();
    await this.chain;
  }

  /** Flush, fsync, close and rename over the target. */
  async commit(): Promise<void> {
    this.flush();
    this.done = true;
    await this.chain;
    try {
      if (this.failure !== undefined) throw this.failure.error;
      if (!this.direct) await this.fh.sync();
      await this.fh.close();
    } catch (err) {
      await this.fh.close().catch(() => undefined);
      if (!this.direct) await unlink(this.tempPath).catch(() => undefined);
      this.settled();
      throw err;
    }
    if (this.direct) return;
    await rename(this.tempPath, this.target);
    this.settled();
    await syncDir(dirname(this.target));
  }

  /** Drop the temporary file; the target is left as it was. */
  async discard(): Promise<void> {
    this.done = true;
    this.buffer = '';
    await this.chain;
    await this.fh.close().catch(() => undefined);
    if (!this.direct) await unlink(this.tempPath).catch(() => undefined);
    this.settled();
  }
}
