// Where each row's outcome goes in the sending pass (dispatch.ts): rows never sent (invalid; reconcile's duplicate
// keys, unchanged and ambiguous rows) and the rows of an answered chunk → the counters, the reasons, and the
// rejects, unknown, results and ambiguous files.
import { type Counters } from '../types.js';
import { DUPLICATE_KEY, NO_RESULT_CODE, type ChunkReject } from '../shapes.js';
import type { Outputs } from '../files/outputs.js';
import type { MatchFiles } from '../files/way-back.js';
import type { ReasonTally } from './reasons.js';
import type { SpooledChunk, SpooledInvalid, SpooledSettled } from '../check/spool.js';

export class RowFiles {
  constructor(
    private readonly c: Counters,
    private readonly reasons: ReasonTally,
    private readonly files: Outputs & { match?: MatchFiles },
  ) {}

  /** An invalid row, found by the check pass (or a key repeating an earlier row's, by the match stage): to the rejects file. Returns the invalid rows so far. */
  unsent(row: SpooledInvalid): number {
    this.c.rows++;
    if (row.code === DUPLICATE_KEY) this.c.duplicate++;
    else this.c.invalid++;
    this.reasons.add(row.code, row.reason);
    this.files.rejects.add(row.raw, row.line, row.code, row.reason);
    return this.c.invalid;
  }

  /** Reconcile: a row needing no request (its record already agrees, or two records have its key). */
  settled(row: SpooledSettled): void {
    this.c.rows++;
    if (row.action === 'unchanged') this.c.unchanged++;
    // an interrupted run of this job made it so, and it still is
    else if (row.action === 'done') this.c.skipped++;
    // the first row of its key again, exactly: skipped, as a plain import skips a repeated row
    else if (row.action === 'repeated') {
      this.c.skipped++;
      this.c.repeated++;
    } else {
      this.c.ambiguous++;
      this.files.match?.ambiguous.add(row.raw, row.line, row.ids);
    }
  }

  /** Each row's outcome: an id to the results file, an error to the rejects or the unknown file. */
  answered(chunk: SpooledChunk, ids: Array<string | null>, rejects: ChunkReject[], tally = true): void {
    const { files } = this;
    if (tally) for (const r of rejects) this.reasons.add(r.code, r.message);
    if (rejects.length === 0 && !files.results) return;
    const byIndex = new Map(rejects.map((r) => [r.i, r]));
    const raws = chunk.raws();
    chunk.lines.forEach((line, i) => {
      const id = ids[i];
      const r = byIndex.get(i);
      if (r?.code === NO_RESULT_CODE) this.c.unknown++;
      if (id !== null && id !== undefined) files.results?.add(raws[i]!, line, id);
      if (r) (r.code === NO_RESULT_CODE ? files.unknown : files.rejects).add(raws[i]!, line, r.code, r.message);
    });
  }
}
