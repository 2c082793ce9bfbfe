// `--results FILE`: one row per created record — `_line`, `id`, then the original columns — so an
// admin can join what was created back to the input. Written whole at the end of each run, like
// the rejects file, including rows created by earlier runs of the same import (ids from the journal).
import { AtomicTextFile } from './atomic-file.js';
import { csvRow } from './csv-write.js';
import type { InputFormat, RawRow } from './reader.js';
import { ColumnProjection, stripReserved } from './rejects.js';

export interface ResultsWriter {
  readonly target: string;
  readonly count: number;
  add(raw: RawRow, line: number, id: string | null): void;
  commit(): Promise<string>;
  discard(): Promise<void>;
}

export async function createResultsWriter(
  target: string,
  opts: { format: InputFormat; header: readonly string[] | null },
): Promise<ResultsWriter> {
  const file = await AtomicTextFile.create(target);
  const projection = opts.format === 'csv' ? new ColumnProjection(opts.header ?? []) : undefined;
  let count = 0;
  if (projection) file.write(csvRow(['_line', 'id', ...projection.names]));
  return {
    target,
    get count() {
      return count;
    },
    add(raw, line, id) {
      count++;
      if (projection) {
        file.write(csvRow([String(line), id ?? '', ...projection.cells(Array.isArray(raw) ? raw : []).cells]));
        return;
      }
      const obj = typeof raw === 'object' && !Array.isArray(raw) ? stripReserved(raw) : {};
      file.write(JSON.stringify({ _line: line, id, ...obj }) + '\n');
    },
    async commit() {
      await file.commit();
      return target;
    },
    discard: () => file.discard(),
  };
}
