// The in-memory records and links, ordered for cursors by one global sequence number. Every method is
// synchronous, so a request's read-check-write happens in one turn of the event loop.
import { RESOURCES, type ResourceName, findResource } from '../api/resources.js';
import type { ApiRecord } from '../api/envelopes.js';
import { randomString, type Random } from './random.js';

export interface LinkData extends ApiRecord {
  id: string;
  parent_type: ResourceName;
  parent_id: string;
  relation: string;
  child_type: ResourceName;
  child_id: string;
  created_at: string;
}

/** What the data file holds. */
export interface StoreSnapshot {
  format: 'crm-sandbox-store/1';
  seq: number;
  records: Partial<Record<ResourceName, ApiRecord[]>>;
  links: LinkData[];
}

/** the links of one parent and relation, by child id */
type LinkTable = Map<string, { seq: number; data: LinkData }>;

const linkKey = (parent: string, parentId: string, relation: string) => `${parent}\u0000${parentId}\u0000${relation}`;

/** One resource's records: by id, and in creation order so that a page after a cursor starts with a binary search. */
export interface Row {
  seq: number;
  data: ApiRecord;
}

type Slot = Row & { deleted?: boolean };

export class OrderedTable {
  private byId = new Map<string, Slot>();
  /** every row in seq order; deleted ones stay as tombstones until compaction */
  private order: Slot[] = [];
  private tombstones = 0;

  get size(): number {
    return this.byId.size;
  }

  get(id: string): Row | undefined {
    return this.byId.get(id);
  }

  /** Appends a row; its seq must be greater than every seq already in the table. */
  append(id: string, row: Row): void {
    this.byId.set(id, row);
    this.order.push(row);
  }

  delete(id: string): boolean {
    const slot = this.byId.get(id);
    if (!slot) return false;
    this.byId.delete(id);
    slot.deleted = true;
    if (++this.tombstones > 64 && this.tombstones * 2 > this.order.length) {
      this.order = this.order.filter((s) => !s.deleted);
      this.tombstones = 0;
    }
    return true;
  }

  /** Every row in creation order. */
  values(): IterableIterator<Row> {
    return this.byId.values();
  }

  /** The rows created after `seq`, in order. */
  *after(seq: number): Generator<Row> {
    let lo = 0;
    let hi = this.order.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.order[mid]!.seq <= seq) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < this.order.length; i++) {
      const slot = this.order[i]!;
      if (!slot.deleted) yield slot;
    }
  }
}

export class Store {
  private seq = 0;
  private tables = new Map<ResourceName, OrderedTable>();
  private linkTables = new Map<string, LinkTable>();
  /** called after every change (the data file's autosave listens) */
  onChange: () => void = () => {};

  constructor(
    private readonly random: Random,
    private readonly now: () => number,
  ) {
    this.clear();
  }

  clear(): void {
    this.seq = 0;
    this.tables = new Map(RESOURCES.map((r) => [r.name, new OrderedTable()]));
    this.linkTables = new Map();
    this.onChange();
  }

  private table(resource: ResourceName): OrderedTable {
    return this.tables.get(resource)!;
  }

  private linksOf(parent: string, parentId: string, relation: string): LinkTable {
    const key = linkKey(parent, parentId, relation);
    let links = this.linkTables.get(key);
    if (!links) this.linkTables.set(key, (links = new Map() as LinkTable));
    return links;
  }

  private newId(prefix: string, taken: (id: string) => boolean): string {
    for (;;) {
      const id = randomString(this.random, 14, prefix);
      if (!taken(id)) return id;
    }
  }

  private timestamp(): string {
    return new Date(this.now()).toISOString();
  }

  /** A new record owned by `ownerId`; `fields` have been validated. */
  create(resource: ResourceName, fields: ApiRecord, ownerId: string): ApiRecord {
    const def = findResource(resource)!;
    const table = this.table(resource);
    const at = this.timestamp();
    const data = {
      id: this.newId(def.idPrefix, (id) => !!table.get(id)),
      ...fields,
      owner_id: ownerId,
      created_at: at,
      updated_at: at,
    };
    this.insert(resource, data);
    this.onChange();
    return data;
  }

  /** A record exactly as given (seed data, data file); it must carry its id. */
  insert(resource: ResourceName, data: ApiRecord): void {
    this.table(resource).append(String(data.id), { seq: ++this.seq, data });
  }

  get(resource: ResourceName, id: string): ApiRecord | undefined {
    return this.table(resource).get(id)?.data;
  }

  /** The record with this id in any of `resources` (a note may link contacts, companies or deals). */
  find(resources: readonly ResourceName[], id: string): { resource: ResourceName; data: ApiRecord } | undefined {
    for (const resource of resources) {
      const data = this.get(resource, id);
      if (data) return { resource, data };
    }
    return undefined;
  }

  /** Merges `fields` into the record; returns the new record (a fresh object). */
  update(resource: ResourceName, id: string, fields: ApiRecord): ApiRecord | undefined {
    const row = this.table(resource).get(id);
    if (!row) return undefined;
    row.data = { ...row.data, ...fields, updated_at: this.timestamp() };
    this.onChange();
    return row.data;
  }

  /** Deletes the record and everything that points at it (links, meeting associations). */
  delete(resource: ResourceName, id: string): boolean {
    if (!this.table(resource).delete(id)) return false;
    for (const [key, links] of this.linkTables) {
      if (key.split('\u0000')[1] === id) this.linkTables.delete(key);
      else links.delete(id);
    }
    for (const def of RESOURCES) {
      for (const { target, bodyKey } of def.associations ?? []) {
        if (target !== resource) continue;
        for (const row of this.table(def.name).values())
          if (row.data[bodyKey] === id) row.data = { ...row.data, [bodyKey]: null };
      }
    }
    this.onChange();
    return true;
  }

  /** Every record in creation order, or only those created after `afterSeq`. */
  rows(resource: ResourceName, afterSeq = 0): Iterable<Row> {
    return afterSeq > 0 ? this.table(resource).after(afterSeq) : this.table(resource).values();
  }

  count(resource: ResourceName): number {
    return this.table(resource).size;
  }

  /** Links the child (a relink returns the existing link unchanged). */
  link(
    parent: ResourceName,
    parentId: string,
    relation: string,
    child: ResourceName,
    childId: string,
    extra: ApiRecord,
  ): LinkData {
    const links = this.linksOf(parent, parentId, relation);
    const existing = links.get(childId);
    if (existing) return existing.data;
    const data: LinkData = {
      id: this.newId('lnk_', () => false),
      parent_type: parent,
      parent_id: parentId,
      relation,
      child_type: child,
      child_id: childId,
      created_at: this.timestamp(),
      ...extra, // seed data brings its own id and created_at
    };
    links.set(childId, { seq: ++this.seq, data });
    this.onChange();
    return data;
  }

  /** Removes the link; returns it, or undefined when it was not linked. */
  unlink(parent: ResourceName, parentId: string, relation: string, childId: string): LinkData | undefined {
    const links = this.linkTables.get(linkKey(parent, parentId, relation));
    const link = links?.get(childId);
    if (!link) return undefined;
    links!.delete(childId);
    this.onChange();
    return link.data;
  }

  links(parent: ResourceName, parentId: string, relation: string): Array<{ seq: number; data: LinkData }> {
    return [...(this.linkTables.get(linkKey(parent, parentId, relation))?.values() ?? [])];
  }

  snapshot(): StoreSnapshot {
    const records: StoreSnapshot['records'] = {};
    for (const [name, table] of this.tables) records[name] = [...table.values()].map((r) => r.data);
    const links = [...this.linkTables.values()]
      .flatMap((m) => [...m.values()])
      .sort((a, b) => a.seq - b.seq)
      .map((l) => l.data);
    return { format: 'crm-sandbox-store/1', seq: this.seq, records, links };
  }

  /** Replaces everything with a snapshot (assumed validated by the data file loader). */
  restore(snapshot: StoreSnapshot): void {
    this.clear();
    for (const def of RESOURCES) for (const data of snapshot.records[def.name] ?? []) this.insert(def.name, data);
    for (const l of snapshot.links)
      this.linksOf(l.parent_type, l.parent_id, l.relation).set(l.child_id, { seq: ++this.seq, data: l });
    this.seq = Math.max(this.seq, snapshot.seq);
  }
}
