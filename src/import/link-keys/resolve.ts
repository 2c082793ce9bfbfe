// `crm links import` by natural key (CONTRACT §7d), read then plan, top to bottom: the file's rows against the layout
// (layout.ts) → each keyed side's collection read once, keeping only the file's keys (the `--match` read, read.ts) →
// each distinct parent's current links read once (a meeting's association: one GET) → one action per row (classifyRow).
// Nothing is sent here: the plan it returns is what the sending pass (send.ts) takes.
import type { ApiRecord } from '../../api/envelopes.js';
import { CrmError, NotFoundError, InterruptedError, restated, UsageError } from '../../http/errors.js';
import { nearestTypo } from '../../util/nearest.js';
import type { HttpClient } from '../../http/types.js';
import { pathSegment } from '../../http/url.js';
import { PAGE_SIZE_MAX } from '../../api/resources.js';
import { idText } from '../../api/ids.js';
import { stringifyJson } from '../../json/exact-json.js';
import { findLink } from '../../api/links.js';
import type { InputReader } from '../input/reader.js';
import type { RawRow } from '../shapes.js';
import { readIndex, type RecordIndex } from '../match/read.js';
import {
  classifyRow,
  readRow,
  type RowCells,
  type Found,
  type LinkAction,
  type LinkLayout,
  type NamedSide,
} from './layout.js';

/** A row of the plan: its line and raw cells (for the files that carry it), and its action or why it is invalid. */
export interface PlannedRow {
  line: number;
  raw: RawRow;
  /** the link's own fields (type, record_type, …), sent with it */
  extras: ApiRecord;
  /** a pair linked now: the link's own fields as the CRM holds them (a removal keeps them) */
  held?: ApiRecord;
  /** a linked file's meeting row: the association it replaced ('' none), which its removal puts back */
  before?: string;
  act: LinkAction | { action: 'invalid'; code: string; reason: string };
}

export interface LinkPlan {
  rows: PlannedRow[];
  counts: Record<string, number>;
  /** requests spent reading (sides, then parents' links) */
  readRequests: number;
  /** requests the plan sends */
  sends: number;
  /** rows of a linked file naming another parent or relation, left out */
  otherRelations: number;
  association: boolean;
}

export interface ResolveDeps {
  client: HttpClient;
  /** a folder for the indexes' temporary files */
  dir: string;
  signal?: AbortSignal;
  progress?: (text: string) => void;
  /** records a records file's batch created in this run, seconds ago: no link of theirs to read */
  fresh?: ReadonlySet<string>;
}

type Cells = { line: number; raw: RawRow; cells: string[] };

/** Pass 1: every row read against the layout; the keys each collection is to be read for. */
async function readRows(reader: InputReader, layout: LinkLayout) {
  const rows: Array<Cells & { read: Exclude<RowCells, { skip: true }> }> = [];
  const wanted = new Map<string, { fields: readonly string[]; keys: Set<string> }>();
  let otherRelations = 0;
  // a file crm derived from a records file (record-links.ts), or a rejects file fed back: its rows' own lines
  const lineAt = layout.header.findIndex((h) => h.trim() === '_line');
  for await (const row of reader.rows) {
    const cells = row.cells ?? [];
    const own = lineAt < 0 ? NaN : Number(cells[lineAt]);
    if (Number.isSafeInteger(own) && own > 0) row.line = own;
    const read = row.error ? { ok: false as const, ...row.error, field: '' } : readRow(layout, cells);
    if ('skip' in read) {
      otherRelations++;
      continue;
    }
    rows.push({ line: row.line, raw: row.raw, cells, read });
    if (!read.ok) continue;
    for (const [side, cell] of [
      [layout.parentSide, read.parent],
      [layout.childSide, read.child],
    ] as const) {
      if (!('key' in cell)) continue;
      const w = wanted.get(cell.resource) ?? { fields: side.key!.fields, keys: new Set<string>() };
      w.keys.add(cell.key);
      wanted.set(cell.resource, w);
    }
  }
  return { rows, wanted, otherRelations };
}

/** Reads the file and what the CRM holds for it, and plans every row. */
export async function resolveLinks(
  o: { reader: InputReader; layout: LinkLayout; remove: boolean; pending?: Pending },
  deps: ResolveDeps,
): Promise<LinkPlan> {
  const { layout } = o;
  // 1. the file's rows, and the keys each side's collection is read for
  const { rows, wanted, otherRelations } = await readRows(o.reader, layout);
  const start = deps.client.stats.requests;
  const indexes = new Map<string, RecordIndex>();
  try {
    // 2. each keyed side's collection, once: an index of the file's keys only
    for (const [resource, w] of wanted) {
      const keys = `for ${w.keys.size.toLocaleString('en-US')} keys`;
      deps.progress?.(`reading ${resource} ${keys}…`);
      const { client, signal, dir } = deps;
      const onProgress = (p: { records: number; pages: number }) =>
        deps.progress?.(`reading ${resource} ${keys}: ${p.records.toLocaleString('en-US')} records read…`);
      const read = { client, resource, fields: w.fields, keep: [], wanted: w.keys, signal, dir, onProgress };
      const index = await readIndex({ ...read, survey: false });
      indexes.set(resource, index);
      if (index.unseen) throw unseenField(layout, resource, index);
    }
    // a key is looked up once (a lookup reads the index's file: 30,000 rows' two sides took ~0.6 s)
    const seen = new Map<string, Found>();
    const found = (cell: NamedSide): Found => {
      if ('id' in cell) return { id: cell.id };
      const at = `${cell.resource}\0${cell.key}`;
      if (seen.has(at)) return seen.get(at);
      const e = indexes.get(cell.resource)?.get(cell.key);
      const f: Found = e === undefined || 'noId' in e ? undefined : 'one' in e ? { id: e.one.id } : { ids: e.ids };
      seen.set(at, f);
      return f;
    };
    // a dry run of a records file: a record its batch would create is not there yet, and is linked once it is; a
    // row the batch would not create (invalid, its key's rows disagreeing) leaves its key not found, as the run will
    const creating = pendingKeys(rows, o.pending);
    const orNew = (cell: NamedSide, side: 'parent' | 'child'): Found => {
      const f = found(cell);
      return f === undefined && o.pending?.side === side && 'key' in cell && creating(cell.key)
        ? { id: `${PENDING} ${cell.key}` }
        : f;
    };
    const resolved = rows.map((r): Resolved => {
      const read = r.read;
      if (!read.ok) return { ...r, read };
      return { ...r, read, parent: orNew(read.parent, 'parent'), child: orNew(read.child, 'child') };
    });
    rows.length = 0; // each row's cells as read are in `resolved` now: the rows' first form is let go (peak RSS)
    // 3. the parents the rows name, each one's links read once
    const parents = new Set(
      resolved.flatMap((r) => ('parent' in r && r.parent && 'id' in r.parent && r.child ? [r.parent.id] : [])),
    );
    const current = await readCurrent(layout, parents, deps);
    // 4. one action per row
    return {
      ...planRows(resolved, current, layout, o.remove),
      readRequests: deps.client.stats.requests - start,
      otherRelations,
      association: layout.association,
    };
  } finally {
    for (const index of indexes.values()) index.close();
  }
}

/**
 * A key field no record of the collection has (the trial's `contact.emial`: every row "not found", and the rejects
 * file blamed the data): refused before anything is sent, with the field it may mean.
 */
function unseenField(layout: LinkLayout, resource: string, index: RecordIndex): UsageError {
  const side = [layout.parentSide, layout.childSide].find((s) => s.resources.includes(resource))!;
  const [field] = index.unseen!.fields;
  const near = nearestTypo(field!, index.unseen!.near);
  const records = `${index.records.toLocaleString('en-US')} ${resource} ${index.records === 1 ? 'record' : 'records'}`;
  return new UsageError(
    `${side.name}.${field}: none of the ${records} read has a field "${field}"${near ? `; did you mean ${side.name}.${near}?` : ''} (nothing was sent)`,
    {
      hint: `name a field ${resource} records have (\`crm ${resource} list --limit 1 -o json\` shows one), in the header or with --map`,
    },
  );
}

/** A records file's dry run: the side its records are on, and the lines of the rows its batch would create (all: absent). */
export interface Pending {
  side: 'parent' | 'child';
  lines?: ReadonlySet<number>;
}

/** The keys of the records a records file's batch would create: those of the rows it plans as creates (a repeat shares its first's). */
function pendingKeys(rows: ReadonlyArray<{ line: number; read: RowCells }>, pending: Pending | undefined) {
  const lines = pending?.lines;
  if (!lines) return (_key: string) => true;
  const keys = new Set<string>();
  for (const r of rows) {
    if (!lines.has(r.line) || !('ok' in r.read && r.read.ok)) continue;
    const cell = pending.side === 'parent' ? r.read.parent : r.read.child;
    if ('key' in cell) keys.add(cell.key);
  }
  return (key: string) => keys.has(key);
}

type Ok = Extract<RowCells, { ok: true }>;
type Resolved = Cells & ({ read: Exclude<RowCells, Ok | { skip: true }> } | { read: Ok; parent: Found; child: Found });
type Current = Map<string, Map<string, ApiRecord> | string | null | typeof MISSING>;

/** Each row's action (classifyRow), from what its sides resolved to and the links there are now. */
function planRows(resolved: Resolved[], current: Current, layout: LinkLayout, remove: boolean) {
  // a parent named by id that has no record (its links' read was a 404): not found, as a key with no record
  const there = (f: Found): Found => (f && 'id' in f && current.get(f.id) === MISSING ? undefined : f);
  const keyText = (c: NamedSide) => ('key' in c ? c.key : c.id);
  const earlier = new Map<string, number>();
  /** the link fields of each row first naming its pair: a later row with the same is a repeat, else a duplicate */
  const fieldsAt = new Map<number, string>();
  const counts: Record<string, number> = {};
  let sends = 0;
  const rows = resolved.map((r): PlannedRow => {
    let act: PlannedRow['act'] = !('parent' in r)
      ? { action: 'invalid', code: r.read.code, reason: r.read.reason }
      : classifyRow({
          remove,
          association: layout.association,
          parent: { side: layout.parentSide.name, key: keyText(r.read.parent), found: there(r.parent) },
          child: { side: layout.childSide.name, key: keyText(r.read.child), found: r.child },
          current: (p, c) => {
            const now = current.get(p);
            return now instanceof Map ? now.has(c) : now === undefined || now === MISSING ? false : now;
          },
          earlierLine: (p, c) => {
            const k = layout.association ? p : `${p}\0${c}`;
            const at = earlier.get(k);
            if (at === undefined) {
              earlier.set(k, r.line);
              fieldsAt.set(r.line, stringifyJson(r.read.extras)!);
            }
            return at;
          },
        });
    // the same pair (or meeting) with the same fields as an earlier row: that row does what this one would (skipped)
    if (act.action === 'duplicate' && 'parent' in r && fieldsAt.get(act.earlier) === stringifyJson(r.read.extras))
      act = { action: 'repeated', earlier: act.earlier };
    counts[act.action] = (counts[act.action] ?? 0) + 1;
    if (SENDS.includes(act.action)) sends++;
    const was = 'parentId' in act ? current.get(act.parentId) : undefined;
    const held = was instanceof Map && 'childId' in act ? was.get(act.childId) : undefined;
    const before = 'parent' in r ? r.read.before : undefined;
    const extras = 'parent' in r ? r.read.extras : {};
    // linked already with another type: shown, not changed (a second link is a no-op in the spec)
    if (act.action === 'linked' && held && otherFields(extras, held).length > 0)
      counts.linked_otherwise = (counts.linked_otherwise ?? 0) + 1;
    return {
      line: r.line,
      raw: r.raw,
      extras,
      act,
      ...(held ? { held } : {}),
      ...(before !== undefined ? { before } : {}),
    };
  });
  return { rows, counts, sends };
}

/** The link's fields a row gives that the link there holds otherwise (`type: CHAMPION → BLOCKER`). */
export function otherFields(given: ApiRecord, held: ApiRecord): string[] {
  return Object.keys(given).flatMap((f) =>
    held[f] !== undefined && held[f] !== given[f]
      ? [`${f}: ${held[f] as string}, the file says ${given[f] as string}`] // link fields: text (linkFieldsOf, readRow)
      : [],
  );
}

/** The id a dry run gives a record its batch would create. */
export const PENDING = '(to be created)';

/** The actions that send a request. */
export const SENDS: readonly string[] = ['link', 'remove', 'set', 'replace'];

/** The link's own fields as its listing shows them (`link.type`), kept for the file of links a removal took away. */
function linkFieldsOf(layout: LinkLayout, link: unknown): ApiRecord {
  const out: ApiRecord = {};
  if (!link || typeof link !== 'object') return out;
  for (const f of findLink(layout.parent, layout.relation)?.fields ?? []) {
    const v = (link as ApiRecord)[f.name];
    if (typeof v === 'string') out[f.name] = v;
  }
  return out;
}

/** A parent the read found no record for (a 404 on its links). */
const MISSING = Symbol('missing');

/**
 * Each parent's current links (the ids of its children), or a meeting's current association (its id, or null), read
 * once per parent; a parent with no such record (404) is MISSING, and its rows are not found.
 */
async function readCurrent(layout: LinkLayout, parents: ReadonlySet<string>, deps: ResolveDeps): Promise<Current> {
  const out: Current = new Map();
  let n = 0;
  for (const id of parents) {
    if (id.startsWith(PENDING)) continue;
    // a record this run's batch just created has no links yet: no read (the trial: 150 new deals, 150 reads, 18 s)
    if (deps.fresh?.has(id)) {
      out.set(id, layout.association ? null : new Map());
      continue;
    }
    if (deps.signal?.aborted)
      throw new InterruptedError('interrupted while reading the links there are; nothing was sent');
    // each parent (the trial: a line still saying what the side's read had said, then a move every 50)
    n++;
    deps.progress?.(
      `reading the links of ${n.toLocaleString('en-US')} of ${parents.size.toLocaleString('en-US')} ${layout.parent}…`,
    );
    const path = `/${layout.parent}/${pathSegment(id)}/${layout.relation}`;
    try {
      if (layout.association) {
        const res = await deps.client.request<{ data: ApiRecord | null }>({
          method: 'GET',
          path,
          expect: 'success',
          signal: deps.signal,
        });
        out.set(id, res.body.data ? (idText(res.body.data.id) ?? null) : null);
        continue;
      }
      const children = new Map<string, ApiRecord>();
      for await (const page of deps.client.pages(path, { limit: PAGE_SIZE_MAX, signal: deps.signal }))
        for (const child of page.data) {
          const cid = idText(child.id);
          if (cid !== undefined) children.set(cid, linkFieldsOf(layout, child.link));
        }
      out.set(id, children);
    } catch (err) {
      if (err instanceof NotFoundError && err.status === 404) out.set(id, MISSING);
      else if (err instanceof CrmError && !(err instanceof InterruptedError))
        throw restated(err, {
          message: `reading the links of ${layout.parent} ${id} (nothing was sent): ${err.message}`,
        });
      else throw err;
    }
  }
  return out;
}
