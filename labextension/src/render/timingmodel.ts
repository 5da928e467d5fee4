/**
 * The timing panel's data, apart from any drawing: one lane per device and stream holding its OP
 * events as bars sorted by start (and, apart from them, the WAIT events of a cluster task's stages
 * waiting for other tasks: not busy time), a lane of transfers, each device's busy time, and the
 * queries a drawing needs (the bar under a point, a lane's bars merged to the plot's resolution,
 * the bars wide enough for a label, the transfers in view) and the zoom window's arithmetic.
 *
 * The model is folded in from a cursor (cursor.ts): a live update costs the new events, and a
 * draw costs what the plot's width can show, not the number of events.
 */
import { EventCursor, type CursorEvents } from './cursor';
import { firstStartAfter, growColumn } from './events';
import { shortDeviceName } from './format';
import { EventKind, TimingSource, type DeviceRecord, type EventBatch } from './types';

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

/** Real time (ns since origin) to display time along the axis and back (see timeaxis.ts). */
export interface AxisMap {
  toShown(t: number): number;
  toReal(x: number): number;
}

export const IDENTITY_AXIS: AxisMap = { toShown: (t) => t, toReal: (x) => x };

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

export function deviceShort(devices: readonly DeviceRecord[], id: number): string {
  const device = devices.find((d) => d.id === id);
  return device ? shortDeviceName(device.name) : id < 0 ? 'unplaced' : `device ${id}`;
}

/** Whether devices `a` and `b` belong to different tasks (a cluster's processes). */
export function crossesTasks(devices: readonly DeviceRecord[], a: number, b: number): boolean {
  const task = (id: number) => devices.find((d) => d.id === id)?.name.split('/device:')[0];
  const [x, y] = [task(a), task(b)];
  return x !== undefined && y !== undefined && x !== y;
}

/**
 * A lane's label in parts, so a narrow plot can say less of it (laneText): its device, its stream
 * (where the device has several), and on a device's first lane the share of the runs' time its
 * ops ran and whether that is modeled.
 */
export interface LaneLabel {
  device: string;
  stream: number | null;
  busy: string | null;
  modeled: boolean;
}

/**
 * Lane labels: the device (and stream, where it has several), with busy share and "(modeled)" on
 * a device's first.
 */
export function laneLabels(
  model: TimingModel,
  devices: readonly DeviceRecord[],
  utilisation: ReadonlyMap<number, number>,
): LaneLabel[] {
  const lanesOf = new Map<number, number>();
  for (const lane of model.lanes) {
    lanesOf.set(lane.device, (lanesOf.get(lane.device) ?? 0) + 1);
  }
  return model.lanes.map((lane, i) => {
    if (lane.kind === 'transfer') {
      return { device: 'transfers', stream: null, busy: null, modeled: false };
    }
    const first = i === 0 || model.lanes[i - 1].device !== lane.device;
    // A device's one stream goes unnamed: its number (the device's id, as a trace records it)
    // would tell a reader nothing.
    const named = lane.stream >= 0 && (lanesOf.get(lane.device) ?? 0) > 1;
    return {
      device: deviceShort(devices, lane.device),
      stream: named ? lane.stream : null,
      busy: first ? busyShare(utilisation.get(lane.device) ?? 0) : null,
      modeled: first && (model.sources.get(lane.device)?.has(TimingSource.MODELED) ?? false),
    };
  });
}

/**
 * A busy share as a percentage with the digits it needs to say something: `40%`, `3%`, and two
 * significant digits under 1% (`0.04%`: a cluster task whose step is mostly messaging), never a
 * `0%` for a device whose ops ran at all.
 */
export function busyShare(share: number): string {
  const percent = share * 100;
  if (percent <= 0) {
    return '0%';
  }
  if (percent >= 1) {
    return `${Math.min(100, Math.round(percent))}%`;
  }
  const digits = Math.max(2, 1 - Math.floor(Math.log10(percent)));
  return `${Number(percent.toFixed(Math.min(digits, 6)))}%`;
}

/**
 * A lane's label in at most `chars` characters, the first that fits of: `GPU:0 stream 1 · busy
 * 40% (modeled)`; without "(modeled)" (the timing source line says it); `GPU:0 · 40%`; the device
 * cut in the middle before its share (`wor…GPU:0 · 3%`). Whole by default (the tooltip's).
 */
export function laneText(label: LaneLabel, chars = Infinity): string {
  const stream = label.stream === null ? '' : ` stream ${label.stream}`;
  const busy = label.busy === null ? '' : ` · busy ${label.busy}`;
  const short = label.busy === null ? '' : ` · ${label.busy}`;
  const options = [
    `${label.device}${stream}${busy}${label.modeled ? ' (modeled)' : ''}`,
    `${label.device}${stream}${busy}`,
    `${label.device}${stream}${short}`,
    // A device's later lanes under its first: the stream tells them apart.
    label.busy === null && stream !== '' ? stream.trim() : `${label.device}${short}`,
  ];
  const fitting = options.find((o) => o.length <= chars);
  return fitting ?? `${middleCut(label.device, chars - short.length)}${short}`;
}

/** `text` in at most `chars` characters (2 at least): its start and its end around an ellipsis. */
export function middleCut(text: string, chars: number): string {
  if (text.length <= chars) {
    return text;
  }
  const room = Math.max(2, chars) - 1;
  const end = Math.ceil(room / 2);
  return `${text.slice(0, room - end)}…${text.slice(text.length - end)}`;
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

/** Bars at least this many pixels wide are drawn on their own, with a gap after them. */
export const WIDE_PX = 4;
/**
 * Narrow bars closer than this (px) merge into one block: apart, they would draw a hatch of
 * slivers no pointer can tell apart (a block says how many ops it holds, and zooms in on a click).
 */
export const MERGE_PX = 3;

/**
 * A lane's bars of one colour merged for drawing: segments [x0[i], x1[i]], display ns; bar[i] is
 * the bar's index when the segment is one wide bar (it can carry a label), else -1. A segment
 * holds count[i] bars, with indices in [first[i], end[i]) (in the transfers lane, those of its
 * colour: its destination device): more than one is an "N ops" block, as Perfetto merges
 * slices too thin to draw.
 */
export interface LaneSegments {
  device: number;
  x0: number[];
  x1: number[];
  bar: number[];
  count: number[];
  first: number[];
  end: number[];
}

function noSegments(device: number): LaneSegments {
  return { device, x0: [], x1: [], bar: [], count: [], first: [], end: [] };
}

/**
 * The bars of a lane that meet real times [lo, hi], in display time, narrow ones merged where they
 * are less than MERGE_PX pixels (of `resolution` display ns) apart, and widened to at least a
 * pixel: what a plot `resolution` ns per pixel wide can show. An OP lane (one colour) skips over merged bars by
 * binary search, so the cost follows the number of segments drawn, not of bars; the transfers lane
 * (a colour per destination) is walked bar by bar.
 */
export function coalesceLane(
  model: TimingModel,
  lane: number,
  lo: number,
  hi: number,
  resolution: number,
  axis: AxisMap = IDENTITY_AXIS,
): LaneSegments[] {
  const info = model.lanes[lane];
  if (info === undefined || info.bars.length === 0) {
    return [];
  }
  const bars = info.bars;
  if (info.kind === 'op') {
    return [coalesceBars(bars, info.device, lo, hi, resolution, axis)];
  }
  const { t0, t1, device } = bars;
  const first = bars.reaching(lo);
  const last = bars.after(hi);
  const groups = new Map<number, LaneSegments>();
  for (let i = first; i < last; i++) {
    if (t1[i] < lo) {
      continue;
    }
    let group = groups.get(device[i]);
    if (group === undefined) {
      group = noSegments(device[i]);
      groups.set(device[i], group);
    }
    const start = axis.toShown(t0[i]);
    const end = Math.max(axis.toShown(t1[i]), start + resolution);
    const n = group.x0.length;
    const narrow = (k: number) => group.x1[k] - group.x0[k] < WIDE_PX * resolution;
    if (
      n > 0 &&
      start <= group.x1[n - 1] + MERGE_PX * resolution &&
      (start <= group.x1[n - 1] + resolution ||
        (narrow(n - 1) && end - start < WIDE_PX * resolution))
    ) {
      group.x1[n - 1] = Math.max(group.x1[n - 1], end);
      group.bar[n - 1] = -1;
      group.count[n - 1] += 1;
      group.end[n - 1] = i + 1;
    } else {
      group.x0.push(start);
      group.x1.push(end);
      group.bar.push(i);
      group.count.push(1);
      group.first.push(i);
      group.end.push(i + 1);
    }
  }
  return [...groups.values()];
}

/** An OP lane's waits (WAIT events) merged for drawing as coalesceLane merges its ops. */
export function coalesceWaits(
  model: TimingModel,
  lane: number,
  lo: number,
  hi: number,
  resolution: number,
  axis: AxisMap = IDENTITY_AXIS,
): LaneSegments[] {
  const info = model.lanes[lane];
  if (info === undefined || info.waits.length === 0) {
    return [];
  }
  return [coalesceBars(info.waits, info.device, lo, hi, resolution, axis)];
}

/** Bars of one colour merged (coalesceLane), skipping over merged bars by binary search. */
function coalesceBars(
  bars: LaneBars,
  device: number,
  lo: number,
  hi: number,
  resolution: number,
  axis: AxisMap,
): LaneSegments {
  const { t0, t1, maxT1 } = bars;
  const first = bars.reaching(lo);
  const last = bars.after(hi);
  const segments = noSegments(device);
  const wide = (b: number) => axis.toShown(t1[b]) - axis.toShown(t0[b]) >= WIDE_PX * resolution;
  let i = first;
  while (i < last) {
    if (t1[i] < lo) {
      i += 1;
      continue;
    }
    const start = axis.toShown(t0[i]);
    let end = Math.max(axis.toShown(t1[i]), start + resolution);
    let j = i + 1;
    // A wide bar is a segment of its own, so back-to-back ops stay apart (and labelled); narrow
    // ones merge with whatever starts within a pixel of their end, and bridge a gap of up to
    // MERGE_PX pixels to a narrow bar.
    while (!wide(i) && j < last && !(wide(j) && t0[j] >= maxT1[j - 1])) {
      let k = Math.min(last, bars.after(axis.toReal(end + resolution), j));
      if (k <= j) {
        if (wide(j) || axis.toShown(t0[j]) > end + MERGE_PX * resolution) {
          break;
        }
        k = j + 1;
      }
      end = Math.max(end, axis.toShown(maxT1[k - 1]));
      j = k;
    }
    segments.x0.push(start);
    segments.x1.push(end);
    segments.bar.push(j === i + 1 && wide(i) ? i : -1);
    segments.count.push(j - i);
    segments.first.push(i);
    segments.end.push(j);
    i = j;
  }
  return segments;
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

/** A label that fits in `px` pixels at about `charPx` per character: the name, shortened. */
export function fitLabel(name: string, px: number, charPx = 6.2): string | null {
  const room = Math.floor((px - 6) / charPx);
  if (room >= name.length) {
    return name;
  }
  const leaf = name.slice(name.lastIndexOf('/') + 1);
  if (room >= leaf.length) {
    return leaf;
  }
  return room >= 4 ? `${leaf.slice(0, room - 1)}…` : null;
}

/**
 * Transfers drawn as one arrow, from their source device's lane to their destination's: a
 * transfer drawn as a bar of its own, or the transfers between two devices that a block of the
 * transfers lane merged (count of them, bytes summed, from the first start to the last end).
 */
export interface TransferArrow {
  fromLane: number;
  toLane: number;
  t0: number;
  t1: number;
  bytes: number;
  count: number;
}

/**
 * The arrows of the transfers lane's segments as drawn (coalesceLane), at most `limit`; none
 * when there are more (too dense to read as arrows), so the cost never follows the trace's size.
 */
export function transferArrows(
  model: TimingModel,
  segments: readonly LaneSegments[],
  limit: number,
): TransferArrow[] {
  const lane = model.lanes.findIndex((l) => l.kind === 'transfer');
  if (lane < 0) {
    return [];
  }
  const bars = model.lanes[lane].bars;
  const laneOf = new Map<number, number>();
  const deviceLane = (device: number) => {
    let found = laneOf.get(device);
    if (found === undefined) {
      found = model.laneOfDevice(device);
      laneOf.set(device, found);
    }
    return found;
  };
  const arrows: TransferArrow[] = [];
  for (const group of segments) {
    const toLane = deviceLane(group.device);
    for (let k = 0; k < group.x0.length; k++) {
      const bySource = new Map<number, TransferArrow>();
      for (let i = group.first[k]; i < group.end[k]; i++) {
        const fromLane = deviceLane(bars.peer[i]);
        if (bars.device[i] !== group.device || fromLane < 0 || toLane < 0 || fromLane === toLane) {
          continue;
        }
        const arrow = bySource.get(fromLane);
        if (arrow === undefined) {
          const { t0, t1, bytes } = { t0: bars.t0[i], t1: bars.t1[i], bytes: bars.bytes[i] };
          bySource.set(fromLane, { fromLane, toLane, t0, t1, bytes, count: 1 });
        } else {
          arrow.t0 = Math.min(arrow.t0, bars.t0[i]);
          arrow.t1 = Math.max(arrow.t1, bars.t1[i]);
          arrow.bytes += bars.bytes[i];
          arrow.count += 1;
        }
      }
      arrows.push(...bySource.values());
      if (arrows.length > limit) {
        return [];
      }
    }
  }
  return arrows.sort((a, b) => a.t0 - b.t0);
}

/** Zoom a display window [lo, hi] by `factor` (< 1 zooms in) around `centre`. */
export function zoomWindow(
  window: readonly [number, number],
  factor: number,
  centre = (window[0] + window[1]) / 2,
): [number, number] {
  const lo = centre - (centre - window[0]) * factor;
  const hi = centre + (window[1] - centre) * factor;
  return hi - lo >= 1 ? [lo, hi] : [centre - 0.5, centre + 0.5];
}

/** Pan a display window by `fraction` of its width (negative: left). */
export function panWindow(window: readonly [number, number], fraction: number): [number, number] {
  const shift = (window[1] - window[0]) * fraction;
  return [window[0] + shift, window[1] + shift];
}

/** A window padded by 1% each side (at least 1 ns), so bars at the edges stay visible. */
export function padWindow(window: readonly [number, number]): [number, number] {
  const pad = Math.max((window[1] - window[0]) * 0.01, 1);
  return [window[0] - pad, window[1] + pad];
}
