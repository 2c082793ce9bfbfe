// The rows of the input carried into a file written whole per run (the ambiguous file, `--plan FILE`):
// after the file's own columns, the input's, as the rejects and results files carry them (outputs.ts).
import { cellText } from '../../output/cell.js';
import { AtomicTextFile } from '../../util/atomic-file.js';
import type { InputFormat, RawRow } from '../shapes.js';
import { detectBom } from '../../util/text.js';
import { UTF8 } from '../input/text.js';
import { readHead } from '../input/source.js';
import { csvLine } from './outputs.js';

/** The input a file carries rows of: its format and header; for NDJSON the keys found (the results file's columns). */
export interface RowShape {
  format: InputFormat;
  header: readonly string[] | null;
  ndjsonKeys?: readonly string[];
  ndjsonKeysOverflow?: boolean;
  /** CSV input in another encoding: a BOM, as the rejects file */
  bom?: boolean;
}

/** The shape of the input's rows, as the check pass read them, for the files that carry them. */
export async function rowShapeOf(
  input: { path: string; encoding: string },
  rows: { format: InputFormat; header: string[] | null; ndjsonKeys: string[]; ndjsonKeysOverflow: boolean },
): Promise<Required<RowShape>> {
  // a BOM when the input had one (an Excel-made CSV: without it Excel reads the rejects as ANSI, "ZoÃ«"), or was
  // in another encoding (it is UTF-8 now)
  const bom = input.encoding !== UTF8 || (await readHead(input.path).then((h) => detectBom(h) !== undefined));
  return {
    format: rows.format,
    header: rows.header,
    bom,
    ndjsonKeys: rows.ndjsonKeys,
    ndjsonKeysOverflow: rows.ndjsonKeysOverflow,
  };
}

/**
 * How a row's own values follow a file's `own` columns: CSV, the input's columns (a stale copy of an own
 * `_` column dropped, an input `id` kept as `_input_id`); NDJSON, its keys as the results file makes them
 * columns (`_more` for keys past the limit), or whole objects when the target is `.ndjson`/`.jsonl`.
 */
interface Carried {
  /** whole NDJSON objects, no header */
  ndjson: boolean;
  names: string[];
  cells(raw: RawRow): string[];
  object(raw: RawRow): Record<string, unknown>;
}

function carried(target: string, shape: RowShape, own: readonly string[]): Carried {
  const name = (h: string): string | undefined =>
    h === 'id' && own.includes('id') ? '_input_id' : own.includes(h) ? undefined : h;
  const obj = (raw: RawRow): Record<string, unknown> => (typeof raw === 'object' && !Array.isArray(raw) ? raw : {});
  const renamed = (raw: RawRow): Array<[string, unknown]> =>
    Object.entries(obj(raw)).flatMap(([k, v]) => (name(k) === undefined ? [] : [[name(k)!, v] as [string, unknown]]));
  if (shape.format === 'ndjson' && /\.(ndjson|jsonl)$/i.test(target)) {
    return { ndjson: true, names: [], cells: () => [], object: (raw) => Object.fromEntries(renamed(raw)) };
  }
  const object = () => ({});
  if (shape.format === 'csv') {
    const header = shape.header ?? [];
    const keep = header.flatMap((h, i) => (name(h.trim()) === undefined ? [] : [i]));
    const cells = (raw: RawRow): string[] => keep.map((i) => (Array.isArray(raw) ? raw : [])[i] ?? '');
    return { ndjson: false, names: keep.map((i) => name(header[i]!.trim())!), cells, object };
  }
  const keys = (shape.ndjsonKeys ?? []).filter((k) => name(k) !== undefined);
  const more = shape.ndjsonKeysOverflow === true;
  const cells = (raw: RawRow): string[] => {
    const row = new Map(renamed(raw));
    const out = keys.map((k) => cellText(row.get(name(k)!)));
    keys.forEach((k) => row.delete(name(k)!));
    return more ? [...out, row.size > 0 ? JSON.stringify(Object.fromEntries(row)) : ''] : out;
  };
  return { ndjson: false, names: [...keys.map((k) => name(k)!), ...(more ? ['_more'] : [])], cells, object };
}

/** A file of rows written whole at commit; `head` its own columns, `ownCells` a row's values of them. */
export class RowsOut {
  private count = 0;
  private constructor(
    private readonly file: AtomicTextFile,
    private readonly shape: Carried,
    private readonly head: readonly string[],
  ) {}

  static async create(target: string, shape: RowShape, head: readonly string[]): Promise<RowsOut> {
    const out = new RowsOut(await AtomicTextFile.create(target), carried(target, shape, head), head);
    if (!out.shape.ndjson) out.file.write((shape.bom ? '\ufeff' : '') + csvLine([...head, ...out.shape.names]));
    return out;
  }

  add(raw: RawRow, ownCells: readonly string[], ownValues: readonly unknown[]): void {
    this.count++;
    if (!this.shape.ndjson) return this.file.write(csvLine([...ownCells, ...this.shape.cells(raw)]));
    const mine = Object.fromEntries(this.head.map((h, i) => [h, ownValues[i]]));
    this.file.write(JSON.stringify({ ...mine, ...this.shape.object(raw) }) + '\n');
  }

  get rows(): number {
    return this.count;
  }

  commit = (): Promise<void> => this.file.commit();
  discard = (): Promise<void> => this.file.discard();
}
