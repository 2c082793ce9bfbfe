// The prepare stage (engine.ts) and the parts of an import decided before any row is sent: the options
// checked and resolved once into the Run, the input made ready, the --strict message, and the --dry-run plan.
import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { BATCH_MAX, findResource } from '../api/resources.js';
import { UsageError } from '../http/errors.js';
import type { ImportDeps, ImportOptions, ImportSummary, PlanColumn } from './engine-types.js';
import { parseColumnMaps, type ColumnMap, type ColumnSpec } from './input/header.js';
import { detectFormat } from './input/reader.js';
import { prepareInput, readHead, type PreparedInput } from './input/source.js';
import { defaultRejectsPath, unknownPathFor } from './send/outputs.js';
import type { Job, Run } from './run.js';
import { updateOperation, type RowOperation } from './operation.js';
import type { InputFormat } from './input/input-row.js';
import type { InvalidRow, ScanResult } from './check/scan.js';

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

/** The prepare stage: the options checked and resolved once into the job plan (`Run.job`), the input made ready. */
export async function prepare(opts: ImportOptions, deps: ImportDeps): Promise<Run> {
  const started = deps.clock.now();
  const sizes = checkOptions(opts);
  const maps = parseColumnMaps(opts.maps);
  const { encoding, signal, stdin } = { ...opts, ...deps };
  const input = await prepareInput(opts.input, { stdin, tmpDir: deps.journalDir ?? tmpdir(), encoding, signal });
  try {
    const format = opts.format ?? detectFormat(input.name);
    // a default-CSV file starting with `{` is refused, pointing at --input-format: the format is never guessed
    const head = opts.format === undefined && format === 'csv' ? await readHead(input.path).catch(() => Buffer.alloc(0)) : undefined;
    if (head && /^\s*\{/.test(head.toString('utf8', 0, 256).replace(/^\ufeff/, ''))) throw looksLikeNdjson(input);
    const name = input.isStdin ? '-' : input.name;
    const rejectsPath = opts.rejectsPath ?? defaultRejectsPath(name, format, started, deps.cwd ?? process.cwd(), opts.operation?.tag);
    // an unreadable input is reported by the scan, as a usage error naming it
    const st = await stat(input.path).catch(() => undefined);
    const [size, mtimeMs] = [st?.size ?? 0, st?.mtimeMs ?? 0];
    const { resource, operation, baseUrl, keyId, keyMask, resultsPath } = opts;
    const job: Job = {
      ...{ resource, operation, baseUrl, keyId, keyMask, format, ...sizes, maps, resultsPath },
      options: optionsOf({ maps, chunkSize: sizes.chunkSize, operation, format: opts.format }),
      rejectsPath,
      unknownPath: unknownPathFor(rejectsPath),
      journalRejectsPath: opts.rejectsPath ?? defaultRejectsPath(input.name, format, started, '', operation?.tag),
      ...{ dryRun: opts.dryRun === true, strict: opts.strict === true, resume: opts.resume !== false },
      maxConsecutiveFailures: opts.maxConsecutiveFailures ?? 5,
      match: opts.match && { fields: opts.match.fields, planPath: opts.planPath, update: updateOperation(resource) },
    };
    return { job, deps, started, input, size, mtimeMs };
  } catch (err) {
    await input.cleanup();
    throw err;
  }
}

function looksLikeNdjson(input: PreparedInput): UsageError {
  const why = input.isStdin
    ? 'standard input is read as CSV unless --input-format says otherwise'
    : 'its name does not end in .ndjson or .jsonl';
  return new UsageError(
    `${input.name === '-' ? 'standard input' : input.name} starts with "{" like NDJSON, but would be read as CSV (${why}); nothing was sent`,
    { hint: 'say which with --input-format ndjson (or --input-format csv to read it as CSV)' },
  );
}

/**
 * The options that change what is sent, as part of the job (issue 17): a run with another --map (or
 * --id-column), --chunk-size or --input-format is another job with its own journal and keys. Undefined
 * for the defaults, so the journals of runs without them keep their names.
 */
export function optionsOf(o: { maps: ColumnMap; chunkSize: number; operation?: RowOperation; format?: InputFormat }): string | undefined {
  const { maps, chunkSize, format } = o;
  const defaultSize = o.operation !== undefined || chunkSize === BATCH_MAX;
  if (maps.size === 0 && defaultSize && format === undefined) return undefined;
  const sorted = [...maps.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return createHash('sha256')
    .update(JSON.stringify({ maps: sorted, chunkSize, format: format ?? null }))
    .digest('hex')
    .slice(0, 16);
}
