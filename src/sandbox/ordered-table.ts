// One resource's records: by id for lookups, and in creation (sequence) order for lists, so a
// page after a cursor starts with a binary search instead of a scan from the beginning.
import type { ApiRecord } from '../api/envelopes.js';

export interface Row {
  seq: number;
  data: ApiRecord;
}

interface Slot extends Row {
  deleted?: boolean;
}

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

  has(id: string): boolean {
    return this.byId.has(id);
  }

  /** Appends a row; its seq must be greater than every seq already in the table. */
  append(id: string, row: Row): void {
    const slot: Slot = row;
    this.byId.set(id, slot);
    this.order.push(slot);
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
