// The check stage (engine.ts): the one pass over the whole file before anything is sent (scan.ts), which also
// cuts the chunks and spools them (spool.ts); --strict refuses a file with invalid rows here.
import { UsageError, InterruptedError } from '../../http/errors.js';
import { count } from '../../output/plural.js';
import { listInvalid } from '../plan.js';
import { progress, summaryOf, withSummary, type Run } from '../run.js';
import { scanInput, type ScanResult } from './scan.js';

/** The first pass: the whole file is read and checked before anything is sent. */
export async function check(run: Run): Promise<ScanResult> {
  const { job, deps, input } = run;
  const scan = await scanInput(input.path, {
    format: job.format,
    name: input.name,
    maps: job.maps,
    chunkSize: job.chunkSize,
    signal: deps.signal,
    encoding: input.encoding,
    warn: deps.warn,
    sha: run.sha,
    op: job.operation,
    spool: run.spool,
    rowsOnly: job.match !== undefined,
    // --match sends owner_id in an update (a create leaves it out: match/stage.ts), and keeps id for --match id
    keep: job.match ? ['owner_id', ...job.match.fields.filter((f) => f === 'id')] : undefined,
    onRow: (rows, bytes) => progress(run, 'check', { rows, bytes }, null),
  });
  if (deps.signal?.aborted) throw withSummary(new InterruptedError('interrupted before anything was sent'), summaryOf(run));
  if (job.strict && scan.invalid > 0) {
    throw new UsageError(
      `${input.name}: ${count(scan.invalid)} of ${count(scan.rows)} rows are invalid; nothing was sent (--strict)\n${listInvalid(scan.firstInvalid)}`,
    );
  }
  return scan;
}
