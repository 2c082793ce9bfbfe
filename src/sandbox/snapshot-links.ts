// `--from DIR`'s links (docs/sandbox.md, "Serving a snapshot"): the files `crm snapshot DIR --links` wrote,
// `links/<parent>.<relation>.ndjson` with lines `{"parent_id", "record"}` (src/api/snapshot-links.ts).
// A link is the store's own (its id, created_at, type, supervisor, record_type from the record's `link`
// object), listed in the order of the file; a meeting's deal or company becomes its `deal_id` or
// `company_id`, as the sandbox keeps them.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ApiRecord } from '../api/envelopes.js';
import { findResource, type ResourceName } from '../api/resources.js';
import { LINK_KINDS, LINKS_DIR, type LinkKind } from '../api/snapshot-links.js';
import { idText } from '../api/ids.js';
import { eachNdjsonLine } from './ndjson-file.js';
import type { LinkData, StoreSnapshot } from './store.js';
import { isPlainObject, type Need } from './validation.js';

type Records = StoreSnapshot['records'];

/** The kind of record `id` is among `kinds`: named by the link (`child_type`, a note's `record_type`), else the one holding it. */
function childKind(
  kinds: readonly ResourceName[],
  link: ApiRecord,
  id: string,
  held: (r: ResourceName, id: string) => boolean,
) {
  const named = kinds.find((r) => r === link.child_type || findResource(r)!.singular === link.record_type);
  return named ?? kinds.find((r) => held(r, id));
}

/**
 * The links of DIR/links/*.ndjson (none without the folder); the meetings' associations are set on their
 * records in `records`. Throws an Error naming the file (and line) for an unknown kind, a line that is not
 * `{"parent_id", "record"}` and a parent the snapshot does not hold; a link to a record it does not hold
 * is left out, with a warning.
 */
export function loadSnapshotLinks(dir: string, records: Records, warnings: string[]): LinkData[] {
  const folder = join(dir, LINKS_DIR);
  if (!existsSync(folder)) {
    // taken without --links: said, so that a rehearsal does not take a record's missing links for the CRM's
    const parents = new Set(LINK_KINDS.map((k) => k.parent).filter((r) => (records[r]?.length ?? 0) > 0));
    if (parents.size > 0)
      warnings.push(
        `snapshot ${dir} holds no links (it was taken without --links): its ${[...parents].join(', ')} are served with none`,
      );
    return [];
  }
  const byId = new Map<ResourceName, Map<string, ApiRecord>>();
  const index = (r: ResourceName) => {
    let m = byId.get(r);
    if (!m) byId.set(r, (m = new Map((records[r] ?? []).map((x) => [idText(x.id)!, x]))));
    return m;
  };
  const held = (r: ResourceName, id: string) => index(r).has(id);
  const links: LinkData[] = [];
  for (const file of readdirSync(folder).sort()) {
    if (file.startsWith('.') || !file.endsWith('.ndjson')) continue; // a killed snapshot's partial files, anything else
    const path = join(folder, file);
    const kind = LINK_KINDS.find((k) => `${k.key}.ndjson` === file);
    if (!kind)
      throw new Error(`snapshot ${path}: not a kind of link (${LINK_KINDS.map((k) => `${k.key}.ndjson`).join(', ')})`);
    let notHeld = 0;
    eachNdjsonLine(path, (line, check) => {
      const need: Need = check;
      const childId = isPlainObject(line) && isPlainObject(line.record) ? idText(line.record.id) : undefined;
      need(
        isPlainObject(line) && Object.keys(line).length === 2 && typeof line.parent_id === 'string' && childId,
        'not {"parent_id": "<id>", "record": {"id": "<id>", …}}',
      );
      const parentId = line.parent_id;
      const record = line.record as ApiRecord;
      need(held(kind.parent, parentId), `parent "${parentId}" is not in ${kind.parent}.ndjson`);
      const made = kind.association
        ? associate(kind, index(kind.parent).get(parentId)!, childId, record.id, held)
        : linkOf(kind, parentId, childId, record, held);
      if (made === undefined) notHeld++;
      else if (made !== true) links.push(made);
    });
    if (notHeld > 0)
      warnings.push(
        `snapshot ${path}: ${notHeld} link${notHeld === 1 ? '' : 's'} to a record the snapshot does not hold, left out`,
      );
  }
  return links;
}

/** A meeting's deal or company (its id as the record has it) set on its record (true), or undefined when the snapshot does not hold it. */
function associate(
  kind: LinkKind,
  parent: ApiRecord,
  id: string,
  value: unknown,
  held: (r: ResourceName, id: string) => boolean,
): true | undefined {
  const assoc = findResource(kind.parent)!.associations!.find((a) => a.name === kind.relation)!;
  if (!held(assoc.target, id)) return undefined;
  parent[assoc.bodyKey] = value;
  return true;
}

/** The store's link for a line, or undefined when the snapshot does not hold its child. */
function linkOf(
  kind: LinkKind,
  parentId: string,
  childId: string,
  record: ApiRecord,
  held: (r: ResourceName, id: string) => boolean,
) {
  const relation = findResource(kind.parent)!.links!.find((l) => l.relation === kind.relation)!;
  const link = isPlainObject(record.link) ? record.link : {};
  const child = childKind(relation.childResources, link, childId, held);
  if (!child || !held(child, childId)) return undefined;
  const data: LinkData = {
    ...link,
    id: typeof link.id === 'string' ? link.id : `lnk_${parentId}_${childId}`,
    parent_type: kind.parent,
    parent_id: parentId,
    relation: kind.relation,
    child_type: child,
    child_id: childId,
    created_at:
      typeof link.created_at === 'string'
        ? link.created_at
        : typeof record.created_at === 'string'
          ? record.created_at
          : '',
  };
  return data;
}
