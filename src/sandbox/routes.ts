// Path → routes for version 2, served from the resource table: only the table's verbs exist.
import { findResource } from '../api/resources.js';
import type { PathRoutes } from './handler.js';
import { associationRoutes, linkedChildRoutes, relationRoutes } from './link-handlers.js';
import { batchRoutes, collectionRoutes, itemRoutes } from './resource-handlers.js';

/** The routes of a path below `/api/v2` (already split and decoded), or undefined (404). */
export function resolveV2(segments: string[]): PathRoutes | undefined {
  if (segments.some((s) => s === '')) return undefined;
  const [name, id, relation, childId, ...rest] = segments;
  const def = name === undefined ? undefined : findResource(name);
  if (!def || rest.length > 0) return undefined;
  let routes: PathRoutes | undefined;
  if (id === undefined) routes = collectionRoutes(def);
  else if (relation === undefined) routes = id === 'batch' && def.batch ? batchRoutes(def) : itemRoutes(def, id);
  else {
    const link = def.links?.find((l) => l.relation === relation);
    const assoc = def.associations?.find((a) => a.name === relation);
    if (link) routes = childId === undefined ? relationRoutes(def, id, link) : linkedChildRoutes(def, id, link, childId);
    else if (assoc && childId === undefined) routes = associationRoutes(def, id, assoc);
  }
  return routes && Object.keys(routes).length > 0 ? routes : undefined;
}
