/**
 * The events a view holds, as growable typed columns: live batches append many thousands of
 * events a second, so the columns grow by doubling instead of being re-allocated per batch.
 *
 * They are bounded like the kernel's recorder (placeviz/events/recorder.py, `max_events`): past
 * the limit the oldest events are dropped, an eighth of the limit at a time so dropping stays
 * amortised O(1) per event, and `dropped` counts them. Views read new events from a cursor: the
 * absolute index `dropped + i` of event i never changes, and `generation` changes when the
 * events are cleared.
 */
import {
  COLUMN_ARRAYS,
  COLUMN_GENERATED_DEFAULTS,
  COLUMN_NAMES,
  type ColumnName,
  type EventBatch,
  type EventLists,
} from './types';

type ColumnArray = EventBatch[ColumnName];
type ColumnConstructor = {
  new (length: number): ColumnArray;
};

const CONSTRUCTORS: Record<ColumnName, ColumnConstructor> = COLUMN_ARRAYS;

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
  // frame, iteration: as the contract declares them (-1: an op outside while loops)
  ...(COLUMN_GENERATED_DEFAULTS as Record<'frame' | 'iteration', number>),
};

/** A copy of `old` with room for `size` elements (the first `old.length` copied). */
export function growColumn<T extends Float64Array | Int32Array | Int16Array | Int8Array>(
  old: T,
  size: number,
): T {
  const next = new (old.constructor as new (n: number) => T)(size);
  next.set(old);
  return next;
}

/** The kernel recorder's default `max_events` (placeviz/events/recorder.py). */
export const MAX_EVENTS = 2_000_000;

/** Typed columns valid up to `count`; their length is the capacity. */
export class EventColumns implements EventBatch {
  count = 0;
  /** Events dropped from the front since the last clear (the oldest first). */
  dropped = 0;
  /** Changes on clear(): a view's cursor from an older generation is void. */
  generation = 0;
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
  frame = new Int32Array(0);
  iteration = new Int32Array(0);

  constructor(readonly maxEvents: number = MAX_EVENTS) {
    if (!(maxEvents >= 1)) {
      throw new Error(`EventColumns: maxEvents must be at least 1, got ${maxEvents}`);
    }
  }

  /** Events ever appended since the last clear: the cursor just past the newest event. */
  get total(): number {
    return this.dropped + this.count;
  }

  get capacity(): number {
    return this.kind.length;
  }

  appendBatch(batch: EventBatch): void {
    // A batch larger than the limit keeps only its newest events.
    const skip = Math.max(0, batch.count - this.maxEvents);
    this.dropped += skip;
    const added = batch.count - skip;
    this.makeRoom(added);
    this.reserve(this.count + added);
    for (const name of COLUMN_NAMES) {
      this.column(name).set(batch[name].subarray(skip, batch.count), this.count);
    }
    this.count += added;
  }

  /** Append JSON columns; a missing column (or a short one) is filled with its default. */
  appendLists(lists: Partial<EventLists>): void {
    const length = lists.kind?.length ?? 0;
    const skip = Math.max(0, length - this.maxEvents);
    this.dropped += skip;
    const added = length - skip;
    this.makeRoom(added);
    this.reserve(this.count + added);
    for (const name of COLUMN_NAMES) {
      const target = this.column(name);
      const values = lists[name] ?? [];
      const fallback = COLUMN_DEFAULTS[name];
      for (let i = 0; i < added; i++) {
        const value = values[skip + i];
        target[this.count + i] = typeof value === 'number' ? value : fallback;
      }
    }
    this.count += added;
  }

  clear(): void {
    this.count = 0;
    this.dropped = 0;
    this.generation += 1;
  }

  /** Drop the oldest events so that `added` more fit under the limit. */
  private makeRoom(added: number): void {
    const excess = this.count + added - this.maxEvents;
    if (excess <= 0) {
      return;
    }
    const drop = Math.min(this.count, Math.max(excess, Math.ceil(this.maxEvents / 8)));
    for (const name of COLUMN_NAMES) {
      this.column(name).copyWithin(0, drop, this.count);
    }
    this.count -= drop;
    this.dropped += drop;
  }

  private column(name: ColumnName): ColumnArray {
    return this[name];
  }

  /** Grow every column to hold `needed` events, doubling so appends stay amortised O(1). */
  private reserve(needed: number): void {
    if (needed <= this.capacity) {
      return;
    }
    const capacity = Math.max(needed, Math.min(this.maxEvents, Math.max(this.capacity * 2, 1024)));
    for (const name of COLUMN_NAMES) {
      const grown = new CONSTRUCTORS[name](capacity);
      grown.set(this.column(name).subarray(0, this.count));
      (this as Record<ColumnName, ColumnArray>)[name] = grown;
    }
  }
}

/** Index of the first of the sorted starts `t0[from..length)` that is after `t` (binary search). */
export function firstStartAfter(
  t0: ArrayLike<number>,
  length: number,
  t: number,
  from = 0,
): number {
  let lo = from;
  let hi = length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (t0[mid] <= t) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}
