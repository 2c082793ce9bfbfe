// The journal folder's files (CONTRACT §7): per (content, resource, base URL, key) a JSON-lines file: a header
// pinning the plan, then `sent`, `unsent`, `chunk` (fsynced) and `complete` lines. A torn last line is not
// JSON and is cut off; the earlier format's `"sum"` is ignored. Below: each job's lock, and old journals pruned.
import { createHash } from 'node:crypto';
import { unlinkSync } from 'node:fs';
import { link, open, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { UsageError } from '../../http/errors.js';
import { atExit, removeOnExit, tempPathFor, writeFileAtomic } from '../../util/atomic-file.js';
import { exists, exists as there, isStaleLeftover, listDir, processAlive } from '../../util/fs.js';
import { trimBase, type CompleteInfo, type JournalIdentity } from '../shapes.js';

export {
  journalFolder,
  trimBase,
  type ChunkReject,
  type CompleteInfo,
  type FinishedChunk,
  type JournalIdentity,
} from '../shapes.js';
export const JOURNAL_VERSION = 1;

export interface HeaderLine {
  type: 'header';
  version: number;
  resource: string;
  base_url: string;
  key_id?: string;
  key_mask?: string;
  /** JournalIdentity.operation */
  operation?: string;
  /** JournalIdentity.options */
  options?: string;
  /** salts every Idempotency-Key of this journal's run (chunkKey); absent in journals from before run ids */
  run_id?: string;
  content_sha256: string;
  plan: string;
  input: string;
  created_at: string;
}

/** sha256 of the API key, truncated: tells keys apart without revealing them. */
export function keyIdentity(apiKey: string | undefined): string | undefined {
  return apiKey ? createHash('sha256').update(`crm-key\0${apiKey}`).digest('hex').slice(0, 16) : undefined;
}

/** What a journal's job was, for messages: `imported into contacts`, `used to update contacts`. */
export const jobOf = (id: Pick<JournalIdentity, 'resource' | 'operation'>): string =>
  id.operation ? `used to ${id.operation}` : `imported into ${id.resource}`;

export function journalPath(dir: string, id: JournalIdentity): string {
  const key = id.keyId ? `\0key:${id.keyId}` : '';
  const op = id.operation ? `\0op:${id.operation}` : '';
  const options = id.options ? `\0options:${id.options}` : '';
  const name = createHash('sha256')
    .update(`${id.contentSha256}\0${id.resource}\0${trimBase(id.baseUrl)}${key}${op}${options}`)
    .digest('hex');
  return join(dir, `${name}.jsonl`);
}

/** Where an import's journal is: its own file, or one from before keys were part of the name (adopted on open). */
export interface JournalFile {
  /** the file to read: this identity's, or the older one */
  path: string;
  own: string;
  exists: boolean;
}

export async function findJournal(dir: string, identity: JournalIdentity): Promise<JournalFile> {
  const own = journalPath(dir, identity);
  if (!identity.keyId || (await there(own))) return { path: own, own, exists: await there(own) };
  const legacy = journalPath(dir, { ...identity, keyId: undefined });
  const h = (await there(legacy)) ? await readHeader(legacy) : undefined;
  return h && h.key_id === undefined ? { path: legacy, own, exists: true } : { path: own, own, exists: false };
}

/** A journal line's value; undefined when it is not JSON (torn). The earlier format's `sum` is dropped. */
export function parseLine(text: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(text) as unknown;
    if (v === null || typeof v !== 'object') return undefined;
    const { sum: _sum, ...rest } = v as Record<string, unknown>;
    return rest;
  } catch {
    return undefined;
  }
}

/** The first or last complete line of a file (64 KiB from that end), parsed. */
async function edgeLine(path: string, end: 'first' | 'last'): Promise<Record<string, unknown> | undefined> {
  const fh = await open(path, 'r').catch(() => undefined);
  if (!fh) return undefined;
  try {
    const { size } = await fh.stat();
    const n = Math.min(size, 64 * 1024);
    const buf = Buffer.alloc(n);
    await fh.read(buf, 0, n, end === 'first' ? 0 : size - n);
    const text = buf.toString('utf8');
    if (end === 'first') return parseLine(text.slice(0, Math.max(0, text.indexOf('\n'))));
    const stop = text.lastIndexOf('\n');
    const start = text.lastIndexOf('\n', stop - 1) + 1;
    return stop < 0 || (start === 0 && size > n) ? undefined : parseLine(text.slice(start, stop));
  } catch {
    return undefined;
  } finally {
    await fh.close().catch(() => undefined);
  }
}

export async function readHeader(path: string): Promise<HeaderLine | undefined> {
  const h = await edgeLine(path, 'first');
  return h?.type === 'header' ? (h as unknown as HeaderLine) : undefined;
}

/** The `complete` line of a journal, when it is its last line. */
export async function readComplete(path: string): Promise<CompleteInfo | undefined> {
  const v = await edgeLine(path, 'last');
  return v?.type === 'complete' ? { ...v, at: String(v.at) } : undefined;
}

export const jsonLine = (value: object): string => `${JSON.stringify(value)}\n`;

// The lock: one run of a job at a time (issue 17): two runs of one file at once both sent every row and each reported
// the other's as done by an earlier run. The job's lock is a file beside its journal holding the pid of the run
// that has it. It appears whole: the pid is written to a temporary file that is then hard-linked to the lock's name
// (link fails when the name is taken), so a kill -9 never leaves a lock without its pid. A lock whose process is
// gone is taken over; an empty one (a file system without hard links, or an older crm) after a minute.

/** The lock of a job: per content, resource, base URL and operation (not the key or options: those runs clash too). */
function lockPath(dir: string, identity: JournalIdentity): string {
  return `${journalPath(dir, { ...identity, keyId: undefined, options: undefined })}.lock`;
}

/** Makes `path` hold our pid if no one has it: true when it is ours. */
async function takeLock(path: string): Promise<boolean> {
  const tmp = tempPathFor(path);
  const forget = removeOnExit(tmp);
  try {
    await writeFile(tmp, `${process.pid}\n`, { mode: 0o600, flag: 'wx' });
    await link(tmp, path);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code === 'EPERM' || code === 'ENOTSUP' || code === 'EOPNOTSUPP' || code === 'ENOSYS') return takeLockBare(path);
    throw err;
  } finally {
    forget();
    await unlink(tmp).catch(() => undefined);
  }
}

/** Without hard links: made with O_EXCL, then the pid written (a kill -9 between them leaves it empty). */
async function takeLockBare(path: string): Promise<boolean> {
  const fh = await open(path, 'wx', 0o600).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err;
    return undefined;
  });
  if (!fh) return false;
  try {
    await fh.writeFile(`${process.pid}\n`);
  } finally {
    await fh.close();
  }
  return true;
}

/**
 * Takes the job's lock, or refuses (exit 2, nothing sent) naming the run that has it; the returned function
 * releases it (and so does the process's exit).
 */
export async function lockJob(dir: string, identity: JournalIdentity, name: string): Promise<() => Promise<void>> {
  const path = lockPath(dir, identity);
  for (let attempt = 0; ; attempt++) {
    if (await takeLock(path)) {
      const withdraw = atExit(() => unlinkSync(path));
      return async () => {
        withdraw();
        await unlink(path).catch(() => undefined);
      };
    }
    const pid = Number((await readFile(path, 'utf8').catch(() => '')).trim());
    const named = Number.isInteger(pid) && pid > 0;
    const age = Date.now() - ((await stat(path).catch(() => undefined))?.mtimeMs ?? Date.now());
    const stale = named ? pid !== process.pid && !processAlive(pid) : age > 60_000;
    if (attempt > 0 || !stale) throw running(name, identity, pid, path);
    await unlink(path).catch(() => undefined);
  }
}

function running(name: string, identity: JournalIdentity, pid: number, path: string): UsageError {
  const who = Number.isInteger(pid) && pid > 0 ? `another crm (process ${pid})` : 'another crm';
  return new UsageError(`${who} is running this same job (${name} ${jobOf(identity)}) right now; nothing was sent`, {
    hint: `let it finish (or stop it), then run this command again: it sends only what is left. Lock: ${path}`,
  });
}

// Pruning: finished journals compacted (header + `complete`) after a week or beyond 32 MiB, compacted ones gone after
// a year, unfinished after 30 days, dead processes' leftovers after a day. `keep` is never touched.
const DAY = 86_400_000;

export interface PruneOptions {
  /** beyond this total, the oldest finished journals are compacted first (default 32 MiB) */
  maxTotalBytes?: number;
  keep?: string;
}

/** Cut a finished journal down to its header and `complete` line; its new size, or -1 when it was not. */
async function compact(path: string): Promise<number> {
  const header = await readHeader(path);
  const done = await readComplete(path);
  if (!header || !done || done.compacted) return -1;
  await writeFileAtomic(path, jsonLine(header) + jsonLine({ type: 'complete', ...done, compacted: true }));
  return (await stat(path)).size;
}

export const compactJournal = async (path: string): Promise<boolean> => (await compact(path)) >= 0;

interface Journal {
  path: string;
  size: number;
  mtimeMs: number;
}

/** Returns how many files were removed or compacted. */
export async function pruneJournals(dir: string, now: number, opts: PruneOptions = {}): Promise<number> {
  let changed = 0;
  let total = 0;
  const finished: Journal[] = [];
  const gone = (path: string): Promise<boolean> =>
    unlink(path)
      .then(() => ++changed > 0)
      .catch(() => false);
  const shrink = async (j: Journal): Promise<void> => {
    const size = await compact(j.path).catch(() => -1);
    if (size >= 0) changed++;
    total += size >= 0 ? size - j.size : 0;
  };
  for (const name of await listDir(dir)) {
    const path = join(dir, name);
    const st = await stat(path).catch(() => undefined);
    if (!st || path === opts.keep) {
      total += st?.size ?? 0;
      continue;
    }
    const age = now - st.mtimeMs;
    if (/^stdin-\d+-[0-9a-f]+\.buf$|\.tmp-\d+-[0-9a-f]+$/.test(name)) {
      if (isStaleLeftover(name, age)) await gone(path);
      continue;
    }
    // reconcile's plan (pinned by journal/stage.ts) is kept beside an unfinished journal only
    if (name.endsWith('.jsonl.plan')) {
      const journal = path.slice(0, -'.plan'.length);
      if (journal !== opts.keep && (!(await exists(journal)) || (await readComplete(journal)))) await gone(path);
      continue;
    }
    if (!name.endsWith('.jsonl')) continue;
    const done = await readComplete(path);
    const j = { path, size: st.size, mtimeMs: st.mtimeMs };
    const old = done ? done.compacted && age > 365 * DAY : age > 30 * DAY;
    if (old && (await gone(path))) continue;
    total += st.size;
    if (done && !done.compacted && age > 7 * DAY) await shrink(j);
    else if (done && !done.compacted) finished.push(j);
  }
  for (const j of finished.sort((a, b) => a.mtimeMs - b.mtimeMs)) {
    if (total <= (opts.maxTotalBytes ?? 32 * 1024 * 1024)) break;
    await shrink(j);
  }
  return changed;
}
