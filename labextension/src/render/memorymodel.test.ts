import { describe, expect, it } from 'vitest';
import {
  computeMemory,
  downsampleSeries,
  liveTensorsAt,
  MAX_POINTS,
  MemoryTracker,
  type MemoryEvents,
} from './memorymodel';
import { EventColumns } from './events';
import { PlacementStore } from './store';
import { EventKind } from './types';
import { cardRow, GiB, panelsDocument, withCards } from './__tests__/panels-fixture';
import { columns, countingKinds } from './__tests__/fixtures';

function storeOf() {
  return PlacementStore.fromDocument(panelsDocument());
}

describe('MemoryTracker', () => {
  /** `n` alloc/free pairs on device (i % 2), 10 ns apart, the free 5 ns after its alloc. */
  const pairs = (from: number, n: number) => {
    const rows = { kind: [] as number[], t0: [] as number[], node: [] as number[] };
    const more = { device: [] as number[], bytes: [] as number[] };
    for (let i = from; i < from + n; i++) {
      rows.kind.push(EventKind.ALLOC, EventKind.FREE);
      rows.t0.push(i * 10, i * 10 + 5);
      rows.node.push(i, i);
      more.device.push(i % 2, i % 2);
      more.bytes.push(100 + i, 0); // a FREE without bytes frees what its ALLOC took
    }
    return { ...rows, ...more };
  };

  it('folds in appended events to the same model as computing it from all of them', () => {
    const events = new EventColumns();
    const tracker = new MemoryTracker();
    for (let batch = 0; batch < 5; batch++) {
      events.appendLists(pairs(batch * 20, 20));
      expect(tracker.update(events)).toBe(true);
    }
    expect(tracker.update(events)).toBe(false); // nothing new: the model is kept
    const whole = computeMemory(events);
    expect(tracker.model()).toEqual(whole);
    expect(whole.allocations.toArray().every((a) => a.t1 === a.t0 + 5)).toBe(true);
    expect(whole.series.map((s) => s.peak)).toEqual([198, 199]);
  });

  it('starts over, sorted, when an event older than those folded in arrives', () => {
    const events = new EventColumns();
    const tracker = new MemoryTracker();
    events.appendLists(pairs(10, 10));
    tracker.update(events);
    events.appendLists(pairs(0, 10)); // earlier in time than everything before
    tracker.update(events);
    expect(tracker.model()).toEqual(computeMemory(events));
    expect(tracker.model().series[0].t[0]).toBe(0);
  });

  it('reads only the new events: the hundredth batch as many as the second', () => {
    const events = new EventColumns();
    const tracker = new MemoryTracker();
    const reads: number[] = [];
    for (let batch = 0; batch < 100; batch++) {
      events.appendLists(pairs(batch * 500, 500));
      const counted = countingKinds(events);
      tracker.update(counted.view);
      reads.push(counted.reads());
    }
    expect(events.count).toBe(100_000);
    // a batch: 500 ALLOC and 500 FREE events, each kind read when found and when folded in
    expect(reads[1]).toBeLessThanOrEqual(2 * 1000);
    expect(reads[99]).toBe(reads[1]); // not the 99,000 events folded in before
    expect(tracker.model()).toEqual(computeMemory(events));
  });
});

describe('computeMemory', () => {
  it('sums ALLOC minus FREE per device, in time order', () => {
    const { series } = computeMemory(storeOf().events);
    expect(series.map((s) => s.device)).toEqual([0, 1, 2]);
    const [cpu, gpu0, gpu1] = series;
    expect(Array.from(cpu.t)).toEqual([0, 40]);
    expect(Array.from(cpu.bytes)).toEqual([100, 0]); // the FREE without bytes frees its ALLOC's
    expect(Array.from(gpu0.t)).toEqual([10, 10, 30, 100]);
    expect(Array.from(gpu0.bytes)).toEqual([400, 700, 400, 0]);
    expect(Array.from(gpu1.bytes)).toEqual([200]);
  });

  it('finds each device peak and when it happened', () => {
    const { series } = computeMemory(storeOf().events);
    expect(series.map((s) => [s.peak, s.peakTime])).toEqual([
      [100, 0],
      [700, 10],
      [200, 40],
    ]);
  });

  it('pairs FREEs with ALLOCs into tensor lifetimes', () => {
    const { allocations } = computeMemory(storeOf().events);
    const byNode = new Map(allocations.toArray().map((a) => [a.node, a]));
    expect(byNode.get(0)).toMatchObject({ t0: 0, t1: 40, bytes: 100, device: 0 });
    expect(byNode.get(3)).toMatchObject({ t0: 10, t1: 30, bytes: 300, device: 1 });
    expect(byNode.get(2)?.t1).toBe(Infinity); // never freed
  });

  it("pairs an empty output's FREE with its empty ALLOC, not a full sibling's", () => {
    // FusedBatchNormV3: a 64-byte output and an empty one, freed empty first.
    const events: MemoryEvents = {
      count: 4,
      kind: Int8Array.from([EventKind.ALLOC, EventKind.ALLOC, EventKind.FREE, EventKind.FREE]),
      t0: Float64Array.from([0, 0, 10, 20]),
      node: Int32Array.from([5, 5, 5, 5]),
      device: Int16Array.from([0, 0, 0, 0]),
      bytes: Float64Array.from([64, 0, 0, 64]),
    };
    const { series, allocations } = computeMemory(events);
    expect(Array.from(series[0].bytes)).toEqual([64, 64, 64, 0]);
    expect(allocations.toArray().map((a) => [a.bytes, a.t1])).toEqual([
      [64, 20],
      [0, 10],
    ]);
  });

  it('frees nothing for a FREE whose ALLOC is not held, and never goes below zero', () => {
    // A loop's oldest events rolled out: the first FREE's ALLOC is gone.
    const events: MemoryEvents = {
      count: 3,
      kind: Int8Array.from([EventKind.FREE, EventKind.ALLOC, EventKind.FREE]),
      t0: Float64Array.from([5, 10, 20]),
      node: Int32Array.from([1, 2, 2]),
      device: Int16Array.from([0, 0, 0]),
      bytes: Float64Array.from([16, 64, 64]),
    };
    const { series } = computeMemory(events);
    expect(Array.from(series[0].bytes)).toEqual([0, 64, 0]);
  });

  it('sorts events that arrive out of time order', () => {
    const events: MemoryEvents = {
      count: 3,
      kind: Int8Array.from([EventKind.FREE, EventKind.ALLOC, EventKind.ALLOC]),
      t0: Float64Array.from([50, 10, 20]),
      node: Int32Array.from([1, 1, 2]),
      device: Int16Array.from([0, 0, 0]),
      bytes: Float64Array.from([0, 64, 32]),
    };
    const { series } = computeMemory(events);
    expect(Array.from(series[0].t)).toEqual([10, 20, 50]);
    expect(Array.from(series[0].bytes)).toEqual([64, 96, 32]);
  });
});

describe('downsampleSeries', () => {
  it('keeps at most maxPoints and always the peak', () => {
    const n = 100_000;
    const t = new Float64Array(n);
    const v = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      t[i] = i * 7;
      v[i] = 1000 + Math.sin(i / 50) * 500 + (i % 13);
    }
    v[54_321] = 1e6; // a one-event spike
    const out = downsampleSeries(t, v);
    expect(out.t.length).toBeLessThanOrEqual(MAX_POINTS);
    expect(out.t.length).toBeGreaterThan(MAX_POINTS / 2);
    expect(Math.max(...out.values)).toBe(1e6);
    expect(out.t[out.values.indexOf(1e6)]).toBe(54_321 * 7);
    expect(out.t[0]).toBe(0);
    expect(out.t[out.t.length - 1]).toBe((n - 1) * 7);
    for (let i = 1; i < out.t.length; i++) {
      expect(out.t[i]).toBeGreaterThanOrEqual(out.t[i - 1]);
    }
  });

  it('leaves short series alone, and copes with all events at one time', () => {
    const t = Float64Array.from([1, 2, 3]);
    expect(downsampleSeries(t, t).t).toBe(t);
    const same = new Float64Array(5000).fill(5);
    const values = Float64Array.from({ length: 5000 }, (_, i) => i);
    const out = downsampleSeries(same, values, 100);
    expect(out.t.length).toBeLessThanOrEqual(100);
    expect(Math.max(...out.values)).toBe(4999);
  });

  it('keeps the peak of a computed series past the limit', () => {
    const n = 10_000;
    const kinds: number[] = [];
    const t0: number[] = [];
    const nodes: number[] = [];
    const bytes: number[] = [];
    for (let i = 0; i < n; i++) {
      kinds.push(EventKind.ALLOC, EventKind.FREE);
      t0.push(i * 10, i * 10 + 5);
      nodes.push(i, i);
      bytes.push(i === 7777 ? 5000 : 100, 0);
    }
    const events: MemoryEvents = {
      count: 2 * n,
      kind: Int8Array.from(kinds),
      t0: Float64Array.from(t0),
      node: Int32Array.from(nodes),
      device: new Int16Array(2 * n),
      bytes: Float64Array.from(bytes),
    };
    const [series] = computeMemory(events).series;
    expect(series.points).toBe(2 * n);
    expect(series.t.length).toBeLessThanOrEqual(MAX_POINTS);
    expect(series.peak).toBe(5000);
    expect(series.peakTime).toBe(77_770);
    expect(Math.max(...series.bytes)).toBe(5000);
  });
});

describe('liveTensorsAt', () => {
  it('lists the largest tensors allocated and not yet freed', () => {
    const { allocations } = computeMemory(storeOf().events);
    expect(liveTensorsAt(allocations, 20).map((a) => [a.node, a.bytes])).toEqual([
      [1, 400],
      [3, 300],
      [0, 100],
    ]);
    // At 40 node 0 is freed and node 2 allocated; node 3 was freed at 30.
    expect(liveTensorsAt(allocations, 40).map((a) => a.node)).toEqual([1, 2]);
    expect(liveTensorsAt(allocations, 20, 1).map((a) => a.node)).toEqual([1]);
    expect(liveTensorsAt(allocations, 20, 5, 0).map((a) => a.node)).toEqual([0]);
    expect(liveTensorsAt(allocations, -1)).toEqual([]);
  });
});

describe('card memory (NVML readings)', () => {
  it('builds a time-ordered series per card, apart from the ALLOC/FREE sums', () => {
    const plain = computeMemory(storeOf().events);
    const model = computeMemory(PlacementStore.fromDocument(withCards()).events);
    expect(plain.cards).toEqual([]);
    // The op series are what they were without the card rows: their bytes are never summed in.
    expect(model.series).toEqual(plain.series);
    expect(model.allocations).toEqual(plain.allocations);
    expect(model.cards).toHaveLength(1);
    const [card] = model.cards;
    expect(card.device).toBe(1);
    expect(Array.from(card.t)).toEqual([0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100]);
    expect(Array.from(card.bytes)).toEqual([
      ...Array<number>(5).fill(2 * GiB),
      ...Array<number>(6).fill(3 * GiB),
    ]);
    expect([card.peak, card.peakTime, card.points]).toEqual([3 * GiB, 50, 11]);
  });

  it('keeps one series per card, sorted by device', () => {
    const events: MemoryEvents = {
      count: 4,
      kind: new Int8Array(4).fill(EventKind.CARD_MEMORY),
      t0: Float64Array.from([5, 5, 15, 15]),
      node: new Int32Array(4).fill(-1),
      device: Int16Array.from([4, 0, 4, 0]),
      bytes: Float64Array.from([40, 10, 41, 11]),
    };
    const { series, cards } = computeMemory(events);
    expect(series).toEqual([]); // no op memory series from card readings
    expect(cards.map((c) => [c.device, Array.from(c.bytes)])).toEqual([
      [0, [10, 11]],
      [4, [40, 41]],
    ]);
  });

  it('downsamples thousands of samples past MAX_POINTS and keeps the peak', () => {
    const n = 20_000;
    const kind = new Int8Array(n).fill(EventKind.CARD_MEMORY);
    const t0 = Float64Array.from({ length: n }, (_, i) => i * 10_000_000); // every 10 ms
    const bytes = Float64Array.from({ length: n }, (_, i) => GiB + (i % 97) * 1024);
    bytes[12_345] = 70 * GiB; // one sample's spike
    const events: MemoryEvents = {
      count: n,
      kind,
      t0,
      node: new Int32Array(n).fill(-1),
      device: new Int16Array(n),
      bytes,
    };
    const tracker = new MemoryTracker();
    tracker.update({ ...events, dropped: 0, generation: 0 });
    const [card] = tracker.model().cards;
    expect(card.points).toBe(n);
    expect(card.t.length).toBeLessThanOrEqual(MAX_POINTS);
    expect(card.t.length).toBeGreaterThan(MAX_POINTS / 2);
    expect(Math.max(...card.bytes)).toBe(70 * GiB);
    expect(card.t[card.bytes.indexOf(70 * GiB)]).toBe(12_345 * 10_000_000);
    expect([card.peak, card.peakTime]).toEqual([70 * GiB, 12_345 * 10_000_000]);
    expect(card.t[0]).toBe(0);
    expect(card.t[card.t.length - 1]).toBe((n - 1) * 10_000_000);
    // The reading at a time is looked up at full resolution, not in the downsampled series.
    expect(tracker.cardReadingAt(0, 777 * 10_000_000 + 5)).toBe(bytes[777]);
    expect(tracker.cardReadingAt(0, -1)).toBeNull();
    expect(tracker.cardReadingAt(3, 0)).toBeNull();
  });

  it('folds in streamed samples, late ones too, to the model of all of them', () => {
    const events = new EventColumns();
    const tracker = new MemoryTracker();
    const doc = withCards();
    events.appendLists(doc.events);
    expect(tracker.update(events)).toBe(true);
    // Only card samples arrive: the model changes (one is older than the newest folded in).
    events.appendLists(columns([cardRow(110, 1, 4 * GiB), cardRow(55, 1, 5 * GiB)]));
    expect(tracker.update(events)).toBe(true);
    expect(tracker.update(events)).toBe(false);
    const whole = computeMemory(events);
    expect(tracker.model()).toEqual(whole);
    expect(Array.from(whole.cards[0].t)).toEqual([
      0, 10, 20, 30, 40, 50, 55, 60, 70, 80, 90, 100, 110,
    ]);
    expect(whole.cards[0].peak).toBe(5 * GiB);
    expect(tracker.cardReadingAt(1, 57)).toBe(5 * GiB);
    expect(tracker.cardReadingAt(1, 60)).toBe(3 * GiB);
  });
});
