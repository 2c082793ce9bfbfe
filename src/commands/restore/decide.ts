// The pure decisions of a restore (CONTRACT §10): which collections, in which order; what each snapshot record
// becomes in the target (the id map's, found by its id, matched, ambiguous, or created); and how the fields that
// hold another record's id are translated through the id map.
import type { ApiRecord } from '../../api/envelopes.js';
import { idText } from '../../api/ids.js';
import { READ_ONLY_FIELDS, RESOURCES, type ResourceName } from '../../api/resources.js';
import type { IndexEntry } from '../../import/shapes.js';

/** The collections a restore creates records of, each after those its records may name (a contact's company_id, a
 * deal's pipeline_id, an interaction's contact_ids): the resource table's creatable collections, reordered. */
export const RESTORE_ORDER: readonly ResourceName[] = [
  'companies',
  'pipelines',
  'contacts',
  'deals',
  'tasks',
  'notes',
  'segments',
  'interactions',
];

/** `--match` when not given: contacts by `email`, companies by `domain`; the others by none (id map and id only). */
export const DEFAULT_MATCH: Readonly<Partial<Record<ResourceName, readonly string[]>>> = {
  contacts: ['email'],
  companies: ['domain'],
};

export type Decision =
  /** the id map's target id, and the target still holds it */
  | { action: 'mapped'; target: string }
  /** the same id in the target: the same organization, the record still there */
  | { action: 'found'; target: string }
  /** one record of the target has the record's match key */
  | { action: 'matched'; target: string }
  /** never a guess: two or more records of the target have the key, or another snapshot record shares it, or the one
   * record having it is another snapshot record's own */
  | { action: 'ambiguous'; candidates: readonly string[]; why: string }
  | { action: 'create' };

/** What is known of one snapshot record when its decision is made. */
export interface Seen {
  /** the record's own id (its text) */
  id: string;
  /** its target id in the id map */
  mapped?: string;
  /** whether the target listing had that id */
  mappedThere: boolean;
  /** the same organization, and the target listing had the record's own id */
  sameIdThere: boolean;
  /** its match key (undefined: no match fields, or a field empty) */
  key?: string;
  /** the other snapshot records having that key that are not in the target by the id map or their id */
  keyOthers: number;
  /** the target's records having that key */
  byKey?: IndexEntry;
  /** a target id that is another snapshot record's (its own id, or the id map's for it), in the target */
  claimed: (targetId: string) => boolean;
}

export function decide(s: Seen): Decision {
  if (s.mapped !== undefined && s.mappedThere) return { action: 'mapped', target: s.mapped };
  if (s.sameIdThere) return { action: 'found', target: s.id };
  if (s.key === undefined || s.byKey === undefined) return { action: 'create' };
  if ('noId' in s.byKey)
    return { action: 'ambiguous', candidates: [], why: 'a record of the target has its key but no id' };
  // a record another snapshot record is already (by its id, or the id map) is that record, not this one
  const free = ('ids' in s.byKey ? s.byKey.ids : [s.byKey.one.id]).filter((id) => !s.claimed(id));
  if (free.length === 0) return { action: 'create' };
  if (free.length > 1) return { action: 'ambiguous', candidates: free, why: 'records of the target share its key' };
  if (s.keyOthers > 0)
    return { action: 'ambiguous', candidates: free, why: 'other records of the snapshot share its key' };
  return { action: 'matched', target: free[0]! };
}

/** The collection a field's values name: `company_id`, `contact_ids`, `contacts` (ids); `owner_id` names a user. */
export function referenceOf(field: string): ResourceName | undefined {
  if (READ_ONLY_FIELDS.includes(field)) return undefined;
  const m = /^(.+)_ids?$/.exec(field);
  if (m) return RESOURCES.find((r) => r.singular === m[1])?.name;
  return RESOURCES.find((r) => r.name === field)?.name;
}

/**
 * The record to create: the server's own fields left out (id, created_at, updated_at, owner_id: a create cannot send
 * them), each id another record's field holds replaced by that record's target id when `lookup` has it, else kept as
 * it was and counted (`kept`; `changed`: those the map gives another id). Values that are not ids (an object, a number beyond an id's form) are left alone.
 */
export function translate(
  record: ApiRecord,
  lookup: (resource: ResourceName, id: string) => string | undefined,
): { record: ApiRecord; kept: number; changed: number } {
  const out: ApiRecord = {};
  let kept = 0;
  let changed = 0;
  const swap = (resource: ResourceName, v: unknown): unknown => {
    const id = typeof v === 'string' ? v : typeof v === 'number' ? idText(v) : undefined;
    if (id === undefined) return v;
    const target = lookup(resource, id);
    if (target === undefined) {
      kept++;
      return v;
    }
    if (target !== id) changed++;
    return target;
  };
  for (const [field, value] of Object.entries(record)) {
    if (READ_ONLY_FIELDS.includes(field)) continue;
    const resource = referenceOf(field);
    const v =
      resource === undefined || value === null
        ? value
        : Array.isArray(value)
          ? value.map((x) => swap(resource, x))
          : swap(resource, value);
    Object.defineProperty(out, field, { value: v, enumerable: true, writable: true, configurable: true });
  }
  return { record: out, kept, changed };
}
