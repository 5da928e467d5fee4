/**
 * What a timing plot can show of the model's lanes at its resolution: each lane's bars in display
 * time, narrow ones merged into blocks (Perfetto merges slices too thin to draw too), the block
 * under a point, and the transfers drawn as arrows between device lanes. No DOM: the figure
 * (timingfigure.ts) draws what these return, and the panel (timing.ts) hit-tests it.
 */
import { IDENTITY_AXIS, type AxisMap } from './timeaxis';
import type { LaneBars, TimingModel } from './timingmodel';

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

/** A block of merged bars as drawn: segment k of one colour's segments in a lane. */
export interface Block {
  lane: number;
  segments: LaneSegments;
  k: number;
  x0: number;
  x1: number;
}

/**
 * The block of merged bars of `lane` as drawn (`drawn`: per lane, coalesceLane's segments) at
 * display time x, within `slack` display ns; null if none.
 */
export function blockAt(
  drawn: readonly (readonly LaneSegments[])[],
  lane: number,
  x: number,
  slack: number,
): Block | null {
  for (const segments of drawn[lane] ?? []) {
    for (let k = 0; k < segments.x0.length; k++) {
      if (segments.count[k] > 1 && segments.x0[k] - slack <= x && x <= segments.x1[k] + slack) {
        return { lane, segments, k, x0: segments.x0[k], x1: segments.x1[k] };
      }
    }
  }
  return null;
}

function noSegments(device: number): LaneSegments {
  return { device, x0: [], x1: [], bar: [], count: [], first: [], end: [] };
}

/** Which of a lane's bars to merge: its bars (ops, or transfers), or an OP lane's waits. */
export type LanePart = 'bars' | 'waits';

/**
 * The bars (or waits) of a lane that meet real times [lo, hi], in display time, narrow ones merged
 * where they are less than MERGE_PX pixels (of `resolution` display ns) apart, and widened to at
 * least a pixel: what a plot `resolution` ns per pixel wide can show. An OP lane's bars or waits
 * (one colour) skip over merged bars by binary search, so the cost follows the number of segments
 * drawn, not of bars; the transfers lane (a colour per destination) is walked bar by bar.
 */
export function coalesceLane(
  model: TimingModel,
  lane: number,
  lo: number,
  hi: number,
  resolution: number,
  axis: AxisMap = IDENTITY_AXIS,
  part: LanePart = 'bars',
): LaneSegments[] {
  const info = model.lanes[lane];
  if (info === undefined || info[part].length === 0) {
    return [];
  }
  const bars = info[part];
  return info.kind === 'transfer'
    ? coalesceTransfers(bars, lo, hi, resolution, axis)
    : [coalesceBars(bars, info.device, lo, hi, resolution, axis)];
}

/** The transfers lane's bars merged per destination device (its colour), bar by bar. */
function coalesceTransfers(
  bars: LaneBars,
  lo: number,
  hi: number,
  resolution: number,
  axis: AxisMap,
): LaneSegments[] {
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
