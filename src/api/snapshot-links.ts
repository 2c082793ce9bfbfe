// The links part of a snapshot (issue 19), shared by `crm snapshot --links` (which writes it) and
// `crm sandbox --from` (which serves it): one file per kind, `links/<parent>.<relation>.ndjson`, each
// line `{"parent_id": "<id>", "record": <the linked record as the API listed it>}`.
import { RESOURCES, type ResourceName } from './resources.js';

export interface LinkKind {
  /** `deals.contacts`: the manifest's key and the file's name without `.ndjson` */
  readonly key: string;
  readonly parent: ResourceName;
  /** the path segment after the parent id: a link relation (`contacts`) or a meeting association (`deal`) */
  readonly relation: string;
  /** a meeting's single deal or company (`data` is the record or null), not a cursor-paginated list */
  readonly association: boolean;
}

/** Every kind, in the resource table's order: the links first, a resource's associations after them. */
export const LINK_KINDS: readonly LinkKind[] = RESOURCES.flatMap((r) => [
  ...(r.links ?? []).map((l) => ({ parent: r.name, relation: l.relation, association: false })),
  ...(r.associations ?? []).map((a) => ({ parent: r.name, relation: a.name, association: true })),
]).map((k) => ({ ...k, key: `${k.parent}.${k.relation}` }));

export const LINKS_DIR = 'links';

/** `links/deals.contacts.ndjson`, relative to the snapshot's folder */
export const linkFile = (kind: LinkKind): string => `${LINKS_DIR}/${kind.key}.ndjson`;

export interface LinkLine {
  parent_id: string;
  record: Record<string, unknown>;
}
