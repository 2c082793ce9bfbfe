// A batch answer → each row's id or error (a row the answer says nothing about is never assumed created); what a failed request means.
import type { BatchEnvelope } from '../../api/envelopes.js';
import { NO_RESULT_CODE, type ChunkReject } from '../shapes.js';
import {
  AuthError,
  DiskError,
  CrmError,
  ForbiddenError,
  NotFoundError,
  PartialFailureError,
  restated,
} from '../../http/errors.js';
export { NO_RESULT_CODE } from '../shapes.js';

/** A chunk's answer per row. */
export interface Answer {
  /** index → the created id ('' when created without one), or null when not created */
  ids: Array<string | null>;
  rejects: ChunkReject[];
}

interface ChunkOutcome extends Answer {
  created: number;
}

export function chunkOutcome(size: number, envelope: BatchEnvelope): ChunkOutcome {
  const ids = new Array<string | null>(size).fill(null);
  const seen = new Array<boolean>(size).fill(false);
  const rejects: ChunkReject[] = [];
  for (const item of envelope.data.items) {
    const i = item.index;
    if (!Number.isInteger(i) || i < 0 || i >= size || seen[i]) continue;
    seen[i] = true;
    if (item.status === 'created') {
      const id = item.data?.id;
      // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a number, or a RawNumber (its toString gives the digits)
      ids[i] = typeof id === 'string' ? id : id === undefined || id === null ? '' : String(id);
    } else {
      rejects.push({
        i,
        code: item.error?.code ?? 'ITEM_FAILED',
        message: item.error?.message ?? 'the server reported an error without a message',
      });
    }
  }
  const message =
    'the batch answer has no result for this row: it may or may not have been created; check before importing it again';
  for (let i = 0; i < size; i++) if (!seen[i]) rejects.push({ i, code: NO_RESULT_CODE, message });
  rejects.sort((a, b) => a.i - b.i);
  return { ids, rejects, created: ids.filter((x) => x !== null).length };
}

/** A row of a create sent again that the server answered from its cache, though the read found no record for it. */
export const DELETED_SINCE = 'DELETED_SINCE';

/**
 * A create an interrupted run left in doubt, sent again under its key and answered from the server's cache (a replay):
 * its rows the read found no record for were made then and deleted since (CONTRACT §7c: a --match run that exits 0
 * is true). They are not done: rejects, for the next run (which reads the CRM again) to create them again.
 */
export function deletedSince(out: ChunkOutcome, lines: readonly number[], absent: readonly number[]): ChunkOutcome {
  const gone = lines.flatMap((line, i) => (absent.includes(line) && out.ids[i] !== null ? [i] : []));
  if (gone.length === 0) return out;
  const ids = out.ids.map((id, i) => (gone.includes(i) ? null : id));
  const message =
    'created by the interrupted run and deleted since (the server answered from its cache): run the same command again to create it again';
  const rejects = [...out.rejects, ...gone.map((i) => ({ i, code: DELETED_SINCE, message }))].sort((a, b) => a.i - b.i);
  return { ids, rejects, created: out.created - gone.length };
}

/** Errors after which sending more chunks is pointless: a bad key, a missing scope, no such endpoint, a bug. */
export function isFatalSendError(err: unknown): boolean {
  // a DiskError: a delete's backup could not be written, so nothing more may be deleted
  return (
    !(err instanceof CrmError) || [AuthError, ForbiddenError, NotFoundError, DiskError].some((E) => err instanceof E)
  );
}

/** A whole chunk refused with a status saying it was not carried out; 408/409/425/429 and 5xx say nothing of the kind. */
export function isRefusal(err: CrmError): boolean {
  const s = err.status;
  return s !== undefined && s >= 400 && s < 500 && ![408, 409, 425, 429].includes(s);
}

/** The same error class (so the same exit code), saying why the import stopped and what a rerun does. */
export function stoppedAfterFailures(err: CrmError, n: number): CrmError {
  return restated(err, {
    message: `stopped after ${n} chunks in a row failed; the last: ${err.message}`,
    hint: `${err.hint ? `${err.hint}\n` : ''}a rerun skips the finished chunks and sends the failed ones again under the same keys`,
  });
}

/**
 * The first chunk a run had answered, when every row of it (two or more: one row failing is no pattern) failed
 * with one same error and no row of the job was created before it (by this run or an earlier one): the other
 * chunks would fail alike (a column mapped to the wrong field, a field the server requires), so the run stops
 * there (exit 9) rather than send them (issue 18). `c`: the run's counts so far. `what`: the rows it judges, when
 * not one chunk (a row a request: the first ALIKE_ROWS answered).
 */
/** Rows sent a request each (an update, delete or link; a reconcile): this many answered first, all failing alike, stop the run. */
export const ALIKE_ROWS = 10;

export function failedAlike(
  rows: number,
  rejects: readonly ChunkReject[],
  c: { created: number; skipped: number; repeated: number },
  what = `the first chunk: its ${rows} rows`,
): PartialFailureError | undefined {
  const first = rejects[0];
  if (rows < 2 || rejects.length !== rows || first === undefined || first.code === NO_RESULT_CODE) return undefined;
  if (c.created + c.skipped > c.repeated || !rejects.every((r) => r.code === first.code && r.message === first.message))
    return undefined;
  return new PartialFailureError(
    `stopped after ${what} all failed with the same error (${first.code}: ${first.message}); ` +
      'the rest of the file was not sent (it would fail alike)',
    {
      hint:
        'check how the columns map (--dry-run shows it); correct a wrong one with --map "COLUMN=field" or in the header: ' +
        'nothing was created, so the corrected command (another job) sends every row. If the mapping is right, fix what ' +
        'the error names and rerun this same command: it sends the rejected rows again, then the rest.',
    },
  );
}
