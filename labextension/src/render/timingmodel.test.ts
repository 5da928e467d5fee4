import { describe, expect, it } from 'vitest';
import { EventColumns } from './events';
import { PlacementStore } from './store';
import { IDENTITY_AXIS, TimeAxis } from './timeaxis';
import { countingKinds } from './__tests__/fixtures';
import {
  IntervalUnion,
  TimingModel,
  barAt,
  barsOfNode,
  lastArrival,
  computeTiming,
  waitAt,
} from './timingmodel';
import { coalesceLane } from './timingsegments';
import { crossesTasks, laneLabels, laneText } from './timingtext';
import { COLUMN_NAMES, EventKind, TimingSource, type EventLists } from './types';
import { clusterDocument, panelsDocument } from './__tests__/panels-fixture';
import { loop, storeModel } from './__tests__/timing-fixture';

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
    expect(coalesceLane(model, 1, 0, 100, 1, IDENTITY_AXIS, 'waits')).toEqual([
      { device: 1, x0: [5], x1: [60], bar: [0], count: [1], first: [0], end: [1] },
    ]);
    expect(coalesceLane(model, 0, 0, 100, 1, IDENTITY_AXIS, 'waits')).toEqual([]);
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
