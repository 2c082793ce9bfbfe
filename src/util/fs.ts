// Folders and leftovers. A folder is made one level at a time, never with `mkdir -p`, which spins
// forever under procfs (CRM_CONFIG_DIR=/proc/nope); and the `*.tmp-PID-hex` / `stdin-PID-hex.buf`
// copies of user data that a killed process left behind are removed once stale.
import { mkdirSync, statSync } from 'node:fs';
import { access, readdir, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';

const DAY_MS = 86_400_000;

export const exists = (path: string): Promise<boolean> =>
  access(path)
    .then(() => true)
    .catch(() => false);

/**
 * Create `dir` and its missing parents (mode 0700). Throws an Error saying why (a file in the way,
 * no permission) that the caller words for its own folder.
 */
export function ensureDir(dir: string, mode = 0o700): void {
  const missing: string[] = [];
  for (let d = dir, depth = 0; depth < 64; depth++) {
    let st;
    try {
      st = statSync(d);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    if (st && !st.isDirectory()) throw new Error(`${d} is not a folder`);
    if (st || dirname(d) === d) break;
    missing.push(d);
    d = dirname(d);
  }
  for (const m of missing.reverse()) {
    try {
      mkdirSync(m, { mode });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}

/** The names in `dir`; none when it cannot be read. */
export async function listDir(dir: string): Promise<string[]> {
  return readdir(dir).catch(() => []);
}

/** Whether process `pid` still exists (EPERM: it does, it is someone else's). */
export function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A `…tmp-PID-hex` or `stdin-PID-hex.buf` leftover is stale when its process is gone or it is a day old. */
export function isStaleLeftover(name: string, ageMs: number): boolean {
  const m = /(?:stdin|\.tmp)-(\d+)-[0-9a-f]+(?:\.buf)?$/.exec(name);
  return m !== null && (ageMs > DAY_MS || !processAlive(Number(m[1])));
}

/** Remove the stale `<name>.tmp-PID-hex` files of `dir` whose `<name>` is `owned`. */
export async function removeStaleTemps(dir: string, now: number, owned: (name: string) => boolean): Promise<number> {
  let removed = 0;
  for (const name of await listDir(dir)) {
    const m = /^(.*)\.tmp-\d+-[0-9a-f]+$/.exec(name);
    if (!m || !owned(m[1]!)) continue;
    const path = join(dir, name);
    const st = await stat(path).catch(() => undefined);
    if (st?.isFile() && isStaleLeftover(name, now - st.mtimeMs))
      removed += await unlink(path)
        .then(() => 1)
        .catch(() => 0);
  }
  return removed;
}
