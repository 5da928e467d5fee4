import { describe, expect, it } from 'vitest';
import { EventColumns } from './events';
import { TimeAxis } from './timeaxis';
import { computeTiming } from './timingmodel';
import { MERGE_PX, coalesceLane, transferArrows } from './timingsegments';
import { COLUMN_NAMES, EventKind, TimingSource, type EventLists } from './types';
import { loop, manyOps, storeModel } from './__tests__/timing-fixture';

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

describe('wide bars and arrows', () => {
  it('marks the segments that are one wide bar', () => {
    const { model } = storeModel();
    // A wide bar is a segment of its own and names its bar; narrow ones merged name none.
    expect(coalesceLane(model, 3, 0, 100, 1)[0].bar).toEqual([0]);
    const merged = coalesceLane(computeTiming(manyOps(1000)), 0, 0, 10_000, 100)[0];
    expect(merged.bar.every((b) => b === -1)).toBe(true);
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
