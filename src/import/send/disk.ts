// A full (or failing) disk while an import writes its journal, spool, rejects or results file: a DiskError
// (exit 8) naming the file, carrying the summary, never "unexpected failure … a bug in crm".
import { DiskError } from '../../http/errors.js';
import { errnoOf, fsReason, isDiskError } from '../../util/fs-error.js';
import { importSummaryOf, withSummary } from '../types.js';

/** `err` as a DiskError naming `path` when the disk failed (its summary kept); any other error as it is. */
export function onDisk<E>(err: E, path: string | undefined): E | DiskError {
  if (!isDiskError(err) || err instanceof DiskError) return err;
  const where = path ?? (err as { path?: unknown }).path;
  const code = errnoOf(err) === 'ENOSPC' || errnoOf(err) === 'EDQUOT' ? 'DISK_FULL' : 'DISK_ERROR';
  const e = new DiskError(`cannot write ${typeof where === 'string' ? where : 'a file'}: ${fsReason(err)}`, {
    cause: err,
    code,
  });
  const summary = importSummaryOf(err);
  return summary ? withSummary(e, summary) : e;
}
