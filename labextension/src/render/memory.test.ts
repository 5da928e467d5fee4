// @vitest-environment jsdom
import { afterEach, describe, expect, it } from 'vitest';
import {
  computeMemory,
  downsampleSeries,
  limitDrawn,
  liveTensorsAt,
  MAX_POINTS,
  MemoryPanel,
  MemoryTracker,
  type MemoryEvents,
} from './memory';
import { EventColumns } from './events';
import { setPlotlyLoader } from './plotly';
import { PlacementStore } from './store';
import { EventKind } from './types';
import { ViewState } from './viewstate';
import { EVIL, fakePlotly, panelsDocument } from './__tests__/panels-fixture';
import { EVERYTHING } from './__tests__/follow';
import { TimingPanel } from './timing';
import { columns } from './__tests__/fixtures';

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

function storeOf() {
  return PlacementStore.fromDocument(panelsDocument());
}

afterEach(() => setPlotlyLoader(null));

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

  it('costs the new events: the hundredth batch folds in about as fast as the second', () => {
    const events = new EventColumns();
    const tracker = new MemoryTracker();
    const costs: number[] = [];
    for (let batch = 0; batch < 100; batch++) {
      events.appendLists(pairs(batch * 500, 500));
      const started = performance.now();
      tracker.update(events);
      costs.push(performance.now() - started);
    }
    expect(events.count).toBe(100_000);
    const early = Math.max(...costs.slice(1, 6));
    const late = Math.min(...costs.slice(95));
    expect(late).toBeLessThan(Math.max(5, early * 4));
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

describe('limitDrawn', () => {
  it('draws a limit within 4x of the peak only', () => {
    expect(limitDrawn(600, 200)).toBe(true);
    expect(limitDrawn(800, 200)).toBe(true);
    expect(limitDrawn(801, 200)).toBe(false);
    expect(limitDrawn(0, 200)).toBe(false);
    expect(limitDrawn(100, 0)).toBe(false);
  });
});

describe('MemoryPanel', () => {
  it('reports the devices drawn and lists live tensors as text', async () => {
    const { plotly, calls } = fakePlotly();
    setPlotlyLoader(() => Promise.resolve(plotly));
    const parent = document.createElement('div');
    const state = new ViewState();
    const panel = new MemoryPanel(parent, storeOf(), state, { throttleMs: 0 });
    const root = parent.querySelector<HTMLElement>('.placeviz-memory')!;
    expect(root.dataset.series).toBe('3');

    // Without a time the list is for the peak (GPU:0, 700 bytes at 10 ns).
    const items = () => [...root.querySelectorAll('.placeviz-live-tensors li')];
    expect(items().map((li) => li.textContent)).toEqual([
      '400 B · b (MatMul) · GPU:0',
      `300 B · ${EVIL} (Evil) · GPU:0`,
      '100 B · a (Const) · CPU:0',
    ]);
    expect(root.querySelector('img')).toBeNull();

    state.set({ time: 40 });
    expect(items().map((li) => li.getAttribute('data-node'))).toEqual(['1', '2']);
    items()[0].dispatchEvent(new MouseEvent('click'));
    expect(state.get('selected')).toBe(1);

    await tick();
    const react = calls.find((c) => c.method === 'react')!;
    const traces = react.args[1] as { name: string; line?: { dash?: string } }[];
    // The limit of GPU:1 (600 B, peak 200 B) is drawn dashed; GPU:0's 1 GiB is named instead.
    expect(traces.some((t) => t.line?.dash === 'dash' && t.name === 'GPU:1 limit')).toBe(true);
    expect(traces.map((t) => t.name)).toContain('GPU:0 · limit 1.00 GiB');
    expect(root.querySelector('.placeviz-panel-note')!.textContent).toContain('GPU:0 1.00 GiB');
    const layout = react.args[2] as { shapes: { x0: number }[] };
    expect(layout.shapes[0].x0).toBeCloseTo(40 / 1e6);

    state.set({ time: 20 });
    const relayout = calls.filter((c) => c.method === 'relayout').pop()!;
    expect((relayout.args[1] as { shapes: { x0: number }[] }).shapes[0].x0).toBeCloseTo(20 / 1e6);

    panel.dispose();
    expect(parent.querySelector('.placeviz-memory')).toBeNull();
    expect(calls.some((c) => c.method === 'purge')).toBe(true);
  });

  it('lists the live tensors at the time under the pointer', async () => {
    const { plotly } = fakePlotly();
    setPlotlyLoader(() => Promise.resolve(plotly));
    const parent = document.createElement('div');
    const panel = new MemoryPanel(parent, storeOf(), new ViewState(), { throttleMs: 0 });
    await tick();
    const plot = panel.element.querySelector('.placeviz-plot') as HTMLElement & {
      _fullLayout?: unknown;
    };
    // What plotly leaves on the plot div: x axis 0..100 px <-> 0..1e-4 ms (0..100 ns).
    plot._fullLayout = {
      xaxis: { _offset: 0, _length: 100, p2l: (px: number) => px * 1e-6 },
      yaxis: { _offset: 0, _length: 100, p2l: (py: number) => py },
    };
    plot.dispatchEvent(new MouseEvent('mousemove', { clientX: 35, clientY: 50 }));
    const title = panel.element.querySelector('.placeviz-live-title')!;
    expect(title.textContent).toBe('Largest live tensors at 35 ns');
    const nodes = () =>
      [...panel.element.querySelectorAll('.placeviz-live-tensors li')].map((li) =>
        li.getAttribute('data-node'),
      );
    expect(nodes()).toEqual(['1', '0']);
    plot.dispatchEvent(new MouseEvent('mouseleave'));
    expect(title.textContent).toContain('(peak)');
  });

  it('escapes op names in the hover text it hands plotly', async () => {
    const { plotly, calls } = fakePlotly();
    setPlotlyLoader(() => Promise.resolve(plotly));
    const doc = panelsDocument();
    doc.devices[1].name = '/job:localhost/replica:0/task:0/device:<b>:0';
    const parent = document.createElement('div');
    new MemoryPanel(parent, PlacementStore.fromDocument(doc), new ViewState(), { throttleMs: 0 });
    await tick();
    const traces = calls.find((c) => c.method === 'react')!.args[1] as { name: string }[];
    expect(traces.some((t) => t.name.includes('&lt;b&gt;:0'))).toBe(true);
    expect(traces.some((t) => t.name.includes('<b>'))).toBe(false);
  });

  it('shows a note and no plot when plotly cannot load', async () => {
    setPlotlyLoader(() => Promise.reject(new Error('no plotly here')));
    const parent = document.createElement('div');
    new MemoryPanel(parent, storeOf(), new ViewState(), { throttleMs: 0 });
    await tick();
    await tick();
    expect(parent.querySelector('.placeviz-memory')!.getAttribute('data-series')).toBe('3');
    expect(parent.querySelector('.placeviz-panel-note')!.textContent).toContain('no plotly here');
  });

  it('follows the store when events are reset and appended', () => {
    setPlotlyLoader(() => Promise.reject(new Error('not needed')));
    const store = storeOf();
    const parent = document.createElement('div');
    const panel = new MemoryPanel(parent, store, new ViewState(), { throttleMs: 0 });
    store.reset();
    panel.update(EVERYTHING);
    expect(panel.element.dataset.series).toBe('0');
    expect(panel.element.querySelector('.placeviz-panel-note')!.textContent).toContain(
      'No memory events',
    );
    store.appendLists(panelsDocument().events);
    panel.update(EVERYTHING);
    expect(panel.element.dataset.series).toBe('3');
  });

  it("shares the timeline's collapsed time axis: same window, ticks and display times", async () => {
    const { plotly, calls } = fakePlotly();
    setPlotlyLoader(() => Promise.resolve(plotly));
    // Two runs 10 ms apart, each 100 ns long: a linear axis would squeeze each into a sliver.
    const doc = panelsDocument();
    const gap = 10_000_000;
    const rows = panelsDocument().events;
    const later = columns(
      rows.kind.map((_, i) => [
        rows.kind[i],
        rows.t0[i] + gap,
        rows.t1[i] + gap,
        rows.node[i],
        rows.device[i],
        rows.stream[i],
        rows.bytes[i],
        rows.source[i],
        1,
        rows.peer[i],
      ]) as [number, number, number, number, number, number, number, number, number, number][],
    );
    for (const name of Object.keys(later) as (keyof typeof later)[]) {
      doc.events[name] = [...doc.events[name], ...later[name]];
    }
    doc.runs.push({ id: 1, t0: 5000 + gap, t1: 5100 + gap, status: 'ok', error: null });
    const store = PlacementStore.fromDocument(doc);
    const state = new ViewState();
    const parent = document.createElement('div');
    const memory = new MemoryPanel(parent, store, state, { throttleMs: 0 });
    const timing = new TimingPanel(parent, store, state, { throttleMs: 0 });
    await tick();
    const layouts = (panel: HTMLElement) => {
      const react = calls.filter((c) => c.method === 'react' && c.args[0] === panel).pop()!;
      return {
        traces: react.args[1] as { x: number[]; name: string; mode: string }[],
        xaxis: (react.args[2] as { xaxis: Record<string, unknown> }).xaxis,
        margin: (react.args[2] as { margin: { l: number } }).margin,
      };
    };
    const plotOf = (panel: { element: HTMLElement }) =>
      panel.element.querySelector<HTMLElement>('.placeviz-plot')!;
    const mem = layouts(plotOf(memory));
    const time = layouts(plotOf(timing));
    for (const key of ['range', 'tickvals', 'ticktext', 'title']) {
      expect(mem.xaxis[key], key).toEqual(time.xaxis[key]);
    }
    const range = mem.xaxis.range as [number, number];
    expect((range[1] - range[0]) * 1e6).toBeLessThan(1000); // the 10 ms gap collapsed
    // GPU:0's series steps at 10 ns and 10 ms + 10 ns; drawn at their display times.
    const axis = store.activity().timeAxis;
    const gpu0 = mem.traces.find((t) => t.name.startsWith('GPU:0') && t.mode === 'lines')!;
    expect(gpu0.x).toContain(axis.toShown(10) / 1e6);
    expect(gpu0.x).toContain(axis.toShown(gap + 10) / 1e6);
    expect(Math.max(...gpu0.x) - Math.min(...gpu0.x)).toBeLessThan(range[1] - range[0]);

    // The memory plot starts where the timeline's does.
    memory.alignLeft(183);
    await tick();
    expect(layouts(plotOf(memory)).margin.l).toBe(183);

    // The timeline's zoom: the memory plot follows it.
    timing.onWindow((window) => memory.showWindow(window));
    timing.setWindow([40, 90]);
    await tick();
    expect(layouts(plotOf(memory)).xaxis.range).toEqual([40 / 1e6, 90 / 1e6]);
    expect(layouts(plotOf(memory)).xaxis.ticktext).toEqual(layouts(plotOf(timing)).xaxis.ticktext);

    // A picked run: both show its span.
    state.set({ run: 1 });
    await tick();
    const picked = layouts(plotOf(memory)).xaxis.range as [number, number];
    expect(picked).toEqual(layouts(plotOf(timing)).xaxis.range);
    expect(picked[0] * 1e6).toBeGreaterThan(axis.toShown(gap) - 10);
    memory.dispose();
    timing.dispose();
  });
});
