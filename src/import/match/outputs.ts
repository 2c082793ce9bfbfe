// Reconcile's files for one run (CONTRACT §7b, files.ts): `<input>.undo.csv` and `<input>.created.csv` — the way back
// from this run (a resumed plan adds to its run's files; a new run that changes or creates something first moves the
// earlier run's aside, to `<input>.undo.<time>.csv`, so an undo never reaches back past the run it names, and the
// created file is one job's to delete) — and `<input>.ambiguous.csv` (this run's), as the sending pass writes them.
import { rename, stat } from 'node:fs/promises';
import type { MatchFiles } from '../run.js';
import type { Spool, SpooledChunk } from '../check/spool.js';
import { AmbiguousFile, CreatedFile, UndoFile, type RowShape } from './files.js';
import { keyPart } from './key.js';
import { fileStamp } from '../../util/stamp.js';

export interface OpenedMatchFiles extends MatchFiles {
  commit(): Promise<{ ambiguous_file: string | null; undo_file: string | null; created_file: string | null }>;
  discard(): Promise<void>;
}

/** What a plan sends: the fields its updates change, and whether it creates (a resumed plan's, read back from its spool). */
export async function planShape(plan: Spool): Promise<{ changed: string[]; creates: boolean }> {
  const fields = new Set<string>();
  let creates = false;
  for await (const e of plan.entries()) {
    if (e.chunk?.update) for (const f of Object.keys(e.chunk.update.before())) fields.add(f);
    else if (e.chunk) creates = true;
  }
  return { changed: [...fields], creates };
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
  match: readonly string[],
  o: { changed: readonly string[]; creates: boolean; resume: boolean },
): Promise<OpenedMatchFiles> {
  // a new run that sends anything: the earlier run's files go aside together (they are that run's way back)
  if (!o.resume && (o.changed.length > 0 || o.creates)) for (const f of ['undo', 'created']) await moveAside(`${base}.${f}.csv`);
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
    created(chunk: SpooledChunk, ids: ReadonlyArray<string | null>) {
      if (!created) return Promise.resolve();
      const records = chunk.records();
      const before = creates;
      ids.forEach((id, i) => {
        if (id === null) return;
        creates++;
        created.add(
          id,
          chunk.lines[i]!,
          match.map((f) => keyPart(f, records[i]![f]) ?? ''),
        );
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
