// The sending pass: the spooled chunks (spool.ts), up to `concurrency` in flight; a chunk is finished once its answer is
// in. Only rows certainly not created are rejects: a failed request is in doubt (the rerun resends it
// under the same key), an unanswered row goes to the unknown file, a chunk refused whole is journaled.
import { CrmError, InterruptedError } from '../../http/errors.js';
import { neverSent } from '../../http/network-error.js';
import { Pool } from '../../util/pool.js';
import { chunkKey } from '../check/chunker.js';
import { repeatsWarning } from '../check/check.js';
import type { Counters, StageDeps } from '../types.js';
import type { ChunkReject, FinishedChunk, Reason, RowOperation } from '../shapes.js';
import type { SendSlice } from '../plan.js';
import type { ImportJournal, PinnedResend } from '../journal/journal.js';
import {
  chunkOutcome,
  deletedSince,
  type Answer,
  ALIKE_ROWS,
  failedAlike,
  isFatalSendError,
  isRefusal,
  stoppedAfterFailures,
} from './outcome.js';
import type { Outputs } from '../files/outputs.js';
import { mergeAnswers, resentChunk, rowsToSendAgain, subChunk, type Resend, type Subject } from './resend.js';
import { onDisk } from './disk.js';
import { ReasonTally } from './reasons.js';
import type { Spool, SpooledChunk as Chunk } from '../check/spool.js';
import type { MatchFiles } from '../files/way-back.js';
import { RowFiles } from './row-files.js';

export interface DispatchResult {
  counters: Counters;
  /** set when the run stopped for an error that every further chunk would hit too */
  fatal?: unknown;
  aborted: boolean;
  /** why rows failed or were invalid (reasons.ts) */
  reasons: Reason[];
}

/** What the sending pass is given (send.ts builds it from the send slice and the stages' values). */
interface SendingConfig
  extends
    Outputs,
    Pick<SendSlice, 'resource' | 'baseUrl' | 'concurrency' | 'maxConsecutiveFailures' | 'op'>,
    Pick<StageDeps, 'send' | 'signal' | 'warn'> {
  /** the check pass's chunks (or a reconcile's plan), read back in order */
  spool: Spool;
  journal?: ImportJournal;
  /** chunks an earlier run sent without an answer: sent again, marked so */
  resent: ReadonlySet<number>;
  repeated: number;
  /** reconcile (`--match`): its updates are rows of this update, and its files (the way back, what was created) */
  updateOp?: RowOperation;
  match?: MatchFiles;
  /** a key belongs to one run of one job: the journal's run id (a resume reuses it); without a journal, this run's */
  runId: string;
  /** false: rows an earlier run rejected are not sent again */
  retry: boolean;
  /** the number of the last chunk (a create's first chunk goes alone unless it is the last) */
  lastChunk: number;
  /** the most rows a request carries: a create's rows sent again are gathered up to it */
  chunkSize: number;
  onChange: (c: Counters) => void;
}

export function dispatchRows(cfg: SendingConfig): Promise<DispatchResult> {
  return new SendingPass(cfg).run();
}

class SendingPass {
  readonly c: Counters = {
    ...{ rows: 0, created: 0, failed: 0, invalid: 0, skipped: 0, chunks: 0, requests: 0, retries: 0 },
    ...{ failedChunks: 0, inDoubt: 0, unknown: 0, skippedChunks: 0, repeated: 0, inFlight: 0, bytes: 0 },
    ...{ updated: 0, unchanged: 0, ambiguous: 0, duplicate: 0 },
  };
  private readonly reasons = new ReasonTally();
  private fatal: unknown;
  private consecutiveFailures = 0;
  /** a row a request: the rejects of the first rows answered while every one failed (undefined once one did not) */
  private firstRejects: ChunkReject[] | undefined = [];
  /** an update, delete or link: per record, for file order and repeated rows */
  private readonly subjects = new Map<string, Subject>();
  /** lines of update, delete or link rows that repeat an earlier row */
  private readonly repeats: Array<[line: number, earlier: number]> = [];
  private readonly pool: Pool;
  private readonly files: RowFiles;
  /** a create's rows an earlier run answered and this run sends again, gathered from their chunks (up to chunkSize) */
  private gathered: Resend[] = [];
  /** …and those an earlier run sent again without every answer, by that request's key, until all its chunks are read */
  private readonly pinned = new Map<string, Resend[]>();

  constructor(private readonly cfg: SendingConfig) {
    this.pool = new Pool(cfg.concurrency, () => this.changed());
    this.files = new RowFiles(this.c, this.reasons, cfg);
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
        // a reconcile's rows needing no request are counted to the end (what is left is only what needs one)
        if (this.stopping() && (!cfg.updateOp || e.chunk)) {
          if (cfg.updateOp) continue;
          break;
        }
        c.bytes = e.bytes;
        if (e.invalid && this.files.unsent(e.invalid) % 1000 === 0) this.changed();
        if (e.settled) this.files.settled(e.settled);
        if (!e.chunk) continue;
        c.rows += e.chunk.lines.length;
        await ahead;
        ahead = this.dispatch(e.chunk).catch(failed);
      }
      await ahead;
      ahead = this.sendGathered().catch(failed);
    } catch (err) {
      failed(err);
    } finally {
      await entries.return(undefined).catch(() => undefined);
      await ahead;
      await this.pool.drain();
    }
    this.changed();
    if (this.repeats.length > 0) cfg.warn?.(repeatsWarning(this.repeats));
    return { counters: c, fatal: this.fatal, aborted: cfg.signal?.aborted === true, reasons: this.reasons.list() };
  }

  private async dispatch(chunk: Chunk): Promise<void> {
    const { cfg, c } = this;
    const op = chunk.update ? cfg.updateOp : cfg.op;
    // an operation's key names what it does (`link segments members seg_1`): a row of bare ids is not enough
    const keyOf = (body: string, salt: string) =>
      chunkKey(cfg.baseUrl, op ? op.describe : cfg.resource, body, op?.kind, salt);
    // (a reconcile's create an interrupted run sent without an answer keeps that run's key: the server replays it)
    const runId = chunk.runId ?? cfg.runId;
    const twinKey = keyOf(chunk.body, runId);
    // a row is a change of its own (the same body again after another is another change): its number salts its key
    // (not in a journal from before run ids, whose rows in doubt must replay under the keys of that time)
    const key = op && runId !== '' ? keyOf(chunk.body, `${runId}\0${chunk.seq}`) : twinKey;
    // the record (or link) an operation's row changes
    const plan = op?.plan(chunk.records()[0]!);
    const subject = plan?.ok ? plan.request.subject : undefined;
    const before = subject === undefined ? undefined : this.subjects.get(subject);
    if (op && before?.twin === twinKey) {
      // the row before it for this record was the same change: that one does it (a rejected first is fixed for both)
      this.repeats.push([chunk.lines[0]!, before.line]);
      c.skipped++;
      c.repeated++;
      return;
    }
    // a create's chunks are never identical: the check pass left out rows repeating an earlier one (repeats.ts)
    const entry: Subject = { twin: twinKey, sent: false, line: chunk.lines[0]! };
    if (subject !== undefined) this.subjects.set(subject, entry);
    const done = await cfg.journal?.get(chunk.seq).catch((err: unknown) => this.journalFailed(err));
    // the lines check guards against a journal that is not this file's
    const finished =
      done && done.ids.length === chunk.lines.length && done.lines.every((l, i) => l === chunk.lines[i])
        ? done
        : undefined;
    // a create's rows an earlier run sent again with others, without every answer: those rows again, with the others
    const pinned = finished && !op && cfg.retry ? cfg.journal?.pinned(chunk.seq) : undefined;
    const again = pinned?.idx ?? (finished ? rowsToSendAgain(finished, before?.sent === true, cfg.retry) : undefined);
    if (finished && again === undefined) return this.skip(chunk, finished);
    if (finished && !op) return this.gather({ whole: chunk, idx: again!, done: finished }, pinned);
    // rows of one record in file order: wait for the one before to be answered
    await before?.pending;
    let settle = (): void => undefined;
    entry.pending = new Promise<void>((r) => (settle = r));
    entry.sent = true;
    const sub = again === undefined ? chunk : subChunk(chunk, again);
    // sent again after an answer: a new change, under a key of its own derived from the one answered
    const sendKey = again === undefined ? key : keyOf(sub.body, `${cfg.runId}\0${finished!.key}`);
    const resend = again === undefined ? undefined : [{ whole: chunk, idx: again, done: finished! }];
    const answered = (): void => {
      settle();
      entry.pending = undefined;
    };
    await this.start(
      () => this.send(sub, sendKey, resend).finally(answered),
      () => {
        settle();
        // read but never sent (stopping): an answered chunk counts as it was; otherwise left, as the interruption says
        if (finished) this.skip(chunk, finished);
        else c.rows -= chunk.lines.length;
      },
    );
  }

  /** `task` in the pool, or `notStarted` when stopping; a create's first request goes alone (failedAlike in finish). */
  private async start(task: () => Promise<void>, notStarted: () => void): Promise<void> {
    let answered = (): void => undefined;
    const done = new Promise<void>((r) => (answered = r));
    if (!this.stopping() && (await this.pool.run(() => task().finally(answered), this.stopping))) this.changed();
    else {
      answered();
      notStarted();
    }
    if (!this.cfg.op && !this.cfg.updateOp && this.c.chunks === 1) await done;
  }

  /**
   * A create's rows an earlier run answered, to send again: gathered with other chunks' up to a chunk's size a request;
   * those a request of an earlier run sent again without every answer go again with the same rows, under its key.
   */
  private async gather(part: Resend, pinned?: PinnedResend): Promise<void> {
    if (pinned) {
      const parts = [...(this.pinned.get(pinned.key) ?? []), part];
      this.pinned.set(pinned.key, parts);
      if (parts.length < pinned.parts) return;
      this.pinned.delete(pinned.key);
      return this.sendAgain(parts, pinned.key);
    }
    // sent again alone by a crm before gathering, without an answer: alone again, under the key it had
    if (this.cfg.resent.has(part.whole.seq)) return this.sendAgain([part]);
    const rows = this.gathered.reduce((n, p) => n + p.idx.length, 0);
    if (rows + part.idx.length > this.cfg.chunkSize) await this.sendAgain(this.gathered.splice(0));
    this.gathered.push(part);
  }

  /** At the end of the file: the rows gathered, sent; a pinned request missing a chunk (never: the file is pinned), counted as answered then. */
  private async sendGathered(): Promise<void> {
    if (this.gathered.length > 0) await this.sendAgain(this.gathered.splice(0));
    for (const parts of this.pinned.values()) for (const p of parts) this.skip(p.whole, p.done);
    this.pinned.clear();
  }

  /**
   * Rows of answered chunks sent again in one request, under a key of its own derived from the run and the answers
   * it retries (a new change each time), or the key an earlier run's request of the same rows had (`pinned`).
   */
  private async sendAgain(parts: Resend[], pinned?: string): Promise<void> {
    const { cfg } = this;
    const chunk = resentChunk(parts);
    const salt = [cfg.runId, ...parts.map((p) => p.done.key)].join('\0');
    const key = pinned ?? chunkKey(cfg.baseUrl, cfg.resource, chunk.body, undefined, salt);
    // read but never sent (stopping): each chunk counts as it was answered
    await this.start(
      () => this.send(chunk, key, parts),
      () => parts.forEach((p) => this.skip(p.whole, p.done)),
    );
  }

  /** A chunk an earlier run answered, not sent again: its rows counted and written out as answered then. */
  private skip(chunk: Chunk, done: FinishedChunk): void {
    const c = this.c;
    c.skippedChunks++;
    const created = done.ids.filter((x) => x !== null).length;
    c.skipped += created;
    c.failed += chunk.lines.length - created;
    this.files.answered(chunk, done.ids, done.rejects);
  }

  private async send(chunk: Chunk, key: string, resend?: Resend[]): Promise<void> {
    const { cfg, c } = this;
    c.chunks++;
    for (const r of resend ?? []) {
      // the rows not sent again count as the earlier answer said
      const kept = r.done.ids.filter((id, i) => !r.idx.includes(i) && id !== null).length;
      c.skipped += kept;
      c.failed += r.whole.lines.length - r.idx.length - kept;
    }
    try {
      // reconcile: the values an update changes, durable in the undo file before it is sent
      if (chunk.update) await cfg.match?.undo.add(chunk.records()[0]!.id as string, chunk.update.before());
      // journaled before the request, so a crash leaves a trace of the chunks in flight (rows sent again: which)
      await cfg.journal?.sent(
        chunk.seq,
        key,
        resend?.map((r): [number, number[]] => [r.whole.seq, r.idx]),
      );
    } catch (err) {
      c.chunks--;
      this.journalFailed(err);
      return;
    }
    let res;
    try {
      const { seq, body } = chunk;
      const update = chunk.update ? cfg.updateOp : undefined;
      // the records are parsed from the body only if the sender asks for them (a row operation)
      res = await cfg.send({
        ...{ resource: cfg.resource, seq, key, body, resent: cfg.resent.has(seq), update },
        get records() {
          return chunk.records();
        },
      });
    } catch (err) {
      await this.failed(chunk, key, err, resend);
      return;
    }
    const retries = res.retries ?? 0;
    c.requests += 1 + retries;
    c.retries += retries;
    this.consecutiveFailures = 0;
    const replay = res.replayed === true && retries === 0;
    const answer = chunkOutcome(chunk.lines.length, res.envelope);
    const out = replay && chunk.absent ? deletedSince(answer, chunk.lines, chunk.absent) : answer;
    // a replay on the first attempt answers a request of an earlier run: created then
    if (replay) c.skipped += out.created;
    else if (chunk.update) c.updated += out.created;
    else c.created += out.created;
    c.failed += chunk.lines.length - out.created;
    await this.finish(chunk, key, out, resend);
  }

  private async failed(chunk: Chunk, key: string, err: unknown, resend?: Resend[]): Promise<void> {
    const { cfg, c } = this;
    // stopped by Ctrl-C before the request went out (the sender's contract): not in doubt
    if (cfg.signal?.aborted && err instanceof InterruptedError) {
      c.chunks--;
      await cfg.journal?.unsent(chunk.seq).catch(() => undefined);
      return;
    }
    c.requests += 1;
    const aborted = cfg.signal?.aborted === true;
    // it never reached the API (no connection, the proxy refused the tunnel or its password, no TLS
    // trust): nothing written, and every later chunk would fail alike: stop, the chunk not sent
    const unreached = neverSent(err);
    if (isFatalSendError(err) || unreached || (aborted && !(err instanceof CrmError))) {
      // refused whole (a wrong key or scope), or never reached: nothing written, so not in doubt (not sent); a rerun sends it
      if (err instanceof CrmError && (isRefusal(err) || unreached))
        await cfg.journal?.unsent(chunk.seq).catch(() => undefined);
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
      const message = `the server refused the whole chunk (lines ${chunk.lines[0]}–${chunk.lines.at(-1)}), none of its rows was created: ${e.message}`;
      const rejects = chunk.lines.map((_l, i) => ({ i, code: e.code ?? e.name, message }));
      this.reasons.add(e.code ?? e.name, `the server refused the whole chunk: ${e.message}`, rejects.length);
      await this.finish(chunk, key, { ids: Array<null>(rejects.length).fill(null), rejects }, resend, false);
    } else this.inDoubt(chunk, e.code ?? e.name, e.message);
    if (this.consecutiveFailures >= cfg.maxConsecutiveFailures && !aborted)
      this.fatal ??= stoppedAfterFailures(e, this.consecutiveFailures);
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

  /**
   * A row a request (an update, delete or link; a reconcile's updates and creates): the first ALIKE_ROWS rows answered
   * all failing with one same error stop the run, as a create's first chunk does (failedAlike); a row that did not fail
   * ends the watch.
   */
  private firstRowsAlike(chunk: Chunk, rejects: readonly ChunkReject[]): void {
    const first = this.firstRejects;
    if (first === undefined) return;
    if (rejects.length !== chunk.lines.length) return void (this.firstRejects = undefined);
    first.push(...rejects);
    if (first.length < ALIKE_ROWS) return;
    this.firstRejects = undefined;
    this.fatal ??= failedAlike(first.length, first, this.c, `the first ${first.length} rows answered: they`);
  }

  /** A chunk answered in this run: its rows' outputs, and the journal (rows sent again: merged into each chunk's earlier answer). */
  private async finish(chunk: Chunk, key: string, { ids, rejects }: Answer, resend?: Resend[], tally = true) {
    if (!this.cfg.op && !this.cfg.updateOp && this.c.chunks === 1 && chunk.seq < this.cfg.lastChunk)
      this.fatal ??= failedAlike(chunk.lines.length, rejects, this.c);
    else if (this.cfg.op || this.cfg.updateOp) this.firstRowsAlike(chunk, rejects);
    const answers = resend
      ? mergeAnswers(resend, ids, rejects).map((a, j) => ({ ...a, chunk: resend[j]!.whole }))
      : [{ ids, rejects, chunk }];
    for (const a of answers) {
      this.files.answered(a.chunk, a.ids, a.rejects, tally);
      if (!a.chunk.update)
        await this.cfg.match?.created(a.chunk, a.ids).catch((err: unknown) => this.journalFailed(err));
    }
    // together: one write and fsync
    const journal = this.cfg.journal;
    if (journal)
      await Promise.all(
        answers.map((a) =>
          journal.record({ seq: a.chunk.seq, key, lines: a.chunk.lines, ids: a.ids, rejects: a.rejects }),
        ),
      ).catch((err: unknown) => this.journalFailed(err));
  }
}
