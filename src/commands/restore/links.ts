// `crm restore DIR --links` (CONTRACT §10): each link of DIR/links/ whose two records are mapped (the id map: found,
// matched or created) is made unless it is there — a file of pairs by id per kind, in the target's ids, given to the
// links engine (src/import/link-keys/: each parent's links read once, a POST per missing link, a key per request,
// `<base>.linked.csv` durable before each one). A link keeps its `type`, `supervisor` and `record_type`. A meeting's
// association is set only for a meeting the target holds (the same organization: its id, listed there).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { findResource, PAGE_SIZE_MAX, RESOURCES, type ResourceName } from '../../api/resources.js';
import { idText } from '../../api/ids.js';
import { LINK_KINDS, linkFile, type LinkKind } from '../../api/snapshot-links.js';
import type { HttpClient } from '../../http/types.js';
import { csvLine } from '../../import/files/outputs.js';
import { parentField } from '../../import/index.js';
import { runKeyedLinks, type LinkSummary } from '../../import/link-keys/run.js';
import { parseJson } from '../../json/exact-json.js';
import { HashTable } from '../../util/hash-table.js';
import { textLines } from '../../util/text-lines.js';
import type { IdMap } from './id-map.js';

export interface LinksOptions {
  dir: string;
  workDir: string;
  client: HttpClient;
  idMap: IdMap;
  sameOrg: boolean;
  /** the collections this run restores (their records through the id map) */
  restored: readonly ResourceName[];
  dryRun: boolean;
  /** a dry run: where the plan puts a record not in the id map yet (found, matched: its id; created: pending) */
  planned?: (resource: string, id: string) => string | { pending: true } | undefined;
  journalDir: string;
  clock: { now(): number };
  signal?: AbortSignal;
  warn(m: string): void;
  /** a progress line's text (the links engine's reading, then sending) */
  progress?: (text: string) => void;
}

export interface KindResult {
  kind: string;
  /** the snapshot's links of this kind */
  links: number;
  /** links one of whose records is not restored (not in the id map; a meeting the target does not hold): left out */
  left_out: number;
  /** a dry run: links to records it would create, not read (new records have none) */
  pending: number;
  summary?: LinkSummary;
}

/** The kinds of links the snapshot holds, in the table's order. */
export const snapshotKinds = (dir: string): LinkKind[] => LINK_KINDS.filter((k) => existsSync(join(dir, linkFile(k))));

export async function restoreLinks(o: LinksOptions): Promise<KindResult[]> {
  const kinds = snapshotKinds(o.dir);
  // a kind's collection this run does not restore (meetings never; another left out of --resources): a record of it
  // is there by the id map (an earlier run's) or, in the same organization, by its own id, when the target lists it
  // (the third trial: `--resources deals --links` into a copy left every link out, its contacts all in the id map)
  const sides = new Set(kinds.flatMap((k) => [k.parent, ...kindShape(k).children]));
  const listed = new Map<string, HashTable>();
  for (const r of sides)
    if (!o.restored.includes(r as ResourceName) && (o.sameOrg || o.idMap.count(r) > 0))
      listed.set(r, await targetIds(o, r));
  const out: KindResult[] = [];
  for (const kind of kinds) {
    const { text, ...counts } = await pairsOf(kind, o, listed);
    const rows = counts.links - counts.left_out - counts.pending;
    const summary = rows > 0 ? await linkKind(kind, text, o) : undefined;
    out.push({ kind: kind.key, ...counts, ...(summary ? { summary } : {}) });
  }
  return out;
}

/** The CSV of a kind's pairs in the target's ids (`deal_id,contact_id,type,supervisor`), and what was left out. */
async function pairsOf(kind: LinkKind, o: LinksOptions, listed: ReadonlyMap<string, HashTable>) {
  const { childKey, extras, children } = kindShape(kind);
  let text = csvLine([parentField(kind.parent), childKey, ...extras]);
  const counts = { links: 0, left_out: 0, pending: 0 };
  const targetOf = (resource: string, id: string) => {
    if (o.restored.includes(resource as ResourceName)) return o.idMap.get(resource, id) ?? o.planned?.(resource, id);
    const there = listed.get(resource);
    const ids = [o.idMap.get(resource, id), o.sameOrg ? id : undefined];
    return there && ids.find((t) => t !== undefined && there.get(t) !== undefined);
  };
  for await (const line of textLines(join(o.dir, linkFile(kind)))) {
    const l = parseJson(line) as { parent_id?: unknown; record?: Record<string, unknown> | null };
    const record = l.record;
    const [parentId, childId] = [idText(l.parent_id), idText(record?.id)];
    if (parentId === undefined || childId === undefined || !record) continue;
    counts.links++;
    const linkBody = (record.link ?? {}) as Record<string, unknown>;
    const childResource = childResourceOf(kind, linkBody, children);
    const [parent, child] = [targetOf(kind.parent, parentId), childResource && targetOf(childResource, childId)];
    if (typeof parent === 'string' && typeof child === 'string') {
      const cells = extras.map((f) => (typeof linkBody[f] === 'string' ? linkBody[f] : ''));
      text += csvLine([parent, child, ...cells]);
    } else if (parent !== undefined && child) counts.pending++;
    else counts.left_out++;
  }
  return { text, ...counts };
}

/** The child's collection: the link's own `child_type`, else its `record_type` (a note's), else the relation's one kind. */
function childResourceOf(
  kind: LinkKind,
  link: Record<string, unknown>,
  resources: readonly string[],
): ResourceName | undefined {
  const named = typeof link.child_type === 'string' ? link.child_type : undefined;
  const bySingular =
    typeof link.record_type === 'string' ? RESOURCES.find((r) => r.singular === link.record_type)?.name : undefined;
  const r = named ?? bySingular ?? (resources.length === 1 ? resources[0] : undefined);
  return r !== undefined && resources.includes(r)
    ? (r as ResourceName)
    : kind.association
      ? (resources[0] as ResourceName)
      : undefined;
}

function linkKind(kind: LinkKind, text: string, o: LinksOptions): Promise<LinkSummary | undefined> {
  return runKeyedLinks(
    {
      ...{ parent: kind.parent, relation: kind.relation, file: '-', remove: false, dryRun: o.dryRun },
      ...{ concurrency: 4, baseUrl: o.client.baseUrl },
      derived: {
        source: Readable.from([text]),
        label: join(o.dir, linkFile(kind)),
        base: join(o.workDir, `links.${kind.key}`),
      },
    },
    {
      client: o.client,
      journalDir: o.journalDir,
      cwd: o.workDir,
      clock: o.clock,
      signal: o.signal,
      warn: (m) => o.warn(m),
      progress: (line) => o.progress?.(`links ${kind.key}: ${line}`),
    },
  );
}

/** The ids of a collection of the target, listed once (a hash table: a million contacts in a few MB). */
async function targetIds(o: LinksOptions, resource: string): Promise<HashTable> {
  const ids = new HashTable();
  for await (const page of o.client.pages(`/${resource}`, { limit: PAGE_SIZE_MAX, signal: o.signal }))
    for (const r of page.data) {
      const id = idText(r.id);
      if (id !== undefined) ids.set(id, 1);
    }
  return ids;
}

/** A kind as the resource table has it: the body's child field, the link's own fields, the collections a child may be. */
function kindShape(kind: LinkKind): { childKey: string; extras: string[]; children: readonly string[] } {
  const def = findResource(kind.parent)!;
  const link = def.links?.find((l) => l.relation === kind.relation);
  if (link)
    return { childKey: link.childKey, extras: (link.fields ?? []).map((f) => f.name), children: link.childResources };
  const assoc = def.associations!.find((a) => a.name === kind.relation)!;
  return { childKey: assoc.bodyKey, extras: [], children: [assoc.target] };
}
