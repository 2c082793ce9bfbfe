// A file of one run's own (CONTRACT §7c, issue 27): `<stem>.<time><ext>`, or `<stem>.<time>-2<ext>`, `-3`, … when
// another run (the same second, another process) has that name. Made exclusively: never over another file.
import { constants } from 'node:fs';
import { copyFile, link, open, readdir, unlink } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import { exists } from './fs.js';
import { fileStamp } from './stamp.js';

const MAX_TRIES = 1000;

/** `people.csv.undo` + `.csv` → `people.csv.undo.20261126T015612Z.csv`, then `…Z-2.csv`, `…Z-3.csv`, … */
export const ownName = (stem: string, ext: string, now: number, n = 1): string =>
  `${stem}.${fileStamp(now)}${n > 1 ? `-${n}` : ''}${ext}`;

/** The first of those names no file has now (to name before the run makes it: createOwnFile may still take another). */
export async function freeOwnName(stem: string, ext: string, now: number): Promise<string> {
  for (let n = 1; ; n++) {
    const path = ownName(stem, ext, now, n);
    if (!(await exists(path)) || n >= MAX_TRIES) return path;
  }
}

/** Creates the first free one, empty (0600), and returns its path. */
export async function createOwnFile(stem: string, ext: string, now: number): Promise<string> {
  return firstFree(stem, ext, now, async (path) => {
    await (await open(path, 'wx', 0o600)).close();
  });
}

/**
 * Moves `from` to the first free one without replacing any file: a hard link, then the old name removed (without
 * hard links, an exclusive copy). The new path; undefined when `from` is not there.
 */
export async function moveToOwnName(from: string, stem: string, ext: string, now: number): Promise<string | undefined> {
  try {
    const to = await firstFree(stem, ext, now, (path) =>
      link(from, path).catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'EPERM' || err.code === 'ENOTSUP' || err.code === 'EOPNOTSUPP' || err.code === 'ENOSYS')
          return copyFile(from, path, constants.COPYFILE_EXCL);
        throw err;
      }),
    );
    await unlink(from);
    return to;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

async function firstFree(stem: string, ext: string, now: number, make: (path: string) => Promise<void>) {
  for (let n = 1; ; n++) {
    const path = ownName(stem, ext, now, n);
    try {
      await make(path);
      return path;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || n >= MAX_TRIES) throw err;
    }
  }
}

/**
 * The files a later run moved `path` aside to (`people.csv.undo.csv` → `people.csv.undo.<time>[-n].csv`), newest
 * first: a command printed by an earlier run names the file as it was then (issue 29's re-trial).
 */
export async function movedAsideFrom(path: string): Promise<string[]> {
  const ext = extname(path);
  const stem = basename(path, ext);
  const own = new RegExp(`^${escapeRegExp(stem)}\\.(\\d{8}T\\d{6}Z)(?:-(\\d+))?${escapeRegExp(ext)}$`);
  const names = await readdir(dirname(path)).catch(() => [] as string[]);
  const found = names.flatMap((n) => {
    const m = own.exec(n);
    return m ? [{ n, at: `${m[1]}-${(m[2] ?? '1').padStart(4, '0')}` }] : [];
  });
  return found.sort((a, b) => (a.at < b.at ? 1 : -1)).map((f) => join(dirname(path), f.n));
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * A way-back file a later run moved aside (issue 29's re-trial: the undo command a run printed failed with "no such
 * file", naming nothing): where it is now, for the hint of that error; undefined when nothing was moved.
 */
export async function movedAsideHint(path: string): Promise<string | undefined> {
  const aside = await movedAsideFrom(path);
  if (aside.length === 0) return undefined;
  const shown = aside.slice(0, 3).join(', ') + (aside.length > 3 ? ', …' : '');
  return (
    `a later run of crm moved ${basename(path)} aside, under its own name with the time its run last wrote it ` +
    `(newest first): ${shown}; name the one of the run you mean`
  );
}
