// Folders and leftovers of the import: creating the journal folder without `mkdir -p` (which spins
// forever under procfs, e.g. CRM_CONFIG_DIR=/proc/nope), and removing the temporary files a
// killed process left behind (buffered stdin, half-written rejects/results files) — copies of user
// data that nothing else would ever clean up.
import { mkdir, readdir, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { UsageError } from '../http/errors.js';

const DAY_MS = 86_400_000;

/**
 * Create `dir` and its missing parents one level at a time (mode 0700), failing fast with a
 * UsageError naming the folder when that is not possible.
 */
export async function ensureDir(dir: string): Promise<void> {
  const missing: string[] = [];
  let d = dir;
  for (let depth = 0; depth < 64; depth++) {
    const st = await stat(d).catch((err: NodeJS.ErrnoException) => err);
    if (!(st instanceof Error)) {
      if (!st.isDirectory()) throw cannotCreate(dir, `${d} is not a folder`);
      break;
    }
    if (st.code !== 'ENOENT') throw cannotCreate(dir, st.message);
    missing.push(d);
    const up = dirname(d);
    if (up === d) break;
    d = up;
  }
  for (const m of missing.reverse()) {
    try {
      await mkdir(m, { mode: 0o700 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') continue;
      throw cannotCreate(dir, (err as Error).message);
    }
  }
}

function cannotCreate(dir: string, why: string): UsageError {
  return new UsageError(`cannot use the folder ${dir} for the import journal: ${why}`, {
    hint: 'CRM_CONFIG_DIR chooses another config folder',
  });
}

/** Whether process `pid` still exists (EPERM: it does, it is someone else's). */
export function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A `…-PID-hex` leftover is stale when its process is gone or it is older than a day. */
export function isStaleLeftover(name: string, ageMs: number): boolean {
  const m = /(?:stdin|\.tmp)-(\d+)-[0-9a-f]+(?:\.buf)?$/.exec(name);
  if (!m) return false;
  return ageMs > DAY_MS || !processAlive(Number(m[1]));
}

/**
 * Remove stale temporary copies of `target` (`<target>.tmp-PID-hex`, written by AtomicTextFile) —
 * and, with `alsoNamed`, of any file in its folder whose name matches — left by killed processes.
 */
export async function removeStaleTemps(target: string, now: number, alsoNamed?: RegExp): Promise<number> {
  const base = basename(target);
  return removeStaleTempsIn(dirname(target), now, (name) => name === base || (alsoNamed?.test(name) ?? false));
}

/** Remove the stale `<name>.tmp-PID-hex` files of `dir` whose `<name>` is `owned` (a folder of downloads). */
export async function removeStaleTempsIn(dir: string, now: number, owned: (name: string) => boolean): Promise<number> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    const m = /^(.*)\.tmp-\d+-[0-9a-f]+$/.exec(name);
    if (!m || !owned(m[1]!)) continue;
    const path = join(dir, name);
    try {
      const st = await stat(path);
      if (st.isFile() && isStaleLeftover(name, now - st.mtimeMs)) {
        await unlink(path);
        removed++;
      }
    } catch {
      // vanished meanwhile
    }
  }
  return removed;
}
