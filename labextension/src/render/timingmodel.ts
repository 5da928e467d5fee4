/**
 * The timing panel's data, apart from any drawing: one lane per device and stream holding its OP
 * events as bars sorted by start (and, apart from them, the WAIT events of a cluster task's stages
 * waiting for other tasks: not busy time), a lane of transfers, each device's busy time, and the
 * queries on them (the bar or wait under a point, a node's bars, the transfer that ended a wait).
 * What a plot draws of the lanes is timingsegments.ts's; what it says of them, timingtext.ts's.
 *
 * The model is folded in from a cursor (cursor.ts): a live update costs the new events.
 */
import { EventCursor, type CursorEvents } from './cursor';
import { firstStartAfter, growColumn } from './events';
import { EventKind, type DeviceRecord, type EventBatch } from './types';

export type TimingEvents = Pick<
  EventBatch,
  | 'count'
  | 'kind'
  | 't0'
  | 't1'
  | 'node'
  | 'device'
  | 'stream'
  | 'source'
  | 'run'
  | 'peer'
  | 'bytes'
  | 'frame'
  | 'iteration'
> &
  CursorEvents;

/** A lane's bars as growable columns, sorted by start; `length` are valid. */
export class LaneBars {
  length = 0;
  t0 = new Float64Array(16);
  t1 = new Float64Array(16);
  node = new Int32Array(16);
  /** For transfers: the destination device. */
  device = new Int16Array(16);
  /** For transfers: the source device. */
  peer = new Int16Array(16);
  bytes = new Float64Array(16);
  source = new Int8Array(16);
  run = new Int32Array(16);
  /** An op execution's while loop (its LoopCond's node id) and iteration; -1 outside loops. */
  frame = new Int32Array(16);
  iteration = new Int32Array(16);
  /** Running maximum of t1 (for hit tests among overlapping bars). */
  maxT1 = new Float64Array(16);

  /** Add event e of `events`, keeping the bars sorted by start (events mostly come in order). */
  add(events: TimingEvents, e: number): void {
    if (this.length === this.t0.length) {
      this.grow();
    }
    const t0 = events.t0[e];
    let at = this.length;
    while (at > 0 && this.t0[at - 1] > t0) {
      at -= 1;
    }
    if (at < this.length) {
      for (const column of this.columns()) {
        column.copyWithin(at + 1, at, this.length);
      }
    }
    this.t0[at] = t0;
    this.t1[at] = Math.max(t0, events.t1[e]);
    this.node[at] = events.node[e];
    this.device[at] = events.device[e];
    this.peer[at] = events.peer[e];
    this.bytes[at] = events.bytes[e];
    this.source[at] = events.source[e];
    this.run[at] = events.run[e];
    this.frame[at] = events.frame[e];
    this.iteration[at] = events.iteration[e];
    this.length += 1;
    for (let i = at; i < this.length; i++) {
      this.maxT1[i] = i > 0 ? Math.max(this.maxT1[i - 1], this.t1[i]) : this.t1[i];
    }
  }

  /** Index of the first bar whose start is after t (bars [0, result) start at or before t). */
  after(t: number, from = 0): number {
    return firstStartAfter(this.t0, this.length, t, from);
  }

  /** Index of the first bar that may reach t: every bar before it ends before t. */
  reaching(t: number): number {
    let lo = 0;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.maxT1[mid] < t) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  private columns(): (Float64Array | Int32Array | Int16Array | Int8Array)[] {
    const { t0, t1, node, device, peer, bytes, source, run, frame, iteration, maxT1 } = this;
    return [t0, t1, node, device, peer, bytes, source, run, frame, iteration, maxT1];
  }

  private grow(): void {
    const size = this.t0.length * 2;
    const grown = <T extends Float64Array | Int32Array | Int16Array | Int8Array>(old: T): T =>
      growColumn(old, size);
    this.t0 = grown(this.t0);
    this.t1 = grown(this.t1);
    this.node = grown(this.node);
    this.device = grown(this.device);
    this.peer = grown(this.peer);
    this.bytes = grown(this.bytes);
    this.source = grown(this.source);
    this.run = grown(this.run);
    this.frame = grown(this.frame);
    this.iteration = grown(this.iteration);
    this.maxT1 = grown(this.maxT1);
  }
}

export interface Lane {
  kind: 'op' | 'transfer';
  device: number; // -1 for the transfers lane
  stream: number;
  bars: LaneBars;
  /** An OP lane's WAIT events: its stages waiting for other tasks (peer: who sent last). */
  waits: LaneBars;
}

/** A bar: its lane's index in `lanes` and its index in that lane. */
export interface BarRef {
  lane: number;
  index: number;
}

/** A union of intervals kept merged and sorted as intervals arrive, with its total length. */
export class IntervalUnion {
  private lo: number[] = [];
  private hi: number[] = [];
  total = 0;

  get size(): number {
    return this.lo.length;
  }

  add(a: number, b: number): void {
    const { lo, hi } = this;
    const n = lo.length;
    if (n === 0 || a > hi[n - 1]) {
      lo.push(a);
      hi.push(b);
      this.total += b - a;
      return;
    }
    if (a >= lo[n - 1]) {
      if (b > hi[n - 1]) {
        this.total += b - hi[n - 1];
        hi[n - 1] = b;
      }
      return;
    }
    // Out of order: merge with every interval it meets.
    let first = 0;
    while (first < n && hi[first] < a) {
      first += 1;
    }
    let last = first;
    while (last < n && lo[last] <= b) {
      last += 1;
    }
    const mergedLo = first < last ? Math.min(a, lo[first]) : a;
    const mergedHi = first < last ? Math.max(b, hi[last - 1]) : b;
    for (let i = first; i < last; i++) {
      this.total -= hi[i] - lo[i];
    }
    lo.splice(first, last - first, mergedLo);
    hi.splice(first, last - first, mergedHi);
    this.total += mergedHi - mergedLo;
  }
}

export class TimingModel {
  /** OP lanes by device order then stream, then the transfers lane (when there are any). */
  lanes: Lane[] = [];
  /** OP bars (the transfers lane's bars and the waits are not counted). */
  opBars = 0;
  /** WAIT bars: time cluster tasks' stages waited for other tasks. */
  waitBars = 0;
  /** Per device id: the timing sources of its OP events. */
  readonly sources = new Map<number, Set<number>>();
  private readonly busy = new Map<number, IntervalUnion>();
  private runs = new IntervalUnion();
  private opLo = Infinity;
  private opHi = -Infinity;
  private laneByKey = new Map<string, Lane>();
  private readonly cursor = new EventCursor();

  /**
   * Fold in the events added since the last update (all of them after a reset or a drop);
   * `devices` orders the lanes. Returns whether anything changed.
   */
  update(events: TimingEvents, devices: readonly DeviceRecord[]): boolean {
    const { start, end, restart } = this.cursor.advance(events);
    if (restart) {
      this.lanes = [];
      this.laneByKey = new Map();
      this.opBars = 0;
      this.waitBars = 0;
      this.sources.clear();
      this.busy.clear();
      this.runs = new IntervalUnion();
      this.opLo = Infinity;
      this.opHi = -Infinity;
    }
    let newLane = false;
    for (let e = start; e < end; e++) {
      const kind = events.kind[e];
      if (kind === EventKind.OP || kind === EventKind.WAIT) {
        const device = events.device[e];
        const key = `${device}:${events.stream[e]}`;
        let lane = this.laneByKey.get(key);
        if (lane === undefined) {
          lane = {
            kind: 'op',
            device,
            stream: events.stream[e],
            bars: new LaneBars(),
            waits: new LaneBars(),
          };
          this.laneByKey.set(key, lane);
          newLane = true;
        }
        if (kind === EventKind.WAIT) {
          // Waiting is not running: drawn apart, and left out of the device's busy time.
          lane.waits.add(events, e);
          this.waitBars += 1;
          continue;
        }
        lane.bars.add(events, e);
        this.opBars += 1;
        const t0 = events.t0[e];
        const t1 = Math.max(t0, events.t1[e]);
        let busy = this.busy.get(device);
        if (busy === undefined) {
          busy = new IntervalUnion();
          this.busy.set(device, busy);
          this.sources.set(device, new Set());
        }
        busy.add(t0, t1);
        this.sources.get(device)!.add(events.source[e]);
        this.opLo = Math.min(this.opLo, t0);
        this.opHi = Math.max(this.opHi, t1);
      } else if (kind === EventKind.TRANSFER) {
        let lane = this.laneByKey.get('transfer');
        if (lane === undefined) {
          lane = {
            kind: 'transfer',
            device: -1,
            stream: -1,
            bars: new LaneBars(),
            waits: new LaneBars(),
          };
          this.laneByKey.set('transfer', lane);
          newLane = true;
        }
        lane.bars.add(events, e);
      } else if (kind === EventKind.RUN && events.t1[e] > events.t0[e]) {
        this.runs.add(events.t0[e], events.t1[e]);
      }
    }
    if (newLane || restart) {
      this.orderLanes(devices);
    }
    return restart || end > start;
  }

  /**
   * Time the runs span: the union of the RUN events, else of `runs` (records, ns since origin),
   * else the OP events' extent.
   */
  span(runs: readonly (readonly [number, number])[] = []): number {
    if (this.runs.total > 0) {
      return this.runs.total;
    }
    const records = new IntervalUnion();
    for (const [a, b] of [...runs].sort((x, y) => x[0] - y[0])) {
      if (b > a) {
        records.add(a, b);
      }
    }
    if (records.total > 0) {
      return records.total;
    }
    return this.opHi > this.opLo ? this.opHi - this.opLo : 0;
  }

  /** Per device id: busy time (union of its OP intervals) / span. */
  utilisation(span: number): Map<number, number> {
    const result = new Map<number, number>();
    for (const [device, busy] of this.busy) {
      result.set(device, span > 0 ? Math.min(1, busy.total / span) : 0);
    }
    return result;
  }

  /** The first lane of a device's OP events; -1 when it has none. */
  laneOfDevice(device: number): number {
    return this.lanes.findIndex((l) => l.kind === 'op' && l.device === device);
  }

  private orderLanes(devices: readonly DeviceRecord[]): void {
    const position = new Map(devices.map((d, i) => [d.id, i]));
    const rank = (lane: Lane) =>
      lane.kind === 'transfer'
        ? Infinity
        : (position.get(lane.device) ?? devices.length + (lane.device < 0 ? 1e6 : lane.device));
    this.lanes = [...this.laneByKey.values()].sort(
      (a, b) => rank(a) - rank(b) || a.stream - b.stream,
    );
  }
}

/** Fold `events` into a new model (tests, one-off documents). */
export function computeTiming(
  events: TimingEvents,
  devices: readonly DeviceRecord[] = [],
): TimingModel {
  const model = new TimingModel();
  model.update(events, devices);
  return model;
}

/**
 * The bar of `lane` under real time t (within `tolerance` ns), the latest-starting one when bars
 * overlap; -1 when none.
 */
export function barAt(model: TimingModel, lane: number, t: number, tolerance = 0): number {
  const bars = model.lanes[lane]?.bars;
  return bars === undefined ? -1 : barIn(bars, t, tolerance);
}

/** The wait of `lane` under real time t (within `tolerance` ns), as barAt; -1 when none. */
export function waitAt(model: TimingModel, lane: number, t: number, tolerance = 0): number {
  const waits = model.lanes[lane]?.waits;
  return waits === undefined ? -1 : barIn(waits, t, tolerance);
}

function barIn(bars: LaneBars, t: number, tolerance: number): number {
  if (bars.length === 0) {
    return -1;
  }
  const { t0, t1, maxT1 } = bars;
  let best = -1;
  let bestDistance = Infinity;
  for (let i = bars.after(t + tolerance) - 1; i >= 0 && maxT1[i] >= t - tolerance; i--) {
    const distance = t < t0[i] ? t0[i] - t : t > t1[i] ? t - t1[i] : 0;
    if (distance <= tolerance && distance < bestDistance) {
      best = i;
      bestDistance = distance;
      if (distance === 0) {
        break;
      }
    }
  }
  return best;
}

/** The bars of a node, at most `limit` of them. */
export function barsOfNode(model: TimingModel, node: number, limit = Infinity): BarRef[] {
  const found: BarRef[] = [];
  model.lanes.forEach((lane, l) => {
    const { node: nodes, length } = lane.bars;
    for (let i = 0; i < length && found.length < limit; i++) {
      if (nodes[i] === node) {
        found.push({ lane: l, index: i });
      }
    }
  });
  return found;
}

/**
 * The transfer that ended wait `index` of `lane`: of the transfers lane's bars from the wait's
 * peer device in its run, the one that arrived last by the wait's end; -1 when none (a control
 * token ended it, or the transfers were not recorded). Both ends are on the waiting task's clock.
 */
export function lastArrival(model: TimingModel, lane: number, index: number): number {
  const waits = model.lanes[lane]?.waits;
  const transfers = model.lanes.find((l) => l.kind === 'transfer')?.bars;
  if (waits === undefined || transfers === undefined || index >= waits.length) {
    return -1;
  }
  const [peer, run, end] = [waits.peer[index], waits.run[index], waits.t1[index]];
  if (peer < 0) {
    return -1;
  }
  let best = -1;
  // Bars are sorted by start: those of earlier runs started before any of this run's.
  for (let i = transfers.after(end) - 1; i >= 0 && transfers.run[i] >= run; i--) {
    const arrival = transfers.t1[i];
    const fits = transfers.run[i] === run && transfers.peer[i] === peer && arrival <= end;
    if (fits && (best < 0 || arrival > transfers.t1[best])) {
      best = i;
    }
  }
  return best;
}
