// @vitest-environment jsdom
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createComparison, stepStart, type ComparisonView } from './compare';
import { deviceRows } from './comparesummary';
import { MOVED_LISTED } from './types';
import { setPlotlyLoader } from './plotly';
import { PlacementStore } from './store';
import { fakeContext, useContext } from './__tests__/canvas';
import { comparisonDocument, costPlacement } from './__tests__/compare-fixture';
import { towersDocument } from './__tests__/towers';
import { fakePlotly } from './__tests__/panels-fixture';
import { CPU, GPU0 } from './__tests__/fixtures';

const MINUS = '\u2212';
const frame = () => new Promise((resolve) => setTimeout(resolve, 60));
const texts = (root: ParentNode, selector: string) =>
  [...root.querySelectorAll(selector)].map((e) => e.textContent);

let view: ComparisonView | null = null;

beforeEach(() => {
  vi.spyOn(console, 'error').mockImplementation(() => undefined);
});
afterEach(() => {
  view?.dispose();
  view = null;
  setPlotlyLoader(null);
  document.body.replaceChildren();
});

function mount(data: unknown = comparisonDocument()): ComparisonView {
  const host = document.body.appendChild(document.createElement('div'));
  view = createComparison(host, data);
  return view;
}

describe('createComparison', () => {
  it('summarises the two placements above them, as text', () => {
    setPlotlyLoader(() => Promise.reject(new Error('no plotly in jsdom')));
    const doc = comparisonDocument();
    doc.labels = ['simple', '<b>cost</b>'];
    const { element } = mount(doc);
    expect(element.dataset).toMatchObject({ moved: '1', devices: '3', stepNs: '100,60' });
    expect(element.querySelector('.placeviz-compare-step')!.textContent).toBe(
      `step: simple 100 ns · <b>cost</b> 60 ns · ${MINUS}40 ns (${MINUS}40%)`,
    );
    expect(element.querySelector('.placeviz-compare-step')!.classList).toContain(
      'placeviz-compare-faster',
    );
    expect(element.querySelector('b')).toBeNull(); // a label is text, never HTML
    expect(texts(element, '.placeviz-compare-group')).toEqual([
      'ops',
      'busy (last run)',
      'peak memory',
    ]);
    const rows = [...element.querySelectorAll<HTMLElement>('tr.placeviz-compare-device')];
    expect(rows.map((row) => row.dataset.device)).toEqual(doc.devices.map((d) => d.device));
    // The cells are the summary's rows (their formats: comparesummary.test.ts), as text.
    expect(rows.map((row) => texts(row, 'th, td'))).toEqual(deviceRows(doc.devices));
    expect(texts(element, '.placeviz-compare-moved-op')).toEqual(['tower_0/c: GPU:1 → GPU:0']);
    expect(element.querySelector('.placeviz-compare-moved-title')!.textContent).toBe(
      '1 op moved (ringed in both graphs)',
    );
  });

  it('lists the first moved ops and counts the rest', () => {
    setPlotlyLoader(() => Promise.reject(new Error('no plotly in jsdom')));
    const doc = comparisonDocument();
    doc.moved = Array.from({ length: MOVED_LISTED + 12 }, (_, i) => ({
      name: `op_${i}`,
      from: CPU,
      to: GPU0,
    }));
    const { element } = mount(doc);
    expect(element.querySelectorAll('.placeviz-compare-moved-op')).toHaveLength(MOVED_LISTED);
    expect(texts(element, '.placeviz-compare-more')).toEqual(['and 12 more']);
    expect(element.querySelector('.placeviz-compare-moved-title')!.textContent).toBe(
      '32 ops moved (ringed in both graphs)',
    );
  });

  it('puts an inspector per placement in a column headed by its label', () => {
    setPlotlyLoader(() => Promise.reject(new Error('no plotly in jsdom')));
    const { element, inspectors } = mount();
    const columns = [...element.querySelectorAll<HTMLElement>('.placeviz-compare-column')];
    expect(columns.map((c) => c.dataset.side)).toEqual(['0', '1']);
    expect(columns.map((c) => c.querySelector('.placeviz-compare-label')!.textContent)).toEqual([
      'simple',
      'cost',
    ]);
    expect(columns.map((c) => c.querySelector('.placeviz-inspector'))).toEqual(
      inspectors.map((i) => i.element),
    );
    // The second is a prediction: only its header says so.
    expect(inspectors.map((i) => i.element.dataset.prediction)).toEqual([
      '',
      'what if the cost-model placer placed it?',
    ]);
    expect(
      inspectors.map((i) => i.element.querySelector<HTMLElement>('.placeviz-prediction')!.hidden),
    ).toEqual([true, false]);
  });

  it('rings the moved ops in both graphs, and only ops the graph has', async () => {
    setPlotlyLoader(() => Promise.reject(new Error('no plotly in jsdom')));
    useContext(fakeContext().ctx);
    const doc = comparisonDocument();
    doc.moved.push({ name: 'only_in_another_graph', from: CPU, to: GPU0 });
    doc.moved.push({ name: 'a', from: CPU, to: GPU0 });
    const { element } = mount(doc);
    await frame();
    const dags = [...element.querySelectorAll<HTMLElement>('.placeviz-dag-view')];
    expect(dags.map((d) => d.dataset.markedNodes)).toEqual(['2', '2']);
    expect(dags.map((d) => Number(d.dataset.markedBoxes))).toEqual([2, 2]);
    // The key explains the ring.
    expect(texts(dags[0], '.placeviz-key-marked .placeviz-key-text')).toEqual([
      'moved in the other placement',
    ]);
  });

  it('names every box of both graphs side by side on half a notebook page', async () => {
    setPlotlyLoader(() => Promise.reject(new Error('no plotly in jsdom')));
    const { ctx, texts } = fakeContext();
    useContext(ctx);
    // Each column's canvas on a 1,300 px page (JupyterLab's): two wide zoo graphs with their
    // initializers, gradients and optimizer, as notebook 08 compares them.
    vi.spyOn(HTMLCanvasElement.prototype, 'clientWidth', 'get').mockReturnValue(415);
    vi.spyOn(HTMLCanvasElement.prototype, 'clientHeight', 'get').mockReturnValue(352);
    const doc = comparisonDocument();
    doc.documents = [towersDocument(), towersDocument()];
    doc.moved = [{ name: 'AddN', from: GPU0, to: CPU }];
    const { element } = mount(doc);
    await frame();
    const dags = [...element.querySelectorAll<HTMLElement>('.placeviz-dag-view')];
    expect(dags).toHaveLength(2);
    for (const { dataset } of dags) {
      expect(Number(dataset.visibleNodes)).toBeGreaterThanOrEqual(12);
      expect(dataset.inView).toBe(dataset.visibleNodes);
      expect(dataset.labelsDrawn).toBe(dataset.visibleNodes);
      expect(dataset.labelOverlaps).toBe('0');
    }
    expect(texts).toEqual(expect.arrayContaining(['images', 'AddN', 'loss', 'init', 'stem']));
  });

  it('gives both timelines windows of exactly one length when the pad is not a whole ns', () => {
    setPlotlyLoader(() => Promise.reject(new Error('no plotly in jsdom')));
    const doc = comparisonDocument();
    doc.step_ns = [150, 60]; // a pad of 1.5 ns each side
    const { element } = mount(doc);
    const windows = [...element.querySelectorAll<HTMLElement>('.placeviz-timing')].map((p) =>
      p.dataset.window!.split(',').map(Number),
    );
    expect(windows.map(([from, to]) => to - from)).toEqual([154, 154]);
  });

  it('shows both timelines on one window, 0 to the longer step from each step start, and zooms them together', async () => {
    const { plotly, calls } = fakePlotly();
    setPlotlyLoader(() => Promise.resolve(plotly));
    const { element, inspectors, comparison } = mount();
    // 'cost' ran twice: its last step (first op of its last run) starts at 92 on its timeline
    // (the idle gap collapsed to 12).
    expect(comparison.stores.map(stepStart)).toEqual([0, 92]);
    const panels = [...element.querySelectorAll<HTMLElement>('.placeviz-timing')];
    const windows = () => panels.map((p) => p.dataset.window);
    // 0 .. 100 ns (the longer step) from each step start, padded by 1 ns each side.
    expect(windows()).toEqual(['-1,101', '91,193']);
    await frame();
    // The first plotly draw of each timeline already has that range.
    const plots = panels.map((p) => p.querySelector('.placeviz-plot'));
    const ranges = plots.map((plot) => {
      const draws = calls.filter((c) => c.method === 'react' && c.args[0] === plot);
      expect(draws.length).toBeGreaterThan(0);
      return (draws[0].args[2] as { xaxis: { range: number[] } }).xaxis.range.map((x) => x * 1e6);
    });
    expect(ranges[0][0]).toBeCloseTo(-1);
    expect(ranges[0][1]).toBeCloseTo(101);
    expect(ranges[1][0]).toBeCloseTo(91);
    expect(ranges[1][1]).toBeCloseTo(193);
    // Zooming one (W on the focused timeline) zooms the other around the same step offsets.
    plots[0]!.dispatchEvent(new KeyboardEvent('keydown', { key: 'w' }));
    expect(windows()).toEqual(['14,86', '106,178']);
    const [first, second] = inspectors.map((i) => i.timeline.window!);
    expect(second[0] - 92).toBeCloseTo(first[0]);
    expect(second[1] - first[1]).toBeCloseTo(92);
    // Panning the other pans the first.
    plots[1]!.dispatchEvent(new KeyboardEvent('keydown', { key: 'd' }));
    expect(windows()).toEqual(['32,104', '124,196']);
    // Show all (0) in either: the common window in both again.
    plots[1]!.dispatchEvent(new KeyboardEvent('keydown', { key: '0' }));
    expect(windows()).toEqual(['-1,101', '91,193']);
    // The memory plots follow their timelines.
    await frame();
    const memoryPlot = element.querySelectorAll('.placeviz-memory .placeviz-plot')[1];
    const memoryDraws = calls.filter((c) => c.method === 'react' && c.args[0] === memoryPlot);
    expect(memoryDraws.length).toBeGreaterThan(0);
    const range = (memoryDraws[memoryDraws.length - 1].args[2] as { xaxis: { range?: number[] } })
      .xaxis.range;
    expect(range?.map((x) => Math.round(x * 1e6))).toEqual([91, 193]);
  });

  it('gives both timelines and memory plots one x range with the same ticks, from 0 at each step', async () => {
    const { plotly, calls } = fakePlotly();
    setPlotlyLoader(() => Promise.resolve(plotly));
    const { element, inspectors } = mount();
    await frame();
    // Each side shows its last run (the step compared), on that run's clock.
    expect(inspectors.map((i) => i.state.get('run'))).toEqual([0, 1]);
    const axisOf = (plot: Element) => {
      const draws = calls.filter((c) => c.method === 'react' && c.args[0] === plot);
      const layout = draws[draws.length - 1].args[2] as {
        xaxis: { range: number[]; tickvals: number[]; ticktext: string[]; title: { text: string } };
      };
      return layout.xaxis;
    };
    for (const kind of ['timing', 'memory']) {
      const plots = [...element.querySelectorAll(`.placeviz-${kind} .placeviz-plot`)];
      const [a, b] = plots.map(axisOf);
      // One range length (the longer step's), one set of labels, at least 3 of them, from 0.
      expect(a.range[1] - a.range[0]).toBeCloseTo(b.range[1] - b.range[0], 12);
      expect(a.ticktext).toEqual(b.ticktext);
      expect(a.ticktext.length).toBeGreaterThanOrEqual(3);
      expect(a.ticktext[0]).toBe('0 ns');
      expect(new Set(a.ticktext).size).toBe(a.ticktext.length);
      // Each title names its own run and kind of time.
      expect(a.title.text).toMatch(/^time since run 1 started \(measured\)$/);
      expect(b.title.text).toMatch(/^time since run 2 started \(modeled\)$/);
    }
  });

  it('stops lining up the timelines once disposed', () => {
    setPlotlyLoader(() => Promise.reject(new Error('no plotly in jsdom')));
    const host = document.body.appendChild(document.createElement('div'));
    const comparison = createComparison(host, JSON.stringify(comparisonDocument()));
    const [first, second] = comparison.inspectors;
    comparison.dispose();
    expect(host.childElementCount).toBe(0);
    first.timeline.setWindow([0, 10]);
    expect(second.timeline.window).not.toEqual([92, 102]);
  });

  it('throws, leaving the host empty, when a document cannot be read', () => {
    const host = document.body.appendChild(document.createElement('div'));
    const broken = comparisonDocument() as unknown as { documents: unknown[] };
    broken.documents[0] = 'nope';
    expect(() => createComparison(host, broken)).toThrow(/comparison: simple:/);
    expect(() => createComparison(host, '{"labels": <script>')).toThrow();
    expect(host.childElementCount).toBe(0);
  });
});

describe('stepStart', () => {
  it("is the last run's first op on the timeline, else where activity starts", () => {
    expect(stepStart(PlacementStore.fromDocument(costPlacement()))).toBe(92);
    const doc = costPlacement();
    doc.runs = [];
    expect(stepStart(PlacementStore.fromDocument(doc))).toBe(0);
  });
});
