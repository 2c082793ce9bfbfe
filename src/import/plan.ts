// The parts of an import decided before any row is sent: the options' limits, the --strict
// message, and the --dry-run plan.
import { BATCH_MAX, findResource } from '../api/resources.js';
import { UsageError } from '../http/errors.js';
import type { ImportDeps, ImportOptions, ImportSummary } from './engine-types.js';
import { ImportJournal } from './journal.js';
import type { JournalIdentity } from './journal-identity.js';
import type { InvalidRow, ScanResult } from './scan.js';

export interface ImportPlan {
  rows: number;
  valid: number;
  invalid: number;
  chunks: number;
  chunk_size: number;
  concurrency: number;
  /** chunks an earlier run finished, which would be skipped */
  finished_chunks: number;
  first_invalid: InvalidRow[];
}

export function listInvalid(rows: readonly InvalidRow[]): string {
  return rows.map((r) => `  line ${r.line}: ${r.reason}`).join('\n');
}

export function checkOptions(opts: ImportOptions): { chunkSize: number; concurrency: number } {
  const def = findResource(opts.resource);
  if (!def || !def.batch) {
    throw new UsageError(`${opts.resource} cannot be batch-created`, {
      hint: 'batch works for contacts, companies, deals, pipelines, tasks, notes, segments and interactions',
    });
  }
  const chunkSize = opts.chunkSize ?? BATCH_MAX;
  if (!Number.isInteger(chunkSize) || chunkSize < 1 || chunkSize > BATCH_MAX) {
    throw new UsageError(`--chunk-size must be a whole number from 1 to ${BATCH_MAX}`);
  }
  const concurrency = opts.concurrency ?? 4;
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64) {
    throw new UsageError('--concurrency must be a whole number from 1 to 64');
  }
  return { chunkSize, concurrency };
}

export async function dryRunSummary(
  opts: ImportOptions,
  deps: ImportDeps,
  scan: ScanResult,
  identity: JournalIdentity,
  base: ImportSummary,
  sizes: { chunkSize: number; concurrency: number },
): Promise<ImportSummary> {
  const journal =
    deps.journalDir && opts.resume !== false ? await ImportJournal.peek(deps.journalDir, identity).catch(() => undefined) : undefined;
  return {
    ...base,
    rows: scan.rows,
    invalid: scan.invalid,
    plan: {
      rows: scan.rows,
      valid: scan.valid,
      invalid: scan.invalid,
      chunks: Math.ceil(scan.valid / sizes.chunkSize),
      chunk_size: sizes.chunkSize,
      concurrency: sizes.concurrency,
      finished_chunks: journal?.size ?? 0,
      first_invalid: scan.firstInvalid,
    },
  };
}
