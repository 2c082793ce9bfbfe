// The import journal (CONTRACT §7): which chunks of an import already have their answer, so a rerun
// skips them without sending anything, even after the server forgot its idempotency keys.
//
// One file per (file content, resource, base URL, API key identity) in the config folder's
// `imports/`, as JSON lines: a header (written atomically: temp file, fsync, rename), then
// - `sent`: a chunk is about to be sent (written before the request; not fsynced on its own, the
//   next fsync carries it; a kill -9 cannot lose a completed write),
// - `unsent`: that request was stopped (Ctrl-C) before it went out, e.g. while it waited for the
//   rate limit, or refused whole by a 401/403/404 (a key without the scope): the chunk is not in
//   doubt after all, and not finished (a rerun sends it),
// - `chunk`: a finished chunk — its key, its rows' lines, the id created for each row or the item
//   error — appended and fsynced,
// - `complete`: every chunk is finished, with the run's totals.
// Appending instead of rewriting keeps a 200 000-row import at O(rows) disk writes, not O(rows²).
// Each line carries a checksum; a torn last line (a crash mid-append) fails it and is cut off, which
// only means that chunk is sent again, with the same Idempotency-Key, and the server replays it.
//
// Memory: a resumed journal is not loaded. It is streamed once into an index — per chunk sequence
// number, the byte offset and length of its `chunk` line and whether it was sent — and a chunk's
// line is read back (pread) when the sending pass reaches that chunk. A complete journal is
// recognised from its last line alone.
//
// The header also records the plan (chunk size, column mapping): a rerun with a different plan
// would cut the rows into different chunks with different keys and could create them twice, so
// it is refused unless `--no-resume`.
//
// Files: journal-line.ts (the line format, checksums, torn lines), journal-identity.ts (which file),
// journal-index.ts (the resume index, reading a chunk's line back), journal-prune.ts (old journals).
import { open, rename, stat, truncate, unlink, type FileHandle } from 'node:fs/promises';
import { UsageError } from '../http/errors.js';
import { fdatasyncSync, writeSync } from 'node:fs';
import { atExit, writeFileAtomic } from './atomic-file.js';
import { ensureDir } from './fs-util.js';
import { existingPath, journalPath, type JournalIdentity } from './journal-identity.js';
import { ChunkIndex, loadJournal, readChunk } from './journal-index.js';
import { JOURNAL_VERSION, readComplete, sealLine, type CompleteInfo, type FinishedChunk, type HeaderLine } from './journal-line.js';

export interface OpenJournalOptions {
  /** fingerprint of how rows become chunks (chunk size, column mapping) */
  plan: string;
  /** false (`--no-resume`): ignore an existing journal and replace it */
  resume: boolean;
  /** the input's name, for people reading the folder */
  input: string;
  now: number;
}

export class ImportJournal {
  private chain: Promise<void> = Promise.resolve();
  private recorded = 0;
  /** opened on the first get(), kept for the run */
  private reader: Promise<FileHandle> | undefined;
  /** lines queued but not yet written: an answer that arrived is journaled even on a forced exit */
  private readonly unwritten = new Set<string>();
  private readonly withdraw: () => void;

  private constructor(
    readonly path: string,
    private readonly index: ChunkIndex,
    /** chunks finished by an earlier run */
    readonly resumedChunks: number,
    readonly completed: CompleteInfo | undefined,
    private readonly fh: FileHandle | undefined,
  ) {
    this.withdraw = fh ? atExit(() => this.writeNow()) : () => false;
  }

  /** On a forced exit (a second Ctrl-C): the queued lines, written and synced synchronously. */
  private writeNow(): void {
    if (!this.fh || this.fh.fd < 0 || this.unwritten.size === 0) return;
    // appended (O_APPEND): a line an async write also got out is only there twice, which the index ignores
    for (const line of this.unwritten) writeSync(this.fh.fd, line);
    fdatasyncSync(this.fh.fd);
  }

  get completedAt(): string | undefined {
    return this.completed?.at;
  }

  /** Sequence numbers of chunks an earlier run sent without journaling an answer. */
  inDoubt(): number[] {
    return this.index.inDoubt();
  }

  /** Whether this identity has a journal (also one from before keys were recorded). */
  static async exists(dir: string, identity: JournalIdentity): Promise<boolean> {
    return stat(await existingPath(dir, identity)).then(
      () => true,
      () => false,
    );
  }

  /** The `complete` line of this identity's journal, reading only its end (cheap). */
  static async completedInfo(dir: string, identity: JournalIdentity): Promise<{ path: string; info: CompleteInfo } | undefined> {
    const path = await existingPath(dir, identity);
    const info = await readComplete(path);
    return info && { path, info };
  }

  /** Load (resume) or create the journal of an import. */
  static async open(dir: string, identity: JournalIdentity, opts: OpenJournalOptions): Promise<ImportJournal> {
    await ensureDir(dir);
    const fresh = journalPath(dir, identity);
    let path = await existingPath(dir, identity);
    const loaded = opts.resume ? await loadJournal(path) : undefined;
    if (loaded && path !== fresh) {
      // a journal from before keys were recorded: it becomes this key's (another key starts afresh)
      await rename(path, fresh);
      path = fresh;
    }
    if (loaded) {
      if (loaded.header.plan !== opts.plan) {
        throw new UsageError(
          `an earlier import of this file into ${identity.resource} used another --chunk-size or column mapping; resuming with different chunks could create rows twice`,
          { hint: `rerun with the same options as before, or with --no-resume to start over (journal: ${path})` },
        );
      }
      await truncate(path, loaded.validLength);
      const fh = await open(path, 'a', 0o600);
      return new ImportJournal(path, loaded.index, loaded.index.finished, loaded.completed, fh);
    }
    if (path !== fresh) await unlink(path).catch(() => undefined);
    const header: HeaderLine = {
      type: 'header',
      version: JOURNAL_VERSION,
      resource: identity.resource,
      base_url: identity.baseUrl,
      ...(identity.keyId ? { key_id: identity.keyId } : {}),
      ...(identity.keyMask ? { key_mask: identity.keyMask } : {}),
      content_sha256: identity.contentSha256,
      plan: opts.plan,
      input: opts.input,
      created_at: new Date(opts.now).toISOString(),
    };
    await writeFileAtomic(fresh, sealLine(header));
    const fh = await open(fresh, 'a', 0o600);
    return new ImportJournal(fresh, new ChunkIndex(), 0, undefined, fh);
  }

  /** Read an existing journal without creating or changing anything (dry runs). */
  static async peek(dir: string, identity: JournalIdentity): Promise<ImportJournal | undefined> {
    const path = await existingPath(dir, identity);
    const loaded = await loadJournal(path);
    return loaded && new ImportJournal(path, loaded.index, loaded.index.finished, loaded.completed, undefined);
  }

  /**
   * The finished chunk `seq`, from an earlier run, when its key matches: its line is read back
   * from the journal file, so nothing of it is held in memory until the sending pass reaches it.
   */
  async get(seq: number, key: string): Promise<FinishedChunk | undefined> {
    return readChunk(this.index, () => (this.reader ??= open(this.path, 'r')), seq, key);
  }

  /** finished chunks: loaded from earlier runs, plus those recorded by this one */
  get size(): number {
    return this.index.finished + this.recorded;
  }

  /**
   * Note that a chunk is about to be sent: written, not fsynced (the next record() carries it), and
   * not queued behind the appends being fsynced, so sending never waits for a disk flush. The file
   * is opened for appending, so each line is one write(2) at the end of the file, whole.
   */
  async sent(seq: number, key: string): Promise<void> {
    const fh = this.fh;
    if (!fh) throw new Error(`${this.path} was opened read-only`);
    await fh.write(sealLine({ type: 'sent', seq, key }), null, 'utf8');
  }

  /**
   * Note that the request of a chunk journaled by sent() was never sent (Ctrl-C stopped it before it
   * went out), so a rerun does not warn about it. Not written for a chunk an earlier run left in
   * doubt: that earlier request may still have created its rows.
   */
  async unsent(seq: number): Promise<void> {
    const fh = this.fh;
    if (!fh || this.index.isInDoubt(seq)) return;
    await fh.write(sealLine({ type: 'unsent', seq }), null, 'utf8');
  }

  /** Append a finished chunk and fsync it. Appends are serialised; a failure rejects this call. */
  record(chunk: FinishedChunk): Promise<void> {
    return this.append(sealLine({ type: 'chunk', ...chunk }), () => {
      this.recorded++;
    });
  }

  /** Mark the import finished, with its totals: a rerun of the same file sends nothing. */
  complete(now: number, totals: Omit<CompleteInfo, 'at'> = {}): Promise<void> {
    return this.append(sealLine({ type: 'complete', at: new Date(now).toISOString(), ...totals }), () => undefined);
  }

  private append(line: string, then: () => void): Promise<void> {
    const fh = this.fh;
    if (!fh) return Promise.reject(new Error(`${this.path} was opened read-only`));
    this.unwritten.add(line);
    const p = this.chain.then(async () => {
      await fh.write(line, null, 'utf8');
      this.unwritten.delete(line);
      await fh.datasync();
      then();
    });
    this.chain = p.catch(() => undefined);
    return p;
  }

  async close(): Promise<void> {
    await this.chain;
    this.withdraw();
    const reader = this.reader;
    this.reader = undefined;
    await reader?.then((r) => r.close()).catch(() => undefined);
    await this.fh?.close();
  }
}
