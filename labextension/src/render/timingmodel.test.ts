import { describe, expect, it } from 'vitest';
import { EventColumns } from './events';
import { PlacementStore } from './store';
import { TimeAxis } from './timeaxis';
import { countingKinds } from './__tests__/fixtures';
import {
  IntervalUnion,
  TimingModel,
  barAt,
  barsOfNode,
  coalesceLane,
  coalesceWaits,
  crossesTasks,
  lastArrival,
  MERGE_PX,
  computeTiming,
  fitLabel,
  laneLabels,
  laneText,
  busyShare,
  middleCut,
  padWindow,
  panWindow,
  transferArrows,
  waitAt,
  zoomWindow,
} from './timingmodel';
import { COLUMN_NAMES, EventKind, TimingSource, type EventLists } from './types';
import { clusterDocument, panelsDocument } from './__tests__/panels-fixture';

function storeModel() {
  const store = PlacementStore.fromDocument(panelsDocument());
  const model = computeTiming(store.events, store.devices);
  const runs = store.runs.map((r): [number, number] => [
    r.t0 - store.originNs,
    r.t1 - store.originNs,
  ]);
  return { store, model, span: model.span(runs) };
}

/** n OP events on 4 devices x 2 streams; a lane has a bar every 80 ns, 85 ns long (overlapping). */
function manyOps(n: number, maxEvents = n): EventColumns {
  const events = new EventColumns(maxEvents);
  const lists: Partial<EventLists> = Object.fromEntries(COLUMN_NAMES.map((c) => [c, []]));
  for (let i = 0; i < n; i++) {
    lists.kind!.push(EventKind.OP);
    lists.device!.push(i % 4);
    lists.stream!.push((i >> 2) % 2);
    lists.node!.push(i % 500);
    lists.t0!.push(i * 10);
    lists.t1!.push(i * 10 + 85);
    lists.source!.push(TimingSource.CLOCK);
    lists.run!.push(Math.floor(i / 100));
    lists.peer!.push(-1);
    lists.bytes!.push(0);
  }
  events.appendLists(lists);
  return events;
}

/** `runs` runs of `ops` back-to-back 10 ns ops on device 0, each run starting 1 ms after the last. */
function loop(runs: number, ops: number, first = 0): Partial<EventLists> {
  const lists: Partial<EventLists> = Object.fromEntries(COLUMN_NAMES.map((c) => [c, []]));
  for (let r = first; r < first + runs; r++) {
    for (let k = 0; k < ops; k++) {
      const t0 = r * 1_000_000 + k * 10;
      const row = [EventKind.OP, t0, t0 + 10, k, 0, 0, 0, TimingSource.CLOCK, r, -1];
      COLUMN_NAMES.forEach((c, i) => lists[c]!.push(row[i]));
    }
  }
  return lists;
}

describe('TimingModel', () => {
  it('makes a lane per device and stream, then one for transfers', () => {
    const { store, model, span } = storeModel();
    const labels = laneLabels(model, store.devices, model.utilisation(span));
    expect(labels.map((label) => laneText(label))).toEqual([
      'CPU:0 · busy 10%',
      'GPU:0 stream 0 · busy 30%',
      'GPU:0 stream 1',
      'GPU:1 · busy 60% (modeled)',
      'transfers',
    ]);
    // A narrow plot's lanes say less, each in the characters it is given.
    expect(labels.map((label) => laneText(label, 12))).toEqual([
      'CPU:0 · 10%',
      'GPU:0 · 30%',
      'stream 1',
      'GPU:1 · 60%',
      'transfers',
    ]);
    for (const chars of [4, 8, 12, 20, 40]) {
      for (const label of labels) {
        expect(laneText(label, chars).length).toBeLessThanOrEqual(Math.max(chars, 8));
      }
    }
    expect(model.lanes.map((l) => l.bars.length)).toEqual([1, 1, 1, 1, 1]);
    expect(model.lanes[4].kind).toBe('transfer');
    expect(model.opBars).toBe(4);
  });

  it('computes utilisation as busy time (union over streams) over the runs span', () => {
    const { model, span } = storeModel();
    expect(span).toBe(100);
    const utilisation = model.utilisation(span);
    expect(utilisation.get(0)).toBeCloseTo(0.1);
    expect(utilisation.get(1)).toBeCloseTo(0.3); // [10,40] and [10,30] overlap
    expect(utilisation.get(2)).toBeCloseTo(0.6);
    expect([...model.sources.get(2)!]).toEqual([TimingSource.MODELED]);
  });

  it('falls back to run records, then to the op extent, for the span', () => {
    const doc = panelsDocument();
    const keep = doc.events.kind.map((k) => k !== EventKind.RUN);
    for (const name of Object.keys(doc.events) as (keyof typeof doc.events)[]) {
      doc.events[name] = doc.events[name].filter((_, i) => keep[i]);
    }
    const model = computeTiming(PlacementStore.fromDocument(doc).events);
    expect(model.span([[0, 200]])).toBe(200);
    expect(model.span([])).toBe(100);
  });

  it('finds the bar under a time, with a tolerance, and a node’s bars', () => {
    const { model } = storeModel();
    const gpuLane = 1;
    expect(model.lanes[gpuLane].bars.node[barAt(model, gpuLane, 25)]).toBe(1);
    expect(barAt(model, gpuLane, 45)).toBe(-1);
    expect(model.lanes[gpuLane].bars.node[barAt(model, gpuLane, 45, 6)]).toBe(1);
    expect(barAt(model, 99, 25)).toBe(-1);
    expect(barsOfNode(model, 3)).toEqual([{ lane: 2, index: 0 }]);
    expect(barsOfNode(model, 0).map((b) => b.lane)).toEqual([0, 4]); // the op and its transfer
  });

  it('folds in new events from its cursor, keeping bars sorted by start', () => {
    const store = PlacementStore.fromDocument(panelsDocument());
    const model = new TimingModel();
    expect(model.update(store.events, store.devices)).toBe(true);
    expect(model.update(store.events, store.devices)).toBe(false); // nothing new
    // An op on GPU:0 stream 0 that started before the one there: inserted in order.
    store.appendLists({
      kind: [EventKind.OP],
      t0: [2],
      t1: [5],
      node: [3],
      device: [1],
      stream: [0],
    });
    expect(model.update(store.events, store.devices)).toBe(true);
    const bars = model.lanes[1].bars;
    expect([...bars.t0.subarray(0, bars.length)]).toEqual([2, 10]);
    expect([...bars.maxT1.subarray(0, bars.length)]).toEqual([5, 40]);
    expect(model.opBars).toBe(5);
    // A reset empties it.
    store.reset();
    model.update(store.events, store.devices);
    expect(model.lanes).toEqual([]);
    expect(model.opBars).toBe(0);
  });

  it('reads only the new events: the last of ten batches as many as the second', () => {
    const events = new EventColumns();
    const model = new TimingModel();
    const whole = loop(2000, 20);
    const batch = (r: number) => {
      const part: Partial<EventLists> = {};
      for (const c of COLUMN_NAMES) {
        part[c] = whole[c]!.slice(r * 20 * 200, (r + 1) * 20 * 200);
      }
      return part;
    };
    const reads: number[] = [];
    for (let r = 0; r < 10; r++) {
      events.appendLists(batch(r));
      const counted = countingKinds(events);
      model.update(counted.view, []);
      reads.push(counted.reads());
    }
    expect(model.opBars).toBe(40_000);
    // The last batch (36,000 events already in) reads what the second did, not ten times more.
    expect(reads[1]).toBeGreaterThan(0);
    expect(reads[9]).toBe(reads[1]);
  });

  it('starts over from the events still held when the oldest were dropped', () => {
    const events = new EventColumns(1000);
    const model = new TimingModel();
    events.appendLists(loop(40, 20)); // 800 events
    model.update(events, []);
    events.appendLists(loop(20, 20, 40)); // 400 more: over the limit, the oldest dropped
    expect(events.dropped).toBeGreaterThan(0);
    model.update(events, []);
    expect(model.opBars).toBe(events.count);
    expect(model.lanes[0].bars.t0[0]).toBe(events.t0[0]);
  });
});

describe('a cluster step', () => {
  function clusterModel() {
    const store = PlacementStore.fromDocument(clusterDocument());
    return { store, model: computeTiming(store.events, store.devices) };
  }

  it('draws a task’s waits on its device’s lane, apart from its ops and its busy time', () => {
    const { store, model } = clusterModel();
    expect(model.lanes.map((l) => [l.kind, l.device, l.bars.length, l.waits.length])).toEqual([
      ['op', 0, 1, 0],
      ['op', 1, 1, 1],
      ['transfer', -1, 3, 0],
    ]);
    expect([model.opBars, model.waitBars]).toEqual([2, 1]);
    // The worker ran its matmul 20 of the step's 100 ns; it waited 55 more, which is not busy.
    const utilisation = model.utilisation(model.span());
    expect(utilisation.get(1)).toBeCloseTo(0.2);
    const labels = laneLabels(model, store.devices, utilisation).map((l) => laneText(l));
    expect(labels).toEqual(['ps/0 CPU:0 · busy 10%', 'worker/0 CPU:0 · busy 20%', 'transfers']);
    // Under the pointer: the wait, not an op; the matmul after it.
    expect([waitAt(model, 1, 30), barAt(model, 1, 30)]).toEqual([0, -1]);
    expect([waitAt(model, 1, 70), barAt(model, 1, 70)]).toEqual([-1, 0]);
    expect(waitAt(model, 0, 30)).toBe(-1);
    expect(coalesceWaits(model, 1, 0, 100, 1)).toEqual([
      { device: 1, x0: [5], x1: [60], bar: [0], count: [1], first: [0], end: [1] },
    ]);
    expect(coalesceWaits(model, 0, 0, 100, 1)).toEqual([]);
  });

  it('finds what arrived last for a wait: its peer’s tensor that arrived by its end', () => {
    const { model } = clusterModel();
    const transfers = model.lanes[2].bars;
    // w/read (60) ended the wait; s (40) came before it and `later` (70) after its end.
    expect(transfers.node[lastArrival(model, 1, 0)]).toBe(0);
    // A wait a control token ended names no tensor.
    const doc = clusterDocument();
    doc.events.peer[2] = -1;
    const store = PlacementStore.fromDocument(doc);
    expect(lastArrival(computeTiming(store.events, store.devices), 1, 0)).toBe(-1);
  });

  it('counts a wait in its run’s active span: the axis keeps a wait before the first op', () => {
    const doc = clusterDocument();
    doc.events.t0[2] = -5; // the worker's clock a little ahead of the ps task's
    expect(PlacementStore.fromDocument(doc).activity().spans.get(0)).toEqual([-5, 80]);
  });

  it('tells the tasks of a transfer’s ends apart', () => {
    const { store } = clusterModel();
    expect(crossesTasks(store.devices, 0, 1)).toBe(true);
    expect(crossesTasks(store.devices, 1, 1)).toBe(false);
    const local = PlacementStore.fromDocument(panelsDocument()).devices;
    expect(crossesTasks(local, 0, 1)).toBe(false);
  });
});

describe('IntervalUnion', () => {
  it('keeps the union’s length whatever order the intervals come in', () => {
    const union = new IntervalUnion();
    union.add(10, 20);
    union.add(30, 40);
    union.add(15, 25); // extends the first
    union.add(0, 5); // before everything
    union.add(24, 31); // bridges two
    expect(union.total).toBe(5 + (40 - 10));
    expect(union.size).toBe(2);
  });
});

describe('coalesceLane', () => {
  it('merges bars closer than the resolution and widens thin ones', () => {
    const { model } = storeModel();
    // GPU:0 stream 0 has one bar [10, 40]; at 1 ns per pixel it stays as it is.
    expect(coalesceLane(model, 1, -Infinity, Infinity, 1)).toEqual([
      { device: 1, x0: [10], x1: [40], bar: [0], count: [1], first: [0], end: [1] },
    ]);
    // At 50 ns per pixel the 30 ns bar is widened to a pixel.
    expect(coalesceLane(model, 1, -Infinity, Infinity, 50)[0].x1).toEqual([60]);
    // The transfers lane groups by destination device; a range that misses it yields nothing.
    expect(coalesceLane(model, 4, 0, 100, 1)).toEqual([
      { device: 1, x0: [8], x1: [12], bar: [0], count: [1], first: [0], end: [1] },
    ]);
    expect(coalesceLane(model, 4, 50, 100, 1)).toEqual([]);
  });

  it('bridges gaps under MERGE_PX between narrow bars, never into a wide bar', () => {
    // At 1 ns per pixel: 2 ns bars at 0, 4, 8 (2 px gaps), one at 20 (a 10 px gap), then a wide
    // 10 ns bar 2 px after it.
    const starts: [number, number][] = [
      [0, 2],
      [4, 6],
      [8, 10],
      [20, 22],
      [24, 34],
    ];
    const lists: Partial<EventLists> = Object.fromEntries(COLUMN_NAMES.map((c) => [c, []]));
    starts.forEach(([t0, t1], i) => {
      const row = [EventKind.OP, t0, t1, i, 0, 0, 0, TimingSource.CLOCK, 0, -1];
      COLUMN_NAMES.forEach((c, k) => lists[c]!.push(row[k]));
    });
    const events = new EventColumns();
    events.appendLists(lists);
    const [lane] = coalesceLane(computeTiming(events), 0, -Infinity, Infinity, 1);
    expect(MERGE_PX).toBe(3);
    expect(lane.x0).toEqual([0, 20, 24]);
    expect(lane.x1).toEqual([10, 22, 34]);
    expect(lane.count).toEqual([3, 1, 1]);
    expect(lane.bar).toEqual([-1, -1, 4]);
  });

  it('draws 100,000 bars as about a plot width of segments', () => {
    const n = 100_000;
    const model = computeTiming(manyOps(n));
    const end = n * 10 + 85;
    const perLane = coalesceLane(model, 0, 0, end, end / 1000);
    expect(perLane).toHaveLength(1);
    expect(perLane[0].x0.length).toBeLessThanOrEqual(1000);
    // Zoomed in to 2,000 ns at 2 ns per pixel: the bars there, unmerged.
    const zoomed = coalesceLane(model, 0, 500_000, 502_000, 2)[0];
    expect(zoomed.x0[0]).toBeLessThanOrEqual(500_000);
    expect(zoomed.x1[zoomed.x1.length - 1]).toBeGreaterThanOrEqual(502_000);
    // 85 ns bars at 2 ns per pixel are wide: each its own segment, the ~26 that meet the view.
    expect(zoomed.x0.length).toBeGreaterThanOrEqual(25);
    expect(zoomed.x0.length).toBeLessThanOrEqual(28);
  });

  it('keeps separate bars apart and draws them along a collapsed axis', () => {
    const events = new EventColumns();
    events.appendLists(loop(3, 2)); // runs at 0, 1 ms, 2 ms: bars [0,10] [10,20] each
    const model = computeTiming(events);
    const axis = new TimeAxis(
      [
        [0, 20],
        [1_000_000, 1_000_020],
        [2_000_000, 2_000_020],
      ],
      30,
    );
    // At 5 ns per pixel the 10 ns bars are narrow: each run's two merge, the runs stay apart.
    const [lane] = coalesceLane(model, 0, -Infinity, Infinity, 5, axis);
    expect(lane.x0).toEqual([0, 50, 100]);
    expect(lane.x1).toEqual([20, 70, 120]);
    // Each a block of two bars, [first, end) of the lane's bars.
    expect(lane.count).toEqual([2, 2, 2]);
    expect(lane.first).toEqual([0, 2, 4]);
    expect(lane.end).toEqual([2, 4, 6]);
    expect(lane.bar).toEqual([-1, -1, -1]);
    // At 1 ns per pixel they are wide: a segment each.
    const [fine] = coalesceLane(model, 0, -Infinity, Infinity, 1, axis);
    expect(fine.x0).toEqual([0, 10, 50, 60, 100, 110]);
    expect(fine.count).toEqual([1, 1, 1, 1, 1, 1]);
    // With the gaps narrower than a pixel, runs merge too.
    const [coarse] = coalesceLane(model, 0, -Infinity, Infinity, 40, axis);
    expect(coarse.x0).toEqual([0]);
    expect(coarse.count).toEqual([6]);
  });
});

describe('labels and arrows', () => {
  it('marks the segments that are one wide bar, and fits a name in a width', () => {
    const { model } = storeModel();
    // A wide bar is a segment of its own and names its bar; narrow ones merged name none.
    expect(coalesceLane(model, 3, 0, 100, 1)[0].bar).toEqual([0]);
    const merged = coalesceLane(computeTiming(manyOps(1000)), 0, 0, 10_000, 100)[0];
    expect(merged.bar.every((b) => b === -1)).toBe(true);
    expect(fitLabel('tower_0/dense/MatMul', 200)).toBe('tower_0/dense/MatMul');
    expect(fitLabel('tower_0/dense/MatMul', 60)).toBe('MatMul');
    expect(fitLabel('tower_0/dense/MatMul', 40)).toBe('MatM…');
    expect(fitLabel('tower_0/dense/MatMul', 20)).toBeNull();
  });

  it('draws a transfer from its source device’s lane to its destination’s, with bytes', () => {
    const { model } = storeModel();
    const lane = model.lanes.findIndex((l) => l.kind === 'transfer');
    const drawn = (lo: number, hi: number) => coalesceLane(model, lane, lo, hi, 1);
    expect(transferArrows(model, drawn(0, 100), 10)).toEqual([
      { fromLane: 0, toLane: 1, t0: 8, t1: 12, bytes: 100, count: 1 },
    ]);
    expect(transferArrows(model, drawn(50, 100), 10)).toEqual([]);
    // More arrows than can be read: none drawn.
    expect(transferArrows(model, drawn(0, 100), 0)).toEqual([]);
  });

  it('draws one arrow per route for a block of merged transfers', () => {
    // Ten 1 ns transfers GPU:0 -> GPU:1 and two GPU:1 -> GPU:0, 2 ns apart, and an op on each.
    const rows: number[][] = [
      [EventKind.OP, 0, 50, 0, 0, 0, 0, 1, 0, -1],
      [EventKind.OP, 0, 50, 1, 1, 0, 0, 1, 0, -1],
    ];
    for (let i = 0; i < 12; i++) {
      const [to, from] = i < 10 ? [1, 0] : [0, 1];
      rows.push([EventKind.TRANSFER, i * 2, i * 2 + 1, 5, to, 0, 100, 1, 0, from]);
    }
    const lists: Partial<EventLists> = Object.fromEntries(COLUMN_NAMES.map((c) => [c, []]));
    rows.forEach((row) => COLUMN_NAMES.forEach((c, i) => lists[c]!.push(row[i])));
    const events = new EventColumns();
    events.appendLists(lists);
    const model = computeTiming(events);
    const lane = model.lanes.findIndex((l) => l.kind === 'transfer');
    // At 5 ns per pixel they merge into a block per destination: one arrow each, bytes summed.
    const coarse = coalesceLane(model, lane, 0, 100, 5);
    expect(coarse.map((g) => g.count)).toEqual([[10], [2]]);
    expect(transferArrows(model, coarse, 10)).toEqual([
      { fromLane: 0, toLane: 1, t0: 0, t1: 19, bytes: 1000, count: 10 },
      { fromLane: 1, toLane: 0, t0: 20, t1: 23, bytes: 200, count: 2 },
    ]);
    // At 0.1 ns per pixel each is a bar and an arrow of its own.
    const fine = coalesceLane(model, lane, 0, 100, 0.1);
    expect(transferArrows(model, fine, 100)).toHaveLength(12);
  });
});

describe('zoom window', () => {
  it('zooms around a point and pans by a fraction of the width', () => {
    expect(zoomWindow([0, 100], 0.5)).toEqual([25, 75]);
    expect(zoomWindow([0, 100], 0.5, 0)).toEqual([0, 50]);
    expect(zoomWindow([0, 100], 2, 100)).toEqual([-100, 100]);
    expect(panWindow([0, 100], 0.25)).toEqual([25, 125]);
    expect(panWindow([0, 100], -0.25)).toEqual([-25, 75]);
    expect(padWindow([0, 1000])).toEqual([-10, 1010]);
    // Never narrower than a nanosecond.
    expect(zoomWindow([0, 1], 0.001)).toEqual([0, 1]);
  });
});

describe('TimeAxis', () => {
  it('collapses long idle gaps and maps both ways', () => {
    const axis = new TimeAxis([
      [100, 200],
      [10_100, 10_200],
      [10_250, 10_300], // a 50 ns gap: narrower than the collapsed width, kept
    ]);
    expect(axis.gap).toBe(15); // 0.15 of the median window (100 ns)
    expect(axis.toShown(100)).toBe(100);
    expect(axis.toShown(200)).toBe(200);
    expect(axis.toShown(10_100)).toBe(215);
    expect(axis.toShown(10_250)).toBe(315 + 15);
    expect(axis.extent).toEqual([100, 380]);
    for (const t of [150, 5_000, 10_150, 10_275]) {
      expect(axis.toReal(axis.toShown(t))).toBeCloseTo(t);
    }
    expect(axis.starts).toEqual([100, 215, 330]);
  });
});

describe('busyShare', () => {
  it('says a small share with the digits it needs, never 0% for ops that ran', () => {
    expect(busyShare(0.4)).toBe('40%');
    expect(busyShare(0.034)).toBe('3%');
    expect(busyShare(0.0004)).toBe('0.04%');
    expect(busyShare(0.0000123)).toBe('0.0012%');
    expect(busyShare(0.004)).toBe('0.4%');
    expect(busyShare(1)).toBe('100%');
    expect(busyShare(0)).toBe('0%');
  });
});

describe('middleCut', () => {
  it('keeps the start and the end of a name around an ellipsis', () => {
    expect(middleCut('/job:worker/replica:0/task:1/GPU:0', 12)).toBe('/job:…/GPU:0');
    expect(middleCut('GPU:0', 12)).toBe('GPU:0');
    expect(middleCut('worker/1 GPU:0', 9).length).toBe(9);
  });
});
