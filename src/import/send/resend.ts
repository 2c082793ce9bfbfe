// Rows an earlier run of the job answered that this run sends again (issue 17): those it rejected (the cause
// may be fixed), and for an update, delete or link the rows done then of a record this run changed before
// them (file order). A create's rows sent again are gathered from their chunks, up to a chunk's size a request
// (issue 29: 50 rejected rows of 20 chunks are one request, not 20). Pure: which rows, the chunk they make, and the
// answer merged back into each chunk's.
import { stringifyJson } from '../../json/exact-json.js';
import { NO_RESULT_CODE, type ChunkReject, type FinishedChunk } from '../shapes.js';
import type { SpooledChunk as Chunk } from '../check/spool.js';
import type { Answer } from './outcome.js';

/** A chunk answered by an earlier run, some of whose rows are sent again: which, and that answer. */
export interface Resend {
  whole: Chunk;
  /** item indexes of `whole` sent again, in order */
  idx: number[];
  done: FinishedChunk;
}

/** Per record of an update, delete or link (RowRequest.subject): its last row's body key, the answer it waits for. */
export interface Subject {
  twin: string;
  /** the line of its row that came first: a later row repeating it names it */
  line: number;
  /** settled once that row is answered (or was never sent) */
  pending?: Promise<void>;
  /** a row of it was sent by this run: a later row an earlier run did is sent again after it (file order) */
  sent: boolean;
}

/**
 * The item indexes of a chunk an earlier run answered that this run sends again, or undefined: every row
 * when its record was changed by this run before it; else, when `retry`, the rows it rejected (certainly
 * not done; never those the answer said nothing about).
 */
export function rowsToSendAgain(done: FinishedChunk, recordChanged: boolean, retry: boolean): number[] | undefined {
  if (recordChanged) return done.ids.map((_id, i) => i);
  if (!retry) return undefined;
  const idx = done.rejects.filter((r) => r.code !== NO_RESULT_CODE).map((r) => r.i);
  return idx.length > 0 ? [...new Set(idx)].sort((a, b) => a - b) : undefined;
}

/** The rows `idx` of a chunk, as a chunk of their own (its body from the records, in order). */
export function subChunk(chunk: Chunk, idx: number[]): Chunk {
  if (idx.length === chunk.lines.length) return chunk;
  const pick = <T>(all: T[]): T[] => idx.map((i) => all[i]!);
  const records = pick(chunk.records());
  return {
    seq: chunk.seq,
    lines: pick(chunk.lines),
    body: stringifyJson(records)!,
    records: () => records,
    raws: () => pick(chunk.raws()),
  };
}

/**
 * Rows of several answered chunks as one chunk (the first one's number), in order: its body their bodies joined, so
 * the rows of one chunk are the body an earlier crm sent them again in, byte for byte (its key).
 */
export function resentChunk(parts: readonly Resend[]): Chunk {
  const subs = parts.map((p) => subChunk(p.whole, p.idx));
  if (subs.length === 1) return subs[0]!;
  return {
    seq: subs[0]!.seq,
    lines: subs.flatMap((s) => s.lines),
    body: `[${subs.map((s) => s.body.slice(1, -1)).join(',')}]`,
    records: () => subs.flatMap((s) => s.records()),
    raws: () => subs.flatMap((s) => s.raws()),
  };
}

/** The answer to rows of several chunks sent again together (resentChunk), each chunk's part merged into its own. */
export function mergeAnswers(parts: readonly Resend[], ids: Array<string | null>, rejects: ChunkReject[]): Answer[] {
  let at = 0;
  return parts.map((part) => {
    const [from, to] = [at, (at += part.idx.length)];
    const own = rejects.filter((r) => r.i >= from && r.i < to).map((r) => ({ ...r, i: r.i - from }));
    return mergeAnswer(part, ids.slice(from, to), own);
  });
}

/** The answer to the rows sent again, merged into the earlier answer of the whole chunk. */
export function mergeAnswer(resend: Resend, ids: Array<string | null>, rejects: ChunkReject[]): Answer {
  const { idx, done } = resend;
  const merged = [...done.ids];
  idx.forEach((at, j) => (merged[at] = ids[j] ?? null));
  const kept = done.rejects.filter((r) => !idx.includes(r.i));
  const moved = rejects.map((r) => ({ ...r, i: idx[r.i]! }));
  return { ids: merged, rejects: [...kept, ...moved].sort((a, b) => a.i - b.i) };
}
