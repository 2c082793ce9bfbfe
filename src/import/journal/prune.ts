// Old journals: finished ones compacted (header + `complete`) after a week or beyond 32 MiB, compacted ones
// gone after a year, unfinished after 30 days, dead processes' leftovers after a day. `keep` is never touched.
import { stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../../util/atomic-file.js';
import { exists, isStaleLeftover, listDir } from '../../util/fs.js';
import { jsonLine, readComplete, readHeader } from './format.js';

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
    // reconcile's plan (match/run.ts) is kept beside an unfinished journal only
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
