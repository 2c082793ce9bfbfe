// Records and their links in one file (CONTRACT §7d): `crm batch deals deals.csv --match name` with columns
// `contacts.email`, `companies.domain` (several values in a cell separated by `;`), or the reverse (`deals.name`,
// `segments.name` in a contacts file). The batch run leaves those columns out (each is `--map`ped away); once its rows'
// records are created or matched, each link column becomes a file of pairs by natural key — the row's record named by
// its match fields, the other by the column's field — which `crm links import` plans and sends (run.ts). Pure.
import { findResource, RESOURCES } from '../../api/resources.js';
import { normalizeFieldName, splitType, type ColumnMap } from '../input/header.js';
import { csvLine } from '../files/outputs.js';
import { sideColumn } from './layout.js';

/** The columns of one relation in a records file, and how its pairs are named. */
export interface RecordLinks {
  /** the link's parent and relation (`deals contacts`; for a contacts file's `deals.name`: `deals contacts` too) */
  parent: string;
  relation: string;
  /** the other resource (`contacts` in a deals file) */
  other: string;
  /** the row's record is the link's parent (a deals file's contacts) or its child (a contacts file's deals) */
  recordIs: 'parent' | 'child';
  /** the columns, as written, and the other resource's field each names */
  columns: Array<{ header: string; index: number; field: string }>;
  /** a note's records: the kind of record the other side is */
  recordType?: string;
}

/** The relation between a file's resource and `other`, if any: the link a `<other>.<field>` column makes. */
function relationWith(resource: string, other: string): Omit<RecordLinks, 'columns'> | undefined {
  const own = findResource(resource)?.links?.find((l) => l.childResources.includes(other as never));
  if (own) {
    const recordType = own.childResources.length > 1 ? findResource(other)!.singular : undefined;
    return {
      parent: resource,
      relation: own.relation,
      other,
      recordIs: 'parent',
      ...(recordType ? { recordType } : {}),
    };
  }
  for (const p of RESOURCES) {
    if (p.name !== other) continue;
    const link = p.links?.find((l) => l.childResources.includes(resource as never));
    if (!link) continue;
    const recordType = link.childResources.length > 1 ? findResource(resource)!.singular : undefined;
    return { parent: other, relation: link.relation, other, recordIs: 'child', ...(recordType ? { recordType } : {}) };
  }
  return undefined;
}

/** The link columns of a records file's header (after --map), grouped by relation; none: a plain --match run. */
export function recordLinkColumns(resource: string, header: readonly string[], maps: ColumnMap): RecordLinks[] {
  const out = new Map<string, RecordLinks>();
  header.forEach((cell, index) => {
    const name = (maps.get(cell) ?? maps.get(cell.trim()) ?? cell).trim();
    const side = name === '' ? undefined : sideColumn(name);
    if (!side) return;
    const rel = relationWith(resource, side[0]);
    if (!rel) return;
    const group = out.get(rel.other) ?? { ...rel, columns: [] };
    group.columns.push({ header: cell, index, field: side[1] });
    out.set(rel.other, group);
  });
  return [...out.values()];
}

/** `--map "COLUMN="` for each link column: the batch run leaves them out. */
export const leaveOut = (groups: readonly RecordLinks[]): string[] =>
  groups.flatMap((g) => g.columns.map((c) => `${c.header}=`));

/** The column of each match field in the header (as the batch run maps it). */
export function matchColumns(header: readonly string[], maps: ColumnMap, fields: readonly string[]): number[] {
  return fields.map((f) =>
    header.findIndex((cell) => {
      const name = maps.get(cell) ?? maps.get(cell.trim()) ?? cell;
      return name.trim() !== '' && normalizeFieldName(splitType(name).name) === f;
    }),
  );
}

/**
 * A file of pairs for `links import` from a records file's rows: the row's record by its match fields, the other by
 * each `;`-separated value of its link columns (several columns of one resource: their values taken in step), and
 * `_line`, the row's line in the records file. `rows` gives each row's line and cells.
 */
export function* pairsFile(
  group: RecordLinks,
  resource: string,
  fields: readonly string[],
  at: readonly number[],
  rows: Iterable<{ line: number; cells: readonly string[] }>,
): Generator<string> {
  const recordName = group.recordType && group.recordIs === 'child' ? 'record' : findResource(resource)!.singular;
  const otherName = group.recordType && group.recordIs === 'parent' ? 'record' : findResource(group.other)!.singular;
  const mine = fields.map((f) => `${recordName}.${f}`);
  const theirs = group.columns.map((c) => `${otherName}.${c.field}`);
  const type = group.recordType ? ['record_type'] : [];
  yield csvLine([...mine, ...theirs, ...type, '_line']);
  for (const row of rows) {
    const key = at.map((i) => row.cells[i] ?? '');
    const values = group.columns.map((c) => (row.cells[c.index] ?? '').split(';'));
    const n = Math.max(...values.map((v) => v.length));
    for (let i = 0; i < n; i++) {
      const other = values.map((v) => (v[i] ?? '').trim());
      if (other.every((v) => v === '')) continue;
      yield csvLine([...key, ...other, ...(group.recordType ? [group.recordType] : []), String(row.line)]);
    }
  }
}
