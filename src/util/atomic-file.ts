// Files that appear whole or not at all: written to `<target>.tmp-PID-hex` beside the target,
// fsynced, renamed over it, the folder fsynced. A crash leaves at most a `*.tmp-*` file (removed by
// the stale-file sweeps, fs.ts), never a half file under the real name. A target that exists and
// is not a regular file (/dev/null, a pipe, a terminal) is written in place: renaming over it
// would replace the device with a regular file.
import { randomBytes } from 'node:crypto';
import { unlinkSync } from 'node:fs';
import { lstat, open, rename, stat, unlink, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';

const lastSteps = new Set<() => void>();
let hooked = false;

/**
 * Run `step` (synchronous) if the process exits before the returned function is called: a second
 * Ctrl-C calls process.exit() while writes are still awaited (kill -9 is left to the sweeps).
 */
export function atExit(step: () => void): () => void {
  if (!hooked) process.on('exit', runLastSteps);
  hooked = true;
  lastSteps.add(step);
  return () => lastSteps.delete(step);
}

function runLastSteps(): void {
  for (const s of lastSteps) {
    try {
      s();
    } catch {
      // best effort: the process is going away
    }
  }
}

/** Remove `path` if the process exits before the returned function is called. */
export function removeOnExit(path: string): () => void {
  return atExit(() => unlinkSync(path));
}

export function tempPathFor(target: string): string {
  return `${target}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
}

/** fsync a folder so a rename in it survives a power cut (Windows cannot open one: a no-op). */
async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r').catch(() => undefined);
  await fh?.sync().catch(() => undefined);
  await fh?.close().catch(() => undefined);
}

/** True when `target` exists and is not a regular file or folder: a device, a pipe, a socket. */
async function isSpecialFile(target: string): Promise<boolean> {
  const st = await stat(target).catch(() => undefined);
  return st !== undefined && !st.isFile() && !st.isDirectory();
}

/** Remove `target` when it is a regular file (or a link to one); a device or pipe is left alone. */
export async function removeRegularFile(target: string): Promise<void> {
  const st = await lstat(target).catch(() => undefined);
  if (st && (st.isFile() || (st.isSymbolicLink() && !(await isSpecialFile(target)))))
    await unlink(target).catch(() => undefined);
}

/** Write `content` to `target` atomically (mode 0600 unless told). */
export async function writeFileAtomic(target: string, content: string, mode = 0o600): Promise<void> {
  const file = await AtomicTextFile.create(target, mode);
  file.write(content);
  await file.commit();
}

const FLUSH_AT = 64 * 1024;

/** A text file written in pieces, buffered, that appears under its name only on commit(). */
export class AtomicTextFile {
  private buffer = '';
  private chain: Promise<void> = Promise.resolve();
  /** the first write error, boxed so that even a thrown `undefined` counts */
  private failure: { error: unknown } | undefined;
  private done = false;

  private constructor(
    readonly target: string,
    private readonly tempPath: string,
    private readonly fh: FileHandle,
    private readonly settled: () => void,
    /** writing straight into a device or pipe: no temp file, no sync, no rename */
    private readonly direct = false,
  ) {}

  static async create(target: string, mode = 0o600): Promise<AtomicTextFile> {
    if (await isSpecialFile(target))
      return new AtomicTextFile(target, target, await open(target, 'w'), () => undefined, true);
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
      if (this.failure === undefined)
        await this.fh.write(piece, null, 'utf8').catch((error: unknown) => (this.failure = { error }));
    });
  }

  /** Flush what is queued and wait until it is written (backpressure for long writers). */
  async drain(): Promise<void> {
    this.flush();
    await this.chain;
  }

  /** Flush, fsync, close and rename over the target; `beforeRename` sees the whole file written (its temporary path). */
  async commit(beforeRename?: (written: string) => Promise<void>): Promise<void> {
    await this.drain();
    this.done = true;
    try {
      if (this.failure !== undefined) throw this.failure.error;
      if (!this.direct) await this.fh.sync();
      await this.fh.close();
    } catch (err) {
      await this.discard();
      throw err;
    }
    if (this.direct) return;
    try {
      await beforeRename?.(this.tempPath);
    } catch (err) {
      await this.discard();
      throw err;
    }
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
