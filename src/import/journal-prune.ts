// Old journals: compacting finished journals and pruning the folder so it stays bounded without
// forgetting an import (earlier imports that make a new one unsafe: journal-earlier.ts).
import { readdir, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from './atomic-file.js';
import { isStaleLeftover } from './fs-util.js';
import { readComplete, readHeader, sealLine, type CompleteInfo } from './journal-line.js';

export interface PruneOptions {
  /** finished journals older than this are compacted (default 7 days) */
  compactAfterMs?: number;
  /** unfinished journals older than this go (default 30 days) */
  maxAgeMs?: number;
  /** compacted journals older than this go (default 365 days) */
  compactedMaxAgeMs?: number;
  /** beyond this total, the oldest finished journals are compacted first (default 32 MiB) */
  maxTotalBytes?: number;
  /** never touched (the journal of the import about to run) */
  keep?: string;
}

/**
 * A finished journal cut down to its header and `complete` line (marked `compacted`): a few hundred
 * bytes that still say "this file was imported" — a rerun sends nothing — while the per-row ids
 * (only needed to rebuild --results or a lost rejects file) are dropped. Written atomically.
 */
export async function compactJournal(path: string): Promise<boolean> {
  const header = await readHeader(path);
  const done = await readComplete(path);
  if (!header || !done || done.compacted) return false;
  const { type: _t, sum: _s, ...rest } = done as CompleteInfo & { type?: string; sum?: string };
  await writeFileAtomic(path, sealLine(header) + sealLine({ type: 'complete', ...rest, compacted: true }));
  return true;
}

/**
 * Keep the folder bounded without ever forgetting that a file was imported: finished journals are
 * compacted (compactJournal) after a week, or earlier, oldest first, while all journals together
 * exceed 32 MiB; compacted ones go after a year, unfinished ones after 30 days (far past the
 * server's 24 h of idempotency memory); leftovers (temporary files, buffered stdin) of processes
 * that are gone, or older than a day. `keep` is never touched. Returns how many files were removed
 * or compacted.
 */
export async function pruneJournals(dir: string, now: number, opts: PruneOptions = {}): Promise<number> {
  const compactAfter = opts.compactAfterMs ?? 7 * 86_400_000;
  const maxAge = opts.maxAgeMs ?? 30 * 86_400_000;
  const compactedMaxAge = opts.compactedMaxAgeMs ?? 365 * 86_400_000;
  const maxTotal = opts.maxTotalBytes ?? 32 * 1024 * 1024;
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0;
  }
  let changed = 0;
  const remove = async (path: string): Promise<void> => {
    try {
      await unlink(path);
      changed++;
    } catch {
      // gone already, or someone else's concern
    }
  };
  const compact = async (path: string): Promise<number> => {
    try {
      if (!(await compactJournal(path))) return 0;
      changed++;
      return (await stat(path)).size;
    } catch {
      return -1;
    }
  };
  const kept: Array<{ path: string; size: number; mtimeMs: number }> = [];
  let total = 0;
  for (const name of names) {
    const path = join(dir, name);
    try {
      const st = await stat(path);
      const age = now - st.mtimeMs;
      if (/^stdin-\d+-[0-9a-f]+\.buf$/.test(name) || /\.tmp-\d+-[0-9a-f]+$/.test(name)) {
        if (isStaleLeftover(name, age)) await remove(path);
        continue;
      }
      if (!name.endsWith('.jsonl')) continue;
      if (path === opts.keep) {
        total += st.size;
        continue;
      }
      const done = await readComplete(path);
      if (!done) {
        if (age > maxAge) await remove(path);
        else total += st.size;
      } else if (done.compacted) {
        if (age > compactedMaxAge) await remove(path);
        else total += st.size;
      } else if (age > compactAfter) {
        const size = await compact(path);
        total += size < 0 ? st.size : size;
      } else {
        kept.push({ path, size: st.size, mtimeMs: st.mtimeMs });
        total += st.size;
      }
    } catch {
      // a file that vanished or cannot be read is someone else's concern
    }
  }
  for (const k of kept.sort((a, b) => a.mtimeMs - b.mtimeMs)) {
    if (total <= maxTotal) break;
    const size = await compact(k.path);
    if (size >= 0) total -= k.size - size;
  }
  return changed;
}
