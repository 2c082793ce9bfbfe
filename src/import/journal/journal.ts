// A job's journal (CONTRACT §7): per (content, resource, base URL, key) a JSON-lines file in the journal folder: a
// header pinning the plan, then `sent`, `unsent`, `chunk` (fsynced) and `complete` lines. The header is written with
// the first line a run journals: a run refused before its first request leaves none. A torn last line is not JSON
// and is cut off; the earlier format's `"sum"` is ignored. Rows of answered chunks sent again together go under
// one `sent` line naming them all (`parts`): until every one of those chunks has its answer journaled, a resume sends
// them together again under that key (pinned). Below: the journal of a run, open (ImportJournal).
import { createHash } from 'node:crypto';
import { fdatasyncSync, writeSync } from 'node:fs';
import { open, rename, truncate, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { UsageError } from '../../http/errors.js';
import { atExit, writeFileAtomic } from '../../util/atomic-file.js';
import { exists as there } from '../../util/fs.js';
import { streamLines } from '../../util/lines.js';
import { newRunId } from '../check/chunker.js';
import type { Typing } from '../input/typing.js';
import {
  journalFolder,
  trimBase,
  type CompleteInfo,
  type FinishedChunk,
  type JournalIdentity,
  type WayBackNames,
} from '../shapes.js';
import { ChunkIndex, DONE, parseLine, RESENDING, SENT, type PinnedResend, type ResentParts } from './chunk-index.js';

export {
  journalFolder,
  trimBase,
  type ChunkReject,
  type CompleteInfo,
  type FinishedChunk,
  type JournalIdentity,
} from '../shapes.js';
export { parseLine, type PinnedResend, type ResentParts } from './chunk-index.js';
export const JOURNAL_VERSION = 1;

export interface HeaderLine {
  type: 'header';
  version: number;
  resource: string;
  base_url: string;
  key_id?: string;
  key_mask?: string;
  /** JournalIdentity.operation */
  operation?: string;
  /** JournalIdentity.options */
  options?: string;
  /** salts every Idempotency-Key of this journal's run (chunkKey); absent in journals from before run ids */
  run_id?: string;
  content_sha256: string;
  plan: string;
  /** the text columns its cells are sent typed as (columnTyping), for a resume; absent when none */
  typing?: Typing;
  /** a delete's backup file (absolute): a rerun adds to it and names it */
  backup?: string;
  /** a reconcile's way-back files (files/way-back.ts wayBackNames): a resumed run adds to them */
  way_back?: WayBackNames;
  input: string;
  created_at: string;
}

/** sha256 of the API key, truncated: tells keys apart without revealing them. */
export function keyIdentity(apiKey: string | undefined): string | undefined {
  return apiKey ? createHash('sha256').update(`crm-key\0${apiKey}`).digest('hex').slice(0, 16) : undefined;
}

/** What a journal's job was, for messages: `imported into contacts`, `used to update contacts`. */
export const jobOf = (id: Pick<JournalIdentity, 'resource' | 'operation'>): string =>
  id.operation ? `used to ${id.operation}` : `imported into ${id.resource}`;

export function journalPath(dir: string, id: JournalIdentity): string {
  const key = id.keyId ? `\0key:${id.keyId}` : '';
  const op = id.operation ? `\0op:${id.operation}` : '';
  const options = id.options ? `\0options:${id.options}` : '';
  const name = createHash('sha256')
    .update(`${id.contentSha256}\0${id.resource}\0${trimBase(id.baseUrl)}${key}${op}${options}`)
    .digest('hex');
  return join(dir, `${name}.jsonl`);
}

/** Where an import's journal is: its own file, or one from before keys were part of the name (adopted on open). */
export interface JournalFile {
  /** the file to read: this identity's, or the older one */
  path: string;
  own: string;
  exists: boolean;
}

export async function findJournal(dir: string, identity: JournalIdentity): Promise<JournalFile> {
  const own = journalPath(dir, identity);
  if (!identity.keyId || (await there(own))) return { path: own, own, exists: await there(own) };
  const legacy = journalPath(dir, { ...identity, keyId: undefined });
  const h = (await there(legacy)) ? await readHeader(legacy) : undefined;
  return h && h.key_id === undefined ? { path: legacy, own, exists: true } : { path: own, own, exists: false };
}

/** The first or last complete line of a file (64 KiB from that end), parsed. */
async function edgeLine(path: string, end: 'first' | 'last'): Promise<Record<string, unknown> | undefined> {
  const fh = await open(path, 'r').catch(() => undefined);
  if (!fh) return undefined;
  try {
    const { size } = await fh.stat();
    const n = Math.min(size, 64 * 1024);
    const buf = Buffer.alloc(n);
    await fh.read(buf, 0, n, end === 'first' ? 0 : size - n);
    const text = buf.toString('utf8');
    if (end === 'first') return parseLine(text.slice(0, Math.max(0, text.indexOf('\n'))));
    const stop = text.lastIndexOf('\n');
    const start = text.lastIndexOf('\n', stop - 1) + 1;
    return stop < 0 || (start === 0 && size > n) ? undefined : parseLine(text.slice(start, stop));
  } catch {
    return undefined;
  } finally {
    await fh.close().catch(() => undefined);
  }
}

export async function readHeader(path: string): Promise<HeaderLine | undefined> {
  const h = await edgeLine(path, 'first');
  return h?.type === 'header' ? (h as unknown as HeaderLine) : undefined;
}

/** The `complete` line of a journal, when it is its last line. */
export async function readComplete(path: string): Promise<CompleteInfo | undefined> {
  const v = await edgeLine(path, 'last');
  return v?.type === 'complete' ? { ...v, at: String(v.at) } : undefined;
}

export const jsonLine = (value: object): string => `${JSON.stringify(value)}\n`;

interface Loaded {
  header: HeaderLine;
  index: ChunkIndex;
  completed?: CompleteInfo;
  /** bytes up to the end of the last complete line */
  validLength: number;
}

async function loadJournal(path: string): Promise<Loaded | undefined> {
  const fh = await open(path, 'r').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (!fh) return undefined;
  try {
    let header: HeaderLine | undefined;
    let completed: CompleteInfo | undefined;
    const index = new ChunkIndex();
    const validLength = await streamLines(fh, (text, offset, length) => {
      if (offset === 0) header = parseLine(text) as HeaderLine | undefined;
      else if (text.startsWith('{"type":"complete"')) {
        const c = parseLine(text);
        if (c) completed = { ...c, at: String(c.at) };
      } else {
        // a run after the finished one (sending rejected rows again) that did not finish: not finished
        completed = undefined;
        index.add(text, offset, length);
      }
    });
    if (header?.type !== 'header' || header.version !== JOURNAL_VERSION) {
      throw new UsageError(`the import journal ${path} is damaged or from another version`, {
        hint: 'rerun with --no-resume to start over (the server still replays chunks it saw in the last 24 h)',
      });
    }
    return { header, index, completed, validLength };
  } finally {
    await fh.close().catch(() => undefined);
  }
}

export class ImportJournal {
  private chain: Promise<void> = Promise.resolve();
  /** the lines waiting to be written together, and when they are synced */
  private group: { texts: string[]; done: Promise<void> } | undefined;
  private recorded = 0;
  /** opened on the first get(), kept for the run */
  private reader: Promise<FileHandle> | undefined;
  /** lines queued but not yet written: an answer that arrived is journaled even on a forced exit */
  private readonly unwritten = new Set<string>();
  private readonly withdraw: () => void;
  /** the file open for appending: a journal on disk's at once, a new one's once its header is written (file()) */
  private fh: FileHandle | undefined;
  private opening: Promise<FileHandle> | undefined;

  private constructor(
    readonly path: string,
    /** salts this run's keys (chunkKey): from the header; '' for a journal from before run ids */
    readonly runId: string,
    private readonly index: ChunkIndex,
    /** the `complete` line of an earlier run */
    readonly completed: CompleteInfo | undefined,
    fh: FileHandle | undefined,
    /** a new journal's header, written at its first write; neither it nor `fh`: read only (peek) */
    private readonly header?: HeaderLine,
  ) {
    this.fh = fh;
    this.opening = fh && Promise.resolve(fh);
    this.withdraw = fh || header ? atExit(() => this.writeNow()) : () => false;
  }

  /** On a forced exit (a second Ctrl-C): the queued lines, written and synced synchronously. */
  private writeNow(): void {
    // a new journal whose header is not written yet has sent nothing: nothing to keep
    if (!this.fh || this.fh.fd < 0 || this.unwritten.size === 0) return;
    // appended (O_APPEND): a line an async write also got out is only there twice, which the index ignores
    for (const text of this.unwritten) writeSync(this.fh.fd, text);
    fdatasyncSync(this.fh.fd);
  }

  get resumedChunks(): number {
    return this.index.finished;
  }

  /** finished chunks: loaded from earlier runs, plus those recorded by this one */
  get size(): number {
    return this.index.finished + this.recorded;
  }

  /** Sequence numbers of chunks an earlier run sent without journaling an answer (in flight at a crash, or failed). */
  inDoubt(): number[] {
    return [...this.index.state.keys()].filter(
      (i) => this.index.state[i] === SENT || this.index.state[i] === RESENDING,
    );
  }

  /** Load (resume) or create the journal of an import; one from before keys were recorded becomes this key's. */
  static async open(dir: string, identity: JournalIdentity, opts: OpenJournalOptions): Promise<ImportJournal> {
    journalFolder(dir);
    const file = opts.file ?? (await findJournal(dir, identity));
    const loaded = opts.resume ? await loadJournal(file.path) : undefined;
    if (loaded && file.path !== file.own) await rename(file.path, file.own);
    else if (file.path !== file.own) await unlink(file.path).catch(() => undefined);
    if (loaded) {
      if (loaded.header.plan !== opts.plan) {
        throw new UsageError(
          identity.operation
            ? `an earlier run of this file (${identity.operation}) used another column mapping; resuming with other rows could send rows twice`
            : `an earlier import of this file into ${identity.resource} used another --chunk-size or column mapping; resuming with different chunks could create rows twice`,
          { hint: `rerun with the same options as before, or with --no-resume to start over (journal: ${file.own})` },
        );
      }
      await truncate(file.own, loaded.validLength);
      return new ImportJournal(
        file.own,
        loaded.header.run_id ?? '',
        loaded.index,
        loaded.completed,
        await open(file.own, 'a', 0o600),
      );
    }
    // written by the first line this run journals (file()): a run refused or stopped before its first request
    // leaves no journal, so its rerun is a new run (typed and mapped as the records are then), not a resume
    const header: HeaderLine = {
      type: 'header',
      version: JOURNAL_VERSION,
      resource: identity.resource,
      base_url: identity.baseUrl,
      ...(identity.keyId ? { key_id: identity.keyId } : {}),
      ...(identity.keyMask ? { key_mask: identity.keyMask } : {}),
      ...(identity.operation ? { operation: identity.operation } : {}),
      ...(identity.options ? { options: identity.options } : {}),
      run_id: opts.runId ?? newRunId(),
      content_sha256: identity.contentSha256,
      plan: opts.plan,
      ...(opts.typing?.length ? { typing: opts.typing } : {}),
      ...(opts.backup ? { backup: opts.backup } : {}),
      ...(opts.wayBack ? { way_back: opts.wayBack } : {}),
      input: opts.input,
      created_at: new Date(opts.now).toISOString(),
    };
    return new ImportJournal(file.own, header.run_id!, new ChunkIndex(), undefined, undefined, header);
  }

  /** A new reconcile's way-back files, named in its header before it is written (their first line precedes it). */
  nameWayBack(names: WayBackNames): void {
    if (this.header && !this.fh) this.header.way_back = names;
  }

  /** A new journal's header written now, not at the first request (a resumed reconcile: stage.ts). */
  async begin(): Promise<void> {
    await this.file();
  }

  static async peek(dir: string, identity: JournalIdentity, file?: JournalFile): Promise<ImportJournal | undefined> {
    const path = (file ?? (await findJournal(dir, identity))).path;
    const loaded = await loadJournal(path);
    return loaded && new ImportJournal(path, loaded.header.run_id ?? '', loaded.index, loaded.completed, undefined);
  }

  /**
   * The rows of answered chunk `seq` an earlier run sent again, with rows of other chunks, in a request not every one
   * of whose chunks has its answer journaled: sent again together under its key (the server replays it if it made
   * them), whatever answers were journaled since.
   */
  pinned(seq: number): PinnedResend | undefined {
    const open = this.index.resends.get(seq);
    const part = open?.parts.find(([s]) => s === seq);
    return open && part && { key: open.key, idx: part[1], parts: open.parts.length };
  }

  /** The finished chunk `seq` of an earlier run (its last answer), its line read back from the file; the caller checks its lines. */
  async get(seq: number): Promise<FinishedChunk | undefined> {
    if (this.index.state[seq] !== DONE && this.index.state[seq] !== RESENDING) return undefined;
    const buf = Buffer.alloc(this.index.lengths[seq]!);
    await (await (this.reader ??= open(this.path, 'r'))).read(buf, 0, buf.length, this.index.offsets[seq]);
    const v = parseLine(buf.toString('utf8')) as (FinishedChunk & { type: string }) | undefined;
    if (v?.type !== 'chunk') return undefined;
    return { seq: v.seq, key: v.key, lines: v.lines, ids: v.ids, rejects: v.rejects };
  }

  /**
   * A chunk is about to be sent: written, not fsynced (the next record() carries it), not queued behind fsyncs. Rows of
   * answered chunks sent again: `parts` names them all, in one line (a line is whole or cut off: never half a request).
   */
  async sent(seq: number, key: string, parts?: ResentParts): Promise<void> {
    await (await this.file()).write(jsonLine({ type: 'sent', seq, key, ...(parts ? { parts } : {}) }), null, 'utf8');
  }

  /** A request journaled by sent() never went out; not for a chunk an earlier run left in doubt (nor its request's). */
  async unsent(seq: number): Promise<void> {
    const state = this.index.state[seq];
    if (state !== SENT && state !== RESENDING && !this.index.resends.has(seq))
      await (await this.file()).write(jsonLine({ type: 'unsent', seq }), null, 'utf8');
  }

  /** Append a finished chunk and fsync it. Appends are serialised; a failure rejects this call. */
  async record(chunk: FinishedChunk): Promise<void> {
    await this.append(jsonLine({ type: 'chunk', ...chunk }));
    this.recorded++;
  }

  /** Mark the import finished, with its totals: a rerun of the same file sends nothing. */
  complete(now: number, totals: Omit<CompleteInfo, 'at'> = {}): Promise<void> {
    return this.append(jsonLine({ type: 'complete', at: new Date(now).toISOString(), ...totals }));
  }

  /** The file to append to; a new journal's header is written first, once (replacing what was there: --no-resume). */
  private file(): Promise<FileHandle> {
    const header = this.header;
    if (!this.opening && !header) return Promise.reject(new Error(`${this.path} was opened read-only`));
    return (this.opening ??= writeFileAtomic(this.path, jsonLine(header!))
      .then(() => open(this.path, 'a', 0o600))
      .then((fh) => (this.fh = fh)));
  }

  /**
   * Appends join the group that waits for the write and fsync under way; the group is written with one
   * write and one fsync, and each append settles with it (group commit: an fsync per chunk held every
   * slot of the pool behind the one before).
   */
  private append(text: string): Promise<void> {
    this.unwritten.add(text);
    if (!this.group) {
      const texts: string[] = [];
      const done = this.chain.then(async () => {
        this.group = undefined;
        const fh = await this.file();
        await fh.write(texts.join(''), null, 'utf8');
        for (const t of texts) this.unwritten.delete(t);
        await fh.datasync();
      });
      this.group = { texts, done };
      this.chain = done.catch(() => undefined);
    }
    this.group.texts.push(text);
    return this.group.done;
  }

  async close(): Promise<void> {
    await this.chain;
    this.withdraw();
    const reader = this.reader;
    this.reader = undefined;
    await reader?.then((r) => r.close()).catch(() => undefined);
    // a journal never written was never opened
    const fh = await this.opening?.catch(() => undefined);
    await fh?.close();
  }
}

export interface OpenJournalOptions {
  /** fingerprint of how rows become chunks (chunk size, column mapping) */
  plan: string;
  /** the typing of its text cells, pinned for a resume (HeaderLine.typing) */
  typing?: Typing;
  /** HeaderLine.backup */
  backup?: string;
  /** HeaderLine.way_back */
  wayBack?: WayBackNames;
  /** false (`--no-resume`): an existing journal is replaced */
  resume: boolean;
  /** the input's absolute path (or `-`): the changed-file check */
  input: string;
  now: number;
  /** findJournal's answer, when the caller has it */
  file?: JournalFile;
  /** the run id of a new journal (tests); default: a fresh random one */
  runId?: string;
}
