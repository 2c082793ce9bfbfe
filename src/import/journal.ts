// The import journal (CONTRACT §7): which chunks of an import already have their answer, so a rerun
// skips them without sending anything, even after the server forgot its idempotency keys.
//
// One file per (file content, resource, base URL) in the config folder's `imports/`, as JSON lines:
// a header (written atomically: temp file, fsync, rename), then one line per finished chunk —
// its key, its rows' lines, the id created for each row or the item error — appended and fsynced
// before the next line. Appending instead of rewriting the whole journal after every chunk keeps a
// 200 000-row import at O(rows) disk writes, not O(rows²). Each line carries a checksum; a torn
// last line (a crash mid-append) fails it and is cut off, which only means that chunk is sent
// again, with the same Idempotency-Key, and the server replays it.
//
// The header also records the plan (chunk size, column mapping): a rerun with a different plan
// would cut the rows into different chunks with different keys and could create them twice, so
// it is refused unless `--no-resume`.
import { createHash } from 'node:crypto';
import { mkdir, open, readdir, readFile, stat, truncate, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { UsageError } from '../http/errors.js';
import { writeFileAtomic } from './atomic-file.js';

export const JOURNAL_VERSION = 1;

export interface JournalIdentity {
  /** sha256 hex of the input file's bytes */
  contentSha256: string;
  resource: string;
  baseUrl: string;
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

interface HeaderLine {
  type: 'header';
  version: number;
  resource: string;
  base_url: string;
  content_sha256: string;
  plan: string;
  input: string;
  created_at: string;
}

export function journalId(identity: JournalIdentity): string {
  return createHash('sha256')
    .update(`${identity.contentSha256}\0${identity.resource}\0${identity.baseUrl.replace(/\/+$/, '')}`)
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

interface Loaded {
  header: HeaderLine;
  chunks: Map<string, FinishedChunk>;
  completedAt?: string;
  /** bytes up to the end of the last complete line */
  validLength: number;
}

async function load(path: string): Promise<Loaded | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const end = text.lastIndexOf('\n') + 1;
  const lines = text.slice(0, end).split('\n').slice(0, -1);
  const header = lines.length > 0 ? (openLine(lines[0]!) as unknown as HeaderLine | undefined) : undefined;
  if (!header || header.type !== 'header' || header.version !== JOURNAL_VERSION) {
    throw new UsageError(`the import journal ${path} is damaged or from another version`, {
      hint: 'rerun with --no-resume to start over (the server still replays chunks it saw in the last 24 h)',
    });
  }
  const chunks = new Map<string, FinishedChunk>();
  let completedAt: string | undefined;
  for (const line of lines.slice(1)) {
    const v = openLine(line);
    if (v?.type === 'chunk') {
      const c = v as unknown as FinishedChunk;
      chunks.set(c.key, { seq: c.seq, key: c.key, lines: c.lines, ids: c.ids, rejects: c.rejects });
    } else if (v?.type === 'complete') {
      completedAt = String(v.at);
    }
    // a damaged line is skipped: its chunk is sent again under the same key
  }
  return { header, chunks, completedAt, validLength: Buffer.byteLength(text.slice(0, end)) };
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

export class ImportJournal {
  private chain: Promise<void> = Promise.resolve();
  private taken = 0;
  private recorded = 0;

  private constructor(
    readonly path: string,
    private readonly chunks: Map<string, FinishedChunk>,
    /** chunks loaded from an earlier run */
    readonly resumedChunks: number,
    readonly completedAt: string | undefined,
    private readonly fh: FileHandle | undefined,
  ) {}

  /** Load (resume) or create the journal of an import. */
  static async open(dir: string, identity: JournalIdentity, opts: OpenJournalOptions): Promise<ImportJournal> {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const path = journalPath(dir, identity);
    const loaded = opts.resume ? await load(path) : undefined;
    if (loaded) {
      if (loaded.header.plan !== opts.plan) {
        throw new UsageError(
          `an earlier import of this file into ${identity.resource} used another --chunk-size or column mapping; resuming with different chunks could create rows twice`,
          { hint: `rerun with the same options as before, or with --no-resume to start over (journal: ${path})` },
        );
      }
      await truncate(path, loaded.validLength);
      const fh = await open(path, 'a', 0o600);
      return new ImportJournal(path, loaded.chunks, loaded.chunks.size, loaded.completedAt, fh);
    }
    const header: HeaderLine = {
      type: 'header',
      version: JOURNAL_VERSION,
      resource: identity.resource,
      base_url: identity.baseUrl,
      content_sha256: identity.contentSha256,
      plan: opts.plan,
      input: opts.input,
      created_at: new Date(opts.now).toISOString(),
    };
    await writeFileAtomic(path, sealLine(header));
    const fh = await open(path, 'a', 0o600);
    return new ImportJournal(path, new Map(), 0, undefined, fh);
  }

  /** Read an existing journal without creating or changing anything (dry runs). */
  static async peek(dir: string, identity: JournalIdentity): Promise<ImportJournal | undefined> {
    const path = journalPath(dir, identity);
    const loaded = await load(path);
    return loaded && new ImportJournal(path, loaded.chunks, loaded.chunks.size, loaded.completedAt, undefined);
  }

  /** The finished chunk with this key, from an earlier run. */
  get(key: string): FinishedChunk | undefined {
    return this.chunks.get(key);
  }

  /**
   * Like get(), and forgets it: a run looks each chunk up once, so a resumed journal's memory
   * shrinks as the run goes instead of holding every id of the file to the end.
   */
  take(key: string): FinishedChunk | undefined {
    const c = this.chunks.get(key);
    if (c) {
      this.chunks.delete(key);
      this.taken++;
    }
    return c;
  }

  /** finished chunks: loaded from earlier runs, plus those recorded by this one */
  get size(): number {
    return this.chunks.size + this.taken + this.recorded;
  }

  /**
   * Append a finished chunk and fsync it. Appends are serialised; a failure rejects this call.
   * Not kept in memory: this run will not look it up again.
   */
  record(chunk: FinishedChunk): Promise<void> {
    return this.append(sealLine({ type: 'chunk', ...chunk }), () => {
      this.recorded++;
    });
  }

  /** Mark the import finished: a rerun of the same file skips every chunk. */
  complete(now: number): Promise<void> {
    return this.append(sealLine({ type: 'complete', at: new Date(now).toISOString() }), () => undefined);
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

/**
 * Journals of earlier imports of the same input path into the same resource and base URL, but of
 * other content: the file was changed since. Rows already created then would be created again
 * (a changed file cuts into other chunks, with other keys), which is worth a warning.
 */
export async function findEarlierImports(
  dir: string,
  match: { input: string; resource: string; baseUrl: string; contentSha256: string },
): Promise<Array<{ path: string; createdAt: string }>> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const out: Array<{ path: string; createdAt: string }> = [];
  for (const name of names) {
    if (!name.endsWith('.jsonl')) continue;
    const h = await readHeader(join(dir, name));
    if (
      h &&
      h.input === match.input &&
      h.resource === match.resource &&
      h.base_url === match.baseUrl &&
      h.content_sha256 !== match.contentSha256
    ) {
      out.push({ path: join(dir, name), createdAt: h.created_at });
    }
  }
  return out;
}

/**
 * Remove finished journals older than `maxAgeMs` and leftovers (temporary files, buffered stdin)
 * older than a day, so the folder does not grow without end.
 */
export async function pruneJournals(dir: string, now: number, maxAgeMs = 30 * 86_400_000): Promise<number> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    const path = join(dir, name);
    try {
      const st = await stat(path);
      const age = now - st.mtimeMs;
      const leftover = /\.tmp-\d+-[0-9a-f]+$/.test(name) || /^stdin-.*\.buf$/.test(name);
      let remove = leftover && age > 86_400_000;
      if (!remove && name.endsWith('.jsonl') && age > maxAgeMs) {
        const text = await readFile(path, 'utf8');
        const last = text.trimEnd().split('\n').pop() ?? '';
        remove = openLine(last)?.type === 'complete';
      }
      if (remove) {
        await unlink(path);
        removed++;
      }
    } catch {
      // a file that vanished or cannot be read is someone else's concern
    }
  }
  return removed;
}
