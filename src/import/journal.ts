// The import journal (CONTRACT §7): which chunks of an import already have their answer, so a rerun
// skips them without sending anything, even after the server forgot its idempotency keys.
//
// One file per (file content, resource, base URL, API key identity) in the config folder's
// `imports/`, as JSON lines: a header (written atomically: temp file, fsync, rename), then
// - `sent`: a chunk is about to be sent (written before the request; not fsynced on its own, the
//   next fsync carries it; a kill -9 cannot lose a completed write),
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
import { createHash } from 'node:crypto';
import { open, readdir, rename, stat, truncate, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { UsageError } from '../http/errors.js';
import { writeFileAtomic } from './atomic-file.js';
import { ensureDir, isStaleLeftover } from './fs-util.js';

export const JOURNAL_VERSION = 1;

export interface JournalIdentity {
  /** sha256 hex of the input file's bytes */
  contentSha256: string;
  resource: string;
  baseUrl: string;
  /** a non-secret identity of the API key (keyIdentity()); never the key itself */
  keyId?: string;
}

/** sha256 of the API key, truncated: tells keys apart without revealing them. */
export function keyIdentity(apiKey: string | undefined): string | undefined {
  return apiKey ? createHash('sha256').update(`crm-key\0${apiKey}`).digest('hex').slice(0, 16) : undefined;
}

export interface ChunkReject {
  /** item index in the chunk */
  i: number;
  code: string;
  message: string;
}

export interface FinishedChunk {
  seq: number;
  key: string;
  /** item index → input line */
  lines: number[];
  /** item index → created id (null: not created, see rejects; or created without an id) */
  ids: Array<string | null>;
  rejects: ChunkReject[];
}

/** The totals of a finished import, stored with its `complete` line. */
export interface CompleteInfo {
  at: string;
  /** the journal was cut down to its header and this line (pruning): no per-row ids any more */
  compacted?: boolean;
  rows?: number;
  created?: number;
  failed?: number;
  invalid?: number;
}

interface HeaderLine {
  type: 'header';
  version: number;
  resource: string;
  base_url: string;
  key_id?: string;
  content_sha256: string;
  plan: string;
  input: string;
  created_at: string;
}

const trimBase = (u: string): string => u.replace(/\/+$/, '');

export function journalId(identity: JournalIdentity): string {
  const key = identity.keyId ? `\0key:${identity.keyId}` : '';
  return createHash('sha256')
    .update(`${identity.contentSha256}\0${identity.resource}\0${trimBase(identity.baseUrl)}${key}`)
    .digest('hex');
}

export function journalPath(dir: string, identity: JournalIdentity): string {
  return join(dir, `${journalId(identity)}.jsonl`);
}

function checksum(json: string): string {
  return createHash('sha256').update(json).digest('hex').slice(0, 16);
}

/** `{…, "sum": …}`: the JSON of the value with a checksum of that JSON as its last property. */
export function sealLine(value: object): string {
  const json = JSON.stringify(value);
  return `${json.slice(0, -1)},"sum":"${checksum(json)}"}\n`;
}

/** The value of a sealed line, or undefined when it is torn or altered. */
export function openLine(line: string): Record<string, unknown> | undefined {
  const m = /^(.*),"sum":"([0-9a-f]{16})"\}$/s.exec(line);
  if (!m) return undefined;
  const json = `${m[1]}}`;
  if (checksum(json) !== m[2]) return undefined;
  try {
    return JSON.parse(json) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/**
 * The type and seq of a sealed line, checking its checksum but parsing only its start (the
 * index needs no ids: parsing every chunk line's ids would only make garbage); undefined when
 * torn or altered.
 */
function lineKind(line: string): { type: string; seq?: number } | undefined {
  const m = /^(.*),"sum":"([0-9a-f]{16})"\}$/s.exec(line);
  if (!m || checksum(`${m[1]}}`) !== m[2]) return undefined;
  const k = /^\{"type":"([a-z]+)"(?:,"seq":(\d+))?/.exec(line);
  return k ? { type: k[1]!, ...(k[2] !== undefined ? { seq: Number(k[2]) } : {}) } : undefined;
}

/** Calls `onLine(text, offset, length)` for each complete line; returns the bytes up to the last one. */
async function streamLines(fh: FileHandle, onLine: (line: string, offset: number, length: number) => void): Promise<number> {
  const buf = Buffer.alloc(1024 * 1024);
  let carry: Buffer = Buffer.alloc(0);
  let pos = 0;
  let lineStart = 0;
  for (;;) {
    const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
    if (bytesRead === 0) break;
    pos += bytesRead;
    const data = carry.length ? Buffer.concat([carry, buf.subarray(0, bytesRead)]) : buf.subarray(0, bytesRead);
    let from = 0;
    for (let nl = data.indexOf(10, from); nl !== -1; nl = data.indexOf(10, from)) {
      onLine(data.toString('utf8', from, nl), lineStart, nl - from);
      lineStart += nl - from + 1;
      from = nl + 1;
    }
    carry = Buffer.from(data.subarray(from));
  }
  return lineStart;
}

/** The last complete line of a file, reading only its end (undefined when there is none). */
async function lastLine(path: string): Promise<string | undefined> {
  let fh: FileHandle | undefined;
  try {
    fh = await open(path, 'r');
    const { size } = await fh.stat();
    const n = Math.min(size, 64 * 1024);
    const buf = Buffer.alloc(n);
    await fh.read(buf, 0, n, size - n);
    const text = buf.toString('utf8');
    const end = text.lastIndexOf('\n');
    if (end < 0) return undefined;
    const start = text.lastIndexOf('\n', end - 1) + 1;
    return start === 0 && size > n ? undefined : text.slice(start, end);
  } catch {
    return undefined;
  } finally {
    await fh?.close().catch(() => undefined);
  }
}

/** The `complete` line of a journal, when it is its last line. */
export async function readComplete(path: string): Promise<CompleteInfo | undefined> {
  const line = await lastLine(path);
  const v = line === undefined ? undefined : openLine(line);
  return v?.type === 'complete' ? ({ ...v, at: String(v.at) } as CompleteInfo) : undefined;
}

/** Growable per-seq arrays: where each finished chunk's line is, and which chunks were sent. */
class ChunkIndex {
  offsets = new Float64Array(1024);
  lengths = new Uint32Array(1024);
  /** 0 nothing, 1 sent (no answer journaled), 2 finished */
  state = new Uint8Array(1024);
  finished = 0;

  private grow(seq: number): void {
    if (seq < this.state.length) return;
    let n = this.state.length;
    while (n <= seq) n *= 2;
    const o = new Float64Array(n);
    o.set(this.offsets);
    const l = new Uint32Array(n);
    l.set(this.lengths);
    const s = new Uint8Array(n);
    s.set(this.state);
    this.offsets = o;
    this.lengths = l;
    this.state = s;
  }

  sent(seq: number): void {
    this.grow(seq);
    if (this.state[seq] === 0) this.state[seq] = 1;
  }

  done(seq: number, offset: number, length: number): void {
    this.grow(seq);
    if (this.state[seq] !== 2) this.finished++;
    this.state[seq] = 2;
    this.offsets[seq] = offset;
    this.lengths[seq] = length;
  }

  /** chunks sent but never answered (in flight at a crash, or failed) */
  inDoubt(): number[] {
    const out: number[] = [];
    for (let i = 0; i < this.state.length; i++) if (this.state[i] === 1) out.push(i);
    return out;
  }
}

interface Loaded {
  header: HeaderLine;
  index: ChunkIndex;
  completed?: CompleteInfo;
  /** bytes up to the end of the last complete line */
  validLength: number;
}

function damaged(path: string): UsageError {
  return new UsageError(`the import journal ${path} is damaged or from another version`, {
    hint: 'rerun with --no-resume to start over (the server still replays chunks it saw in the last 24 h)',
  });
}

async function load(path: string): Promise<Loaded | undefined> {
  let fh: FileHandle;
  try {
    fh = await open(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    let header: HeaderLine | undefined;
    let first = true;
    let completed: CompleteInfo | undefined;
    const index = new ChunkIndex();
    const validLength = await streamLines(fh, (line, offset, length) => {
      if (first) {
        first = false;
        header = openLine(line) as unknown as HeaderLine | undefined;
        return;
      }
      const v = lineKind(line);
      // a damaged line is skipped: its chunk is sent again under the same key
      if (!v) return;
      const seq = v.seq;
      if (v.type === 'chunk' && seq !== undefined && seq > 0) index.done(seq, offset, length);
      else if (v.type === 'sent' && seq !== undefined && seq > 0) index.sent(seq);
      else if (v.type === 'complete') {
        const c = openLine(line);
        if (c) completed = { ...c, at: String(c.at) } as CompleteInfo;
      }
    });
    if (!header || header.type !== 'header' || header.version !== JOURNAL_VERSION) throw damaged(path);
    return { header, index, completed, validLength };
  } finally {
    await fh.close().catch(() => undefined);
  }
}

export interface OpenJournalOptions {
  /** fingerprint of how rows become chunks (chunk size, column mapping) */
  plan: string;
  /** false (`--no-resume`): ignore an existing journal and replace it */
  resume: boolean;
  /** the input's name, for people reading the folder */
  input: string;
  now: number;
}

/** The journal of this identity, or of the same import journaled before keys were part of the name. */
async function existingPath(dir: string, identity: JournalIdentity): Promise<string> {
  const path = journalPath(dir, identity);
  if (!identity.keyId) return path;
  const legacy = journalPath(dir, { ...identity, keyId: undefined });
  const [here, old] = await Promise.all([stat(path).then(() => true, () => false), stat(legacy).then(() => true, () => false)]);
  if (here || !old) return path;
  const h = await readHeader(legacy);
  return h && h.key_id === undefined ? legacy : path;
}

export class ImportJournal {
  private chain: Promise<void> = Promise.resolve();
  private recorded = 0;
  /** opened on the first get(), kept for the run */
  private reader: Promise<FileHandle> | undefined;

  private constructor(
    readonly path: string,
    private readonly index: ChunkIndex,
    /** chunks finished by an earlier run */
    readonly resumedChunks: number,
    readonly completed: CompleteInfo | undefined,
    private readonly fh: FileHandle | undefined,
  ) {}

  get completedAt(): string | undefined {
    return this.completed?.at;
  }

  /** Sequence numbers of chunks an earlier run sent without journaling an answer. */
  inDoubt(): number[] {
    return this.index.inDoubt();
  }

  /** Whether this identity has a journal (also one from before keys were recorded). */
  static async exists(dir: string, identity: JournalIdentity): Promise<boolean> {
    return stat(await existingPath(dir, identity)).then(() => true, () => false);
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
    const loaded = opts.resume ? await load(path) : undefined;
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
    const loaded = await load(path);
    return loaded && new ImportJournal(path, loaded.index, loaded.index.finished, loaded.completed, undefined);
  }

  /**
   * The finished chunk `seq`, from an earlier run, when its key matches: its line is read back
   * from the journal file, so nothing of it is held in memory until the sending pass reaches it.
   */
  async get(seq: number, key: string): Promise<FinishedChunk | undefined> {
    if (seq >= this.index.state.length || this.index.state[seq] !== 2) return undefined;
    const length = this.index.lengths[seq]!;
    const buf = Buffer.alloc(length);
    this.reader ??= open(this.path, 'r');
    await (await this.reader).read(buf, 0, length, this.index.offsets[seq]!);
    const v = openLine(buf.toString('utf8')) as unknown as (FinishedChunk & { type: string }) | undefined;
    if (!v || v.type !== 'chunk' || v.key !== key) return undefined;
    return { seq: v.seq, key: v.key, lines: v.lines, ids: v.ids, rejects: v.rejects };
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
    const p = this.chain.then(async () => {
      await fh.write(line, null, 'utf8');
      await fh.datasync();
      then();
    });
    this.chain = p.catch(() => undefined);
    return p;
  }

  async close(): Promise<void> {
    await this.chain;
    const reader = this.reader;
    this.reader = undefined;
    await reader?.then((r) => r.close()).catch(() => undefined);
    await this.fh?.close();
  }
}

/** The header of a journal file, reading only its start. */
async function readHeader(path: string): Promise<HeaderLine | undefined> {
  let fh: FileHandle | undefined;
  try {
    fh = await open(path, 'r');
    const buf = Buffer.alloc(64 * 1024);
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    const text = buf.subarray(0, bytesRead).toString('utf8');
    const nl = text.indexOf('\n');
    const h = nl > 0 ? (openLine(text.slice(0, nl)) as unknown as HeaderLine | undefined) : undefined;
    return h?.type === 'header' ? h : undefined;
  } catch {
    return undefined;
  } finally {
    await fh?.close().catch(() => undefined);
  }
}

export interface EarlierImport {
  path: string;
  createdAt: string;
  /** the journal has more than its header: something was sent */
  sentSomething: boolean;
}

/**
 * Journals of earlier imports of the same input path into the same resource and base URL with the
 * same key (or a journal from before keys were recorded), but of other content: the file was
 * changed since. Its rows now fall into other chunks with other keys, so rows created then would
 * be created again.
 */
export async function findEarlierImports(
  dir: string,
  match: { input: string; resource: string; baseUrl: string; contentSha256: string; keyId?: string },
): Promise<EarlierImport[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const out: EarlierImport[] = [];
  for (const name of names) {
    if (!name.endsWith('.jsonl')) continue;
    const path = join(dir, name);
    const h = await readHeader(path);
    if (
      h &&
      h.input === match.input &&
      h.resource === match.resource &&
      trimBase(h.base_url) === trimBase(match.baseUrl) &&
      (h.key_id === undefined || h.key_id === match.keyId) &&
      h.content_sha256 !== match.contentSha256
    ) {
      const size = await stat(path).then((s) => s.size, () => 0);
      out.push({ path, createdAt: h.created_at, sentSomething: size > Buffer.byteLength(sealLine(h)) });
    }
  }
  return out;
}

export interface PruneOptions {
  /** finished journals older than this are compacted (default 7 days) */
  compactAfterMs?: number;
  /** unfinished journals older than this go (default 30 days) */
  maxAgeMs?: number;
  /** compacted journals older than this go (default 365 days) */
  compactedMaxAgeMs?: number;
  /** beyond this total, the oldest finished journals are compacted first (default 32 MiB) */
  maxTotalBytes?: number;
  /** never touched (the journal of the import about to run) */
  keep?: string;
}

/**
 * A finished journal cut down to its header and `complete` line (marked `compacted`): a few hundred
 * bytes that still say "this file was imported" — a rerun sends nothing — while the per-row ids
 * (only needed to rebuild --results or a lost rejects file) are dropped. Written atomically.
 */
export async function compactJournal(path: string): Promise<boolean> {
  const header = await readHeader(path);
  const done = await readComplete(path);
  if (!header || !done || done.compacted) return false;
  const { type: _t, sum: _s, ...rest } = done as CompleteInfo & { type?: string; sum?: string };
  await writeFileAtomic(path, sealLine(header) + sealLine({ type: 'complete', ...rest, compacted: true }));
  return true;
}

/**
 * Keep the folder bounded without ever forgetting that a file was imported: finished journals are
 * compacted (compactJournal) after a week, or earlier, oldest first, while all journals together
 * exceed 32 MiB; compacted ones go after a year, unfinished ones after 30 days (far past the
 * server's 24 h of idempotency memory); leftovers (temporary files, buffered stdin) of processes
 * that are gone, or older than a day. `keep` is never touched. Returns how many files were removed
 * or compacted.
 */
export async function pruneJournals(dir: string, now: number, opts: PruneOptions = {}): Promise<number> {
  const compactAfter = opts.compactAfterMs ?? 7 * 86_400_000;
  const maxAge = opts.maxAgeMs ?? 30 * 86_400_000;
  const compactedMaxAge = opts.compactedMaxAgeMs ?? 365 * 86_400_000;
  const maxTotal = opts.maxTotalBytes ?? 32 * 1024 * 1024;
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0;
  }
  let changed = 0;
  const remove = async (path: string): Promise<void> => {
    try {
      await unlink(path);
      changed++;
    } catch {
      // gone already, or someone else's concern
    }
  };
  const compact = async (path: string): Promise<number> => {
    try {
      if (!(await compactJournal(path))) return 0;
      changed++;
      return (await stat(path)).size;
    } catch {
      return -1;
    }
  };
  const kept: Array<{ path: string; size: number; mtimeMs: number }> = [];
  let total = 0;
  for (const name of names) {
    const path = join(dir, name);
    try {
      const st = await stat(path);
      const age = now - st.mtimeMs;
      if (/^stdin-\d+-[0-9a-f]+\.buf$/.test(name) || /\.tmp-\d+-[0-9a-f]+$/.test(name)) {
        if (isStaleLeftover(name, age)) await remove(path);
        continue;
      }
      if (!name.endsWith('.jsonl')) continue;
      if (path === opts.keep) {
        total += st.size;
        continue;
      }
      const done = await readComplete(path);
      if (!done) {
        if (age > maxAge) await remove(path);
        else total += st.size;
      } else if (done.compacted) {
        if (age > compactedMaxAge) await remove(path);
        else total += st.size;
      } else if (age > compactAfter) {
        const size = await compact(path);
        total += size < 0 ? st.size : size;
      } else {
        kept.push({ path, size: st.size, mtimeMs: st.mtimeMs });
        total += st.size;
      }
    } catch {
      // a file that vanished or cannot be read is someone else's concern
    }
  }
  for (const k of kept.sort((a, b) => a.mtimeMs - b.mtimeMs)) {
    if (total <= maxTotal) break;
    const size = await compact(k.path);
    if (size >= 0) total -= k.size - size;
  }
  return changed;
}
