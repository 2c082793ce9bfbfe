// The check stage (engine.ts): the one pass over the whole file before anything is sent (scan.ts), which also cuts
// the chunks and spools them (spool.ts); --strict refuses a file with invalid rows here.
import { UsageError, InterruptedError } from '../../http/errors.js';
import { count } from '../../output/plural.js';
import type { StageDeps } from '../types.js';
import type { InvalidRow } from '../shapes.js';
import type { CheckSlice } from '../plan.js';
import { scanInput, type ScanResult } from './scan.js';
import type { Spool } from './spool.js';

/** The first pass: the whole file read and checked; `sha`: the content's hash, when the earlier stage computed it. */
export async function check(
  slice: CheckSlice,
  given: { sha?: string; spool?: Spool },
  deps: StageDeps,
): Promise<ScanResult> {
  const { input } = slice;
  const scan = await scanInput(input.path, {
    ...{
      format: slice.format,
      name: input.name,
      maps: slice.maps,
      chunkSize: slice.chunkSize,
      encoding: input.encoding,
    },
    ...{ signal: deps.signal, warn: deps.warn, sha: given.sha, op: slice.op, spool: given.spool },
    // reconcile: every valid row an entry of its own (repeated keys are the match stage's), and the fields it keeps
    ...{ rowsOnly: slice.match !== undefined, keep: slice.match?.keep },
    onRow: (rows, bytes) => deps.report('check', { rows, bytes }, null),
  });
  if (deps.signal?.aborted) throw new InterruptedError('interrupted before anything was sent');
  if (slice.strict && scan.invalid > 0) {
    throw new UsageError(
      `${input.name}: ${count(scan.invalid)} of ${count(scan.rows)} rows are invalid; nothing was sent (--strict)\n${listInvalid(scan.firstInvalid)}`,
    );
  }
  return scan;
}

export function listInvalid(rows: readonly InvalidRow[]): string {
  return rows.map((r) => `  line ${r.line}: ${r.reason}`).join('\n');
}
