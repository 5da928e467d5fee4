// @vitest-environment jsdom
import { afterEach, describe, expect, it } from 'vitest';
import { LEGEND_ENTRY_PAD_PX, legendRows, limitDrawn, MemoryPanel } from './memory';
import { setPlotlyLoader } from './plotly';
import { PlacementStore } from './store';
import { EventKind, type PlacementDocument } from './types';
import { ViewState } from './viewstate';
import { EVIL, fakePlotly, panelsDocument, withCards } from './__tests__/panels-fixture';
import { EVERYTHING } from './__tests__/follow';
import { TimingPanel } from './timing';
import { tickCharPx } from './timewindow';
import { columns, device, node, type EventRow } from './__tests__/fixtures';

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

function storeOf() {
  return PlacementStore.fromDocument(panelsDocument());
}

afterEach(() => setPlotlyLoader(null));

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
    // Both panels say so (a page check allows two tick labels past collapsed gaps).
    expect([memory, timing].map((p) => p.element.dataset.gapsCollapsed)).toEqual(['true', 'true']);
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

    // A picked run: both show its span, gaps no longer collapsed.
    state.set({ run: 1 });
    await tick();
    expect([memory, timing].map((p) => p.element.dataset.gapsCollapsed)).toEqual([
      'false',
      'false',
    ]);
    const picked = layouts(plotOf(memory)).xaxis.range as [number, number];
    expect(picked).toEqual(layouts(plotOf(timing)).xaxis.range);
    expect(picked[0] * 1e6).toBeGreaterThan(axis.toShown(gap) - 10);
    memory.dispose();
    timing.dispose();
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
