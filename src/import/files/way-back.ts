// Reconcile's files for one run (CONTRACT §7b): `<input>.undo.csv` and `<input>.created.csv` — the way back from
// this run (a resumed plan adds to its run's files, which its journal names; a new run whose input's earlier run holds
// those names takes its own, `<input>.undo.<time>.csv`: an undo never reaches back past the run it names, the created
// file is one job's to delete, and the commands a run printed name its files for good) — and `<input>.ambiguous.csv`
// (this run's), as the sending pass writes them.
import type { FileHandle } from 'node:fs/promises';
import type { ApiRecord } from '../../api/envelopes.js';
import type { RawRow, WayBackNames } from '../shapes.js';
import { ownName } from '../../util/own-name.js';
import { UsageError } from '../../http/errors.js';
import { stringifyJson } from '../../json/exact-json.js';
import { guardFormula, unguardFormula } from '../../output/formula-guard.js';
import { removeRegularFile } from '../../util/atomic-file.js';
import { exists } from '../../util/fs.js';
import { exactFieldName, fieldHeader, normalizeFieldName, splitType } from '../input/header.js';
import { csvLine, type Kept, type RowShape, RowsOut, serverCell, unwritable } from './outputs.js';
import { openCsvLog } from './csv-log.js';

/** Reconcile's files written while sending: the way back, and the ambiguous rows. */
export interface MatchFiles {
  /** the values an update changes, durable before it is sent */
  undo: { add(id: string, before: ApiRecord): Promise<void> };
  ambiguous: { add(raw: RawRow, line: number, candidates: string[]): void };
  /** a create chunk answered: the ids of the records it created, durable when the promise resolves */
  created(chunk: AnsweredRows, ids: ReadonlyArray<string | null>): Promise<void>;
}

/** The rows of a chunk, as the created file needs them. */
interface AnsweredRows {
  lines: readonly number[];
  records(): ApiRecord[];
}

/** The way-back files a reconcile wrote, and the ids of the records this run created (not printed). */
export interface MatchFileNames {
  ambiguous_file: string | null;
  undo_file: string | null;
  created_file: string | null;
  createdIds?: readonly string[];
}

export interface OpenedMatchFiles extends MatchFiles {
  commit(): Promise<MatchFileNames>;
  discard(): Promise<void>;
}

/**
 * A new run's way-back files: `<input>.undo.csv` and `<input>.created.csv` when no earlier run holds them, else names of
 * its own, `<input>.undo.<time>[-n].csv` (and `created`), free for both. Never an earlier run's: the commands that run
 * printed name its files for good (issue 29's re-trial: a later run moved them aside and took their names, so the
 * earlier run's pasted `--delete` deleted the later run's records).
 */
export async function wayBackNames(base: string, now: number): Promise<WayBackNames> {
  const plain = { undo: `${base}.undo.csv`, created: `${base}.created.csv` };
  const free = async (n: WayBackNames) => !(await exists(n.undo)) && !(await exists(n.created));
  if (await free(plain)) return plain;
  for (let n = 1; ; n++) {
    const own = { undo: ownName(`${base}.undo`, '.csv', now, n), created: ownName(`${base}.created`, '.csv', now, n) };
    if (await free(own)) return own;
  }
}

/** `names`: this run's (wayBackNames, or the resumed job's); `base`: the input's path, for `<input>.ambiguous.csv`. */
export async function openMatchFiles(
  base: string,
  names: WayBackNames,
  shape: RowShape,
  /** the --match fields, and a record's key cells (match/key.ts) */
  match: readonly string[],
  keyCells: (record: ApiRecord) => string[],
  o: { changed: readonly string[]; creates: boolean; resume: boolean; kept?: Kept },
): Promise<OpenedMatchFiles> {
  const [undoPath, createdPath] = [names.undo, names.created];
  // a resumed job's files are named even when this run adds nothing to them: they hold the interrupted run's way back
  let undo =
    o.resume && (await exists(undoPath)) ? Promise.resolve(await UndoFile.open(undoPath, o.changed)) : undefined;
  let created =
    o.resume && (await exists(createdPath)) ? Promise.resolve(await CreatedFile.open(createdPath, match)) : undefined;
  // made at the first write (an update's values before, a record created): a run that writes nothing makes none
  const undoFile = () => (undo ??= UndoFile.open(undoPath, o.changed));
  const createdFile = () => (created ??= CreatedFile.open(createdPath, match));
  const ambiguous = await AmbiguousFile.create(`${base}.ambiguous.csv`, shape, o.kept);
  let [updates, creates] = [0, 0];
  // this run's, in memory: a records file's links read none of theirs (its resumed job's file holds earlier runs' too)
  const createdIds: string[] = [];
  return {
    undo: {
      add: async (id, before) => {
        updates++;
        if (o.changed.length === 0) throw new Error('an update in a plan that changes no field');
        return (await undoFile()).add(id, before);
      },
    },
    ambiguous,
    async created(chunk, ids) {
      const made = ids.flatMap((id, i) => (id === null ? [] : [i]));
      if (!o.creates || made.length === 0) return;
      const file = await createdFile();
      const records = chunk.records();
      for (const i of made) file.add(ids[i]!, chunk.lines[i]!, keyCells(records[i]!));
      for (const i of made) createdIds.push(ids[i]!);
      creates += made.length;
      // on disk before the journal records the answer: a kill -9 in between cannot lose an id
      return file.durable();
    },
    async commit() {
      const [u, c] = await Promise.all([undo, created]);
      await Promise.all([u?.close(), c?.close()]);
      return {
        ambiguous_file: await ambiguous.commit(),
        undo_file: u && (updates > 0 || o.resume) ? u.path : null,
        created_file: c && (creates > 0 || o.resume) ? c.path : null,
        createdIds,
      };
    },
    async discard() {
      const [u, c] = await Promise.all([undo?.catch(() => undefined), created?.catch(() => undefined)]);
      await Promise.all([u?.close(), c?.close(), ambiguous.drop()]);
    },
  };
}

// The files themselves: CSV as the rejects and results files write it (RFC 4180 quoting, CRLF); what crm writes for
// the server (ids, before values) formula-guarded, which `crm batch` undoes exactly when it reads them back.
const JSON_SUFFIX = ':json';
/** the key of one saved (record, field) pair */
const pair = (id: string, field: string): string => `${id}\u0000${field}`;
type Unwritten = { text: string; resolve: () => void; reject: (e: unknown) => void };

/**
 * `<input>.undo.csv`: `id`, then one `FIELD:json` column per field, each cell the JSON of the value the
 * record held before this job first changed it (`null` where it was absent or null), empty where the
 * row does not touch the field. `crm batch RESOURCE <input>.undo.csv --match id` puts the values back.
 */
export class UndoFile {
  private readonly saved = new Set<string>();
  /** rows not yet written, and how to settle the promise of their being durable */
  private next: Unwritten | undefined;
  /** resolves once every row added so far is durable */
  private last: Promise<void> = Promise.resolve();
  private writing = false;
  private failure: { error: unknown } | undefined;

  private constructor(
    readonly path: string,
    private readonly fields: readonly string[],
    private readonly fh: FileHandle,
  ) {}

  /**
   * Open (or start) the undo file of this job. An earlier run's rows are kept and the first value saved
   * for an (id, field) wins: the file restores what the CRM held before the job first ran. `fields` the
   * earlier file lacks become new columns (the file rewritten atomically, old rows' cells empty).
   */
  static async open(path: string, fields: readonly string[]): Promise<UndoFile> {
    // a field a plain header would name otherwise (`firstName`, `__proto__`, `a b`) is named exactly: `"firstName":json`
    const log = await openCsvLog(path, ['id', ...fields.map((f) => fieldHeader(f, 'json'))], (header) => {
      const ok =
        header[0] === 'id' && header.slice(1).every((h) => splitType(h).type === 'json' && h.endsWith(JSON_SUFFIX));
      if (!ok)
        throw new UsageError(
          `${path} is not an undo file crm wrote (its header is not id, FIELD:json, …); move it away`,
        );
    });
    const all = log.header.slice(1).map((h) => {
      const name = h.slice(0, -JSON_SUFFIX.length);
      return exactFieldName(name) ?? name;
    });
    const file = new UndoFile(path, all, log.fh);
    for (const row of log.rows) {
      const id = unguardFormula(row[0] ?? '');
      all.forEach((f, i) => {
        if ((row[i + 1] ?? '') !== '') file.saved.add(pair(id, f));
      });
    }
    return file;
  }

  /**
   * Save the values `before` a change of record `id`: every key of `before` is a field the change sets,
   * its value what the record holds (undefined when it lacks the field). Appends a row with the pairs
   * not saved yet; resolves once it is on disk (fsync), so the PATCH may follow. Calls arriving while
   * a write is running are written together by the next one (one fsync for all of them).
   */
  add(id: string, before: Record<string, unknown>): Promise<void> {
    if (this.failure) return Promise.reject(this.failure.error);
    const extra = Object.keys(before).filter((f) => !this.fields.includes(f));
    if (extra.length > 0) return Promise.reject(new Error(`undo file: ${extra.join(', ')} not among its fields`));
    let fresh = false;
    const cells = this.fields.map((f) => {
      if (!Object.hasOwn(before, f) || this.saved.has(pair(id, f))) return '';
      this.saved.add(pair(id, f));
      fresh = true;
      return guardFormula(stringifyJson(before[f] ?? null) ?? 'null');
    });
    // nothing new: the pairs are saved, or queued and durable when the last write is
    if (!fresh) return this.last;
    if (this.next === undefined) {
      let next!: Unwritten;
      this.last = new Promise<void>((resolve, reject) => (next = { text: '', resolve, reject }));
      this.next = next;
    }
    this.next.text += csvLine([guardFormula(id), ...cells]);
    void this.pump();
    return this.last;
  }

  /** Write and fsync what is queued, again while more arrives; one pump at a time. */
  private async pump(): Promise<void> {
    if (this.writing) return;
    this.writing = true;
    for (let batch = this.next; batch !== undefined; batch = this.next) {
      this.next = undefined;
      try {
        if (this.failure) throw this.failure.error;
        await this.fh.appendFile(batch.text, 'utf8');
        await this.fh.sync();
        batch.resolve();
      } catch (error) {
        this.failure ??= { error: await unwritable(error, this.path, 'the undo file', 'its change was not sent') };
        batch.reject(this.failure.error);
      }
    }
    this.writing = false;
  }

  /** Wait for the rows added, then close the file (their failure was add()'s to report). */
  async close(): Promise<void> {
    await this.last.catch(() => undefined);
    await this.fh.close();
  }
}

/**
 * `<input>.created.csv`: `id`, `_line`, then the match columns: one row per record a reconcile
 * created, appended across runs (`crm batch RESOURCE <input>.created.csv --delete` removes them).
 * Rows reach the file at the end of the tick they are added in; fsync at close.
 */
/** what a created file that cannot be written names (the run stops; the same command lists the ids: a replay answers them) */
const CREATED = ['the created file', 'nothing more was sent'] as const;

export class CreatedFile {
  private buffer = '';
  /** the ids listed already (an earlier run's rows, this run's): a replayed create is not listed twice */
  private readonly listed = new Set<string>();
  private chain: Promise<void> = Promise.resolve();
  private failure: { error: unknown } | undefined;

  private constructor(
    readonly path: string,
    private readonly width: number,
    private readonly keyAt: number[],
    private readonly fh: FileHandle,
  ) {}

  static async open(path: string, matchColumns: readonly string[]): Promise<CreatedFile> {
    // a column `--delete` would read as the record's id is kept as `_input_…`
    const own = matchColumns.map((c) => (normalizeFieldName(splitType(c).name) === 'id' ? `_input_${c}` : c));
    const log = await openCsvLog(path, ['id', '_line', ...own], (header) => {
      if (header[0] !== 'id' || header[1] !== '_line')
        throw new UsageError(`${path} is not a file of created records crm wrote; move it away`);
    });
    const keyAt = own.map((c) => log.header.indexOf(c));
    const file = new CreatedFile(path, log.header.length, keyAt, log.fh);
    for (const row of log.rows) file.listed.add(unguardFormula(row[0] ?? ''));
    return file;
  }

  add(id: string, line: number, keyCells: readonly string[]): void {
    if (this.listed.has(id)) return;
    this.listed.add(id);
    const cells = Array<string>(this.width).fill('');
    cells[0] = guardFormula(id);
    cells[1] = String(line);
    keyCells.forEach((c, i) => (cells[this.keyAt[i]!] = c));
    if (this.buffer === '') queueMicrotask(() => this.flush());
    this.buffer += csvLine(cells);
  }

  private flush(): void {
    const text = this.buffer;
    this.buffer = '';
    if (text === '') return;
    this.chain = this.chain.then(async () => {
      if (!this.failure)
        await this.fh
          .appendFile(text, 'utf8')
          .catch(async (error: unknown) => (this.failure = { error: await unwritable(error, this.path, ...CREATED) }));
    });
  }

  /** What was added is on disk (written and fsynced): the journal records a chunk's answer after this. */
  async durable(): Promise<void> {
    this.flush();
    await this.chain;
    if (this.failure) throw this.failure.error;
    await this.fh.datasync().catch(async (error: unknown) => {
      throw await unwritable(error, this.path, ...CREATED);
    });
  }

  /** Write what is left, fsync, close; the first write error is thrown here. */
  async close(): Promise<void> {
    this.flush();
    await this.chain;
    try {
      if (this.failure) throw this.failure.error;
      await this.fh.sync();
    } finally {
      await this.fh.close();
    }
  }
}

/** `<input>.ambiguous.csv`: the row's columns, `_line`, `_candidates` (the ids, `;`-separated). Add rows in line order. */
export class AmbiguousFile {
  private constructor(
    readonly target: string,
    private readonly out: RowsOut,
    private readonly kept?: Kept,
  ) {}

  /** `kept`: told where an edited ambiguous file there before was moved (keepingEdits) */
  static async create(target: string, shape: RowShape, kept?: Kept): Promise<AmbiguousFile> {
    return new AmbiguousFile(target, await RowsOut.create(target, shape, ['_line', '_candidates']), kept);
  }

  add(raw: RawRow, line: number, candidates: readonly string[]): void {
    this.out.add(raw, [String(line), serverCell(candidates.join(';'))], [line, candidates]);
  }

  /** Renamed into place; with no row, not written and a stale one (an earlier run's) removed: null. */
  async commit(): Promise<string | null> {
    if (this.out.rows > 0) {
      const to = await this.out.commitKeeping(Date.now());
      if (to !== undefined) this.kept?.(this.target, to);
      return this.target;
    }
    await this.out.discard();
    await removeRegularFile(this.target);
    return null;
  }

  /** Leave the target as it was (a run stopped before its plan was complete). */
  drop = (): Promise<void> => this.out.discard();
}

/** `--plan FILE`: `_line`, `_action`, `id`, `_changes`, then the row's columns; one row per input row, added in line order. */
export class PlanFile {
  private constructor(
    readonly target: string,
    private readonly out: RowsOut,
  ) {}

  static async create(target: string, shape: RowShape): Promise<PlanFile> {
    return new PlanFile(target, await RowsOut.create(target, shape, ['_line', '_action', 'id', '_changes']));
  }

  /** `changes`: the row's changes as text (field: before → after), '' when none. */
  add(line: number, action: string, id: string | undefined, changes: string, raw: RawRow): void {
    this.out.add(
      raw,
      [String(line), action, serverCell(id ?? ''), serverCell(changes)],
      [line, action, id ?? null, changes],
    );
  }

  commit = (): Promise<string> => this.out.commit().then(() => this.target);
  drop = (): Promise<void> => this.out.discard();
}
