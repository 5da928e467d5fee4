/**
 * The memory model: per device the bytes in use over time, folded from the ALLOC and FREE
 * events, every tensor's lifetime, and per GPU card its own readings (CARD_MEMORY); no DOM.
 *
 * - The series is the running sum of ALLOC bytes minus FREE bytes, events sorted by time (ties
 *   keep the order they were recorded in). A FREE frees what its ALLOC took: FREEs are paired
 *   with the open ALLOC of the same node, device and size (an op's empty outputs free nothing),
 *   else the oldest open ALLOC of that node on that device; a FREE with no open ALLOC (its ALLOC
 *   rolled out of the events held) frees nothing, so no device ever shows less than zero.
 * - Past 2,000 points a device's series is downsampled by time buckets, keeping each bucket's
 *   lowest, highest and last value, so the peak is always drawn exactly.
 * - CARD_MEMORY events are a GPU card's own reading of its used memory (NVML), filed under the
 *   first logical device carved from the card: per card a series time-sorted and downsampled like
 *   the op series (the peak kept), and its reading at any time (the latest sample at or before
 *   it). The readings are never summed with ALLOC/FREE.
 */
import { EventCursor, type CursorEvents } from './cursor';
import { growColumn } from './events';
import { EventKind, type EventBatch } from './types';

export const MAX_POINTS = 2000;
export const LIVE_TENSORS_SHOWN = 5;

/** The events the memory computations read (an EventBatch or the store's growable columns). */
export type MemoryEvents = Pick<EventBatch, 'count' | 'kind' | 't0' | 'node' | 'device' | 'bytes'>;

/** One tensor's lifetime: allocated at t0, freed at t1 (Infinity while still live). */
export interface Allocation {
  node: number;
  device: number;
  bytes: number;
  t0: number;
  t1: number;
}

export interface DeviceSeries {
  device: number;
  /** Times (ns since origin) and bytes in use after the events at that time; downsampled. */
  t: Float64Array;
  bytes: Float64Array;
  peak: number;
  peakTime: number;
  /** Points before downsampling. */
  points: number;
}

/**
 * Every tensor's lifetime as columns: a loop allocates a tensor per op per run, and an object each
 * would make the JS heap grow by about 100 bytes per event (columns: 30).
 */
export class Allocations {
  length = 0;
  node = new Int32Array(64);
  device = new Int16Array(64);
  bytes = new Float64Array(64);
  t0 = new Float64Array(64);
  t1 = new Float64Array(64);

  /** Add a live tensor; returns its index. */
  push(node: number, device: number, bytes: number, t0: number): number {
    if (this.length === this.node.length) {
      const grow = <T extends Int32Array | Int16Array | Float64Array>(old: T): T =>
        growColumn(old, old.length * 2);
      this.node = grow(this.node);
      this.device = grow(this.device);
      this.bytes = grow(this.bytes);
      this.t0 = grow(this.t0);
      this.t1 = grow(this.t1);
    }
    const i = this.length;
    this.node[i] = node;
    this.device[i] = device;
    this.bytes[i] = bytes;
    this.t0[i] = t0;
    this.t1[i] = Infinity;
    this.length += 1;
    return i;
  }

  get(i: number): Allocation {
    return {
      node: this.node[i],
      device: this.device[i],
      bytes: this.bytes[i],
      t0: this.t0[i],
      t1: this.t1[i],
    };
  }

  toArray(): Allocation[] {
    return Array.from({ length: this.length }, (_, i) => this.get(i));
  }
}

/**
 * One GPU card's own reading of its used memory (NVML, CARD_MEMORY events), in time order: a
 * series like a device's, whose device is the first logical device carved from the card (the
 * events' device id) and whose bytes are the card's used bytes at each sample.
 */
export type CardSeries = DeviceSeries;

export interface MemoryModel {
  series: DeviceSeries[];
  /** Per card, by device id; empty without CARD_MEMORY events. */
  cards: CardSeries[];
  allocations: Allocations;
}

/** A device's bytes in use after each of its ALLOC/FREE events, as growable columns. */
class Track {
  t = new Float64Array(64);
  bytes = new Float64Array(64);
  length = 0;
  inUse = 0;
  peak = -Infinity;
  peakTime = NaN;

  push(t: number, inUse: number): void {
    if (this.length === this.t.length) {
      const t2 = new Float64Array(this.length * 2);
      const b2 = new Float64Array(this.length * 2);
      t2.set(this.t);
      b2.set(this.bytes);
      this.t = t2;
      this.bytes = b2;
    }
    this.t[this.length] = t;
    this.bytes[this.length] = inUse;
    this.length += 1;
    if (inUse > this.peak) {
      this.peak = inUse;
      this.peakTime = t;
    }
  }
}

/**
 * A card's NVML samples as growable columns, kept sorted by time: samples mostly arrive in order
 * (one out of order is inserted, shifting the few after it); equal times keep arrival order.
 */
class CardTrack {
  t = new Float64Array(64);
  bytes = new Float64Array(64);
  length = 0;
  peak = -Infinity;
  peakTime = NaN;

  add(t: number, bytes: number): void {
    if (this.length === this.t.length) {
      this.t = growColumn(this.t, this.length * 2);
      this.bytes = growColumn(this.bytes, this.length * 2);
    }
    let at = this.length;
    while (at > 0 && this.t[at - 1] > t) {
      at -= 1;
    }
    if (at < this.length) {
      this.t.copyWithin(at + 1, at, this.length);
      this.bytes.copyWithin(at + 1, at, this.length);
    }
    this.t[at] = t;
    this.bytes[at] = bytes;
    this.length += 1;
    if (bytes > this.peak || (bytes === this.peak && t < this.peakTime)) {
      this.peak = bytes;
      this.peakTime = t;
    }
  }

  /** The reading of the latest sample at or before t; null before the first. */
  at(t: number): number | null {
    let lo = 0;
    let hi = this.length; // the first sample after t is in [lo, hi]
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.t[mid] <= t) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo > 0 ? this.bytes[lo - 1] : null;
  }
}

/**
 * Each track's points downsampled to `maxPoints`, in device order. Copies (at most about
 * maxPoints each): the tracks' columns keep growing.
 */
function downsampledTracks(
  tracks: Map<number, Track | CardTrack>,
  maxPoints: number,
): DeviceSeries[] {
  return [...tracks]
    .sort((a, b) => a[0] - b[0])
    .map(([device, track]) => {
      const sampled = downsampleSeries(
        track.t.subarray(0, track.length),
        track.bytes.subarray(0, track.length),
        maxPoints,
      );
      return {
        device,
        t: Float64Array.from(sampled.t),
        bytes: Float64Array.from(sampled.values),
        peak: Math.max(track.peak, 0),
        peakTime: track.peakTime,
        points: track.length,
      };
    });
}

/**
 * Per device the bytes in use after every ALLOC/FREE, plus every tensor's lifetime, folded in from
 * a cursor: events that arrive in time order (a live loop's) cost only themselves; one older than
 * what was folded in already makes it start over from all events held, sorted.
 */
export class MemoryTracker {
  private readonly cursor = new EventCursor();
  private tracks = new Map<number, Track>();
  /** Per card (its first logical device's id), the NVML samples: never part of the sums. */
  private cards = new Map<number, CardTrack>();
  /** Per "device:node", the indices of its allocations not freed yet, oldest first. */
  private open = new Map<string, number[]>();
  private allocations = new Allocations();
  private last = -Infinity;
  private cached: MemoryModel | null = null;

  /** Fold in the events added since the last update; true when the model changed. */
  update(events: MemoryEvents & CursorEvents): boolean {
    const { start, end, restart } = this.cursor.advance(events);
    if (restart) {
      this.cards = new Map();
    }
    const fresh: number[] = [];
    let cardsChanged = false;
    for (let e = start; e < end; e++) {
      const kind = events.kind[e];
      if (kind === EventKind.ALLOC || kind === EventKind.FREE) {
        fresh.push(e);
      } else if (kind === EventKind.CARD_MEMORY) {
        cardsChanged = this.addCard(events, e) || cardsChanged;
      }
    }
    if (!restart && fresh.length === 0 && !cardsChanged) {
      return false;
    }
    let order = fresh;
    if (!restart && fresh.some((e) => events.t0[e] < this.last)) {
      // Older than what is folded in: start over from every event held.
      order = [];
      for (let e = 0; e < end; e++) {
        const kind = events.kind[e];
        if (kind === EventKind.ALLOC || kind === EventKind.FREE) {
          order.push(e);
        }
      }
    }
    if (restart || order !== fresh) {
      this.tracks = new Map();
      this.open = new Map();
      this.allocations = new Allocations();
      this.last = -Infinity;
    }
    order.sort((a, b) => events.t0[a] - events.t0[b] || a - b);
    for (const e of order) {
      this.add(events, e);
    }
    this.cached = null;
    return true;
  }

  /** The series (downsampled to `maxPoints`) and the tensors' lifetimes. */
  model(maxPoints = MAX_POINTS): MemoryModel {
    if (this.cached !== null) {
      return this.cached;
    }
    const series = downsampledTracks(this.tracks, maxPoints);
    const cards: CardSeries[] = downsampledTracks(this.cards, maxPoints);
    this.cached = { series, cards, allocations: this.allocations };
    return this.cached;
  }

  /**
   * The card's used bytes at time t (ns since origin): its latest NVML sample at or before t, at
   * full resolution; null for a device without samples or before its first.
   */
  cardReadingAt(device: number, t: number): number | null {
    return this.cards.get(device)?.at(t) ?? null;
  }

  /** Add a CARD_MEMORY row to its card's samples; false for a row that cannot be drawn. */
  private addCard(events: MemoryEvents, e: number): boolean {
    const t = events.t0[e];
    const bytes = events.bytes[e];
    if (!Number.isFinite(t) || !Number.isFinite(bytes)) {
      return false;
    }
    const device = events.device[e];
    let track = this.cards.get(device);
    if (track === undefined) {
      track = new CardTrack();
      this.cards.set(device, track);
    }
    track.add(t, bytes);
    return true;
  }

  private add(events: MemoryEvents, e: number): void {
    const device = events.device[e];
    const node = events.node[e];
    const key = `${device}:${node}`;
    let track = this.tracks.get(device);
    if (track === undefined) {
      track = new Track();
      this.tracks.set(device, track);
    }
    let delta: number;
    if (events.kind[e] === EventKind.ALLOC) {
      const index = this.allocations.push(node, device, events.bytes[e], events.t0[e]);
      const queue = this.open.get(key);
      if (queue === undefined) {
        this.open.set(key, [index]);
      } else {
        queue.push(index);
      }
      delta = events.bytes[e];
    } else {
      const queue = this.open.get(key);
      // A multi-output op frees its outputs in any order, some of them empty: the FREE takes the
      // open ALLOC of its size (an empty output's FREE must not take a full one's), else the oldest.
      const sized =
        queue === undefined
          ? -1
          : queue.findIndex((i) => this.allocations.bytes[i] === events.bytes[e]);
      const index = sized > 0 ? queue?.splice(sized, 1)[0] : queue?.shift();
      if (queue !== undefined && queue.length === 0) {
        this.open.delete(key); // a loop frees what it allocates: the map stays small
      }
      if (index !== undefined) {
        this.allocations.t1[index] = events.t0[e];
      }
      delta = index === undefined ? 0 : -this.allocations.bytes[index];
    }
    track.inUse += delta;
    track.push(events.t0[e], track.inUse);
    this.last = events.t0[e];
  }
}

/**
 * Per device the bytes in use after every ALLOC/FREE, plus every tensor's lifetime, and per card
 * its NVML readings (CARD_MEMORY).
 */
export function computeMemory(events: MemoryEvents, maxPoints = MAX_POINTS): MemoryModel {
  const tracker = new MemoryTracker();
  const { count, kind, t0, node, device, bytes } = events;
  tracker.update({ count, kind, t0, node, device, bytes, dropped: 0, generation: 0 });
  return tracker.model(maxPoints);
}

/**
 * At most `maxPoints` of a step series: time buckets, each keeping its lowest, highest and last
 * point (in time order), plus the first and last points. The maximum always survives.
 */
export function downsampleSeries(
  t: Float64Array,
  values: Float64Array,
  maxPoints = MAX_POINTS,
): { t: Float64Array; values: Float64Array } {
  const n = t.length;
  if (n <= maxPoints) {
    return { t, values };
  }
  const buckets = Math.max(1, Math.floor((maxPoints - 2) / 3));
  const t0 = t[0];
  const width = t[n - 1] - t0;
  const bucketOf = (i: number) =>
    width > 0
      ? Math.min(buckets - 1, Math.floor(((t[i] - t0) / width) * buckets))
      : Math.min(buckets - 1, Math.floor((i * buckets) / n));
  const keep = new Uint8Array(n);
  keep[0] = 1;
  keep[n - 1] = 1;
  let start = 0;
  while (start < n) {
    const bucket = bucketOf(start);
    let end = start;
    let lo = start;
    let hi = start;
    while (end < n && bucketOf(end) === bucket) {
      if (values[end] < values[lo]) {
        lo = end;
      }
      if (values[end] > values[hi]) {
        hi = end;
      }
      end += 1;
    }
    keep[lo] = 1;
    keep[hi] = 1;
    keep[end - 1] = 1;
    start = end;
  }
  let kept = 0;
  for (let i = 0; i < n; i++) {
    kept += keep[i];
  }
  const outT = new Float64Array(kept);
  const outV = new Float64Array(kept);
  let j = 0;
  for (let i = 0; i < n; i++) {
    if (keep[i]) {
      outT[j] = t[i];
      outV[j] = values[i];
      j += 1;
    }
  }
  return { t: outT, values: outV };
}

/** The largest tensors live at time t (allocated at or before t, freed after t), largest first. */
export function liveTensorsAt(
  allocations: Allocations,
  t: number,
  limit = LIVE_TENSORS_SHOWN,
  device: number | null = null,
): Allocation[] {
  const { t0, t1, bytes } = allocations;
  const live: number[] = [];
  for (let i = 0; i < allocations.length; i++) {
    if (t0[i] <= t && t < t1[i] && (device === null || allocations.device[i] === device)) {
      live.push(i);
    }
  }
  live.sort((a, b) => bytes[b] - bytes[a] || t0[a] - t0[b]);
  return live.slice(0, limit).map((i) => allocations.get(i));
}
