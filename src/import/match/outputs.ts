// Reconcile's files for one run (CONTRACT §7b, files.ts): `<input>.undo.csv` and `<input>.created.csv` (kept across
// runs), `<input>.ambiguous.csv` (this run's), as the sending pass writes them; committed or dropped at the end.
import type { MatchFiles } from '../run.js';
import type { Spool, SpooledChunk } from '../check/spool.js';
import { AmbiguousFile, CreatedFile, UndoFile, type RowShape } from './files.js';
import { keyPart } from './key.js';

export interface OpenedMatchFiles extends MatchFiles {
  commit(): Promise<{ ambiguous_file: string | null; undo_file: string | null; created_file: string | null }>;
  discard(): Promise<void>;
}

/** The fields the plan's updates change (a resumed plan's, read back from its spool). */
export async function changedFields(plan: Spool): Promise<string[]> {
  const fields = new Set<string>();
  for await (const e of plan.entries()) for (const f of Object.keys(e.chunk?.update?.before() ?? {})) fields.add(f);
  return [...fields];
}

/** `base`: the input's path (`people.csv` → `people.csv.undo.csv`). */
export async function openMatchFiles(
  base: string,
  shape: RowShape,
  match: readonly string[],
  changed: readonly string[],
): Promise<OpenedMatchFiles> {
  const undo = await UndoFile.open(`${base}.undo.csv`, changed);
  const created = await CreatedFile.open(`${base}.created.csv`, match);
  const ambiguous = await AmbiguousFile.create(`${base}.ambiguous.csv`, shape);
  let [updates, creates] = [0, 0];
  return {
    undo: {
      add: (id, before) => {
        updates++;
        return undo.add(id, before);
      },
    },
    ambiguous,
    created(chunk: SpooledChunk, ids: ReadonlyArray<string | null>) {
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
      await Promise.all([undo.close(), created.close()]);
      // the undo and created files of earlier runs stay; named when this run wrote to them
      return {
        ambiguous_file: await ambiguous.commit(),
        undo_file: updates > 0 ? undo.path : null,
        created_file: creates > 0 ? created.path : null,
      };
    },
    async discard() {
      await Promise.all([undo.close(), created.close(), ambiguous.drop()]);
    },
  };
}
