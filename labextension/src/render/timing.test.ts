// @vitest-environment jsdom
import { afterEach, describe, expect, it } from 'vitest';
import { setPlotlyLoader } from './plotly';
import { PlacementStore } from './store';
import {
  barAt,
  barsOfNode,
  coalesceLane,
  computeTiming,
  TimingPanel,
  type TimingEvents,
} from './timing';
import { EventKind, TimingSource } from './types';
import { ViewState } from './viewstate';
import { EVIL, fakePlotly, panelsDocument } from './__tests__/panels-fixture';

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

function model() {
  const store = PlacementStore.fromDocument(panelsDocument());
  return computeTiming(store.events, {
    devices: store.devices,
    runs: store.runs,
    originNs: store.originNs,
  });
}

/** n OP events on 4 devices x 2 streams; a lane has a bar every 80 ns, 85 ns long (overlapping). */
function manyOps(n: number): TimingEvents {
  const events: TimingEvents = {
    count: n,
    kind: new Int8Array(n).fill(EventKind.OP),
    t0: new Float64Array(n),
    t1: new Float64Array(n),
    node: new Int32Array(n),
    device: new Int16Array(n),
    stream: new Int16Array(n),
    source: new Int8Array(n).fill(TimingSource.CLOCK),
    run: new Int32Array(n),
    peer: new Int16Array(n).fill(-1),
  };
  for (let i = 0; i < n; i++) {
    events.device[i] = i % 4;
    events.stream[i] = (i >> 2) % 2;
    events.node[i] = i % 500;
    events.t0[i] = i * 10;
    events.t1[i] = i * 10 + 85;
  }
  return events;
}

afterEach(() => setPlotlyLoader(null));

describe('computeTiming', () => {
  it('makes a lane per device and stream, then one for transfers', () => {
    const { lanes } = model();
    expect(lanes.map((l) => l.label)).toEqual([
      'CPU:0 · 10%',
      'GPU:0 stream 0 · 30%',
      'GPU:0 stream 1',
      'GPU:1 stream 0 · 60% (modeled)',
      'transfers',
    ]);
    expect(lanes.map((l) => l.end - l.start)).toEqual([1, 1, 1, 1, 1]);
    expect(lanes[4].kind).toBe('transfer');
  });

  it('counts op bars, not transfers', () => {
    const m = model();
    expect(m.opBars).toBe(4);
    expect(m.bars.t0.length).toBe(5);
  });

  it('computes utilisation as busy time (union over streams) over the runs span', () => {
    const m = model();
    expect(m.span).toBe(100);
    expect(m.utilisation.get(0)).toBeCloseTo(0.1);
    expect(m.utilisation.get(1)).toBeCloseTo(0.3); // [10,40] and [10,30] overlap
    expect(m.utilisation.get(2)).toBeCloseTo(0.6);
    expect([...m.sources.get(2)!]).toEqual([TimingSource.MODELED]);
  });

  it('falls back to run records, then to the op extent, for the span', () => {
    const doc = panelsDocument();
    const keep = doc.events.kind.map((k) => k !== EventKind.RUN);
    for (const name of Object.keys(doc.events) as (keyof typeof doc.events)[]) {
      doc.events[name] = doc.events[name].filter((_, i) => keep[i]);
    }
    doc.runs[0].t1 = 5200; // 200 ns long
    let store = PlacementStore.fromDocument(doc);
    let m = computeTiming(store.events, store);
    expect(m.span).toBe(200);
    expect(m.utilisation.get(2)).toBeCloseTo(0.3);
    doc.runs = [];
    store = PlacementStore.fromDocument(doc);
    m = computeTiming(store.events, store);
    expect(m.span).toBe(100);
  });

  it('finds the bar under a time, with a tolerance', () => {
    const m = model();
    const gpuLane = 1;
    const hit = barAt(m, gpuLane, 25);
    expect(m.bars.node[hit]).toBe(1);
    expect(barAt(m, gpuLane, 45)).toBe(-1);
    expect(m.bars.node[barAt(m, gpuLane, 45, 6)]).toBe(1);
    expect(barAt(m, 99, 25)).toBe(-1);
    expect(barsOfNode(m, 3).map((i) => m.bars.lane[i])).toEqual([2]);
    expect(barsOfNode(m, 0).map((i) => m.bars.lane[i])).toEqual([0, 4]); // the op and its transfer
  });

  it('merges bars closer than the resolution and widens thin ones', () => {
    const m = model();
    // GPU:0 stream 0 has one bar [10, 40]; at 1 ns per pixel it stays as it is.
    expect(coalesceLane(m, 1, -Infinity, Infinity, 1)).toEqual([{ device: 1, t0: [10], t1: [40] }]);
    // At 50 ns per pixel the 30 ns bar is widened to a pixel.
    expect(coalesceLane(m, 1, -Infinity, Infinity, 50)[0].t1).toEqual([60]);
    // The transfers lane groups by destination device; a range that misses it yields nothing.
    expect(coalesceLane(m, 4, 0, 100, 1)).toEqual([{ device: 1, t0: [8], t1: [12] }]);
    expect(coalesceLane(m, 4, 50, 100, 1)).toEqual([]);
  });

  it('draws 100,000 bars as about a plot width of segments', () => {
    const n = 100_000;
    const events = manyOps(n);
    const m = computeTiming(events, { devices: [], runs: [], originNs: 0 });
    const end = n * 10 + 85;
    const perLane = coalesceLane(m, 0, 0, end, end / 1000);
    expect(perLane).toHaveLength(1);
    expect(perLane[0].t0.length).toBeLessThanOrEqual(1000);
    // Zoomed in to 2,000 ns at 2 ns per pixel: the bars there, unmerged.
    const zoomed = coalesceLane(m, 0, 500_000, 502_000, 2)[0];
    expect(zoomed.t0[0]).toBeLessThanOrEqual(500_000);
    expect(zoomed.t1[zoomed.t1.length - 1]).toBeGreaterThanOrEqual(502_000);
  });

  it('handles 100,000 op events quickly', () => {
    const n = 100_000;
    const events = manyOps(n);
    const started = performance.now();
    const m = computeTiming(events, { devices: [], runs: [], originNs: 0 });
    const hits = [];
    for (let k = 0; k < 1000; k++) {
      hits.push(barAt(m, k % 8, k * 997));
    }
    const ms = performance.now() - started;
    expect(m.opBars).toBe(n);
    expect(m.lanes.length).toBe(8);
    expect(hits.every((h) => h >= 0)).toBe(true);
    expect(ms).toBeLessThan(2000);
  });
});

describe('TimingPanel', () => {
  it('sets data-bars and data-lanes, and escapes lane labels for plotly', async () => {
    const { plotly, calls } = fakePlotly();
    setPlotlyLoader(() => Promise.resolve(plotly));
    const doc = panelsDocument();
    doc.devices[1].name = `/job:localhost/replica:0/task:0/device:${EVIL}:0`;
    const parent = document.createElement('div');
    const state = new ViewState();
    const panel = new TimingPanel(parent, PlacementStore.fromDocument(doc), state, {
      throttleMs: 0,
    });
    const root = parent.querySelector<HTMLElement>('.placeviz-timing')!;
    expect(root.dataset.bars).toBe('4');
    expect(root.dataset.lanes).toBe('5');
    expect(root.querySelector('.placeviz-timing-sources')!.textContent).toContain(
      'GPU:1: modeled, simulated device',
    );
    await tick();
    const react = calls.find((c) => c.method === 'react')!;
    const layout = react.args[2] as { yaxis: { ticktext: string[] } };
    expect(layout.yaxis.ticktext[1]).toBe('&lt;img src=x onerror=alert(1)&gt;:0 stream 0 · 30%');
    // One trace per lane (the transfers lane: one per destination device).
    const traces = react.args[1] as { x: (number | null)[] }[];
    expect(traces.length).toBe(5);
    expect(traces[1].x).toEqual([10 / 1e6, 40 / 1e6, null]);

    // Hovering an op (here from another view) outlines its bars: shapes only, no restyle.
    state.set({ hovered: 3 });
    const relayout = calls.filter((c) => c.method === 'relayout').pop()!;
    const shapes = (relayout.args[1] as { shapes: Record<string, number>[] }).shapes;
    expect(shapes).toHaveLength(1);
    expect(shapes[0]).toMatchObject({ type: 'rect', y0: 2 - 0.42, y1: 2 + 0.42 });
    expect(shapes[0].x0).toBeCloseTo(10 / 1e6);
    expect(shapes[0].x1).toBeCloseTo(30 / 1e6);
    expect(calls.some((c) => c.method === 'restyle')).toBe(false);

    state.set({ time: 50 });
    const cursor = calls.filter((c) => c.method === 'relayout').pop()!;
    const withCursor = (cursor.args[1] as { shapes: { type: string; x0: number }[] }).shapes;
    expect(withCursor.map((shape) => shape.type)).toEqual(['line', 'rect']);
    expect(withCursor[0].x0).toBeCloseTo(50 / 1e6);
    panel.dispose();
    expect(parent.childElementCount).toBe(0);
  });

  it('sets state.hovered from the bar under the pointer', async () => {
    const { plotly } = fakePlotly();
    setPlotlyLoader(() => Promise.resolve(plotly));
    const parent = document.createElement('div');
    const state = new ViewState();
    const panel = new TimingPanel(parent, PlacementStore.fromDocument(panelsDocument()), state, {
      throttleMs: 0,
    });
    await tick();
    // What plotly leaves on the plot div: axes mapping pixels to data (x in ms, y in lanes).
    const plot = panel.element.querySelector('.placeviz-plot') as HTMLElement & {
      _fullLayout?: unknown;
    };
    plot._fullLayout = {
      xaxis: { _offset: 100, _length: 1000, p2l: (px: number) => (px / 1000) * 1e-4 },
      yaxis: { _offset: 0, _length: 100, p2l: (py: number) => py / 20 - 0.5 },
    };
    // x = 100 + 250 px -> 25 ns; y = 30 px -> lane 1 (GPU:0 stream 0) -> node 1.
    plot.dispatchEvent(new MouseEvent('mousemove', { clientX: 350, clientY: 30 }));
    expect(state.get('hovered')).toBe(1);
    const tooltip = panel.element.querySelector<HTMLElement>('.placeviz-tooltip')!;
    expect(tooltip.hidden).toBe(false);
    expect(tooltip.textContent).toBe('b (MatMul) · 30 ns · GPU:0 stream 0 · cuda-event');
    plot.dispatchEvent(new MouseEvent('click', { clientX: 350, clientY: 30 }));
    expect(state.get('selected')).toBe(1);
    plot.dispatchEvent(new MouseEvent('mouseleave'));
    expect(state.get('hovered')).toBeNull();
    expect(tooltip.hidden).toBe(true);
  });

  it('says so when there are no op timings', () => {
    setPlotlyLoader(() => Promise.reject(new Error('unused')));
    const doc = panelsDocument();
    doc.events = { ...doc.events, kind: doc.events.kind.map(() => EventKind.PLACEMENT) };
    const parent = document.createElement('div');
    new TimingPanel(parent, PlacementStore.fromDocument(doc), new ViewState());
    const root = parent.querySelector<HTMLElement>('.placeviz-timing')!;
    expect(root.dataset.bars).toBe('0');
    expect(root.dataset.lanes).toBe('0');
    expect(root.textContent).toContain('No op timings recorded.');
  });
});
