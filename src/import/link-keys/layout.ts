// `crm links import` by natural key (CONTRACT §7d), its pure decisions: which columns of a file name each side of a
// pair (by id, `deal_id`, or by fields of its records, `deal.name`, `contact.email`; several fields one compound key),
// what a row's cells say (a side's id or key, the link's own fields), and the one action each row gets once the sides
// and the parents' current links are read. Nothing here reads or sends.
import type { ApiRecord } from '../../api/envelopes.js';
import { findAssociation, findLink } from '../../api/links.js';
import { findResource, type LinkField } from '../../api/resources.js';
import { UsageError } from '../../http/errors.js';
import {
  exactFieldName,
  isIgnoredHeader,
  normalizeFieldName,
  unusedMapError,
  unusedMaps,
  type ColumnMap,
} from '../input/header.js';
import { choiceOf, parentField } from '../operation.js';
import { matchKey } from '../match/key.js';
import { setOwn } from '../../util/set-own.js';

/** One side of a pair: named by an id column, or by the fields of its records (a compound key when several). */
export interface Side {
  /** how files name it: `deal`, `contact`, `record` */
  readonly name: string;
  /** the column of its id (`deal_id`), when named by id (with a key too: a row's id where it has one) */
  readonly idColumn?: number;
  /** its key fields and their columns, when named by fields of its records (a row without an id) */
  readonly key?: { readonly fields: readonly string[]; readonly columns: readonly number[] };
  /** where its records are (notes' records: the row's record_type chooses one) */
  readonly resources: readonly string[];
}

export interface LinkLayout {
  readonly parent: string;
  readonly relation: string;
  /** a meeting's association (PUT, one at a time) rather than a link (POST, many) */
  readonly association: boolean;
  readonly parentSide: Side;
  readonly childSide: Side;
  /** the link's own fields (type, supervisor, record_type) and their columns */
  readonly extras: ReadonlyArray<{ readonly field: LinkField; readonly column: number }>;
  /** the body field naming the child (`contact_id`, `record_id`; a meeting's `deal_id`) */
  readonly childKey: string;
  /** a linked file (`parent,parent_id,relation,child_id`): only its rows of this parent and relation are taken; a
   * meeting's the association each row replaced (`before_id`) */
  readonly linkedFile?: { readonly parent: number; readonly relation: number; readonly before?: number };
  /** the header's cells as written */
  readonly header: readonly string[];
}

/** The columns of a linked file (CONTRACT §7d), and the link fields it keeps beside them. */
export const LINKED_COLUMNS = ['parent', 'parent_id', 'relation', 'child_id'] as const;
/** a linked file's column of the association a meeting's row replaced */
export const BEFORE_COLUMN = 'before_id';

/** A header cell as the file names a field: `--map`ped, `_` columns and mapped-away ones left out (undefined). */
function mapped(cell: string, maps: ColumnMap): string | undefined {
  const to = maps.get(cell) ?? maps.get(cell.trim()) ?? cell;
  return to.trim() === '' || isIgnoredHeader(to) ? undefined : to.trim();
}

/** `Deal.Name` → ['deal', 'name']; `contact."firstName"` → ['contact', 'firstName']; a plain header → undefined. */
export function sideColumn(header: string): [side: string, field: string] | undefined {
  const dot = header.indexOf('.');
  if (dot <= 0 || dot === header.length - 1) return undefined;
  const rest = header.slice(dot + 1).trim();
  return [normalizeFieldName(header.slice(0, dot)), exactFieldName(rest) ?? normalizeFieldName(rest)];
}

/** The side names a file may use for the child, and where its records are. */
function childSides(parent: string, relation: string): { names: string[]; resources: string[]; key: string } {
  const link = findLink(parent, relation);
  if (link) {
    const resources = [...link.childResources];
    // notes' records: `record.<field>` (the row's record_type says which); the others: the child's singular
    const own = resources.length > 1 ? ['record'] : resources.map((r) => findResource(r)!.singular);
    const alias = relation === 'members' ? ['member'] : [];
    return { names: [...own, ...alias], resources, key: link.childKey };
  }
  const assoc = findAssociation(parent, relation)!;
  return { names: [findResource(assoc.target)!.singular], resources: [assoc.target], key: assoc.bodyKey };
}

/** Where a header's columns go: each side's key fields or id, the link's fields, a linked file's columns, the rest. */
interface Scanned {
  keys: { parent: Array<[string, number]>; child: Array<[string, number]> };
  ids: { parent?: number; child?: number };
  extras: Array<{ field: LinkField; column: number }>;
  linked: Partial<Record<(typeof LINKED_COLUMNS)[number] | typeof BEFORE_COLUMN, number>>;
  unknown: string[];
}

function scanHeader(parent: string, relation: string, cells: readonly string[], maps: ColumnMap): Scanned {
  const parentName = findResource(parent)!.singular;
  const child = childSides(parent, relation);
  const fields = findLink(parent, relation)?.fields ?? [];
  const out: Scanned = { keys: { parent: [], child: [] }, ids: {}, extras: [], linked: {}, unknown: [] };
  cells.forEach((cell, i) => {
    const name = mapped(cell, maps);
    if (name === undefined) return;
    const side = sideColumn(name);
    if (side) {
      const [s, field] = side;
      if (s === parentName) out.keys.parent.push([field, i]);
      else if (child.names.includes(s)) out.keys.child.push([field, i]);
      else out.unknown.push(cell);
      return;
    }
    const plain = normalizeFieldName(name);
    const field = fields.find((f) => f.name === plain);
    const idOf = plain === parentField(parent) ? 'parent' : plain === child.key ? 'child' : undefined;
    if (idOf && out.ids[idOf] !== undefined)
      throw new UsageError(`${cells[out.ids[idOf]]!} and ${cell} both name ${plain}; give one`);
    if (idOf) out.ids[idOf] = i;
    else if (field) out.extras.push({ field, column: i });
    else if ((LINKED_COLUMNS as readonly string[]).includes(plain) || plain === BEFORE_COLUMN)
      out.linked[plain as (typeof LINKED_COLUMNS)[number]] = i;
    else out.unknown.push(cell);
  });
  return out;
}

/**
 * The layout of a file of pairs for `links import PARENT RELATION`, or a usage error naming the column that fits no
 * side. `undefined` when every side is named by id and the file is not a linked file (unless `always`): the engine's
 * plain path.
 */
export function linkLayout(
  parent: string,
  relation: string,
  cells: readonly string[],
  maps: ColumnMap,
  file: string,
  always = false,
): LinkLayout | undefined {
  if (!findLink(parent, relation) && !findAssociation(parent, relation))
    throw new UsageError(`unknown link '${parent} ${relation}'`);
  const parentName = findResource(parent)!.singular;
  const child = childSides(parent, relation);
  // a --map of a column the file lacks: said as crm batch says it (the re-trial: `--map Emial=contact.email` read
  // only as "Email" naming no side)
  const unused = unusedMaps(cells, maps);
  if (unused.length > 0) throw unusedMapError(unused, cells, maps);
  const { keys, ids, extras, linked, unknown } = scanHeader(parent, relation, cells, maps);
  const isLinkedFile = LINKED_COLUMNS.every((c) => linked[c] !== undefined);
  if (isLinkedFile) {
    ids.parent ??= linked.parent_id;
    ids.child ??= linked.child_id;
  } else unknown.push(...Object.values(linked).map((i) => cells[i]!));
  if (unknown.length > 0)
    throw new UsageError(
      `${file}: ${unknown.map((c) => JSON.stringify(c)).join(', ')} ${unknown.length === 1 ? 'names' : 'name'} no side of a ${parent} ${relation} link`,
      {
        hint: `name the ${parentName} by ${parentField(parent)} or ${parentName}.FIELD, the other side by ${child.key} or ${child.names[0]}.FIELD (--map "COLUMN=${child.names[0]}.email" renames one; --map "COLUMN=" leaves it out)`,
      },
    );
  if (!always && !isLinkedFile && keys.parent.length === 0 && keys.child.length === 0) return undefined;
  const sideOf = (name: string, id: number | undefined, key: Array<[string, number]>, resources: string[]): Side => {
    if (id === undefined && key.length === 0)
      throw new UsageError(
        `${file} names no ${name}: give a ${name === parentName ? parentField(parent) : child.key} column or ${name}.FIELD columns (${name}.name, ${name}.email)`,
      );
    const twice = key.find(([f], i) => key.findIndex(([g]) => g === f) !== i);
    if (twice)
      throw new UsageError(
        `${file}: ${cells[key.find(([f]) => f === twice[0])![1]]!} and ${cells[twice[1]]!} both name ${name}.${twice[0]}; give one`,
      );
    const byKey = { key: { fields: key.map(([f]) => f), columns: key.map(([, c]) => c) } };
    // both: a row's id where it has one, else its key (an ambiguous file with the chosen ids filled in: the trial)
    return { name, resources, ...(id !== undefined ? { idColumn: id } : {}), ...(key.length > 0 ? byKey : {}) };
  };
  const before = linked.before_id !== undefined ? { before: linked.before_id } : {};
  return {
    ...{ parent, relation, association: findLink(parent, relation) === undefined, extras, childKey: child.key },
    parentSide: sideOf(parentName, ids.parent, keys.parent, [parent]),
    childSide: sideOf(child.names[0]!, ids.child, keys.child, child.resources),
    ...(isLinkedFile ? { linkedFile: { parent: linked.parent!, relation: linked.relation!, ...before } } : {}),
    header: cells,
  };
}

/** What a row names for a side: an id, or a key in one resource; or why it cannot be read. */
export type NamedSide = { id: string } | { key: string; resource: string };
type SideCell = NamedSide | { missing: string };

/** A row read against the layout: its two sides and its link's fields, or why it is invalid; `skip` for another relation's row of a linked file. */
export type RowCells =
  | {
      ok: true;
      parent: NamedSide;
      child: NamedSide;
      extras: ApiRecord;
      /** a linked file's meeting row: the association it replaced ('' none) */
      before?: string;
    }
  | { ok: false; code: string; reason: string; field: string }
  | { skip: true };

const cellOf = (cells: readonly string[], i: number): string => (cells[i] ?? '').trim();

function readSide(side: Side, cells: readonly string[], resource: string): SideCell {
  if (side.idColumn !== undefined) {
    const id = cellOf(cells, side.idColumn);
    if (id !== '' && id !== '.' && id !== '..') return { id };
    if (!side.key) return { missing: `${side.name}'s id` };
  }
  const { fields, columns } = side.key!;
  const record: Record<string, string> = {};
  fields.forEach((f, i) => setOwn(record, f, cells[columns[i]!] ?? '')); // `__proto__` a field like any other
  const key = matchKey(fields, record);
  const empty = fields.filter((f) => matchKey([f], record) === undefined).map((f) => `${side.name}.${f}`);
  const or = side.idColumn !== undefined ? `${side.name}'s id or ` : '';
  return key === undefined ? { missing: or + empty.join(', ') } : { key, resource };
}

/** A row's cells read against the layout (pure): what the classifier takes. */
export function readRow(layout: LinkLayout, cells: readonly string[]): RowCells {
  if (layout.linkedFile) {
    const [p, r] = [cellOf(cells, layout.linkedFile.parent), cellOf(cells, layout.linkedFile.relation)];
    if (p !== layout.parent || r !== layout.relation) return { skip: true };
  }
  const extras: ApiRecord = {};
  for (const { field, column } of layout.extras) {
    const given = cellOf(cells, column);
    const value = given === '' ? field.default : given;
    if (value === undefined) continue;
    const choice = choiceOf(field, value);
    if (choice === undefined)
      return {
        ok: false,
        code: 'INVALID_VALUE',
        reason: `${field.name} ${JSON.stringify(value)} is not one of ${field.values!.join(', ')}`,
        field: field.name,
      };
    extras[field.name] = choice;
  }
  // notes' records: the record_type (default contact) names the child's collection
  const kind = typeof extras.record_type === 'string' ? extras.record_type : undefined;
  const childResource =
    layout.childSide.resources.find((r) => findResource(r)!.singular === kind) ?? layout.childSide.resources[0]!;
  const parent = readSide(layout.parentSide, cells, layout.parent);
  const child = readSide(layout.childSide, cells, childResource);
  for (const side of [parent, child])
    if ('missing' in side)
      return { ok: false, code: 'MISSING_KEY', reason: `the row has no ${side.missing}`, field: side.missing };
  const before = layout.linkedFile?.before;
  return {
    ok: true,
    parent: parent as NamedSide,
    child: child as NamedSide,
    extras,
    ...(before !== undefined ? { before: cellOf(cells, before) } : {}),
  };
}

/** What the read found for a key: one record's id, several (their ids), or none. */
export type Found = { id: string } | { ids: string[] } | undefined;

/** The actions of a row (CONTRACT §7d). */
export type LinkAction =
  | { action: 'link' | 'remove'; parentId: string; childId: string }
  | { action: 'linked' | 'not_linked' | 'unchanged'; parentId: string; childId: string }
  | { action: 'set' | 'replace'; parentId: string; childId: string; before: string | null }
  | { action: 'ambiguous'; side: string; candidates: string[] }
  | { action: 'not_found'; side: string; key: string }
  | { action: 'duplicate' | 'repeated'; earlier: number };

/**
 * One row's action, from what each side resolved to, whether the pair is there now, and the line of an earlier row of
 * the file naming the same pair. Never a guess: a side that is not exactly one record is not linked.
 */
export function classifyRow(o: {
  remove: boolean;
  association: boolean;
  parent: { side: string; key?: string; found: Found };
  child: { side: string; key?: string; found: Found };
  /** links: whether the pair is linked now; a meeting: the id its association holds now (null: none) */
  current: (parentId: string, childId: string) => boolean | string | null;
  earlierLine: (parentId: string, childId: string) => number | undefined;
}): LinkAction {
  const ids: string[] = [];
  for (const s of [o.parent, o.child]) {
    if (s.found === undefined) return { action: 'not_found', side: s.side, key: s.key ?? '' };
    if ('ids' in s.found) return { action: 'ambiguous', side: s.side, candidates: s.found.ids };
    ids.push(s.found.id);
  }
  const [parentId, childId] = ids as [string, string];
  const earlier = o.earlierLine(parentId, childId);
  if (earlier !== undefined) return { action: 'duplicate', earlier };
  const now = o.current(parentId, childId);
  if (o.association) {
    const before = typeof now === 'string' ? now : null;
    if (o.remove) return { action: before === childId ? 'remove' : 'not_linked', parentId, childId };
    if (before === childId) return { action: 'unchanged', parentId, childId };
    return { action: before === null ? 'set' : 'replace', parentId, childId, before };
  }
  if (o.remove) return { action: now === true ? 'remove' : 'not_linked', parentId, childId };
  return { action: now === true ? 'linked' : 'link', parentId, childId };
}
