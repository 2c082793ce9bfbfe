// The parts of an import decided before any row is sent: the options' limits, the --strict
// message, and the --dry-run plan.
import { BATCH_MAX, findResource } from '../api/resources.js';
import { UsageError } from '../http/errors.js';
import type { ImportOptions, ImportSummary, PlanColumn } from './engine-types.js';
import type { ColumnSpec } from './header.js';
import type { InvalidRow, ScanResult } from './scan.js';

export function listInvalid(rows: readonly InvalidRow[]): string {
  return rows.map((r) => `  line ${r.line}: ${r.reason}`).join('\n');
}

export function checkOptions(opts: ImportOptions): { chunkSize: number; concurrency: number } {
  const def = findResource(opts.resource);
  // an update, delete or link is one row per request; the command checked the resource has the verb
  if (opts.operation) return { chunkSize: 1, concurrency: checkConcurrency(opts.concurrency) };
  if (!def || !def.batch) {
    throw new UsageError(`${opts.resource} cannot be batch-created`, {
      hint: 'batch works for contacts, companies, deals, pipelines, tasks, notes, segments and interactions',
    });
  }
  const chunkSize = opts.chunkSize ?? BATCH_MAX;
  if (!Number.isInteger(chunkSize) || chunkSize < 1 || chunkSize > BATCH_MAX) {
    throw new UsageError(`--chunk-size must be a whole number from 1 to ${BATCH_MAX}`);
  }
  return { chunkSize, concurrency: checkConcurrency(opts.concurrency) };
}

function checkConcurrency(concurrency = 4): number {
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64) {
    throw new UsageError('--concurrency must be a whole number from 1 to 64');
  }
  return concurrency;
}

export function dryRunSummary(
  base: ImportSummary,
  scan: ScanResult,
  sizes: { chunkSize: number; concurrency: number },
  finishedChunks: number,
): ImportSummary {
  const { rows, valid, invalid, firstInvalid } = scan;
  // a create's rows repeating an earlier row are not sent
  const chunks = Math.ceil((valid - scan.repeated) / sizes.chunkSize);
  const plan = { rows, valid, invalid, repeated: scan.repeated, chunks, chunk_size: sizes.chunkSize, concurrency: sizes.concurrency };
  const requests = base.operation ? { first_requests: scan.firstRequests } : {};
  const mapping = scan.mapping ? { mapping: scan.mapping.columns.map(planColumn) } : {};
  return { ...base, rows, invalid, plan: { ...plan, finished_chunks: finishedChunks, first_invalid: firstInvalid, ...requests, ...mapping } };
}

export function planColumn(c: ColumnSpec): PlanColumn {
  return { column: c.column.trim(), field: c.ignored ? null : c.field, type: c.type, ignored: c.ignored, read_only: c.readOnly === true };
}
