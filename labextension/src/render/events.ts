/**
 * The events a view holds, as growable typed columns: live batches append many thousands of
 * events a second, so the columns grow by doubling instead of being re-allocated per batch.
 */
import { COLUMN_NAMES, type ColumnName, type EventBatch, type EventLists } from './types';

type ColumnArray = EventBatch[ColumnName];
type ColumnConstructor = {
  new (length: number): ColumnArray;
};

const CONSTRUCTORS: Record<ColumnName, ColumnConstructor> = {
  kind: Int8Array,
  t0: Float64Array,
  t1: Float64Array,
  node: Int32Array,
  device: Int16Array,
  stream: Int16Array,
  bytes: Float64Array,
  source: Int8Array,
  run: Int32Array,
  peer: Int16Array,
};

/** What a column holds for an event whose document lacks that column (older schemas). */
export const COLUMN_DEFAULTS: Record<ColumnName, number> = {
  kind: -1,
  t0: 0,
  t1: 0,
  node: -1,
  device: -1,
  stream: 0,
  bytes: 0,
  source: 0,
  run: -1,
  peer: -1,
};

/** Typed columns valid up to `count`; their length is the capacity. */
export class EventColumns implements EventBatch {
  count = 0;
  kind = new Int8Array(0);
  t0 = new Float64Array(0);
  t1 = new Float64Array(0);
  node = new Int32Array(0);
  device = new Int16Array(0);
  stream = new Int16Array(0);
  bytes = new Float64Array(0);
  source = new Int8Array(0);
  run = new Int32Array(0);
  peer = new Int16Array(0);

  get capacity(): number {
    return this.kind.length;
  }

  appendBatch(batch: EventBatch): void {
    this.reserve(this.count + batch.count);
    for (const name of COLUMN_NAMES) {
      this.column(name).set(batch[name].subarray(0, batch.count), this.count);
    }
    this.count += batch.count;
  }

  /** Append JSON columns; a missing column (or a short one) is filled with its default. */
  appendLists(lists: Partial<EventLists>): void {
    const added = lists.kind?.length ?? 0;
    this.reserve(this.count + added);
    for (const name of COLUMN_NAMES) {
      const target = this.column(name);
      const values = lists[name] ?? [];
      const fallback = COLUMN_DEFAULTS[name];
      for (let i = 0; i < added; i++) {
        const value = values[i];
        target[this.count + i] = typeof value === 'number' ? value : fallback;
      }
    }
    this.count += added;
  }

  clear(): void {
    this.count = 0;
  }

  private column(name: ColumnName): ColumnArray {
    return this[name];
  }

  /** Grow every column to hold `needed` events, doubling so appends stay amortised O(1). */
  private reserve(needed: number): void {
    if (needed <= this.capacity) {
      return;
    }
    const capacity = Math.max(needed, this.capacity * 2, 1024);
    for (const name of COLUMN_NAMES) {
      const grown = new CONSTRUCTORS[name](capacity);
      grown.set(this.column(name).subarray(0, this.count));
      (this as Record<ColumnName, ColumnArray>)[name] = grown;
    }
  }
}
