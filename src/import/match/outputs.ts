// Reconcile's own files (CONTRACT §7b): `<input>.undo.csv`, `<input>.created.csv`, `<input>.ambiguous.csv`, `--plan FILE`.
// STAND-IN on the lead's branch: wired to match/files.ts at merge.
import { appendFile } from 'node:fs/promises';
import type { ApiRecord } from '../../api/envelopes.js';
import { createRejectsWriter, csvLine } from '../outputs.js';
import type { RawRow } from '../input-row.js';
import type { MatchFiles } from '../run.js';
import type { SpooledChunk } from '../spool.js';
import { keyPart } from './key.js';

export interface OpenedMatchFiles extends MatchFiles {
  commit(): Promise<{ ambiguous_file: string | null; undo_file: string | null; created_file: string | null }>;
  discard(): Promise<void>;
}

export interface PlanRows {
  add(line: number, action: string, id: string | undefined, changes: string, raw: RawRow): void;
  commit(): Promise<string | null>;
  discard(): Promise<void>;
}

export async function openPlanFile(path: string, shape: { format: 'csv' | 'ndjson'; header: readonly string[] | null }): Promise<PlanRows> {
  void shape;
  const lines: string[] = [csvLine(['_line', '_action', 'id', '_changes'])];
  return {
    add: (line, action, id, changes) => void lines.push(csvLine([String(line), action, id ?? '', changes])),
    commit: async () => {
      const { writeFile } = await import('node:fs/promises');
      await writeFile(path, lines.join(''));
      return path;
    },
    discard: async () => undefined,
  };
}

export async function openMatchFiles(
  input: string,
  shape: { format: 'csv' | 'ndjson'; header: readonly string[] | null; bom?: boolean },
  fields: readonly string[],
): Promise<OpenedMatchFiles> {
  const ambiguousPath = `${input}.ambiguous.csv`;
  const undoPath = `${input}.undo.csv`;
  const createdPath = `${input}.created.csv`;
  const amb = await createRejectsWriter(ambiguousPath, shape);
  let undone = 0;
  let created = 0;
  return {
    undo: {
      async add(id: string, before: ApiRecord) {
        undone++;
        const cols = Object.keys(before);
        await appendFile(
          undoPath,
          csvLine(['id', ...cols.map((c) => `${c}:json`)]) + csvLine([id, ...cols.map((c) => JSON.stringify(before[c] ?? null))]),
        );
      },
    },
    ambiguous: { add: (raw: RawRow, line: number, ids: string[]) => amb.add(raw, line, ids.join(';'), 'ambiguous') },
    created(chunk: SpooledChunk, ids: ReadonlyArray<string | null>) {
      const recs = chunk.records();
      ids.forEach((id, i) => {
        if (id === null) return;
        created++;
        void appendFile(createdPath, csvLine([id, String(chunk.lines[i]), ...fields.map((f) => keyPart(f, recs[i]![f]) ?? '')]));
      });
    },
    async commit() {
      return { ambiguous_file: await amb.commit(), undo_file: undone > 0 ? undoPath : null, created_file: created > 0 ? createdPath : null };
    },
    discard: () => amb.discard(),
  };
}
