// Pure decisions of `crm links`: which (parent, relation) pairs exist, and the body each link
// request carries (the spec shows only the deal-contact body; the others are CONTRACT §6's).
import { DEAL_CONTACT_TYPES, RESOURCES, linkPairs, findLink, type Association, type LinkRelation } from '../../api/resources.js';
import { UsageError } from '../../http/errors.js';
import type { LinkOptions } from './types.js';

export function linkPairNames(): string[] {
  return linkPairs().map(({ parent, link }) => `${parent.name} ${link.relation}`);
}

export function associationPairNames(): string[] {
  return RESOURCES.flatMap((r) => (r.associations ?? []).map((a) => `${r.name} ${a.name}`));
}

/** The link relation for `links list|add|remove`, or a usage error naming the valid pairs. */
export function resolveLink(parent: string, relation: string): LinkRelation {
  const link = findLink(parent, relation);
  if (!link) {
    const hint = associationPairNames().includes(`${parent} ${relation}`)
      ? ` (meetings use 'crm links get|set|clear meetings ID ${relation}')`
      : '';
    throw new UsageError(`unknown link '${parent} ${relation}'${hint}; valid pairs: ${linkPairNames().join(', ')}`);
  }
  return link;
}

/** The association for `links get|set|clear`, or a usage error naming the valid pairs. */
export function resolveAssociation(parent: string, relation: string): Association {
  const assoc = RESOURCES.find((r) => r.name === parent)?.associations?.find((a) => a.name === relation);
  if (!assoc) {
    throw new UsageError(
      `unknown association '${parent} ${relation}'; valid: ${associationPairNames().join(', ')} (for deals, notes and segments use links list|add|remove)`,
    );
  }
  return assoc;
}

/**
 * The table columns of `links list`: the linked record's id, then what the link itself says (the
 * deal-contact role and supervisor, a note record's type), then the child's own default columns.
 */
export function linkListColumns(parent: string, link: LinkRelation): string[] {
  const own =
    parent === 'deals' && link.relation === 'contacts'
      ? ['link.type', 'link.supervisor']
      : link.childKey === 'record_id'
        ? ['link.record_type']
        : [];
  const child = link.childResources.flatMap((name) => RESOURCES.find((r) => r.name === name)?.columns ?? []);
  return [...new Set(['id', ...own, ...child])];
}

/** `--type` in any case → the spec's enum value, or a usage error listing the allowed values. */
export function normalizeDealContactType(type: string): string {
  const upper = type
    .trim()
    .toUpperCase()
    .replace(/[-\s]+/g, '_');
  if (!(DEAL_CONTACT_TYPES as readonly string[]).includes(upper)) {
    throw new UsageError(`--type '${type}' is not a deal-contact type; allowed: ${DEAL_CONTACT_TYPES.join(', ')}`);
  }
  return upper;
}

/** The assumed body of `links add` (replaced by --data where given). */
export function linkBody(
  o: Pick<LinkOptions, 'parent' | 'relation' | 'childId' | 'type' | 'supervisor' | 'recordType'>,
  link: LinkRelation,
): Record<string, unknown> {
  const isDealContact = o.parent === 'deals' && o.relation === 'contacts';
  const isNoteRecord = o.parent === 'notes' && o.relation === 'records';
  if (!isDealContact && (o.type !== undefined || o.supervisor !== undefined)) {
    throw new UsageError('--type and --supervisor apply only to deals contacts');
  }
  if (!isNoteRecord && o.recordType !== undefined) throw new UsageError('--record-type applies only to notes records');
  const body: Record<string, unknown> = { [link.childKey]: o.childId };
  if (isDealContact) {
    if (o.type !== undefined) body.type = normalizeDealContactType(o.type);
    if (o.supervisor !== undefined) body.supervisor = o.supervisor;
  }
  if (isNoteRecord) body.record_type = o.recordType ?? 'contact';
  return body;
}
