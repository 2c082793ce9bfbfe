// The resume index of a journal: streamed once on load into typed arrays — per chunk sequence
// number, the byte offset and length of its `chunk` line and whether it was sent (~13 bytes per
// chunk) — instead of holding the journal's ids; a finished chunk's line is read back (pread) when
// the sending pass reaches that chunk.
import { open, type FileHandle } from 'node:fs/promises';
import { UsageError } from '../http/errors.js';
import { JOURNAL_VERSION, lineKind, openLine, streamLines, type CompleteInfo, type FinishedChunk, type HeaderLine } from './journal-line.js';

/** Growable per-seq arrays: where each finished chunk's line is, and which chunks were sent. */
export class ChunkIndex {
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

  /** a chunk journaled as sent whose request was never sent after all (stopped before it went) */
  unsent(seq: number): void {
    if (seq < this.state.length && this.state[seq] === 1) this.state[seq] = 0;
  }

  done(seq: number, offset: number, length: number): void {
    this.grow(seq);
    if (this.state[seq] !== 2) this.finished++;
    this.state[seq] = 2;
    this.offsets[seq] = offset;
    this.lengths[seq] = length;
  }

  isInDoubt(seq: number): boolean {
    return seq < this.state.length && this.state[seq] === 1;
  }

  /** chunks sent but never answered (in flight at a crash, or failed) */
  inDoubt(): number[] {
    const out: number[] = [];
    for (let i = 0; i < this.state.length; i++) if (this.state[i] === 1) out.push(i);
    return out;
  }
}

export interface Loaded {
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

export async function loadJournal(path: string): Promise<Loaded | undefined> {
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
      else if (v.type === 'unsent' && seq !== undefined && seq > 0) index.unsent(seq);
      else if (v.type === 'complete') {
        const c = openLine(line);
        if (c) completed = { ...c, at: String(c.at) };
      }
    });
    if (!header || header.type !== 'header' || header.version !== JOURNAL_VERSION) throw damaged(path);
    return { header, index, completed, validLength };
  } finally {
    await fh.close().catch(() => undefined);
  }
}

/**
 * The finished chunk `seq` when its key matches, its line read back from the journal file through
 * `reader` (opened only when there is a line to read); undefined when not finished or another key.
 */
export async function readChunk(
  index: ChunkIndex,
  reader: () => Promise<FileHandle>,
  seq: number,
  key: string,
): Promise<FinishedChunk | undefined> {
  if (seq >= index.state.length || index.state[seq] !== 2) return undefined;
  const length = index.lengths[seq]!;
  const buf = Buffer.alloc(length);
  await (await reader()).read(buf, 0, length, index.offsets[seq]);
  const v = openLine(buf.toString('utf8')) as unknown as (FinishedChunk & { type: string }) | undefined;
  if (!v || v.type !== 'chunk' || v.key !== key) return undefined;
  return { seq: v.seq, key: v.key, lines: v.lines, ids: v.ids, rejects: v.rejects };
}
