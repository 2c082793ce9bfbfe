// The file is parsed once: the check pass keeps what the sending pass needs in a temporary file of the
// journal folder (`rows.spool.tmp-PID-hex`, removed at the end, on an error, at exit, and by the stale-file
// sweeps after a kill -9), read back in order: each chunk (its number, lines, body and the rows' raw values),
// each invalid row (line, raw value, code, reason), and how far into the input each was read (progress).
// One entry per line: JSON (stringifyJson) has no raw tab or line break, so tabs separate the fields.
import { open, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { ApiRecord } from '../../api/envelopes.js';
import { UsageError } from '../../http/errors.js';
import { removeOnExit, tempPathFor } from '../../util/atomic-file.js';
import { parseJson, stringifyJson } from '../../json/exact-json.js';
import type { Chunk } from './chunker.js';
import type { RawRow } from '../input/reader.js';
import { journalFolder } from '../shapes.js';

/** what is gathered before each write, and read at a time */
const BLOCK = 1024 * 1024;
const LF = 0x0a;

export interface SpooledChunk {
  /** 1-based, in file order */
  seq: number;
  /** item index → line */
  lines: number[];
  /** the exact JSON body, as the check pass serialised it */
  body: string;
  /** the rows' raw values (rejects and results files), parsed on first use */
  raws(): RawRow[];
  /** the records, parsed on first use (a number no double holds kept as written: RawNumber) */
  records(): ApiRecord[];
  /** reconcile (`--match`): a PATCH of one record (its body `[{id, …changes}]`), and the values it changes before (the undo file) */
  update?: { before(): ApiRecord };
  /** reconcile: the run whose Idempotency-Key it is sent under (a create an interrupted run sent without an answer) */
  runId?: string;
  /** …and its lines the read found no record for (answered from the server's cache, made and deleted since) */
  absent?: number[];
}

/**
 * reconcile (`--match`): a row that needs no request, and why (`unchanged`: its record's id; `done`: an interrupted run of
 * this job changed or created the record, which still agrees; `ambiguous`: the candidates' ids; `repeated`: the first
 * row of its key exactly, which does what it would)
 */
export interface SpooledSettled {
  line: number;
  raw: RawRow;
  action: 'unchanged' | 'done' | 'ambiguous' | 'repeated';
  ids: string[];
}

export interface SpooledInvalid {
  line: number;
  raw: RawRow;
  code: string;
  reason: string;
}

/** One entry, with the input's bytes read when it was: a chunk, an invalid row, or (last) the end. */
export type SpoolEntry = { bytes: number } & (
  | { chunk: SpooledChunk; invalid?: never; settled?: never }
  | { chunk?: never; invalid?: SpooledInvalid; settled?: never }
  | { chunk?: never; invalid?: never; settled: SpooledSettled }
);

export class Spool {
  private parts: string[] = [];
  private held = 0;

  private constructor(
    readonly path: string,
    private readonly dir: string,
    private fh: FileHandle | undefined,
    private readonly forget: () => void,
    /** false: another run's file (reconcile's plan), which remove() leaves */
    private readonly owned = true,
  ) {}

  /** A new spool in `dir` (the journal folder), or at `path` there; a UsageError naming the folder when it cannot be written. */
  static async create(dir: string, path = tempPathFor(join(journalFolder(dir), 'rows.spool'))): Promise<Spool> {
    const fh = await open(path, 'w', 0o600).catch((err: Error) => {
      throw unwritable(dir, err);
    });
    return new Spool(path, dir, fh, removeOnExit(path));
  }

  /** A spool written by an earlier run (reconcile's plan, kept beside its journal until the job is done), to read. */
  static existing(path: string, dir: string): Spool {
    return new Spool(path, dir, undefined, () => undefined, false);
  }

  /** reconcile: a PATCH of one record (a chunk of one row) and the values its fields had */
  update(c: Chunk, before: ApiRecord, bytes: number): Promise<void> | undefined {
    return this.add(
      `u\t${bytes}\t${c.seq}\t${c.lines.join(',')}\t${stringifyJson(c.rows.map((r) => r.raw))!}\t${stringifyJson(before)!}\t${c.body}\n`,
    );
  }

  /** reconcile: a row needing no request (unchanged, ambiguous) */
  settled(row: SpooledSettled, bytes: number): Promise<void> | undefined {
    return this.add(`s\t${bytes}\t${row.line}\t${stringifyJson([row.action, row.ids, row.raw])!}\n`);
  }

  /**
   * A full chunk (or the last one); a promise when the entries held were written, to be awaited. `runId`: the run
   * whose key it keeps (reconcile: a create an interrupted run sent without an answer).
   */
  chunk(c: Chunk, bytes: number, kept?: { runId: string; absent: readonly number[] }): Promise<void> | undefined {
    const [kind, salt] = kept === undefined ? ['c', ''] : ['k', `${kept.runId}\t${kept.absent.join(',')}\t`];
    return this.add(
      `${kind}\t${bytes}\t${c.seq}\t${c.lines.join(',')}\t${stringifyJson(c.rows.map((r) => r.raw))!}\t${salt}${c.body}\n`,
    );
  }

  invalid(row: SpooledInvalid, bytes: number): Promise<void> | undefined {
    return this.add(`i\t${bytes}\t${row.line}\t${stringifyJson([row.code, row.reason, row.raw])!}\n`);
  }

  /** Every entry written, with the input's size; the file closed for writing. */
  async end(bytes: number): Promise<void> {
    this.parts.push(`e\t${bytes}\n`);
    await this.flush();
    const fh = this.fh;
    this.fh = undefined;
    await fh?.close();
  }

  async remove(): Promise<void> {
    await this.fh?.close().catch(() => undefined);
    this.fh = undefined;
    if (this.owned) await unlink(this.path).catch(() => undefined);
    this.forget();
  }

  /** The entries, in the order written. */
  async *entries(): AsyncGenerator<SpoolEntry, void, undefined> {
    const fh = await open(this.path, 'r');
    try {
      for await (const line of lines(fh)) yield parseEntry(line);
    } finally {
      await fh.close();
    }
  }

  private add(entry: string): Promise<void> | undefined {
    this.parts.push(entry);
    this.held += entry.length;
    return this.held >= BLOCK ? this.flush() : undefined;
  }

  private async flush(): Promise<void> {
    const text = this.parts.join('');
    [this.parts, this.held] = [[], 0];
    // a full disk: a usage error naming the folder, like the journal's own writes
    if (text.length > 0) await this.fh!.write(text).catch((err: Error) => Promise.reject(unwritable(this.dir, err)));
  }
}

function unwritable(dir: string, err: Error): UsageError {
  return new UsageError(`cannot write the import journal in ${dir}: ${err.message}`, {
    cause: err,
    hint: 'CRM_CONFIG_DIR chooses another config folder',
  });
}

/** The file's lines, read a block at a time; a long line's pieces are joined once. */
async function* lines(fh: FileHandle): AsyncGenerator<string, void, undefined> {
  const buf = Buffer.allocUnsafe(BLOCK);
  let pending: Buffer[] = [];
  for (let pos = 0, n = 0; (n = (await fh.read(buf, 0, BLOCK, pos)).bytesRead) > 0; pos += n) {
    let from = 0;
    for (let nl = buf.indexOf(LF, 0); nl !== -1 && nl < n; nl = buf.indexOf(LF, from)) {
      const piece = buf.subarray(from, nl);
      yield pending.length > 0 ? Buffer.concat([...pending, piece]).toString('utf8') : piece.toString('utf8');
      pending = [];
      from = nl + 1;
    }
    if (from < n) pending.push(Buffer.from(buf.subarray(from, n)));
  }
}

function parseEntry(line: string): SpoolEntry {
  const fields = (n: number): string[] => {
    const out: string[] = [];
    let from = 2;
    for (let i = 0; i < n - 1; i++) {
      const tab = line.indexOf('\t', from);
      out.push(line.slice(from, tab));
      from = tab + 1;
    }
    out.push(line.slice(from));
    return out;
  };
  if (line.startsWith('c') || line.startsWith('u') || line.startsWith('k')) {
    // u: an update, its values before; k: a create under an earlier run's key (its id, and lines the read found absent)
    const [update, keyed] = [line.startsWith('u'), line.startsWith('k')];
    const [bytes, seq, lineList, rawText, ...rest] = fields(keyed ? 7 : update ? 6 : 5);
    const [beforeText, body] = update ? (rest as [string, string]) : [undefined, rest.at(-1)!];
    const absent = rest[1] ? rest[1].split(',').map(Number) : [];
    const runId = keyed ? { runId: rest[0]!, absent } : {};
    let raws: RawRow[] | undefined;
    let records: ApiRecord[] | undefined;
    const lines = lineList!.split(',').map(Number);
    const chunk = { seq: Number(seq), lines, body, raws: () => (raws ??= parseJson(rawText!) as RawRow[]) };
    const before = beforeText === undefined ? {} : { update: { before: () => parseJson(beforeText) as ApiRecord } };
    return {
      bytes: Number(bytes),
      chunk: { ...chunk, records: () => (records ??= parseJson(body) as ApiRecord[]), ...before, ...runId },
    };
  }
  if (line.startsWith('s')) {
    const [bytes, lineNo, rest] = fields(3) as [string, string, string];
    const [action, ids, raw] = parseJson(rest) as [SpooledSettled['action'], string[], RawRow];
    return { bytes: Number(bytes), settled: { line: Number(lineNo), raw, action, ids } };
  }
  if (line.startsWith('i')) {
    const [bytes, lineNo, rest] = fields(3) as [string, string, string];
    const [code, reason, raw] = parseJson(rest) as [string, string, RawRow];
    return { bytes: Number(bytes), invalid: { line: Number(lineNo), raw, code, reason } };
  }
  return { bytes: Number(line.slice(2)) };
}
