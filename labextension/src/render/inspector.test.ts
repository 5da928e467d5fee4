// @vitest-environment jsdom
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createInspector, progressSummary, runsSummary } from './inspector';
import { DagView } from './dag';
import { MemoryPanel } from './memory';
import { Scrubber } from './scrubber';
import { TimingPanel } from './timing';
import { setPlotlyLoader } from './plotly';
import { PlacementStore } from './store';
import { RUNS_LISTED } from './types';
import { smallDocument } from './__tests__/fixtures';

const frames = () => new Promise((resolve) => setTimeout(resolve, 60));

beforeEach(() => {
  setPlotlyLoader(() => Promise.reject(new Error('no plotly in jsdom')));
  vi.spyOn(console, 'error').mockImplementation(() => undefined);
});
afterEach(() => setPlotlyLoader(null));

describe('createInspector', () => {
  it('composes the views under one root with the contract attributes', async () => {
    const host = document.createElement('div');
    document.body.appendChild(host);
    const store = PlacementStore.fromDocument(smallDocument());
    // The host started at 1000 ms; whenever the first frame is painted, the clock reads 1042.
    const inspector = createInspector(host, store, { startedAt: 1000 });
    const clock = vi.spyOn(performance, 'now').mockReturnValue(1042);
    const root = host.querySelector<HTMLElement>('.placeviz-inspector')!;
    expect(root).toBe(inspector.element);
    for (const selector of [
      '.placeviz-legend-entry',
      'canvas.placeviz-dag',
      'input.placeviz-search',
      '.placeviz-details',
      '.placeviz-memory',
      '.placeviz-timing',
      '.placeviz-scrubber input[type=range].placeviz-time',
      '.placeviz-scrubber button.placeviz-play',
    ]) {
      expect(root.querySelector(selector), selector).not.toBeNull();
    }
    await frames();
    // measured from the host's start (not the inspector's) to the first painted frame
    expect(root.dataset.firstPaintMs).toBe('42.0');
    clock.mockRestore();
    expect(Number(root.dataset.drawn)).toBeGreaterThan(0);
    inspector.dispose();
    expect(host.childElementCount).toBe(0);
  });

  it('keeps the attributes current as the store changes, once per frame', async () => {
    const host = document.createElement('div');
    const store = PlacementStore.fromDocument(smallDocument());
    const inspector = createInspector(host, store);
    const root = inspector.element;
    expect(root.dataset.events).toBe('7');
    store.reset();
    store.appendLists({ kind: [2], t0: [500], t1: [900], node: [2], device: [2] });
    expect(root.dataset.events).toBe('7'); // not yet: applied on the next frame
    await frames();
    expect(root.dataset.events).toBe('1');
    expect(root.querySelector('.placeviz-scrubber input')!.getAttribute('max')).toBe('900');
    inspector.dispose();
  });

  it('shows the run in flight on the root and in the header', async () => {
    const host = document.createElement('div');
    const store = PlacementStore.fromDocument(smallDocument());
    const inspector = createInspector(host, store);
    const root = inspector.element;
    const header = root.querySelector('.placeviz-runs')!;
    expect(root.dataset.running).toBe('0');
    expect(root.dataset.liveRun).toBe('');
    store.setProgress({ run: 2, waiting: [2], running: [0, 1], done: [] });
    await frames();
    expect(root.dataset.running).toBe('2');
    expect(root.dataset.liveRun).toBe('2');
    expect(header.textContent).toBe('run 3 running · 0 of 3 ops done');
    store.setProgress({ run: 2, waiting: [], running: [2], done: [0, 1] });
    await frames();
    expect(root.dataset.running).toBe('1');
    expect(header.textContent).toBe('run 3 running · 2 of 3 ops done');
    // the run's RUN event ends it
    store.appendLists({ kind: [0], t0: [400], t1: [900], run: [2] });
    await frames();
    expect(root.dataset.running).toBe('0');
    expect(root.dataset.liveRun).toBe('');
    expect(root.dataset.events).toBe('8');
    expect(header.textContent).toBe(
      'run 2 of 2 · error · step 100 ns (measured) · wall clock 100 ns',
    );
    inspector.dispose();
  });

  it("is the store's one listener and hands every view one coalesced change per frame", async () => {
    const host = document.createElement('div');
    const store = PlacementStore.fromDocument(smallDocument());
    const listen = vi.spyOn(store, 'onChange');
    const updates = [DagView, MemoryPanel, TimingPanel, Scrubber].map((view) =>
      vi.spyOn(view.prototype, 'update'),
    );
    const inspector = createInspector(host, store);
    expect(listen).toHaveBeenCalledTimes(1);
    store.setProgress({ run: 2, waiting: [2], running: [0, 1], done: [] });
    store.setProgress({ run: 2, waiting: [], running: [2], done: [0, 1] });
    await frames();
    for (const update of updates) {
      expect(update.mock.calls).toEqual([[{ tables: false, events: false, progress: true }]]);
    }
    store.appendLists({ kind: [2], t0: [500], t1: [900], node: [2], device: [2] });
    store.appendLists({ kind: [0], t0: [400], t1: [900], run: [2] }); // ends the run in flight
    await frames();
    for (const update of updates) {
      expect(update).toHaveBeenCalledTimes(2);
      expect(update).toHaveBeenLastCalledWith({ tables: false, events: true, progress: true });
    }
    inspector.dispose();
    store.appendLists({ kind: [2], t0: [900], t1: [990], node: [2], device: [2] });
    await frames();
    for (const update of updates) {
      expect(update).toHaveBeenCalledTimes(2); // disposed: no longer listening
      update.mockRestore();
    }
  });

  it("says in its header that a prediction's times are modeled, as text", async () => {
    const host = document.createElement('div');
    const doc = smallDocument();
    doc.prediction = 'what if <img src=x onerror=alert(1)> ran on GPU:1?\u202e';
    const store = PlacementStore.fromDocument(doc);
    const inspector = createInspector(host, store);
    const root = inspector.element;
    const banner = root.querySelector<HTMLElement>('.placeviz-header .placeviz-prediction')!;
    expect(banner.hidden).toBe(false);
    expect(banner.textContent).toBe(
      'Prediction — what if <img src=x onerror=alert(1)> ran on GPU:1?\\u202e · modeled times, not measured',
    );
    expect(root.querySelector('img')).toBeNull();
    expect(root.dataset.prediction).toBe(doc.prediction);
    expect(root.classList.contains('placeviz-predicted')).toBe(true);
    // A measured trace: no banner.
    store.setPrediction(null);
    await frames();
    expect(banner.hidden).toBe(true);
    expect(banner.textContent).toBe('');
    expect(root.dataset.prediction).toBe('');
    inspector.dispose();
    const measured = createInspector(host, PlacementStore.fromDocument(smallDocument()));
    expect(measured.element.querySelector<HTMLElement>('.placeviz-prediction')!.hidden).toBe(true);
    expect(measured.element.dataset.prediction).toBe('');
    measured.dispose();
  });

  it('shares one ViewState between the views', () => {
    const host = document.createElement('div');
    const inspector = createInspector(host, PlacementStore.fromDocument(smallDocument()));
    const input = host.querySelector<HTMLInputElement>('input.placeviz-time')!;
    input.value = '50';
    input.dispatchEvent(new Event('input'));
    expect(inspector.state.get('time')).toBe(50);
    inspector.dispose();
  });
});

describe('runsSummary', () => {
  it('names the latest run, its status and duration, and earlier failures', () => {
    const doc = smallDocument();
    expect(runsSummary(PlacementStore.fromDocument(doc))).toBe(
      'run 2 of 2 · error · step 100 ns (measured) · wall clock 100 ns',
    );
    doc.runs.push({ id: 2, t0: 1400, t1: 2600, status: 'ok' });
    expect(runsSummary(PlacementStore.fromDocument(doc))).toBe(
      'run 3 of 3 · ok · wall clock 1.2 µs · 1 failed',
    );
    doc.runs = [];
    expect(runsSummary(PlacementStore.fromDocument(doc))).toBe('no runs yet');
    doc.nodes[1].device = null;
    doc.nodes[1].reason = { kind: 'unplaced', text: 'no GPU:7', anchor: null };
    expect(runsSummary(PlacementStore.fromDocument(doc))).toBe('no runs yet · 1 op not placed');
  });

  it('numbers runs by id when older records were dropped, and says what was not streamed', () => {
    const doc = smallDocument();
    doc.runs = Array.from({ length: RUNS_LISTED + 500 }, (_, id) => ({
      id,
      t0: 1000,
      t1: 1100,
      status: 'ok' as const,
    }));
    const store = PlacementStore.fromDocument(doc);
    expect(store.runs.length).toBe(RUNS_LISTED);
    expect(store.runs[0].id).toBe(500);
    expect(runsSummary(store)).toBe('run 1500 of 1500 · ok · wall clock 100 ns');
    store.addSkipped(123_456);
    expect(runsSummary(store)).toBe(
      'run 1500 of 1500 · ok · wall clock 100 ns · 123,456 events not streamed (in the trace)',
    );
    const bounded = PlacementStore.fromDocument(doc, 5);
    expect(runsSummary(bounded)).toBe(
      'run 1500 of 1500 · ok · wall clock 100 ns · 2 oldest events dropped (limit 5)',
    );
    store.reset();
    expect(store.skippedEvents).toBe(0);
  });
});

describe('progressSummary', () => {
  it('numbers the run in flight by its id, from 1', () => {
    const store = PlacementStore.fromDocument(smallDocument());
    expect(progressSummary(store)).toBeNull();
    store.setProgress({ run: 7, waiting: [1, 2], running: [], done: [0] });
    expect(progressSummary(store)).toBe('run 8 running · 1 of 3 ops done');
    store.setProgress({ run: 1, waiting: [], running: [], done: [] });
    expect(progressSummary(store)).toBe('run 2 running · 0 of 0 ops done');
  });
});
