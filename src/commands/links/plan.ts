// Pure decisions of `crm links`: which (parent, relation) pairs exist, and the body each link
// request carries (the link's fields come from the resource table, src/api/resources.ts).
import { associationPairs, findAssociation, findLink, linkPairs } from '../../api/links.js';
import { findResource, type Association, type LinkField, type LinkRelation } from '../../api/resources.js';
import { UsageError } from '../../http/errors.js';
import { choiceOf } from '../../import/index.js';
import type { LinkOptions } from './command.js';

export const linkPairNames = (): string[] => linkPairs().map(({ parent, link }) => `${parent.name} ${link.relation}`);
const associationPairNames = (): string[] =>
  associationPairs().map(({ parent, assoc }) => `${parent.name} ${assoc.name}`);

/** The link relation for `links list|add|remove`, or a usage error naming the valid pairs. */
export function resolveLink(parent: string, relation: string): LinkRelation {
  const link = findLink(parent, relation);
  if (link) return link;
  const meeting = associationPairNames().includes(`${parent} ${relation}`);
  const hint = meeting ? ` (meetings use 'crm links get|set|clear meetings ID ${relation}')` : '';
  throw new UsageError(`unknown link '${parent} ${relation}'${hint}; valid pairs: ${linkPairNames().join(', ')}`);
}

/** The link or association of `links import`, or a usage error naming every pair a file can link. */
export function resolveImportPair(parent: string, relation: string): void {
  if (findLink(parent, relation) ?? findAssociation(parent, relation)) return;
  throw new UsageError(
    `unknown link '${parent} ${relation}'; valid pairs: ${[...linkPairNames(), ...associationPairNames()].join(', ')}`,
  );
}

/** The association for `links get|set|clear`, or a usage error naming the valid pairs. */
export function resolveAssociation(parent: string, relation: string): Association {
  const assoc = findAssociation(parent, relation);
  if (assoc) return assoc;
  const valid = associationPairNames().join(', ');
  throw new UsageError(
    `unknown association '${parent} ${relation}'; valid: ${valid} (for deals, notes and segments use links list|add|remove)`,
  );
}

/** `links list` columns: the child's id, the link's own fields (`link.type`), the child's columns. */
export function linkListColumns(link: LinkRelation): string[] {
  const own = (link.fields ?? []).map((f) => `link.${f.name}`);
  return [...new Set(['id', ...own, ...link.childResources.flatMap((name) => findResource(name)?.columns ?? [])])];
}

/** A flag's value in any case (`decision-maker`) → the field's allowed value, or a usage error listing them. */
export function normalizeChoice(field: LinkField, value: string): string {
  const found = choiceOf(field, value);
  if (found === undefined)
    throw new UsageError(
      `--${field.flag} '${value}' is not a valid ${field.name}; allowed: ${field.values!.join(', ')}`,
    );
  return found;
}

/** The assumed body of `links add` (replaced by --data where given). */
export function linkBody(
  o: Pick<LinkOptions, 'parent' | 'relation' | 'childId' | 'type' | 'supervisor' | 'recordType'>,
  link: LinkRelation,
): Record<string, unknown> {
  const given: Record<string, string | undefined> = {
    type: o.type,
    supervisor: o.supervisor,
    'record-type': o.recordType,
  };
  for (const [flag, value] of Object.entries(given)) {
    if (value === undefined || link.fields?.some((f) => f.flag === flag)) continue;
    const pairs = linkPairs().filter((p) => p.link.fields?.some((f) => f.flag === flag));
    throw new UsageError(
      `--${flag} applies only to ${pairs.map((p) => `${p.parent.name} ${p.link.relation}`).join(', ')}`,
    );
  }
  const body: Record<string, unknown> = { [link.childKey]: o.childId };
  for (const field of link.fields ?? []) {
    const value = given[field.flag] ?? field.default;
    if (value !== undefined) body[field.name] = normalizeChoice(field, value);
  }
  return body;
}
