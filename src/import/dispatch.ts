// The sending pass of an import: reads rows, rejects invalid ones, cuts chunks, skips chunks the
// journal already has, and keeps up to `concurrency` chunks in flight while reading on (reading
// waits when they are all busy, so memory holds at most `concurrency` chunks). A chunk counts as
// finished only once its batch answer is in; then its rows' outcomes go to the results/rejects
// files and the journal. Stops starting chunks on abort or on a fatal error, and always waits for
// the chunks in flight.
//
// The rejects file holds only rows certainly NOT created, and no rerun ever sends them (they are
// journaled or never sendable), so fixing and importing it cannot create a row twice. Rows whose
// outcome is unknown stay out of it:
// - a chunk whose request failed (5xx, timeout, dropped connection, 429 after its retries) may
//   have been written: it is not journaled and not a reject; rerunning the same command sends it
//   again under the same Idempotency-Key, and only that settles it (counted in `inDoubt`).
// - a row the batch answer says nothing about (NO_ITEM_RESULT) is journaled with its chunk, so no
//   rerun settles it: it goes to the separate `unknown` file, to be checked in the CRM first.
// A whole chunk refused with a 4xx (not 408/409/425/429) was not written: its rows are rejects and
// the refusal is journaled, so a rerun does not send that chunk again.
import { AuthError, CrmError, ForbiddenError, InterruptedError, NotFoundError } from '../http/errors.js';
import type { ColumnMap, HeaderMapping } from './header.js';
import { Chunker, type Chunk } from './chunker.js';
import { chunkKey } from './idempotency.js';
import type { ImportJournal } from './journal.js';
import type { FinishedChunk } from './journal-line.js';
import { chunkOutcome, NO_RESULT_CODE } from './outcome.js';
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
  /** chunks whose request failed without a refusal (not journaled: a rerun sends them again) */
  failedChunks: number;
  /** rows of those chunks: may have been created; not in the rejects file (the rerun settles them) */
  inDoubt: number;
  /** rows the batch answer said nothing about: in the `unknown` file, not the rejects file */
  unknown: number;
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
  /** the encoding the file was transcoded from (messages) */
  encoding?: string;
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
  /** rows whose outcome no rerun can settle (NO_ITEM_RESULT): kept out of the rejects file */
  unknown: RejectsWriter;
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

/**
 * A whole chunk refused with a status that says the request was not carried out (400, 413, 422, …).
 * 408/409/425/429 and 5xx only say "not now" or nothing at all: the rows may have been written.
 */
export function isRefusal(err: CrmError): boolean {
  const s = err.status;
  return s !== undefined && s >= 400 && s < 500 && ![408, 409, 425, 429].includes(s);
}

/** The same error class (so the same exit code), saying why the import stopped and what to do. */
function stoppedAfterFailures(err: CrmError, n: number): CrmError {
  const Ctor = err.constructor as new (message: string, info: ConstructorParameters<typeof AuthError>[1]) => CrmError;
  return new Ctor(`stopped after ${n} chunks in a row failed; the last: ${err.message}`, {
    status: err.status,
    code: err.code,
    requestId: err.requestId,
    details: err.details,
    // the last failure's own hint (e.g. why the rate-limit waits stopped) still applies
    hint: `${err.hint ? `${err.hint}\n` : ''}rerun the same command later: finished chunks are skipped and the failed ones are sent again under the same keys`,
    cause: err,
  });
}

export async function dispatchRows(cfg: DispatchConfig): Promise<DispatchResult> {
  const c: Counters = {
    rows: 0,
    created: 0,
    failed: 0,
    invalid: 0,
    skipped: 0,
    chunks: 0,
    requests: 0,
    retries: 0,
    failedChunks: 0,
    inDoubt: 0,
    unknown: 0,
    skippedChunks: 0,
    replayed: 0,
    inFlight: 0,
    bytes: 0,
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
      if (r && r.code === NO_RESULT_CODE) {
        c.unknown++;
        cfg.unknown.add(row.raw, row.line, r.code, r.message);
      } else if (r) cfg.rejects.add(row.raw, row.line, r.code, r.message);
    });
    if (journal && cfg.journal) {
      try {
        await cfg.journal.record({ seq: chunk.seq, key, lines: chunk.lines, ids, rejects });
      } catch (err) {
        fatal ??= err;
      }
    }
  };

  const failChunk = async (chunk: Chunk, key: string, err: unknown): Promise<void> => {
    // stopped by Ctrl-C before the request went out (the sender's contract: once sent, a request
    // runs to its answer): not sent at all, so not in doubt for the rerun
    if (cfg.signal?.aborted && err instanceof InterruptedError) {
      c.chunks--;
      await cfg.journal?.unsent(chunk.seq).catch(() => undefined);
      return;
    }
    c.requests += 1;
    // aborted while in flight (a sender that cancels on Ctrl-C): the rows are simply not done yet
    if (cfg.signal?.aborted) return;
    if (isFatalSendError(err)) {
      fatal ??= err;
      // refused whole (a wrong key or scope): this request wrote nothing, so the chunk is not in
      // doubt (as if unsent); it stays unfinished, so a rerun (with a key that may) sends it again
      if (err instanceof CrmError && isRefusal(err)) await cfg.journal?.unsent(chunk.seq).catch(() => undefined);
      return;
    }
    const e = err as CrmError;
    consecutiveFailures++;
    c.failed += chunk.rows.length;
    if (isRefusal(e)) {
      // not written: the rows are rejects, and the refusal is journaled so no rerun sends the
      // chunk again (the rejects file and what a rerun sends never overlap)
      const message = `the server refused the whole chunk (${span(chunk)}), none of its rows was created: ${e.message}`;
      const code = e.code ?? e.name;
      await finish(
        chunk,
        key,
        chunk.rows.map(() => null),
        chunk.rows.map((_r, i) => ({ i, code, message })),
        true,
      );
    } else {
      // may have been written: only the same key (the rerun) can settle it, so no reject row
      c.failedChunks++;
      c.inDoubt += chunk.rows.length;
    }
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
        await failChunk(chunk, key, err);
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

  const reader = await openInput(cfg.path, { format: cfg.format, name: cfg.name, encoding: cfg.encoding, signal: cfg.signal });
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
    // reading stops on the signal: that is an interruption, reported as such by the engine
    if (!cfg.signal?.aborted) fatal ??= err;
  } finally {
    reader.close();
    while (inFlight.size > 0) await Promise.race(inFlight);
  }
  c.bytes = reader.bytesRead();
  changed();
  return { counters: c, fatal, aborted: cfg.signal?.aborted === true };
}
