// A lock file held by one live process (issue 28, "Locks die with their process"). The pid alone does not say who
// holds a lock: a crm killed with -9 and started again with the same pid (PID 1 in a container) would find "its own"
// pid in the lock and be refused for ever. So the lock also records the holder's start identity (on Linux the start
// time of /proc/<pid>/stat with the boot id; elsewhere none) and a random token of this take. A lock is stale when
// its process is gone; when its pid is alive but started at another time (the pid was reused); or when its pid is
// ours but its token is not one this process holds (an earlier life of our pid).
//
// The lock appears whole: it is written to a temporary file that is then hard-linked to the lock's name (link fails
// when the name is taken), so a kill -9 never leaves a lock without its holder. A stale lock is removed under a
// `.break` lock, so that two processes taking it over at once never both have it; an empty one (a file system
// without hard links, killed between create and write) is taken over after a minute.
import { randomBytes } from 'node:crypto';
import { unlinkSync } from 'node:fs';
import { link, open, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { atExit, removeOnExit, tempPathFor } from './atomic-file.js';
import { processAlive } from './fs.js';

interface Holder {
  pid: number;
  /** `<boot id>:<start time>`; absent where it cannot be read, and in a lock written before issue 28 */
  start?: string;
  token?: string;
}

/** The tokens of the locks this process holds: a lock with our pid and another token is an earlier life's. */
const held = new Set<string>();

/**
 * Takes the lock at `path`, or throws `refuse(pid)` when a live process holds it (`undefined`: a lock being written,
 * its holder not known yet); the returned function releases it (and so does the process's exit).
 */
export async function takeProcessLock(
  path: string,
  refuse: (holderPid: number | undefined) => Error,
): Promise<() => Promise<void>> {
  const start = await startOf(process.pid);
  for (let attempt = 0; ; attempt++) {
    const token = randomBytes(8).toString('hex');
    held.add(token); // before the lock appears: another take in this process must never see it as stale
    if (await takeLock(path, `${JSON.stringify({ pid: process.pid, start, token })}\n`)) {
      const withdraw = atExit(() => unlinkSync(path));
      return async () => {
        withdraw();
        await unlink(path).catch(() => undefined);
        held.delete(token); // only once it is gone: until then, it is not a stale lock to take over
      };
    }
    held.delete(token);
    const text = await readFile(path, 'utf8').catch(() => '');
    const holder = parseHolder(text);
    const st = await stat(path).catch(() => undefined);
    const seen = `${text}\0${st?.ino}\0${st?.mtimeMs}`;
    const age = Date.now() - (st?.mtimeMs ?? Date.now());
    // no holder: being written (aged a minute: its writer may have been killed), or gone since (try again)
    const stale = holder ? !(await holds(holder)) : !st || age > 60_000;
    if (attempt >= 20 || !stale) throw refuse(holder?.pid);
    if (!(await breakStale(path, seen))) await sleep(10); // another process is taking it over: see who has it then
  }
}

/** Whether the lock's holder is a live process's: this one's (a token it holds), or another's started when it says. */
async function holds(holder: Holder): Promise<boolean> {
  if (holder.pid === process.pid) return holder.token !== undefined && held.has(holder.token);
  if (!processAlive(holder.pid)) return false;
  const now = holder.start === undefined ? undefined : await startOf(holder.pid);
  return now === undefined || now === holder.start;
}

/** A lock's text: `{"pid","start","token"}`, or the pid alone (a crm before issue 28); undefined when empty or garbled. */
function parseHolder(text: string): Holder | undefined {
  let v: { pid?: unknown; start?: unknown; token?: unknown };
  try {
    v = /^\d+$/.test(text.trim()) ? { pid: Number(text.trim()) } : (JSON.parse(text) as typeof v);
  } catch {
    return undefined;
  }
  const str = (s: unknown) => (typeof s === 'string' ? s : undefined);
  const pid = v?.pid;
  return typeof pid === 'number' && Number.isInteger(pid) && pid > 0
    ? { pid, start: str(v.start), token: str(v.token) }
    : undefined;
}

/**
 * When process `pid` started, as `<boot id>:<start time in clock ticks>` (field 22 of /proc/<pid>/stat): a pid
 * reused by a later process, even after a reboot, has another. Undefined where /proc is not this process's own
 * (another system, or a PID namespace whose /proc was not mounted again): its numbers are not ours to compare.
 */
async function startOf(pid: number): Promise<string | undefined> {
  procFacts ??= Promise.all([
    readFile('/proc/self/stat', 'utf8').then((s) => Number(s.slice(0, s.indexOf(' '))) === process.pid),
    readFile('/proc/sys/kernel/random/boot_id', 'utf8').then((s) => s.trim()),
  ]).catch(() => [false, ''] as const);
  const [ours, boot] = await procFacts;
  if (!ours || !boot) return undefined;
  const stat_ = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  // the command name (field 2) is in parentheses and may hold spaces and ')': fields 3… follow the last ')'
  const start = stat_.slice(stat_.lastIndexOf(')') + 2).split(' ')[19];
  return start ? `${boot}:${start}` : undefined;
}

/** Whether /proc is this process's own, and the boot id: read once. */
let procFacts: Promise<readonly [boolean, string]> | undefined;

/** Makes `path` hold `content` if no one has it: true when it is ours. */
async function takeLock(path: string, content: string): Promise<boolean> {
  const tmp = tempPathFor(path);
  const forget = removeOnExit(tmp);
  try {
    await writeFile(tmp, content, { mode: 0o600, flag: 'wx' });
    await link(tmp, path);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code === 'EPERM' || code === 'ENOTSUP' || code === 'EOPNOTSUPP' || code === 'ENOSYS')
      return takeLockBare(path, content);
    throw err;
  } finally {
    forget();
    await unlink(tmp).catch(() => undefined);
  }
}

/** Without hard links: made with O_EXCL, then written (a kill -9 between them leaves it empty). */
async function takeLockBare(path: string, content: string): Promise<boolean> {
  const fh = await open(path, 'wx', 0o600).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err;
    return undefined;
  });
  if (!fh) return false;
  try {
    await fh.writeFile(content);
  } finally {
    await fh.close();
  }
  return true;
}

/**
 * Removes a stale lock, as it was seen: under `<lock>.break` (taken exclusively), the lock is read again and removed
 * only if it is still the file that was seen — two processes taking over one lock at once, one could otherwise
 * remove the lock the other had just taken, and both run. False when another is breaking it (a `.break` a killed
 * process left is removed after 10 s).
 */
async function breakStale(path: string, seen: string): Promise<boolean> {
  const breaker = `${path}.break`;
  const fh = await open(breaker, 'wx', 0o600).catch(async (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err;
    const age = Date.now() - ((await stat(breaker).catch(() => undefined))?.mtimeMs ?? Date.now());
    if (age > 10_000) await unlink(breaker).catch(() => undefined);
    return undefined;
  });
  if (!fh) return false;
  try {
    // the same file as seen (its text, inode and time: an empty lock another has just made reads alike)
    const st = await stat(path).catch(() => undefined);
    const now = `${await readFile(path, 'utf8').catch(() => undefined)}\0${st?.ino}\0${st?.mtimeMs}`;
    if (st && now === seen) await unlink(path).catch(() => undefined);
    return true;
  } finally {
    await fh.close();
    await unlink(breaker).catch(() => undefined);
  }
}
