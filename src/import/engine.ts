// `crm batch RESOURCE FILE` (CONTRACT §7): check the whole file first (hash, header, invalid rows,
// malformed CSV: all before anything is sent), then send it in chunks (dispatch.ts), journaled so a
// rerun resumes. Returns the summary; the command prints it and picks the exit code (importExitCode).
//
// No duplicate, no loss — the argument:
// - Rows → chunks is deterministic (file content + chunk size + mapping, the last two pinned by
//   the journal), and each chunk's Idempotency-Key is a hash of its exact body.
// - A chunk is journaled (fsync) only after its batch answer arrived, with each row's id or error.
//   A rerun never sends a journaled chunk again, even if the server forgot its keys.
// - Any other chunk (never sent, in flight at a crash, failed after its retries) is sent again by
//   the rerun with the same body and so the same key: a server that did create its rows answers
//   from its idempotency cache (24 h) instead of creating them again. That is the one limit: a
//   chunk in flight at a crash, rerun after the server forgot its key, is created twice. Chunks
//   are journaled as `sent` before their request, so the rerun warns when there were any.
// - The same file path changed since an earlier import (same resource, base URL, key) that sent
//   anything is refused: its rows would fall into new chunks with new keys (--no-resume overrides).
// - Every data row ends up created, rejected (rejects file, with a reason), or, when the run is
//   interrupted or stops on a fatal error, pending for the rerun, which is told in the error.
import { resolve } from 'node:path';
import { tmpdir } from 'node:os';
import { access, stat } from 'node:fs/promises';
import { inspect } from 'node:util';
import { InterruptedError, UsageError } from '../http/errors.js';
import type { ImportDeps, ImportOptions, ImportProgress, ImportSummary } from './engine-types.js';
import { finishedImport } from './finished.js';
import { plural } from '../output/plural.js';
import { dispatchRows, type Counters } from './dispatch.js';
import { parseColumnMaps } from './header.js';
import { removeStaleTemps } from './fs-util.js';
import { ImportJournal } from './journal.js';
import { journalPath, type JournalIdentity } from './journal-identity.js';
import { refuseUnsafeRerun } from './journal-earlier.js';
import { pruneJournals } from './journal-prune.js';
import { checkOptions, dryRunSummary, listInvalid } from './plan.js';
import { detectFormat, startsLikeJson } from './reader.js';
import { createRejectsWriter, defaultRejectsPath, unknownPathFor } from './rejects.js';
import { createResultsWriter } from './results.js';
import { scanInput } from './scan.js';
import { prepareInput } from './source.js';
import { UTF8 } from './encoding.js';

export type { ImportDeps, ImportOptions, ImportPlan, ImportProgress, ImportSummary } from './engine-types.js';

/** 0 when every row was created (or had been), 9 when any failed or was invalid. */
export function importExitCode(s: ImportSummary): 0 | 9 {
  return s.failed > 0 || s.invalid > 0 ? 9 : 0;
}

/** The summary of a run that ended with an error (interrupted, fatal), attached to the error. */
export function importSummaryOf(err: unknown): ImportSummary | undefined {
  return (err as { importSummary?: ImportSummary } | null)?.importSummary;
}

export async function runImport(opts: ImportOptions, deps: ImportDeps): Promise<ImportSummary> {
  const started = deps.clock.now();
  const { chunkSize, concurrency } = checkOptions(opts);
  const maps = parseColumnMaps(opts.maps);
  const input = await prepareInput(opts.input, {
    stdin: deps.stdin,
    tmpDir: deps.journalDir ?? tmpdir(),
    encoding: opts.encoding,
    signal: deps.signal,
  });
  try {
    const format = opts.format ?? detectFormat(input.name);
    if (opts.format === undefined && format === 'csv' && (await startsLikeJson(input.path))) {
      const why = input.isStdin
        ? 'standard input is read as CSV unless --input-format says otherwise'
        : 'its name does not end in .ndjson or .jsonl';
      throw new UsageError(
        `${input.name === '-' ? 'standard input' : input.name} starts with "{" like NDJSON, but would be read as CSV (${why}); nothing was sent`,
        {
          hint: 'say which with --input-format ndjson (or --input-format csv to read it as CSV)',
        },
      );
    }
    // a copied stream (stdin, a pipe) has no file beside which its rejects file could go
    const rejectsBase = input.isStdin ? '-' : input.name;
    const progress = (phase: ImportProgress['phase'], c: Partial<Counters>, total: number | null, bytesTotal: number): void =>
      deps.onProgress?.({
        phase,
        rowsTotal: total,
        rows: c.rows ?? 0,
        created: c.created ?? 0,
        failed: c.failed ?? 0,
        invalid: c.invalid ?? 0,
        skipped: c.skipped ?? 0,
        chunks: c.chunks ?? 0,
        inFlight: c.inFlight ?? 0,
        bytes: c.bytes ?? 0,
        bytesTotal,
        elapsedMs: deps.clock.now() - started,
      });
    // a finished import: answered from the file's hash and the journal's last line, without
    // parsing the file or reading the rest of the journal
    const finished = await finishedImport(opts, deps, input, format, started);
    if (finished) return finished;
    // an unreadable input is reported by the scan, as a usage error naming it
    const size = await stat(input.path).then(
      (st) => st.size,
      () => 0,
    );
    const scan = await scanInput(input.path, {
      format,
      name: input.name,
      maps,
      chunkSize,
      signal: deps.signal,
      encoding: input.encoding,
      warn: deps.warn,
      onRow: (rows, bytes) => progress('check', { rows, bytes }, null, size),
    });
    const identity: JournalIdentity = {
      contentSha256: scan.contentSha256,
      resource: opts.resource,
      baseUrl: opts.baseUrl,
      ...(opts.keyId ? { keyId: opts.keyId } : {}),
      ...(opts.keyMask ? { keyMask: opts.keyMask } : {}),
    };
    const summary = (c?: Counters, rejectsFile: string | null = null, unknownFile: string | null = null): ImportSummary => ({
      resource: opts.resource,
      rows: c?.rows ?? 0,
      created: c?.created ?? 0,
      failed: c?.failed ?? 0,
      invalid: c?.invalid ?? 0,
      skipped: c?.skipped ?? 0,
      chunks: c?.chunks ?? 0,
      requests: c?.requests ?? 0,
      retries: c?.retries ?? 0,
      elapsed_ms: deps.clock.now() - started,
      rejects_file: rejectsFile,
      in_doubt: c?.inDoubt ?? 0,
      unknown: c?.unknown ?? 0,
      unknown_file: unknownFile,
    });
    if (deps.signal?.aborted) throw withSummary(new InterruptedError('interrupted before anything was sent'), summary());
    if (opts.strict && scan.invalid > 0) {
      throw new UsageError(
        `${input.name}: ${scan.invalid} of ${scan.rows} rows are invalid; nothing was sent (--strict)\n${listInvalid(scan.firstInvalid)}`,
      );
    }
    if (opts.dryRun) return await dryRunSummary(opts, deps, scan, identity, summary(), { chunkSize, concurrency });

    const rejectsPath = opts.rejectsPath ?? defaultRejectsPath(rejectsBase, format, started, deps.cwd ?? process.cwd());
    const unknownPath = unknownPathFor(rejectsPath);
    for (const [flag, p] of [
      ['--rejects', rejectsPath],
      ['--rejects', unknownPath],
      ['--results', opts.resultsPath],
    ] as const) {
      if (p !== undefined && !input.isStdin && resolve(p) === resolve(input.origin)) {
        throw new UsageError(`${flag} names the input file itself`);
      }
    }
    if (opts.resultsPath !== undefined && [rejectsPath, unknownPath].some((p) => resolve(p) === resolve(opts.resultsPath!))) {
      throw new UsageError('--results and the rejects file must be different files');
    }
    const journalDir = deps.journalDir;
    const resume = opts.resume !== false;
    // leftovers of killed runs: half-written rejects/results files (copies of user data)
    await removeStaleTemps(rejectsPath, started, /^crm-rejects-\d{8}T\d{6}Z\.(csv|ndjson)$/).catch(() => 0);
    await removeStaleTemps(unknownPath, started, /^crm-rejects-\d{8}T\d{6}Z\.unknown\.(csv|ndjson)$/).catch(() => 0);
    if (opts.resultsPath !== undefined) await removeStaleTemps(opts.resultsPath, started).catch(() => 0);
    if (journalDir) {
      await pruneJournals(journalDir, started, { keep: journalPath(journalDir, identity) }).catch(() => 0);
    }
    // files by absolute path, so a changed file at the same place can be recognised (stdin: '-')
    const inputId = input.isStdin ? '-' : resolve(input.origin);
    if (journalDir) {
      await refuseUnsafeRerun({
        dir: journalDir,
        identity,
        input: inputId,
        name: input.name,
        resume,
        rejectsPath: opts.rejectsPath ?? `${input.name}.rejects.${scan.format === 'ndjson' ? 'ndjson' : 'csv'}`,
        hasOwnJournal: () => ImportJournal.exists(journalDir, identity),
      });
    }
    const journal = journalDir
      ? await ImportJournal.open(journalDir, identity, {
          plan: scan.plan,
          resume,
          input: inputId,
          now: started,
        }).catch((err: unknown) => {
          if (err instanceof UsageError) throw err;
          throw new UsageError(`cannot write the import journal in ${journalDir}: ${(err as Error).message}`, {
            cause: err,
            hint: 'CRM_CONFIG_DIR chooses another config folder',
          });
        })
      : undefined;
    const compacted = journal?.completed?.compacted ? journal.completed : undefined;
    if (journal && compacted) {
      // finished long ago and cut down by pruning: it still says the file was imported (nothing is
      // sent again), but the ids and item errors are gone
      await journal.close().catch(() => undefined);
      if (opts.resultsPath !== undefined) {
        throw new UsageError(
          `${input.name} was already imported into ${opts.resource} (${compacted.at}); its journal has since been compacted, so the ids for --results are no longer kept. Nothing was sent.`,
          { hint: 'the ids can be looked up in the CRM; --no-resume imports the file again (every row created again)' },
        );
      }
      deps.warn?.(
        `${input.name} was already imported into ${opts.resource} (${compacted.at}): nothing will be sent; use --no-resume to import it again`,
      );
      const unknown = compacted.unknown ?? 0;
      const kept = await access(rejectsPath).then(
        () => true,
        () => false,
      );
      const keptUnknown =
        unknown > 0 &&
        (await access(unknownPath).then(
          () => true,
          () => false,
        ));
      return {
        ...summary(),
        rows: compacted.rows ?? scan.rows,
        skipped: compacted.created ?? 0,
        failed: compacted.failed ?? 0,
        invalid: compacted.invalid ?? scan.invalid,
        rejects_file: kept && (compacted.failed ?? 0) + (compacted.invalid ?? 0) - unknown > 0 ? rejectsPath : null,
        unknown,
        unknown_file: keptUnknown ? unknownPath : null,
      };
    }
    if (journal?.completedAt) {
      deps.warn?.(
        `${input.name} was already imported into ${opts.resource} (${journal.completedAt}): nothing will be sent; use --no-resume to import it again`,
      );
    } else if (journal && journal.resumedChunks > 0) {
      const n = journal.resumedChunks;
      deps.warn?.(
        `resuming: ${plural(n, 'chunk')} ${n === 1 ? 'was' : 'were'} finished by an earlier run and ${n === 1 ? 'is' : 'are'} skipped`,
      );
    }
    const doubt = journal && !journal.completedAt ? journal.inDoubt() : [];
    if (doubt.length > 0) {
      const list = doubt.slice(0, 5).join(', ') + (doubt.length > 5 ? ', …' : '');
      deps.warn?.(
        `${plural(doubt.length, 'chunk')} (${list}) ${doubt.length === 1 ? 'was' : 'were'} sent by an earlier run without an answer being recorded (in flight at a crash, or failed): ` +
          `${doubt.length === 1 ? 'it is' : 'they are'} sent again under the same Idempotency-Keys, so the server answers from its cache if it created them. ` +
          'That is safe only while the server remembers the keys (24 h in the sandbox); after that, rows of those chunks could be created twice.',
      );
    }
    const current = await stat(input.path);
    if (current.size !== scan.size || current.mtimeMs !== scan.mtimeMs) {
      await journal?.close();
      throw new UsageError(`${input.name} changed while it was being checked; nothing was sent`);
    }
    const writable = async <T>(path: string, make: () => Promise<T>): Promise<T> => {
      try {
        return await make();
      } catch (err) {
        await journal?.close().catch(() => undefined);
        throw new UsageError(`cannot write ${path}: ${(err as Error).message}`, { cause: err });
      }
    };
    const bom = input.encoding !== UTF8;
    const rejects = await writable(rejectsPath, () => createRejectsWriter(rejectsPath, { format: scan.format, header: scan.header, bom }));
    const unknown = await writable(unknownPath, () => createRejectsWriter(unknownPath, { format: scan.format, header: scan.header, bom })).catch(
      async (err: unknown) => {
        await rejects.discard();
        throw err;
      },
    );
    const resultsPath = opts.resultsPath;
    const results = resultsPath
      ? await writable(resultsPath, () =>
          createResultsWriter(resultsPath, {
            format: scan.format,
            header: scan.header,
            ndjsonKeys: scan.ndjsonKeys,
            ndjsonKeysOverflow: scan.ndjsonKeysOverflow,
          }),
        ).catch(async (err: unknown) => {
          await rejects.discard();
          await unknown.discard();
          throw err;
        })
      : undefined;
    const stats0 = deps.stats?.();
    let run;
    try {
      run = await dispatchRows({
        path: input.path,
        name: input.name,
        encoding: input.encoding,
        format: scan.format,
        resource: opts.resource,
        baseUrl: opts.baseUrl,
        mapping: scan.mapping,
        maps,
        chunkSize,
        concurrency,
        maxConsecutiveFailures: opts.maxConsecutiveFailures ?? 5,
        send: deps.send,
        journal,
        rejects,
        unknown,
        results,
        signal: deps.signal,
        onChange: (c) => progress('send', c, scan.rows, size),
      });
    } catch (err) {
      await rejects.discard();
      await unknown.discard();
      await results?.discard();
      await journal?.close().catch(() => undefined);
      throw err;
    }
    const c = run.counters;
    if (stats0 && deps.stats) {
      const s1 = deps.stats();
      c.requests = s1.requests - stats0.requests;
      c.retries = s1.retries - stats0.retries;
    }
    let rejectsFile: string | null = null;
    let unknownFile: string | null = null;
    try {
      rejectsFile = await rejects.commit();
      unknownFile = await unknown.commit();
      await results?.commit();
      const everything = !run.aborted && run.fatal === undefined && c.failedChunks === 0;
      if (journal && everything) {
        await journal.complete(deps.clock.now(), {
          rows: c.rows,
          created: c.created + c.skipped,
          failed: c.failed,
          invalid: c.invalid,
          unknown: c.unknown,
        });
      }
    } finally {
      await journal?.close().catch(() => undefined);
    }
    const result = summary(c, rejectsFile, unknownFile);
    if (run.fatal !== undefined) {
      const err = run.fatal instanceof Error ? run.fatal : new Error(typeof run.fatal === 'string' ? run.fatal : inspect(run.fatal));
      throw withSummary(err, result);
    }
    if (run.aborted) {
      // chunks are cut from the valid rows in order; done: answered now or by an earlier run
      const chunksTotal = Math.ceil(scan.valid / chunkSize);
      const chunksDone = c.skippedChunks + c.chunks - c.failedChunks;
      const settled = c.created + c.skipped + c.failed - c.inDoubt + c.invalid;
      const left = scan.rows - settled;
      const earlier = c.skipped > 0 ? ` (${c.skipped} of them by an earlier run)` : '';
      const rejected = c.failed - c.inDoubt - c.unknown + c.invalid;
      throw withSummary(
        new InterruptedError(
          `interrupted after ${chunksDone} of ${plural(chunksTotal, 'chunk')}: ${plural(c.created + c.skipped, 'row')} created${earlier}` +
            `${rejected > 0 ? `, ${rejected} not created (in the rejects file)` : ''}` +
            `${c.unknown > 0 ? `, ${c.unknown} unknown (in the unknown file)` : ''}; ` +
            `${plural(left, 'row')} of ${scan.rows} left (not sent yet${c.inDoubt > 0 ? ', or sent without an answer' : ''}), not in the rejects file`,
        ),
        result,
      );
    }
    return result;
  } finally {
    await input.cleanup();
  }
}

function withSummary<E extends Error>(err: E, summary: ImportSummary): E {
  Object.defineProperty(err, 'importSummary', { value: summary, enumerable: false, configurable: true });
  return err;
}
