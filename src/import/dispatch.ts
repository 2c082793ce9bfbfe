// The sending pass of an import: reads rows, rejects invalid ones, cuts chunks, skips chunks the
// journal already has, and keeps up to `concurrency` chunks in flight while reading on (reading
// waits when they are all busy, so memory holds at most `concurrency` chunks). A chunk counts as
// finished only once its batch answer is in; then its rows' outcomes go to the results/rejects
// files and the journal. A chunk whose request fails is not journaled, so a rerun sends it again
// with the same key. Stops starting chunks on abort or on a fatal error, and always waits for the
// chunks in flight.
import { AuthError, CrmError, ForbiddenError, NotFoundError } from '../http/errors.js';
import type { ColumnMap, HeaderMapping } from './header.js';
import { Chunker, type Chunk } from './chunker.js';
import { chunkKey } from './idempotency.js';
import type { ImportJournal } from './journal.js';
import type { FinishedChunk } from './journal-line.js';
import { chunkOutcome } from './outcome.js';
import { openInput, type InputFormat } from './reader.js';
import type { RejectsWriter } from './rejects.js';
import type { ResultsWriter } from './results.js';
import { classifyRow } from './scan.js';
import type { BatchSender } from './sender.js';

export const DUPLICATE_CHUNK_CODE = 'DUPLICATE_CHUNK';

/** The row and chunk counts of a run: kept by the sending pass, reported in progress and the summary. */
export interface ImportCounts {
  rows: number;
  created: number;
  failed: number;
  invalid: number;
  skipped: number;
  chunks: number;
}

export interface Counters extends ImportCounts {
  requests: number;
  retries: number;
  /** chunks whose request failed (not journaled: a rerun sends them again) */
  failedChunks: number;
  /** chunks taken from the journal */
  skippedChunks: number;
  /** rows the server answered from its idempotency cache on a first attempt: created by an earlier run (counted in skipped) */
  replayed: number;
  inFlight: number;
  bytes: number;
}

export interface DispatchConfig {
  path: string;
  name: string;
  format: InputFormat;
  resource: string;
  baseUrl: string;
  mapping: HeaderMapping | undefined;
  maps: ColumnMap;
  chunkSize: number;
  concurrency: number;
  maxConsecutiveFailures: number;
  send: BatchSender;
  journal: ImportJournal | undefined;
  rejects: RejectsWriter;
  results: ResultsWriter | undefined;
  signal: AbortSignal | undefined;
  onChange: (c: Counters) => void;
}

export interface DispatchResult {
  counters: Counters;
  /** set when the run stopped for an error that every further chunk would hit too */
  fatal?: unknown;
  aborted: boolean;
}

/** Errors after which sending more chunks is pointless: a bad key, a missing scope, no such endpoint, a bug. */
export function isFatalSendError(err: unknown): boolean {
  if (!(err instanceof CrmError)) return true;
  return err instanceof AuthError || err instanceof ForbiddenError || err instanceof NotFoundError;
}

/** The same error class (so the same exit code), saying why the import stopped and what to do. */
function stoppedAfterFailures(err: CrmError, n: number): CrmError {
  const Ctor = err.constructor as new (message: string, info: ConstructorParameters<typeof AuthError>[1]) => CrmError;
  return new Ctor(`stopped after ${n} chunks in a row failed; the last: ${err.message}`, {
    status: err.status,
    code: err.code,
    requestId: err.requestId,
    details: err.details,
    hint: 'rerun the same command later: finished chunks are skipped and the failed ones are sent again under the same keys',
    cause: err,
  });
}

export async function dispatchRows(cfg: DispatchConfig): Promise<DispatchResult> {
  const c: Counters = {
    rows: 0, created: 0, failed: 0, invalid: 0, skipped: 0, chunks: 0,
    requests: 0, retries: 0, failedChunks: 0, skippedChunks: 0, replayed: 0, inFlight: 0, bytes: 0,
  };
  const inFlight = new Set<Promise<void>>();
  /** key → the lines of the chunk that had it, for chunks met in this run */
  const seen = new Map<string, string>();
  let fatal: unknown;
  let consecutiveFailures = 0;
  const stopping = (): boolean => cfg.signal?.aborted === true || fatal !== undefined;
  const changed = (): void => {
    c.inFlight = inFlight.size;
    cfg.onChange(c);
  };

  const span = (ch: Chunk): string => `lines ${ch.lines[0]}–${ch.lines[ch.lines.length - 1]}`;

  /** Rows' outcomes to the results/rejects files; a chunk answered in this run also to the journal. */
  const finish = async (
    chunk: Chunk,
    key: string,
    ids: Array<string | null>,
    rejects: FinishedChunk['rejects'],
    journal: boolean,
  ): Promise<void> => {
    const byIndex = new Map(rejects.map((r) => [r.i, r]));
    chunk.rows.forEach((row, i) => {
      const id = ids[i];
      if (id !== null && id !== undefined) cfg.results?.add(row.raw, row.line, id);
      const r = byIndex.get(i);
      if (r) cfg.rejects.add(row.raw, row.line, r.code, r.message);
    });
    if (journal && cfg.journal) {
      try {
        await cfg.journal.record({ seq: chunk.seq, key, lines: chunk.lines, ids, rejects });
      } catch (err) {
        fatal ??= err;
      }
    }
  };

  const failChunk = (chunk: Chunk, err: unknown): void => {
    c.requests += 1;
    // aborted while in flight (the client may cancel on Ctrl-C): the rows are simply not done yet
    if (cfg.signal?.aborted) return;
    if (isFatalSendError(err)) {
      fatal ??= err;
      return;
    }
    const e = err as CrmError;
    consecutiveFailures++;
    c.failedChunks++;
    c.failed += chunk.rows.length;
    const status = e.status;
    const message =
      status !== undefined && status >= 400 && status < 500 && status !== 429
        ? `the server refused the whole chunk (${span(chunk)}): ${e.message}`
        : `the request for the chunk (${span(chunk)}) failed after its retries: ${e.message}. ` +
          'These rows may have been created: rerun the same command (same file, same options) to retry ' +
          'them under the same Idempotency-Key rather than importing this file';
    const code = e.code ?? e.name;
    for (const row of chunk.rows) cfg.rejects.add(row.raw, row.line, code, message);
    if (consecutiveFailures >= cfg.maxConsecutiveFailures) fatal ??= stoppedAfterFailures(e, consecutiveFailures);
  };

  const start = (chunk: Chunk, key: string): void => {
    c.chunks++;
    const records = chunk.rows.map((r) => r.record);
    const p = (async () => {
      let res;
      try {
        // journaled before the request, so a crash leaves a trace of the chunks in flight
        await cfg.journal?.sent(chunk.seq, key);
      } catch (err) {
        fatal ??= err;
        return;
      }
      try {
        res = await cfg.send({ resource: cfg.resource, seq: chunk.seq, key, records, body: chunk.body });
      } catch (err) {
        failChunk(chunk, err);
        return;
      }
      const retries = res.retries ?? 0;
      c.requests += 1 + retries;
      c.retries += retries;
      consecutiveFailures = 0;
      const out = chunkOutcome(chunk.rows.length, res.envelope);
      // a replay on the first attempt is the answer to a request of an earlier run: those rows were
      // created then (a replay after a retry is most likely this run's own first attempt)
      if (res.replayed === true && retries === 0) {
        c.skipped += out.created;
        c.replayed += out.created;
      } else c.created += out.created;
      c.failed += chunk.rows.length - out.created;
      await finish(chunk, key, out.ids, out.rejects, true);
    })().finally(() => {
      inFlight.delete(p);
      changed();
    });
    inFlight.add(p);
    changed();
  };

  const dispatch = async (chunk: Chunk): Promise<void> => {
    const key = chunkKey(cfg.baseUrl, cfg.resource, chunk.body);
    const twin = seen.get(key);
    if (twin) {
      // the same key would only replay the twin's answer: these rows would not be created again
      const msg = `these rows are identical to the chunk of ${twin} and were not sent again`;
      for (const row of chunk.rows) cfg.rejects.add(row.raw, row.line, DUPLICATE_CHUNK_CODE, msg);
      c.failed += chunk.rows.length;
      return;
    }
    seen.set(key, span(chunk));
    let done: FinishedChunk | undefined;
    try {
      done = await cfg.journal?.get(chunk.seq, key);
    } catch (err) {
      fatal ??= err;
      return;
    }
    // same key means same body; the lines check only guards against a journal that is not this file's
    if (done && done.ids.length === chunk.rows.length && done.lines.every((l, i) => l === chunk.lines[i])) {
      c.skippedChunks++;
      const created = done.ids.filter((x) => x !== null).length;
      c.skipped += created;
      c.failed += chunk.rows.length - created;
      await finish(chunk, key, done.ids, done.rejects, false);
      return;
    }
    while (inFlight.size >= cfg.concurrency && !stopping()) await Promise.race(inFlight);
    if (stopping()) return;
    start(chunk, key);
  };

  const reader = await openInput(cfg.path, { format: cfg.format, name: cfg.name });
  const chunker = new Chunker(cfg.chunkSize);
  try {
    for await (const row of reader.rows) {
      if (stopping()) break;
      c.rows++;
      c.bytes = reader.bytesRead();
      const r = classifyRow(row, cfg.mapping, cfg.maps);
      if (!r.ok) {
        c.invalid++;
        cfg.rejects.add(row.raw, row.line, r.code, r.reason);
        if (c.invalid % 1000 === 0) changed();
        continue;
      }
      const chunk = chunker.push({ line: row.line, record: r.record, raw: row.raw });
      if (chunk) await dispatch(chunk);
    }
    if (!stopping()) {
      const last = chunker.flush();
      if (last) await dispatch(last);
    }
  } catch (err) {
    fatal ??= err;
  } finally {
    reader.close();
    while (inFlight.size > 0) await Promise.race(inFlight);
  }
  c.bytes = reader.bytesRead();
  changed();
  return { counters: c, fatal, aborted: cfg.signal?.aborted === true };
}
