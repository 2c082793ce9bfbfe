// A batch answer → each row's id or error; a row the answer says nothing about is never assumed created.
import type { BatchEnvelope } from '../api/envelopes.js';
import type { ChunkReject } from './journal-format.js';

export const NO_RESULT_CODE = 'NO_ITEM_RESULT';

export interface ChunkOutcome {
  /** index → the created id ('' when created without one), or null when not created */
  ids: Array<string | null>;
  rejects: ChunkReject[];
  created: number;
}

export function chunkOutcome(size: number, envelope: BatchEnvelope): ChunkOutcome {
  const ids: Array<string | null> = new Array<string | null>(size).fill(null);
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
  for (let i = 0; i < size; i++) {
    if (!seen[i]) {
      rejects.push({
        i,
        code: NO_RESULT_CODE,
        message: 'the batch answer has no result for this row: it may or may not have been created; check before importing it again',
      });
    }
  }
  rejects.sort((a, b) => a.i - b.i);
  return { ids, rejects, created: ids.filter((x) => x !== null).length };
}
