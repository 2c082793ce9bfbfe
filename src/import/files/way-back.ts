// Reconcile's files for one run (CONTRACT §7b, match-files.ts): `<input>.undo.csv` and `<input>.created.csv` — the way back
// from this run (a resumed plan adds to its run's files; a new run that changes or creates something first moves the
// earlier run's aside, to `<input>.undo.<time>.csv`, so an undo never reaches back past the run it names, and the
// created file is one job's to delete) — and `<input>.ambiguous.csv` (this run's), as the sending pass writes them.
import { rename, stat } from 'node:fs/promises';
import type { ApiRecord } from '../../api/envelopes.js';
import type { RawRow } from '../shapes.js';
import { AmbiguousFile, CreatedFile, UndoFile, type RowShape } from './match-files.js';
import { fileStamp } from '../../util/stamp.js';

/** Reconcile's files written while sending: the way back, and the ambiguous rows. */
export interface MatchFiles {
  /** the values an update changes, durable before it is sent */
  undo: { add(id: string, before: ApiRecord): Promise<void> };
  ambiguous: { add(raw: RawRow, line: number, candidates: string[]): void };
  /** a create chunk answered: the ids of the records it created, durable when the promise resolves */
  created(chunk: AnsweredRows, ids: ReadonlyArray<string | null>): Promise<void>;
}

/** The rows of a chunk, as the created file needs them. */
export interface AnsweredRows {
  lines: readonly number[];
  records(): ApiRecord[];
}

export interface OpenedMatchFiles extends MatchFiles {
  commit(): Promise<{ ambiguous_file: string | null; undo_file: string | null; created_file: string | null }>;
  discard(): Promise<void>;
}

/** `people.csv.undo.csv` → `people.csv.undo.20261126T015612Z.csv`, at the time its run last wrote it */
async function moveAside(path: string): Promise<void> {
  const at = await stat(path).then(
    (st) => st.mtimeMs,
    () => undefined,
  );
  if (at === undefined) return;
  await rename(path, path.replace(/\.csv$/, `.${fileStamp(at)}.csv`));
}

/** `base`: the input's path (`people.csv` → `people.csv.undo.csv`); `resume`: the files are this plan's already. */
export async function openMatchFiles(
  base: string,
  shape: RowShape,
  /** the --match fields, and a record's key cells (match/key.ts) */
  match: readonly string[],
  keyCells: (record: ApiRecord) => string[],
  o: { changed: readonly string[]; creates: boolean; resume: boolean },
): Promise<OpenedMatchFiles> {
  // a new run that sends anything: the earlier run's files go aside together (they are that run's way back)
  if (!o.resume && (o.changed.length > 0 || o.creates))
    for (const f of ['undo', 'created']) await moveAside(`${base}.${f}.csv`);
  const undo = o.changed.length > 0 ? await UndoFile.open(`${base}.undo.csv`, o.changed) : undefined;
  const created = o.creates ? await CreatedFile.open(`${base}.created.csv`, match) : undefined;
  const ambiguous = await AmbiguousFile.create(`${base}.ambiguous.csv`, shape);
  let [updates, creates] = [0, 0];
  return {
    undo: {
      add: (id, before) => {
        updates++;
        if (!undo) throw new Error('an update in a plan that changes no field');
        return undo.add(id, before);
      },
    },
    ambiguous,
    created(chunk: AnsweredRows, ids: ReadonlyArray<string | null>) {
      if (!created) return Promise.resolve();
      const records = chunk.records();
      const before = creates;
      ids.forEach((id, i) => {
        if (id === null) return;
        creates++;
        created.add(id, chunk.lines[i]!, keyCells(records[i]!));
      });
      // on disk before the journal records the answer: a kill -9 in between cannot lose an id
      return creates > before ? created.durable() : Promise.resolve();
    },
    async commit() {
      await Promise.all([undo?.close(), created?.close()]);
      return {
        ambiguous_file: await ambiguous.commit(),
        undo_file: undo && (updates > 0 || o.resume) ? undo.path : null,
        created_file: created && (creates > 0 || o.resume) ? created.path : null,
      };
    },
    async discard() {
      await Promise.all([undo?.close(), created?.close(), ambiguous.drop()]);
    },
  };
}
