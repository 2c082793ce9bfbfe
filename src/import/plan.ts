// The plan stage (engine.ts): the command's options checked and resolved once into a frozen Plan, the input made
// ready. Every later stage takes its own slice of the plan and nothing else of the options: which files the run
// writes, how rows are read and cut into chunks, the job's identity (the journal's name, every key), the match.
import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import { BATCH_MAX, findResource } from '../api/resources.js';
import { UsageError } from '../http/errors.js';
import type { ImportDeps, ImportOptions } from './types.js';
import type { InputFormat, JournalIdentity, RowOperation } from './shapes.js';
import { parseColumnMaps, type ColumnMap } from './input/header.js';
import { detectFormat } from './input/reader.js';
import { prepareInput, readHead, type PreparedInput } from './input/source.js';
import { updateOperation } from './operation.js';
import { fileStamp } from '../util/stamp.js';

/** The job without its content: with the content's hash, the journal's identity (journal/journal.ts). */
export type Job = Omit<JournalIdentity, 'contentSha256'>;

/** The input, ready to be read more than once; its size and mtime before it was first read (compared before sending). */
export interface PlannedInput extends PreparedInput {
  size: number;
  mtimeMs: number;
  /** the absolute path of the file the user named (`-` for a stream): a changed file at the same place is recognised */
  id: string;
}

/** What the check stage reads (check/check.ts). */
export interface CheckSlice {
  readonly input: PlannedInput;
  readonly format: InputFormat;
  readonly maps: ColumnMap;
  /** rows per request (1 for an operation) */
  readonly chunkSize: number;
  readonly strict: boolean;
  readonly op?: RowOperation;
  /** reconcile: every valid row an entry of its own, and the fields kept though the server sets them */
  readonly match?: { readonly keep: readonly string[]; readonly fields: readonly string[] };
  /** every row a record of its own (a restore's snapshot records): none skipped as repeating an earlier one */
  readonly everyRow?: boolean;
}

/** What the match stage reads (match/match.ts): reconcile's fields, `--plan FILE`, the rows' mapping. */
export interface MatchSlice {
  readonly resource: string;
  readonly fields: readonly string[];
  readonly planPath?: string;
  readonly chunkSize: number;
  readonly maps: ColumnMap;
  readonly input: PlannedInput;
  readonly dryRun: boolean;
}

/** What the earlier and journal stages read (journal/): the job, where its journals are, the files it writes. */
export interface JournalSlice {
  readonly job: Job;
  /** the journal folder; undefined: no journal */
  readonly dir?: string;
  readonly input: PlannedInput;
  readonly started: number;
  readonly resume: boolean;
  readonly dryRun: boolean;
  readonly strict: boolean;
  readonly match: boolean;
  readonly op?: RowOperation;
  readonly rejectsPath: string;
  readonly unknownPath: string;
  /** the rejects file as a journal's header names it (no cwd: a stdin import's stamped name), for the rerun checks */
  readonly journalRejectsPath: string;
  readonly resultsPath?: string;
  /** a delete's backup file (absolute), kept in a new journal's header */
  readonly backup?: string;
  /** other files of this run beside the rejects file, whose temporary copies a killed run left (reconcile's) */
  readonly otherFiles: readonly string[];
}

/** What the send stage reads (send/send.ts). */
export interface SendSlice {
  readonly resource: string;
  readonly baseUrl: string;
  readonly input: PlannedInput;
  readonly maps: ColumnMap;
  readonly chunkSize: number;
  readonly concurrency: number;
  /** stop after this many chunks fail in a row */
  readonly maxConsecutiveFailures: number;
  readonly op?: RowOperation;
  readonly rejectsPath: string;
  readonly unknownPath: string;
  readonly resultsPath?: string;
  /** reconcile: its updates are rows of this update; its way back beside `base` (`people.csv.undo.csv`) */
  readonly match?: {
    readonly fields: readonly string[];
    readonly update: RowOperation;
    readonly base: string;
    /** standard input: the base of the job that began at that time (a resumed job adds to its files) */
    readonly baseAt?: (began: number) => string;
  };
}

/** What the finish stage reads (finish.ts). */
export interface FinishSlice {
  readonly resource: string;
  readonly op?: RowOperation;
  readonly chunkSize: number;
  readonly concurrency: number;
  readonly started: number;
  readonly input: PlannedInput;
}

/** A run's plan: resolved once, frozen, a slice per stage. */
export interface Plan {
  readonly input: PlannedInput;
  readonly check: CheckSlice;
  readonly match?: MatchSlice;
  readonly journal: JournalSlice;
  readonly send: SendSlice;
  readonly finish: FinishSlice;
}

/** The plan stage: the options checked and resolved once, the input made ready (its copy removed by the engine). */
export async function prepare(opts: ImportOptions, deps: ImportDeps): Promise<Plan> {
  const started = deps.clock.now();
  const { chunkSize, concurrency } = checkOptions(opts);
  const maps = parseColumnMaps(opts.maps);
  const { encoding, signal, stdin } = { ...opts, ...deps };
  const prepared = await prepareInput(opts.input, { stdin, tmpDir: deps.journalDir ?? tmpdir(), encoding, signal });
  try {
    const format = opts.format ?? detectFormat(prepared.name);
    // a default-CSV file starting with `{` is refused, pointing at --input-format: the format is never guessed
    const head =
      opts.format === undefined && format === 'csv'
        ? await readHead(prepared.path).catch(() => Buffer.alloc(0))
        : undefined;
    if (head && /^\s*\{/.test(head.toString('utf8', 0, 256).replace(/^\ufeff/, ''))) throw looksLikeNdjson(prepared);
    // an unreadable input is reported by the scan, as a usage error naming it
    const st = await stat(prepared.path).catch(() => undefined);
    const id = prepared.isStdin ? '-' : resolve(prepared.origin);
    const input: PlannedInput = Object.freeze({ ...prepared, size: st?.size ?? 0, mtimeMs: st?.mtimeMs ?? 0, id });
    const { resource, operation: op, baseUrl, keyId, keyMask, resultsPath } = opts;
    const dryRun = opts.dryRun === true;
    const strict = opts.strict === true;
    const name = input.isStdin ? '-' : input.name;
    const rejectsPath =
      opts.rejectsPath ?? defaultRejectsPath(name, format, started, deps.cwd ?? process.cwd(), op?.tag);
    const unknownPath = unknownPathFor(rejectsPath);
    const fields = opts.match?.fields;
    // reconcile's files sit beside the input (stdin: beside its stamped rejects file)
    const beside = (rejects: string) => rejects.replace(/\.rejects\.(csv|ndjson)$/, '');
    const base = input.isStdin ? beside(rejectsPath) : input.origin;
    const cwd = deps.cwd ?? process.cwd();
    const baseAt =
      input.isStdin && !opts.rejectsPath
        ? { baseAt: (began: number) => beside(defaultRejectsPath(name, format, began, cwd, op?.tag)) }
        : {};
    const match = fields && { fields, update: updateOperation(resource), base, ...baseAt };
    // a reconcile is a job of its own, per match fields: never the journal of a create of the same file
    const described = op ? op.describe : fields ? `match ${fields.join(',')}` : undefined;
    const options = optionsOf({ maps, chunkSize, operation: op, format: opts.format });
    const job: Job = {
      ...{ resource, baseUrl, ...(keyId ? { keyId } : {}), ...(keyMask ? { keyMask } : {}) },
      ...(described ? { operation: described } : {}),
      ...(options ? { options } : {}),
    };
    const files = { rejectsPath, unknownPath, resultsPath };
    return deepFreeze({
      input,
      check: { input, format, maps, chunkSize, strict, op, everyRow: opts.everyRow, ...matchCheck(fields) },
      ...(fields ? { match: { resource, fields, planPath: opts.planPath, chunkSize, maps, input, dryRun } } : {}),
      journal: {
        ...{
          job,
          dir: deps.journalDir,
          input,
          started,
          resume: opts.resume !== false,
          dryRun,
          strict,
          match: fields !== undefined,
        },
        ...{
          op,
          ...files,
          journalRejectsPath: opts.rejectsPath ?? defaultRejectsPath(input.name, format, started, '', op?.tag),
        },
        ...(opts.backupPath ? { backup: resolve(deps.cwd ?? process.cwd(), opts.backupPath) } : {}),
        otherFiles: fields ? [`${base}.ambiguous.csv`] : [],
      },
      send: {
        ...{ resource, baseUrl, input, maps, chunkSize, concurrency, op, ...files, match },
        maxConsecutiveFailures: opts.maxConsecutiveFailures ?? 5,
      },
      finish: { resource, op, chunkSize, concurrency, started, input },
    });
  } catch (err) {
    await prepared.cleanup();
    throw err;
  }
}

/** --match sends owner_id in an update (a create leaves it out: match/plan-rows.ts), and keeps id for --match id. */
/** What the check pass of a reconcile needs: the fields it keeps though the server sets them, and the match fields (checked against the header). */
/** a reconcile's (none without --match fields): `{ match }` for the check slice */
const matchCheck = (fields: readonly string[] | undefined) =>
  fields ? { match: { keep: ['owner_id', ...fields.filter((f) => f === 'id')], fields } } : {};

/** The plan's objects frozen (a Map stays as it is: a ColumnMap is read-only by type). */
function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value) && !(value instanceof Map)) {
    for (const v of Object.values(value)) if (typeof v !== 'function') deepFreeze(v);
    Object.freeze(value);
  }
  return value;
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
export function optionsOf(o: {
  maps: ColumnMap;
  chunkSize: number;
  operation?: RowOperation;
  format?: InputFormat;
}): string | undefined {
  const { maps, chunkSize, format } = o;
  const defaultSize = o.operation !== undefined || chunkSize === BATCH_MAX;
  if (maps.size === 0 && defaultSize && format === undefined) return undefined;
  const sorted = [...maps.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return createHash('sha256')
    .update(JSON.stringify({ maps: sorted, chunkSize, format: format ?? null }))
    .digest('hex')
    .slice(0, 16);
}

/** `people.csv.rejects.csv` → `people.csv.unknown.csv`, `out.csv` → `out.unknown.csv`. */
export function unknownPathFor(rejectsPath: string): string {
  return rejectsPath.replace(
    /(\.rejects)?(\.[^./\\]*)?$/,
    (_m, _r: string | undefined, ext: string | undefined) => `.unknown${ext ?? ''}`,
  );
}

/** The default rejects file (CONTRACT §7): `<input>.rejects.csv`; for stdin `crm-rejects-<time>.csv` in `cwd`. */
export function defaultRejectsPath(input: string, format: InputFormat, now: number, cwd: string, tag?: string): string {
  const ext = format === 'ndjson' ? 'ndjson' : 'csv';
  if (input !== '-') return `${input}${tag ? `.${tag}` : ''}.rejects.${ext}`;
  return join(cwd, `crm-rejects-${fileStamp(now)}.${ext}`);
}
