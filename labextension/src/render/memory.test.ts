// @vitest-environment jsdom
import { afterEach, describe, expect, it } from 'vitest';
import {
  computeMemory,
  downsampleSeries,
  LEGEND_ENTRY_PAD_PX,
  legendRows,
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
import { EventKind, type PlacementDocument } from './types';
import { ViewState } from './viewstate';
import { EVIL, fakePlotly, panelsDocument } from './__tests__/panels-fixture';
import { EVERYTHING } from './__tests__/follow';
import { TimingPanel } from './timing';
import { tickCharPx } from './timewindow';
import { columns, countingKinds, device, node, type EventRow } from './__tests__/fixtures';

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

describe('limitDrawn', () => {
  it('draws a limit within 4x of the peak only', () => {
    expect(limitDrawn(600, 200)).toBe(true);
    expect(limitDrawn(800, 200)).toBe(true);
    expect(limitDrawn(801, 200)).toBe(false);
    expect(limitDrawn(0, 200)).toBe(false);
    expect(limitDrawn(100, 0)).toBe(false);
  });
});

describe('legendRows', () => {
  it('wraps entries onto a new row when the next one would pass the width', () => {
    const entry = 'GPU:0'.length * tickCharPx(11) + LEGEND_ENTRY_PAD_PX; // text, symbol, gap
    expect(legendRows(['GPU:0'], 100)).toBe(1);
    expect(legendRows(['GPU:0', 'GPU:1'], 2 * entry)).toBe(1);
    expect(legendRows(['GPU:0', 'GPU:1'], 2 * entry - 1)).toBe(2);
    expect(legendRows(['a very long legend entry indeed'], 50)).toBe(1); // one entry: one row
  });
});

/** Eight 80 GiB GPUs each holding 1 KiB, as a model stepped on eight H100s. */
function eightGpus(): PlacementDocument {
  const gpus = Array.from({ length: 8 }, (_, i) =>
    device(i, `/job:localhost/replica:0/task:0/device:GPU:${i}`, {
      kind: 'simulated',
      memory_limit: 80 * 2 ** 30,
    }),
  );
  const rows = gpus.flatMap((_, i): EventRow[] => [
    [EventKind.OP, 10 * i, 10 * i + 5, i, i, -1, 1024, 2, 0, -1],
    [EventKind.ALLOC, 10 * i, 10 * i, i, i, -1, 1024, 2, 0, -1],
  ]);
  return {
    schema: 'placeviz/1',
    origin_ns: 0,
    devices: gpus,
    nodes: gpus.map((_, i) => node(i, `op${i}`, { device: i, type: 'MatMul' })),
    edges: [],
    runs: [{ id: 0, t0: 0, t1: 100, status: 'ok', error: null, fetches: [] }],
    events: columns([[EventKind.RUN, 0, 100, -1, -1, -1, 0, 2, 0, -1], ...rows]),
  };
}

describe('MemoryPanel', () => {
  it('names the devices only in the legend when their limits would take more than two rows', async () => {
    for (const [width, named] of [
      [2400, true],
      [500, false],
    ] as const) {
      const { plotly, calls } = fakePlotly();
      setPlotlyLoader(() => Promise.resolve(plotly));
      const parent = document.createElement('div');
      const panel = new MemoryPanel(
        parent,
        PlacementStore.fromDocument(eightGpus()),
        new ViewState(),
        {
          throttleMs: 0,
        },
      );
      const plot = parent.querySelector<HTMLElement>('.placeviz-plot')!;
      Object.defineProperty(plot, 'clientWidth', { value: width });
      panel.refresh();
      await tick();
      const react = calls.filter((c) => c.method === 'react').pop()!;
      const names = (react.args[1] as { name: string; showlegend?: boolean }[])
        .filter((t) => t.showlegend !== false)
        .map((t) => t.name);
      const expected = Array.from({ length: 8 }, (_, i) =>
        named ? `GPU:${i} · limit 80.0 GiB` : `GPU:${i}`,
      );
      expect(names).toEqual(expected);
      // The line under the plot names every limit either way.
      const note = parent.querySelector('.placeviz-panel-note')!.textContent!;
      expect(note).toContain('GPU:7 80.0 GiB');
      panel.dispose();
    }
  });

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
    expect(title.textContent).toBe('Largest live tensors at 35 ns since run 1 started');
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

/** A card reading (NVML) row: kind, t0 = t1, node -1, device, stream = device, bytes, clock. */
const cardRow = (t: number, device: number, bytes: number, run = 0): EventRow => [
  EventKind.CARD_MEMORY,
  t,
  t,
  -1,
  device,
  device,
  bytes,
  1,
  run,
  -1,
];

const GiB = 1024 ** 3;

/**
 * The panels document with GPU:0's card (device 1) read every 10 ns during the run, out of
 * order as a sampler thread may record them: 2 GiB at the start, 3 GiB from 50 ns on.
 */
function withCards() {
  const doc = panelsDocument();
  const rows = [cardRow(100, 1, 3 * GiB), cardRow(0, 1, 2 * GiB)];
  for (let t = 10; t < 100; t += 10) {
    rows.push(cardRow(t, 1, t < 50 ? 2 * GiB : 3 * GiB));
  }
  const more = columns(rows);
  for (const name of Object.keys(more) as (keyof typeof more)[]) {
    doc.events[name] = [...doc.events[name], ...more[name]];
  }
  return doc;
}

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

describe('MemoryPanel with card readings', () => {
  type Trace = {
    name: string;
    mode: string;
    yaxis?: string;
    x: number[];
    y: number[];
    line?: { color?: string; dash?: string };
    hovertemplate?: string;
  };
  type Layout = {
    yaxis: { title: { text: string } };
    yaxis2?: { title: { text: string }; side: string; overlaying: string; ticksuffix: string };
    margin: { l: number; r: number };
  };
  const drawn = async (doc = withCards()) => {
    const { plotly, calls } = fakePlotly();
    setPlotlyLoader(() => Promise.resolve(plotly));
    const parent = document.createElement('div');
    const panel = new MemoryPanel(parent, PlacementStore.fromDocument(doc), new ViewState(), {
      throttleMs: 0,
    });
    await tick();
    const react = calls.filter((c) => c.method === 'react').pop()!;
    return { panel, traces: react.args[1] as Trace[], layout: react.args[2] as Layout };
  };

  it('draws nothing new without card readings: no right axis, no dotted line', async () => {
    const { panel, traces, layout } = await drawn(panelsDocument());
    expect(layout.yaxis2).toBeUndefined();
    expect('yaxis2' in layout).toBe(false);
    expect(layout.margin.r).toBe(12);
    expect(traces.some((t) => t.yaxis !== undefined || t.line?.dash === 'dot')).toBe(false);
    expect(panel.element.dataset.cards).toBeUndefined();
    expect(panel.element.querySelector('.placeviz-card-reading')).toBeNull();
    panel.dispose();
  });

  it("draws each card dotted on a right axis of its own, in its device's colour", async () => {
    const { panel, traces, layout } = await drawn();
    expect(panel.element.dataset.cards).toBe('1');
    expect(layout.yaxis2).toMatchObject({
      title: { text: 'card memory (NVML)' },
      side: 'right',
      overlaying: 'y',
      ticksuffix: ' GiB',
    });
    expect(layout.margin.r).toBeGreaterThan(12);
    // The op curves keep their own scale on the left (bytes, not GiB).
    expect(layout.yaxis.title.text).toBe('B');
    const cards = traces.filter((t) => t.yaxis === 'y2');
    expect(cards.map((t) => t.name)).toEqual(["GPU:0's card · NVML reading"]);
    const [card] = cards;
    expect(card.line?.dash).toBe('dot');
    const gpu0 = traces.find((t) => t.name.startsWith('GPU:0 ') && t.mode === 'lines')!;
    expect(card.line?.color).toBe(gpu0.line?.color);
    expect(card.y).toEqual([2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3]); // GiB
    expect(card.hovertemplate).toContain('card (NVML): %{y:.3~f} GiB used');
    expect(traces.filter((t) => t.yaxis === undefined).map((t) => t.name)).toEqual(
      (await drawn(panelsDocument())).traces.map((t) => t.name),
    );
    panel.dispose();
  });

  it('names the card reading at the time under the pointer', async () => {
    const { panel } = await drawn();
    const plot = panel.element.querySelector('.placeviz-plot') as HTMLElement & {
      _fullLayout?: unknown;
    };
    plot._fullLayout = {
      xaxis: { _offset: 0, _length: 100, p2l: (px: number) => px * 1e-6 },
      yaxis: { _offset: 0, _length: 100, p2l: (py: number) => py },
    };
    const line = () => panel.element.querySelector<HTMLElement>('.placeviz-card-reading')!;
    plot.dispatchEvent(new MouseEvent('mousemove', { clientX: 35, clientY: 50 }));
    expect(line().textContent).toBe("GPU:0's card (NVML): 2.00 GiB used");
    plot.dispatchEvent(new MouseEvent('mousemove', { clientX: 55, clientY: 50 }));
    expect(line().textContent).toBe("GPU:0's card (NVML): 3.00 GiB used");
    expect(panel.element.querySelector('.placeviz-live-title')!.textContent).toBe(
      'Largest live tensors at 55 ns since run 1 started',
    );
    // Without a pointer: the reading at the op peak (700 B on GPU:0 at 10 ns).
    plot.dispatchEvent(new MouseEvent('mouseleave'));
    expect(line().textContent).toBe("GPU:0's card (NVML): 2.00 GiB used");
    panel.dispose();
  });

  it('escapes device names in the card legend and hover text', async () => {
    const doc = withCards();
    doc.devices[1].name = '/job:localhost/replica:0/task:0/device:<b>:0';
    const { panel, traces } = await drawn(doc);
    const card = traces.find((t) => t.yaxis === 'y2')!;
    expect(card.name).toBe("&lt;b&gt;:0's card · NVML reading");
    expect(card.hovertemplate).not.toContain('<b>');
    panel.dispose();
  });

  it('names the physical card in the hover text when it differs from the device', async () => {
    const same = (await drawn()).traces.find((t) => t.yaxis === 'y2')!;
    expect(same.hovertemplate).toContain("<extra>GPU:0's card</extra>");
    const doc = withCards();
    doc.devices[1].parent = '/physical_device:GPU:1'; // GPU:0 carved from the second card
    const { panel, traces } = await drawn(doc);
    const card = traces.find((t) => t.yaxis === 'y2')!;
    expect(card.name).toBe("GPU:0's card · NVML reading");
    expect(card.hovertemplate).toContain("<extra>GPU:0's card (GPU:1)</extra>");
    panel.dispose();
  });

  it('draws card readings alone, without ALLOC/FREE events', async () => {
    const doc = withCards();
    const keep = doc.events.kind.map((k) => k === EventKind.CARD_MEMORY);
    for (const name of Object.keys(doc.events) as (keyof typeof doc.events)[]) {
      doc.events[name] = doc.events[name].filter((_, i) => keep[i]);
    }
    const { panel, traces, layout } = await drawn(doc);
    expect(panel.element.dataset.series).toBe('0');
    expect(traces.map((t) => t.name)).toEqual(["GPU:0's card · NVML reading"]);
    expect(layout.yaxis2?.title.text).toBe('card memory (NVML)');
    expect(panel.element.querySelector('.placeviz-panel-note')!.textContent).toContain('NVML');
    // Listed at the highest reading's time.
    expect(panel.element.querySelector('.placeviz-live-title')!.textContent).toBe(
      'Card memory at 50 ns since the first event (peak)',
    );
    panel.dispose();
  });

  it("widens the timeline's right margin to the card axis's, so the x axes align", async () => {
    const { plotly, calls } = fakePlotly();
    setPlotlyLoader(() => Promise.resolve(plotly));
    const store = PlacementStore.fromDocument(withCards());
    const state = new ViewState();
    const parent = document.createElement('div');
    const memory = new MemoryPanel(parent, store, state, { throttleMs: 0 });
    const timing = new TimingPanel(parent, store, state, { throttleMs: 0 });
    memory.onPlotRight((px) => timing.alignRight(px));
    await tick();
    await tick();
    const margin = (panel: { element: HTMLElement }) => {
      const plot = panel.element.querySelector('.placeviz-plot');
      const react = calls.filter((c) => c.method === 'react' && c.args[0] === plot).pop()!;
      return (react.args[2] as Layout).margin.r;
    };
    expect(margin(memory)).toBeGreaterThan(12);
    expect(margin(timing)).toBe(margin(memory));
    memory.dispose();
    timing.dispose();
  });
});
