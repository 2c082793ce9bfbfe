// A file system error in plain words ("no such file", "the disk is full"), for messages that name the file
// themselves; and which errors mean the disk (not crm) failed.
const REASONS: Record<string, string> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EISDIR: 'it is a directory',
  ENOTDIR: 'a folder in its path is a file',
  ENAMETOOLONG: 'the name is too long',
  EROFS: 'the file system is read-only',
  ENOSPC: 'the disk is full',
  EDQUOT: 'the disk quota is used up',
  EFBIG: 'the file is too large for its file system',
  EIO: 'the disk reported an input/output error',
};

/** The errno code of a Node error, if any. */
export function errnoOf(err: unknown): string | undefined {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Why a file could not be read or written, without the syscall and path Node adds (`ENOENT: …, stat 'x'`). */
export function fsReason(err: unknown): string {
  const code = errnoOf(err);
  return (code && REASONS[code]) ?? (err instanceof Error ? err.message : String(err));
}

/** `err` naming the file it is about (a FileHandle's write names none), so a full disk is named by that file's path. */
export function naming<E>(err: E, path: string): E {
  if (err !== null && typeof err === 'object' && (err as { path?: unknown }).path === undefined)
    Object.defineProperty(err, 'path', { value: path, enumerable: false, configurable: true });
  return err;
}

/** Errors of the disk under a file, not of crm: full, over quota, failing. */
const DISK_ERRNOS: readonly string[] = ['ENOSPC', 'EDQUOT', 'EFBIG', 'EIO', 'EROFS'];

export function isDiskError(err: unknown): boolean {
  const code = errnoOf(err);
  return code !== undefined && DISK_ERRNOS.includes(code);
}
