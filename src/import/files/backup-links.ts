// A delete keeps a parent's links (CONTRACT §10, issue 31). Deleting deals, notes or segments keeps each record's own
// links in its backup line, under `_links`: `{"contacts": [{"id": "c_1", "type": "champion"}], "companies": [...]}`,
// each linked record's id with the link's own fields, read (`GET /{parent}/{id}/{relation}`, every page) just before
// the record is kept. Importing the backup creates the records (`_links` is crm's own key, never sent as a field),
// then each new record's pairs go to the links engine (backupPairs), which links it again to the children still there.
import { findResource, PAGE_SIZE_MAX, RESOURCES, type LinkRelation } from '../../api/resources.js';
import { idText } from '../../api/ids.js';
import { NotFoundError } from '../../http/errors.js';
import type { HttpClient } from '../../http/types.js';
import { pathSegment } from '../../http/url.js';
import { openInput } from '../input/reader.js';
import { parentField } from '../operation.js';
import { csvLine } from './outputs.js';

/** The backup line's key holding the record's own links. */
export const LINKS_KEY = '_links';

/** A record's own links by relation: each linked record's id and the link's fields (`type`, `supervisor`, `record_type`). */
export type KeptLinks = Record<string, Array<Record<string, string>>>;

/** The links a record of `resource` has of its own (deals: contacts, companies; notes: records; segments: members). */
export const ownRelations = (resource: string): readonly LinkRelation[] => findResource(resource)?.links ?? [];

/**
 * The record's own links as they are now, every page of each relation; null when the record is gone (a 404: there is
 * nothing to keep). One request per relation, and one more per further 100 links.
 */
export async function readOwnLinks(client: HttpClient, resource: string, id: string): Promise<KeptLinks | null> {
  const out: KeptLinks = {};
  for (const rel of ownRelations(resource)) {
    const kept: Array<Record<string, string>> = [];
    try {
      const path = `/${resource}/${pathSegment(id)}/${rel.relation}`;
      for await (const page of client.pages(path, { limit: PAGE_SIZE_MAX }))
        for (const item of page.data) {
          const entry = linkEntry(rel, item);
          if (entry) kept.push(entry);
        }
    } catch (err) {
      if (err instanceof NotFoundError && err.status === 404) return null;
      throw err;
    }
    out[rel.relation] = kept;
  }
  return out;
}

/** A listed link as kept: the child's id, the link's string fields, and a note's `record_type` from the child's kind. */
function linkEntry(rel: LinkRelation, item: Record<string, unknown>): Record<string, string> | undefined {
  const id = idText(item.id);
  if (id === undefined) return undefined;
  const link = (item.link ?? {}) as Record<string, unknown>;
  const entry: Record<string, string> = { id };
  for (const f of rel.fields ?? []) if (typeof link[f.name] === 'string') entry[f.name] = link[f.name] as string;
  const kind = RESOURCES.find((r) => r.name === link.child_type)?.singular;
  for (const f of rel.fields ?? []) if (f.namesChild && entry[f.name] === undefined && kind) entry[f.name] = kind;
  return entry;
}

/**
 * The pairs of a backup's records created again, one CSV per relation in the links engine's by-id shape
 * (`deal_id,contact_id,type,supervisor`): each row of `file` holding `_links` whose line `created` maps to its new id.
 * Relations no row holds a link of are left out.
 */
export async function backupPairs(
  file: string,
  resource: string,
  created: ReadonlyMap<number, string>,
): Promise<Array<{ relation: string; text: string; links: number }>> {
  const rels = ownRelations(resource);
  const out = rels.map((rel) => {
    const extras = (rel.fields ?? []).map((f) => f.name);
    return { rel, extras, text: csvLine([parentField(resource), rel.childKey, ...extras]), links: 0 };
  });
  const reader = await openInput(file, { name: file, format: 'ndjson' });
  try {
    for await (const row of reader.rows) {
      const newId = created.get(row.line);
      const kept = (row.json as Record<string, unknown> | undefined)?.[LINKS_KEY];
      if (newId === undefined || kept === null || typeof kept !== 'object') continue;
      for (const o of out) {
        const entries = (kept as Record<string, unknown>)[o.rel.relation];
        if (!Array.isArray(entries)) continue;
        for (const e of entries as Array<Record<string, unknown>>) {
          const child = idText(e?.id);
          if (child === undefined) continue;
          o.text += csvLine([newId, child, ...o.extras.map((f) => (typeof e[f] === 'string' ? e[f] : ''))]);
          o.links++;
        }
      }
    }
  } finally {
    reader.close();
  }
  return out.filter((o) => o.links > 0).map((o) => ({ relation: o.rel.relation, text: o.text, links: o.links }));
}
