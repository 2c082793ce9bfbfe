// Lookups over the link sub-resources and meeting associations of the resource table, shared by
// `crm links`, completion and the sandbox's routes.
import { RESOURCES, findResource, type Association, type LinkRelation, type ResourceDef } from './resources.js';

/** Every (parent, relation) pair of the link sub-resources, e.g. `deals contacts`. */
export function linkPairs(): Array<{ parent: ResourceDef; link: LinkRelation }> {
  return RESOURCES.flatMap((parent) => (parent.links ?? []).map((link) => ({ parent, link })));
}

export function findLink(parent: string, relation: string): LinkRelation | undefined {
  return findResource(parent)?.links?.find((l) => l.relation === relation);
}

/** Every meeting association, e.g. `meetings deal`. */
export function associationPairs(): Array<{ parent: ResourceDef; assoc: Association }> {
  return RESOURCES.flatMap((parent) => (parent.associations ?? []).map((assoc) => ({ parent, assoc })));
}

export function findAssociation(parent: string, name: string): Association | undefined {
  return findResource(parent)?.associations?.find((a) => a.name === name);
}
