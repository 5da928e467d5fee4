// @vitest-environment jsdom
import { afterEach, describe, expect, it, vi } from 'vitest';
import { setPlotlyLoader } from './plotly';
import { PlacementStore } from './store';
import { TimingPanel } from './timing';
import { COLUMN_NAMES } from './contract.gen';
import { EventKind, TimingSource } from './types';
import { ViewState } from './viewstate';
import { clusterDocument, EVIL, fakePlotly, panelsDocument } from './__tests__/panels-fixture';
import { columns, node } from './__tests__/fixtures';

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));
const parent = () => document.createElement('div');

/** A timing panel over `doc` (the panels' fixture document), redrawn without throttling. */
function timingPanel(doc = panelsDocument(), state = new ViewState()): TimingPanel {
  return new TimingPanel(parent(), PlacementStore.fromDocument(doc), state, { throttleMs: 0 });
}

afterEach(() => {
  setPlotlyLoader(null);
  vi.unstubAllGlobals();
});

/** A browser observer (`name`) stubbed: the returned function reports `entries` to the panel. */
function stubObserver<Entry>(name: string): (entries: Entry[]) => void {
  let report: ((entries: Entry[]) => void) | null = null;
  vi.stubGlobal(
    name,
    class {
      constructor(callback: (entries: Entry[]) => void) {
        report = callback;
      }
      observe() {}
      disconnect() {}
    },
  );
  return (entries) => report!(entries);
}

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
    expect(layout.yaxis.ticktext[1]).toBe(
      '&lt;img src=x onerror=alert(1)&gt;:0 stream 0 · busy 30%',
    );
    // One trace per lane (the transfers lane: one per destination device).
    const traces = react.args[1] as { mode: string; x: (number | null)[]; text?: string[] }[];
    const bars = traces.filter((t) => t.mode === 'none');
    expect(bars.length).toBe(5);
    // GPU:0's 30 ns bar, 265 px wide, as a rectangle around lane 1 (16 of its 26 px high), drawn
    // a pixel short so back-to-back bars stay apart.
    const nsPerPx = 102 / (900 - 56 - 12); // a 900 px element less its margins, before layout
    const [x0, x1, , , , end] = bars[1].x;
    expect(x0).toBeCloseTo(10 / 1e6, 12);
    expect(x1).toBeCloseTo((40 - nsPerPx) / 1e6, 12);
    expect(end).toBeNull();
    const y = (bars[1] as unknown as { y: number[] }).y;
    expect(y[0]).toBeCloseTo(1 - 8 / 26);
    expect(y[2]).toBeCloseTo(1 + 8 / 26);
    // Bars wide enough are labelled with their op's name, escaped (shortened where the bar is too
    // short for it); the plot is 832 px for 102 ns, so every bar here (10 ns: 81 px) has room.
    const labels = traces.filter((t) => t.mode === 'text').flatMap((t) => t.text ?? []);
    expect(labels.sort()).toEqual(['&lt;img src=x onerror=alert…', 'a', 'b', 'c']);
    expect(root.dataset.labelledBars).toBe('4');
    // The transfer is an arrow from CPU:0's lane to GPU:0's, with its bytes.
    const notes = (react.args[2] as { annotations: Record<string, unknown>[] }).annotations;
    expect(notes).toHaveLength(2);
    expect(notes[0]).toMatchObject({ y: 1, ay: 0, showarrow: true });
    expect(notes[1]).toMatchObject({ y: 0.5, text: '100 B', showarrow: false });
    expect(root.dataset.arrows).toBe('1');

    // Hovering an op (here from another view) outlines its bars: shapes only, no restyle.
    state.set({ hovered: 3 });
    const relayout = calls.filter((c) => c.method === 'relayout').pop()!;
    const shapes = (relayout.args[1] as { shapes: Record<string, number>[] }).shapes;
    expect(shapes).toHaveLength(1);
    expect(shapes[0]).toMatchObject({ type: 'rect', y0: 2 - 0.45, y1: 2 + 0.45 });
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

  it("keeps transfers' bytes clear of each other: one that has no free place is left out", async () => {
    const { plotly, calls } = fakePlotly();
    setPlotlyLoader(() => Promise.resolve(plotly));
    const doc = panelsDocument();
    // A transfer back from GPU:0 to the CPU while the CPU's goes out: both arrows' middles are
    // at one place, and every place along the second covers the first's bytes.
    const back = [EventKind.TRANSFER, 8, 12, 1, 0, -1, 50, TimingSource.CLOCK, 0, 1, -1, -1];
    COLUMN_NAMES.forEach((c, i) => (doc.events[c] as number[] | undefined)?.push(back[i]));
    const parent = document.createElement('div');
    new TimingPanel(parent, PlacementStore.fromDocument(doc), new ViewState(), { throttleMs: 0 });
    await tick();
    const react = calls.filter((c) => c.method === 'react').pop()!;
    const notes = (react.args[2] as { annotations: Record<string, unknown>[] }).annotations;
    expect(notes.filter((n) => n.showarrow === true)).toHaveLength(2);
    expect(notes.filter((n) => n.showarrow === false).map((n) => n.text)).toEqual(['100 B']);
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
    expect(tooltip.textContent).toBe('b (MatMul) · 30 ns · GPU:0 stream 0 · run 1 · cuda-event');
    plot.dispatchEvent(new MouseEvent('click', { clientX: 350, clientY: 30 }));
    expect(state.get('selected')).toBe(1);
    plot.dispatchEvent(new MouseEvent('mouseleave'));
    expect(state.get('hovered')).toBeNull();
    expect(tooltip.hidden).toBe(true);
  });

  it('draws a cluster task’s waits hatched on its lane and says what arrived last', async () => {
    const { plotly, calls } = fakePlotly();
    setPlotlyLoader(() => Promise.resolve(plotly));
    const state = new ViewState();
    // Only w/read crosses (the other transfers would merge with it into a block).
    const doc = clusterDocument();
    const keep = doc.events.kind.map(
      (k, e) => k !== EventKind.TRANSFER || doc.events.node[e] === 0,
    );
    for (const name of Object.keys(doc.events) as (keyof typeof doc.events)[]) {
      doc.events[name] = doc.events[name].filter((_, e) => keep[e]);
    }
    const panel = timingPanel(doc, state);
    const root = panel.element;
    expect([root.dataset.bars, root.dataset.waits, root.dataset.lanes]).toEqual(['2', '1', '3']);
    expect(root.querySelector('.placeviz-timing-sources')!.textContent).toContain(
      'Hatched: a task waiting for the tensors other tasks send it.',
    );
    await tick();
    const react = calls.filter((c) => c.method === 'react').pop()!;
    const traces = react.args[1] as {
      mode: string;
      x: (number | null)[];
      y: (number | null)[];
      fillpattern?: { shape: string };
    }[];
    // The wait: a hatched rectangle on the worker's lane (1) from 5 to 60 ns, lower than a bar.
    const waits = traces.filter((t) => t.fillpattern !== undefined);
    expect(waits).toHaveLength(1);
    expect(waits[0].fillpattern!.shape).toBe('/');
    expect(waits[0].x.slice(0, 2).map((x) => x! * 1e6)).toEqual([5, 60]);
    const [low, , , high] = waits[0].y as number[];
    expect(low).toBeGreaterThan(1 - 0.5 * (16 / 26));
    expect(high).toBeLessThan(1 + 0.5 * (16 / 26));
    // The ops keep their bars: the ps task's read and the worker's matmul, one lane each.
    expect(traces.filter((t) => t.mode === 'none').length).toBe(3);

    const plot = root.querySelector('.placeviz-plot') as HTMLElement & { _fullLayout?: unknown };
    plot._fullLayout = {
      xaxis: { _offset: 0, _length: 1000, p2l: (px: number) => (px / 1000) * 1e-4 },
      yaxis: { _offset: 0, _length: 60, p2l: (py: number) => py / 20 - 0.5 },
    };
    const tooltip = root.querySelector<HTMLElement>('.placeviz-tooltip')!;
    // 300 px -> 30 ns on lane 1: the worker waiting.
    plot.dispatchEvent(new MouseEvent('mousemove', { clientX: 300, clientY: 30 }));
    expect(tooltip.hidden).toBe(false);
    expect(tooltip.textContent).toBe(
      'waiting for other tasks · 55 ns · worker/0 CPU:0 · before y (MatMul) · run 1 · ' +
        'last arrived: w/read, 8.00 KiB from ps/0 CPU:0',
    );
    expect(state.get('hovered')).toBeNull(); // a wait is no op's bar
    // 700 px -> 70 ns: the matmul.
    plot.dispatchEvent(new MouseEvent('mousemove', { clientX: 700, clientY: 30 }));
    expect(tooltip.textContent).toBe('y (MatMul) · 20 ns · worker/0 CPU:0 · run 1 · clock');
    // A tooltip that would pass the panel's right edge goes left of the pointer, whole.
    root.getBoundingClientRect = () => new DOMRect(0, 0, 800, 200);
    Object.defineProperty(tooltip, 'offsetWidth', { configurable: true, value: 300 });
    Object.defineProperty(tooltip, 'offsetHeight', { configurable: true, value: 40 });
    plot.dispatchEvent(new MouseEvent('mousemove', { clientX: 700, clientY: 30 }));
    expect([tooltip.style.left, tooltip.style.top]).toEqual(['388px', '42px']);
    // One that would pass its bottom edge goes above it.
    root.getBoundingClientRect = () => new DOMRect(0, 0, 800, 70);
    plot.dispatchEvent(new MouseEvent('mousemove', { clientX: 300, clientY: 58 }));
    expect([tooltip.style.left, tooltip.style.top]).toEqual(['312px', '6px']);
    // 500 px on the transfers lane (2): w/read crossing from the ps task to the worker.
    plot.dispatchEvent(new MouseEvent('mousemove', { clientX: 500, clientY: 50 }));
    expect(tooltip.textContent).toBe(
      'w/read (Identity) · 50 ns · 8.00 KiB ps/0 CPU:0 → worker/0 CPU:0 between tasks · run 1 · clock',
    );
  });

  it('labels one of two blocks of transfers that would cover each other', async () => {
    const { plotly, calls } = fakePlotly();
    setPlotlyLoader(() => Promise.resolve(plotly));
    // 100 thin transfers each way between the tasks at once, back to back: a
    // block per destination, both over 20..40 ns of the transfers lane.
    const doc = clusterDocument();
    const keep = doc.events.kind.map((k) => k !== EventKind.TRANSFER);
    for (const name of Object.keys(doc.events) as (keyof typeof doc.events)[]) {
      doc.events[name] = doc.events[name].filter((_, e) => keep[e]);
    }
    for (let i = 0; i < 100; i++) {
      for (const [to, from] of [
        [0, 1],
        [1, 0],
      ]) {
        const row = [EventKind.TRANSFER, 20 + i * 0.2, 20.2 + i * 0.2, 0, to, to, 4, 1, 0, from];
        COLUMN_NAMES.forEach((c, k) => (doc.events[c] as number[] | undefined)?.push(row[k]));
      }
    }
    timingPanel(doc);
    await tick();
    const react = calls.filter((c) => c.method === 'react').pop()!;
    const texts = (react.args[1] as { text?: string[] }[]).flatMap((t) => t.text ?? []);
    expect(texts.filter((t) => t.endsWith(' transfers'))).toEqual(['100 transfers']);
  });

  it('cuts lane labels to a narrow plot and shows one whole over it', async () => {
    const { plotly, calls } = fakePlotly();
    setPlotlyLoader(() => Promise.resolve(plotly));
    const panel = timingPanel();
    const plot = panel.element.querySelector('.placeviz-plot') as HTMLElement & {
      _fullLayout?: unknown;
    };
    // A 220 px plot (a 600 px JupyterLab page with its file browser open).
    Object.defineProperty(plot, 'clientWidth', { configurable: true, value: 220 });
    await tick();
    const react = calls.filter((c) => c.method === 'react').pop()!;
    const ticks = (react.args[2] as { yaxis: { ticktext: string[] } }).yaxis.ticktext;
    expect(ticks[3]).toBe('GPU:1 · 60%');
    expect(Math.max(...ticks.map((t) => t.length))).toBeLessThanOrEqual(12);
    plot._fullLayout = {
      xaxis: { _offset: 80, _length: 128, p2l: (px: number) => (px / 128) * 1e-4 },
      yaxis: { _offset: 0, _length: 100, p2l: (py: number) => py / 20 - 0.5 },
    };
    // Left of the plot area, level with lane 3: that lane's whole label.
    plot.dispatchEvent(new MouseEvent('mousemove', { clientX: 40, clientY: 70 }));
    const tooltip = panel.element.querySelector<HTMLElement>('.placeviz-tooltip')!;
    expect(tooltip.hidden).toBe(false);
    expect(tooltip.textContent).toBe('GPU:1 · busy 60% (modeled)');
  });

  it('merges bars too thin to draw apart into one "N ops" block: hover lists, click zooms', async () => {
    const { plotly, calls } = fakePlotly();
    setPlotlyLoader(() => Promise.resolve(plotly));
    // On GPU:0, 40 back-to-back 5 ns ops (2 px each at the default ~2.5 ns per pixel), then one
    // 2,000 ns op.
    const doc = panelsDocument();
    doc.nodes = Array.from({ length: 41 }, (_, i) =>
      node(i, i < 40 ? `step/op${i}` : 'long_matmul', { device: 1, type: 'Mul' }),
    );
    doc.edges = [];
    const K = EventKind;
    const rows: [number, number, number, number, number, number, number, number, number, number][] =
      [[K.RUN, 0, 2200, -1, -1, -1, 0, 1, 0, -1]];
    for (let i = 0; i < 40; i++) {
      rows.push([K.OP, i * 5, i * 5 + 5, i, 1, 0, 0, 1, 0, -1]);
    }
    rows.push([K.OP, 200, 2200, 40, 1, 0, 0, 1, 0, -1]);
    doc.events = columns(rows);
    doc.runs = [{ id: 0, t0: 5000, t1: 7200, status: 'ok', error: null }];
    const state = new ViewState();
    const panel = timingPanel(doc, state);
    await tick();
    const last = () => calls.filter((c) => c.method === 'react').pop()!;
    const traces = () => last().args[1] as { text?: string[]; opacity?: number; mode: string }[];
    expect(panel.element.dataset.mergedBlocks).toBe('1');
    expect(panel.element.dataset.labelledBars).toBe('1');
    const texts = traces().flatMap((t) => t.text ?? []);
    expect(texts).toContain('40 ops');
    expect(texts).toContain('long_matmul');
    // The block is paler than the single bar.
    const fills = traces().filter((t) => t.mode === 'none');
    expect(fills.map((t) => t.opacity).sort()).toEqual([0.6, 1]);

    const plot = panel.element.querySelector('.placeviz-plot') as HTMLElement & {
      _fullLayout?: unknown;
    };
    // 1 px = 2.5 ns from x = 100; lane 0 at y = 10.
    plot._fullLayout = {
      xaxis: { _offset: 100, _length: 900, p2l: (px: number) => ((px - 22) * 2.5) / 1e6 },
      yaxis: { _offset: 0, _length: 100, p2l: (py: number) => py / 20 - 0.5 },
    };
    plot.dispatchEvent(new MouseEvent('mousemove', { clientX: 100 + 22 + 40, clientY: 10 }));
    const tooltip = panel.element.querySelector<HTMLElement>('.placeviz-tooltip')!;
    expect(tooltip.textContent).toBe(
      '40 ops · 200 ns · GPU:0 · run 1: step/op0, step/op1, step/op2, step/op3, step/op4, … · click to zoom in',
    );
    expect(tooltip.hidden).toBe(false);
    expect(state.get('hovered')).toBeNull(); // a block highlights no one op elsewhere
    plot.dispatchEvent(new MouseEvent('click', { clientX: 100 + 22 + 40, clientY: 10 }));
    expect(state.get('selected')).toBeNull(); // it zooms instead
    const window = panel.window!;
    expect(window[0]).toBeLessThanOrEqual(0);
    expect(window[1]).toBeGreaterThanOrEqual(200);
    expect(window[1] - window[0]).toBeLessThan(220);
    await tick();
    // Zoomed in, the ops are wide enough to draw apart: a rectangle each, none merged.
    expect(panel.element.dataset.mergedBlocks).toBe('0');
    const singles = traces().filter((t) => t.mode === 'none') as unknown as { x: unknown[] }[];
    expect(singles).toHaveLength(1);
    expect(singles[0].x.length / 6).toBeGreaterThanOrEqual(40);
  });

  it('follows its container’s width: plotly resizes and the bars are drawn again', async () => {
    const observed = stubObserver<{ contentRect: { width: number } }>('ResizeObserver');
    const { plotly, calls } = fakePlotly();
    const resized: HTMLElement[] = [];
    (plotly as unknown as { Plots: unknown }).Plots = {
      resize: (el: HTMLElement) => resized.push(el),
    };
    setPlotlyLoader(() => Promise.resolve(plotly));
    const panel = timingPanel();
    await tick();
    const reacts = () => calls.filter((c) => c.method === 'react').length;
    const before = reacts();
    observed([{ contentRect: { width: 1156 } }]);
    await tick();
    await tick();
    expect(resized).toHaveLength(1);
    expect(reacts()).toBe(before + 1);
    observed([{ contentRect: { width: 1156 } }]); // the same width: nothing to do
    await tick();
    expect(resized).toHaveLength(1);
    panel.dispose();
  });

  it('draws again when it comes into view after drawing out of view (a skipped cell)', async () => {
    const seen = stubObserver<{ isIntersecting: boolean }>('IntersectionObserver');
    const { plotly, calls } = fakePlotly();
    (plotly as unknown as { Plots: unknown }).Plots = { resize: () => undefined };
    setPlotlyLoader(() => Promise.resolve(plotly));
    const panel = timingPanel();
    await tick();
    const reacts = () => calls.filter((c) => c.method === 'react').length;
    const first = reacts();
    expect(first).toBeGreaterThan(0); // drawn before the browser said where it is
    seen([{ isIntersecting: false }]);
    await tick();
    expect(reacts()).toBe(first); // out of view: nothing to draw yet
    seen([{ isIntersecting: true }]);
    await tick();
    await tick();
    const shown = reacts();
    expect(shown).toBe(first + 1); // into view: measured again
    seen([{ isIntersecting: false }]);
    seen([{ isIntersecting: true }]); // drawn in view last time: nothing to do
    await tick();
    await tick();
    expect(reacts()).toBe(shown);
    panel.dispose();
  });

  it('zooms and pans from the keyboard when focused, and shows all again with 0', async () => {
    const { plotly } = fakePlotly();
    setPlotlyLoader(() => Promise.resolve(plotly));
    const panel = timingPanel();
    await tick();
    const plot = panel.element.querySelector<HTMLElement>('.placeviz-plot')!;
    expect(plot.tabIndex).toBe(0);
    expect(plot.dataset.lmSuppressShortcuts).toBe('true');
    const all = panel.window!;
    const key = (k: string) => {
      const event = new KeyboardEvent('keydown', { key: k, cancelable: true, bubbles: true });
      plot.dispatchEvent(event);
      return event;
    };
    expect(key('w').defaultPrevented).toBe(true);
    const zoomed = panel.window!;
    expect(zoomed[1] - zoomed[0]).toBeCloseTo((all[1] - all[0]) * 0.7);
    key('d');
    const panned = panel.window!;
    expect(panned[0] - zoomed[0]).toBeCloseTo((zoomed[1] - zoomed[0]) * 0.25);
    key('s');
    key('a');
    expect(key('x').defaultPrevented).toBe(false); // not ours: left to the page
    key('0');
    expect(panel.window).toEqual(all);
    panel.dispose();
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
