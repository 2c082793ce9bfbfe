// A journal's lines as a run reads them back: one line parsed, and the index of its chunks (what each was: sent,
// answered, sent again) built as the journal is streamed (journal.ts).

/** A journal line's value; undefined when it is not JSON (torn). The earlier format's `sum` is dropped. */
export function parseLine(text: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(text) as unknown;
    if (v === null || typeof v !== 'object') return undefined;
    const { sum: _sum, ...rest } = v as Record<string, unknown>;
    return rest;
  } catch {
    return undefined;
  }
}

export const SENT = 1;
export const DONE = 2;
/** answered, then sent again (its failed rows retried, or a row of a record changed before it) with no answer yet */
export const RESENDING = 3;

/** Rows of answered chunks sent again in one request: [chunk number, the item indexes of its rows sent], in order. */
export type ResentParts = Array<[number, number[]]>;

/** A request sending rows of answered chunks again, `waiting` for the answers of some of them to be journaled. */
type OpenResend = { key: string; parts: ResentParts; waiting: Set<number> };

/** A chunk's rows (`idx`) an earlier run sent again under `key`, with those of `parts` chunks in all, not all answered. */
export interface PinnedResend {
  key: string;
  idx: number[];
  parts: number;
}

/** Per chunk number, where its `chunk` line is and whether it was sent: typed arrays, grown as needed. */
export class ChunkIndex {
  offsets = new Float64Array(1024);
  lengths = new Uint32Array(1024);
  /** 0 nothing, SENT (no answer journaled), DONE, RESENDING */
  state = new Uint8Array(1024);
  finished = 0;
  /** per chunk number, the request sending its rows again with others not answered whole (few: those in flight) */
  readonly resends = new Map<number, OpenResend>();

  private grow(seq: number): void {
    if (seq < this.state.length) return;
    const n = 2 ** Math.ceil(Math.log2(seq + 1));
    const [o, l, st] = [this.offsets, this.lengths, this.state];
    (this.offsets = new Float64Array(n)).set(o);
    (this.lengths = new Uint32Array(n)).set(l);
    (this.state = new Uint8Array(n)).set(st);
  }

  /** one line of the journal: `{"type":"…","seq":N` is all that is parsed (a chunk's ids are read back later) */
  add(text: string, offset: number, length: number): void {
    const k = /^\{"type":"(sent|unsent|chunk)","seq":(\d+)[,}]/.exec(text);
    const seq = Number(k?.[2] ?? 0);
    if (!k || seq < 1 || !text.endsWith('}')) return;
    this.grow(seq);
    if (k[1] === 'sent' && text.includes('"parts":')) this.resent(text);
    if (k[1] === 'sent' && this.state[seq] === 0) this.state[seq] = SENT;
    else if (k[1] === 'sent' && this.state[seq] === DONE) this.state[seq] = RESENDING;
    else if (k[1] === 'unsent' && this.state[seq] === SENT) this.state[seq] = 0;
    else if (k[1] === 'unsent' && this.state[seq] === RESENDING) this.state[seq] = DONE;
    else if (k[1] === 'chunk') {
      if (this.state[seq] !== DONE && this.state[seq] !== RESENDING) this.finished++;
      this.state[seq] = DONE;
      this.offsets[seq] = offset;
      this.lengths[seq] = length;
    }
    const open = this.resends.get(seq);
    // the request never went out (its first chunk's `unsent`): none of its chunks is in doubt
    if (open && k[1] === 'unsent') this.drop(open, true);
    if (open && k[1] === 'chunk') open.waiting.delete(seq);
    if (open?.waiting.size === 0) this.drop(open, false);
  }

  /** A request sending rows of answered chunks again: each of them in doubt until its answer is journaled. */
  private resent(text: string): void {
    const line = parseLine(text) as { key?: unknown; parts?: unknown } | undefined;
    if (typeof line?.key !== 'string' || !Array.isArray(line.parts)) return;
    const parts = line.parts as ResentParts;
    const open: OpenResend = { key: line.key, parts, waiting: new Set(parts.map(([s]) => s)) };
    for (const [s] of parts) {
      this.grow(s);
      if (this.state[s] === DONE) this.state[s] = RESENDING;
      this.resends.set(s, open);
    }
  }

  private drop(open: OpenResend, unsent: boolean): void {
    for (const [s] of open.parts) {
      if (unsent && this.state[s] === RESENDING) this.state[s] = DONE;
      this.resends.delete(s);
    }
  }
}
