// The sending pass: the spooled chunks (spool.ts), up to `concurrency` in flight; a chunk is finished once its answer is
// in. Only rows certainly not created are rejects: a failed request is in doubt (the rerun resends it
// under the same key), an unanswered row goes to the unknown file, a chunk refused whole is journaled.
import { AuthError, CrmError, ForbiddenError, InterruptedError, NotFoundError } from '../http/errors.js';
import { plural } from '../output/plural.js';
import { Pool } from '../util/pool.js';
import { chunkKey } from './chunker.js';
import type { Counters } from './engine-types.js';
import type { ImportJournal } from './journal.js';
import type { ChunkReject } from './journal-format.js';
import { chunkOutcome, NO_RESULT_CODE } from './outcome.js';
import type { Outputs } from './outputs.js';
import { onDisk } from './disk.js';
import { ReasonTally, type Reason } from './reasons.js';
import { progress, type Run } from './run.js';
import type { ScanResult } from './scan.js';
import type { SpooledChunk, SpooledInvalid } from './spool.js';

type Chunk = SpooledChunk;

export interface DispatchResult {
  counters: Counters;
  /** set when the run stopped for an error that every further chunk would hit too */
  fatal?: unknown;
  aborted: boolean;
  /** why rows failed or were invalid (reasons.ts) */
  reasons: Reason[];
}

/** Errors after which sending more chunks is pointless: a bad key, a missing scope, no such endpoint, a bug. */
function isFatalSendError(err: unknown): boolean {
  return !(err instanceof CrmError) || err instanceof AuthError || err instanceof ForbiddenError || err instanceof NotFoundError;
}

/** A whole chunk refused with a status saying it was not carried out; 408/409/425/429 and 5xx say nothing of the kind. */
function isRefusal(err: CrmError): boolean {
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
    hint: `${err.hint ? `${err.hint}\n` : ''}rerun the same command later: finished chunks are skipped and the failed ones are sent again under the same keys`,
    cause: err,
  });
}

function configOf(run: Run, scan: ScanResult, journal: ImportJournal | undefined, files: Outputs) {
  const { opts, deps } = run;
  if (!run.spool) throw new Error("the sending pass needs the check pass's spool");
  return {
    ...{ spool: run.spool, resource: opts.resource, baseUrl: opts.baseUrl, concurrency: run.concurrency },
    ...{ maxConsecutiveFailures: opts.maxConsecutiveFailures ?? 5, send: deps.send, journal, ...files, signal: deps.signal },
    ...{ op: opts.operation, resent: new Set(journal?.inDoubt() ?? []), warn: deps.warn, repeated: scan.repeated },
    onChange: (c: Counters) => progress(run, 'send', c, scan.rows),
  };
}

export function dispatchRows(run: Run, scan: ScanResult, journal: ImportJournal | undefined, files: Outputs): Promise<DispatchResult> {
  return new SendingPass(configOf(run, scan, journal, files)).run();
}

class SendingPass {
  readonly c: Counters = {
    ...{ rows: 0, created: 0, failed: 0, invalid: 0, skipped: 0, chunks: 0, requests: 0, retries: 0 },
    ...{ failedChunks: 0, inDoubt: 0, unknown: 0, skippedChunks: 0, repeated: 0, inFlight: 0, bytes: 0 },
  };
  private readonly reasons = new ReasonTally();
  private fatal: unknown;
  private consecutiveFailures = 0;
  /** key → the lines of the chunk that had it, for chunks met in this run */
  private readonly seen = new Map<string, string>();
  /** lines of update, delete or link rows that repeat an earlier row */
  private readonly repeats: number[] = [];
  private readonly pool: Pool;

  constructor(private readonly cfg: ReturnType<typeof configOf>) {
    this.pool = new Pool(cfg.concurrency, () => this.changed());
    // a create's rows repeating an earlier one, left out by the check pass: done (their twin creates the record)
    this.c.rows = this.c.skipped = this.c.repeated = cfg.repeated;
  }

  private readonly stopping = (): boolean => this.cfg.signal?.aborted === true || this.fatal !== undefined;

  private changed(): void {
    this.c.inFlight = this.pool.active;
    this.cfg.onChange(this.c);
  }

  async run(): Promise<DispatchResult> {
    const { cfg, c } = this;
    // one chunk is read ahead while the one before waits for a free slot (dispatches stay one at a time, in order)
    let ahead: Promise<void> = Promise.resolve();
    const failed = (err: unknown): void => {
      // reading stops on the signal: that is an interruption, reported as such by the engine
      if (!cfg.signal?.aborted) this.fatal ??= err;
    };
    const entries = cfg.spool.entries();
    try {
      for await (const e of entries) {
        if (this.stopping()) break;
        c.bytes = e.bytes;
        if (e.invalid) this.reject(e.invalid);
        if (!e.chunk) continue;
        c.rows += e.chunk.lines.length;
        await ahead;
        ahead = this.dispatch(e.chunk).catch(failed);
      }
    } catch (err) {
      failed(err);
    } finally {
      await entries.return(undefined).catch(() => undefined);
      await ahead;
      await this.pool.drain();
    }
    this.changed();
    const r = this.repeats;
    if (r.length > 0) {
      const lines = `${r.slice(0, 5).join(', ')}${r.length > 5 ? ', …' : ''}`;
      cfg.warn?.(
        `${plural(r.length, 'row')} (line${r.length > 1 ? 's' : ''} ${lines}) repeat an earlier row and were not sent again (counted as skipped)`,
      );
    }
    return { counters: c, fatal: this.fatal, aborted: cfg.signal?.aborted === true, reasons: this.reasons.list() };
  }

  /** An invalid row, found by the check pass: to the rejects file. */
  private reject(row: SpooledInvalid): void {
    this.c.rows++;
    this.c.invalid++;
    this.reasons.add(row.code, row.reason);
    this.cfg.rejects.add(row.raw, row.line, row.code, row.reason);
    if (this.c.invalid % 1000 === 0) this.changed();
  }

  private async dispatch(chunk: Chunk): Promise<void> {
    const { cfg, c } = this;
    // an operation's key names what it does (`link segments members seg_1`): a row of bare ids is not enough
    const key = chunkKey(cfg.baseUrl, cfg.op ? cfg.op.describe : cfg.resource, chunk.body, cfg.op?.kind);
    const twin = this.seen.get(key);
    if (twin && cfg.op) {
      // an update, delete or link repeated: the first one does it (a rejected first is fixed for both)
      this.repeats.push(chunk.lines[0]!);
      c.skipped++;
      return;
    }
    // a create's chunks are never identical: the check pass left out rows repeating an earlier one (repeats.ts)
    if (cfg.op) this.seen.set(key, span(chunk));
    const done = await cfg.journal?.get(chunk.seq, key).catch((err: unknown) => this.journalFailed(err));
    // same key means same body; the lines check only guards against a journal that is not this file's
    if (done && done.ids.length === chunk.lines.length && done.lines.every((l, i) => l === chunk.lines[i])) {
      c.skippedChunks++;
      const created = done.ids.filter((x) => x !== null).length;
      c.skipped += created;
      c.failed += chunk.lines.length - created;
      this.outputs(chunk, done.ids, done.rejects);
      return;
    }
    if (!this.stopping() && (await this.pool.run(() => this.send(chunk, key), this.stopping))) this.changed();
    // read but never sent (stopping): left, as the interruption says, not counted among the rows
    else c.rows -= chunk.lines.length;
  }

  private async send(chunk: Chunk, key: string): Promise<void> {
    const { cfg, c } = this;
    c.chunks++;
    try {
      // journaled before the request, so a crash leaves a trace of the chunks in flight
      await cfg.journal?.sent(chunk.seq, key);
    } catch (err) {
      c.chunks--;
      this.journalFailed(err);
      return;
    }
    let res;
    try {
      const { seq, body } = chunk;
      // the records are parsed from the body only if the sender asks for them (a row operation)
      const req = {
        resource: cfg.resource,
        seq,
        key,
        body,
        resent: cfg.resent.has(seq),
        get records() {
          return chunk.records();
        },
      };
      res = await cfg.send(req);
    } catch (err) {
      await this.failed(chunk, key, err);
      return;
    }
    const retries = res.retries ?? 0;
    c.requests += 1 + retries;
    c.retries += retries;
    this.consecutiveFailures = 0;
    const out = chunkOutcome(chunk.lines.length, res.envelope);
    // a replay on the first attempt answers a request of an earlier run: created then
    if (res.replayed === true && retries === 0) c.skipped += out.created;
    else c.created += out.created;
    c.failed += chunk.lines.length - out.created;
    await this.finish(chunk, key, out.ids, out.rejects);
  }

  private async failed(chunk: Chunk, key: string, err: unknown): Promise<void> {
    const { cfg, c } = this;
    // stopped by Ctrl-C before the request went out (the sender's contract): not in doubt
    if (cfg.signal?.aborted && err instanceof InterruptedError) {
      c.chunks--;
      await cfg.journal?.unsent(chunk.seq).catch(() => undefined);
      return;
    }
    c.requests += 1;
    const aborted = cfg.signal?.aborted === true;
    if (isFatalSendError(err) || (aborted && !(err instanceof CrmError))) {
      // refused whole (a wrong key or scope): nothing written, so not in doubt (not sent); a rerun sends it
      if (err instanceof CrmError && isRefusal(err)) await cfg.journal?.unsent(chunk.seq).catch(() => undefined);
      else if (aborted) this.inDoubt(chunk, 'INTERRUPTED', 'sent without an answer before the interruption');
      // an interruption is reported as such, not as the error it caused
      if (!aborted) this.fatal ??= err;
      return;
    }
    const e = err as CrmError;
    this.consecutiveFailures++;
    if (isRefusal(e)) {
      c.failed += chunk.lines.length;
      // not written: rejects, and journaled so no rerun sends the chunk again
      const message = `the server refused the whole chunk (${span(chunk)}), none of its rows was created: ${e.message}`;
      const rejects = chunk.lines.map((_l, i) => ({ i, code: e.code ?? e.name, message }));
      this.reasons.add(e.code ?? e.name, `the server refused the whole chunk: ${e.message}`, rejects.length);
      await this.finish(chunk, key, Array<null>(rejects.length).fill(null), rejects, false);
    } else this.inDoubt(chunk, e.code ?? e.name, e.message);
    if (this.consecutiveFailures >= cfg.maxConsecutiveFailures && !aborted) this.fatal ??= stoppedAfterFailures(e, this.consecutiveFailures);
  }

  /** A chunk whose request went out without an answer (also while stopping): it may have been written, and only the same key (the rerun) can settle it, so no reject row. */
  private inDoubt(chunk: Chunk, code: string, message: string): void {
    const n = chunk.lines.length;
    this.c.failedChunks++;
    this.c.failed += n;
    this.c.inDoubt += n;
    this.reasons.add(code, `sent without an answer (rerun to settle): ${message}`, n);
  }

  /** The journal could not be written (a full disk: a DiskError naming it): nothing more is sent. */
  private journalFailed(err: unknown): undefined {
    this.fatal ??= onDisk(err, this.cfg.journal?.path);
    return undefined;
  }

  /** A chunk answered in this run: its rows' outputs, and the journal. */
  private async finish(chunk: Chunk, key: string, ids: Array<string | null>, rejects: ChunkReject[], tally = true): Promise<void> {
    this.outputs(chunk, ids, rejects, tally);
    await this.cfg.journal?.record({ seq: chunk.seq, key, lines: chunk.lines, ids, rejects }).catch((err: unknown) => this.journalFailed(err));
  }

  /** Each row's outcome: an id to the results file, an error to the rejects or the unknown file. */
  private outputs(chunk: Chunk, ids: Array<string | null>, rejects: ChunkReject[], tally = true): void {
    const { cfg } = this;
    if (tally) for (const r of rejects) this.reasons.add(r.code, r.message);
    if (rejects.length === 0 && !cfg.results) return;
    const byIndex = new Map(rejects.map((r) => [r.i, r]));
    const raws = chunk.raws();
    chunk.lines.forEach((line, i) => {
      const id = ids[i];
      const r = byIndex.get(i);
      if (r?.code === NO_RESULT_CODE) this.c.unknown++;
      if (id !== null && id !== undefined) cfg.results?.add(raws[i]!, line, id);
      if (r) (r.code === NO_RESULT_CODE ? cfg.unknown : cfg.rejects).add(raws[i]!, line, r.code, r.message);
    });
  }
}

const span = (ch: Chunk): string => `lines ${ch.lines[0]}–${ch.lines[ch.lines.length - 1]}`;
