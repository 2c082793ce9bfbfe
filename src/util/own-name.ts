// A file of one run's own (CONTRACT §7c, issue 27): `<stem>.<time><ext>`, or `<stem>.<time>-2<ext>`, `-3`, … when
// another run (the same second, another process) has that name. Made exclusively: never over another file.
import { constants } from 'node:fs';
import { copyFile, link, open, unlink } from 'node:fs/promises';
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
