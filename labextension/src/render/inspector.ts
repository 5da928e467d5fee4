/**
 * The inspector: header, legend, DAG, details, memory, timing and scrubber around one store and
 * one ViewState. Every host (widget, MIME renderer, standalone page) calls createInspector.
 *
 * The root keeps the data- attributes of docs/inspector.md current; store changes are applied
 * at most once per animation frame, however many live messages arrive in between.
 */
import { element } from './dom';
import { now, schedule, unschedule } from './frames';
import { DagView } from './dag';
import { renderDetails } from './details';
import { renderLegend } from './legend';
import { runClock, runLine } from './clock';
import { MemoryPanel } from './memory';
import { findRun, Scrubber } from './scrubber';
import { TimingPanel } from './timing';
import { ViewState } from './viewstate';
import { runsMade, type PlacementStore, type StoreChange } from './store';
import { ChangeCollector, type View } from './view';
import { visibleText } from './visible';
import type { NodeRecord } from './types';

export interface InspectorOptions {
  /** performance.now() when the host started; data-first-paint-ms is measured from it. */
  startedAt?: number;
  /**
   * Names of ops the DAG marks (an outline of their own, keyed): in a comparison, the ops the
   * other placement put on another device. Names the graph lacks are ignored.
   */
  marked?: ReadonlySet<string>;
}

/**
 * The timeline's zoom window (display ns along its axis, timeaxis.ts): what a host that lines
 * up several inspectors (compare.ts) reads, sets and follows. The memory plot follows it.
 */
export interface TimelineWindow {
  /** The window drawn; null before there is anything to show. */
  readonly window: [number, number] | null;
  /** Zoom or pan to `window` (null: the default view); onWindow listeners hear it. */
  setWindow(window: [number, number] | null): void;
  /** Call `cb` with each window set (by the user or setWindow); returns the function that stops it. */
  onWindow(cb: (window: [number, number] | null) => void): () => void;
}

export interface Inspector {
  readonly element: HTMLElement;
  readonly state: ViewState;
  readonly timeline: TimelineWindow;
  dispose(): void;
}

/** The banner of a prediction: "Prediction — <question> · modeled times, not measured". */
export function predictionBanner(prediction: string): string {
  return `Prediction — ${prediction} · modeled times, not measured`;
}

/**
 * "run 3 of 3 · ok · step 1.20 ms (modeled) · wall clock 3.1 ms" for the picked run (`run`, its
 * id), else the last (clock.ts's runLine), or "no runs yet"; with " · N events not streamed (in
 * the trace)" when a fast loop's live view skipped runs' events. Runs are numbered from 1 by id.
 */
export function runsSummary(store: PlacementStore, run: number | null = null): string {
  const runs = store.runs;
  const unplaced = unplacedOps(store.nodes);
  const notPlaced =
    unplaced > 0
      ? ` · ${unplaced.toLocaleString('en-US')} op${unplaced === 1 ? '' : 's'} not placed`
      : '';
  if (runs.length === 0) {
    return `no runs yet${notPlaced}`;
  }
  const last = runs[runs.length - 1];
  const shown = (run === null ? undefined : findRun(runs, run)) ?? last;
  const failed = runs.filter((r) => r.status === 'error').length;
  const failures = failed > 0 && last.status !== 'error' ? ` · ${failed} failed` : '';
  const skipped =
    store.skippedEvents > 0
      ? ` · ${store.skippedEvents.toLocaleString('en-US')} events not streamed (in the trace)`
      : '';
  const dropped =
    store.droppedEvents > 0
      ? ` · ${store.droppedEvents.toLocaleString('en-US')} oldest events dropped (limit ${store.events.maxEvents.toLocaleString('en-US')})`
      : '';
  const line = runLine(shown, runsMade(runs), runClock(store, shown.id));
  return `${line}${failures}${notPlaced}${skipped}${dropped}`;
}

/** Ops whose group could not be placed (a failed placement never makes a run record), counted
 * once per node table: the header is redrawn every frame of a live run. */
const unplacedCounts = new WeakMap<readonly NodeRecord[], number>();
function unplacedOps(nodes: readonly NodeRecord[]): number {
  let count = unplacedCounts.get(nodes);
  if (count === undefined) {
    count = nodes.filter((n) => n.device === null && n.reason?.kind === 'unplaced').length;
    unplacedCounts.set(nodes, count);
  }
  return count;
}

/** "run 4 running · 12 of 40 ops done" while a run is in flight, null when none is. */
export function progressSummary(store: PlacementStore): string | null {
  const live = store.progress;
  if (live === null) {
    return null;
  }
  const planned = live.waiting.length + live.running.length + live.done.length;
  return `run ${live.run + 1} running · ${live.done.length} of ${planned} ops done`;
}

export function createInspector(
  host: HTMLElement,
  store: PlacementStore,
  options: InspectorOptions = {},
): Inspector {
  const startedAt = options.startedAt ?? now();
  const doc = host.ownerDocument;
  const state = new ViewState();
  const el = (tag: 'div' | 'span', className: string, parent: HTMLElement): HTMLElement =>
    parent.appendChild(element(doc, tag, className));

  const root = element(doc, 'div', 'placeviz-inspector');
  root.dataset.firstPaintMs = '';
  const header = el('div', 'placeviz-header', root);
  const title = el('span', 'placeviz-title', header);
  title.textContent = 'placeviz';
  const summary = el('span', 'placeviz-runs', header);
  // A what-if's trace: its times come from the cost model, which the banner says plainly.
  const banner = el('div', 'placeviz-prediction', header);
  banner.setAttribute('role', 'note');
  const errors = el('div', 'placeviz-errors', root);
  const legendArea = el('div', 'placeviz-area-legend', root);
  const dagArea = el('div', 'placeviz-area-dag', root);
  const detailsArea = el('div', 'placeviz-area-details', root);
  const scrubberArea = el('div', 'placeviz-area-scrubber', root);
  const panels = el('div', 'placeviz-area-panels', root);
  host.appendChild(root);

  const disposers: (() => void)[] = [];
  const legend = renderLegend(legendArea, store, state);
  disposers.push(() => legend.dispose());
  const dag = new DagView(dagArea, store, state, { marked: options.marked });
  disposers.push(() => dag.dispose());
  const details = renderDetails(detailsArea, store, state);
  disposers.push(() => details.dispose());
  const scrubber = new Scrubber(scrubberArea, store, state);
  disposers.push(() => scrubber.dispose());
  const memory = new MemoryPanel(panels, store, state);
  disposers.push(() => memory.dispose());
  const timing = new TimingPanel(panels, store, state);
  disposers.push(() => timing.dispose());

  // The memory plot starts where the timeline's does (after its lane labels) and follows its
  // zoom: one time axis. The timeline ends where the memory plot does (its card axis, if any).
  disposers.push(timing.onPlotLeft((px) => memory.alignLeft(px)));
  disposers.push(memory.onPlotRight((px) => timing.alignRight(px)));
  disposers.push(timing.onWindow((window) => memory.showWindow(window)));

  // Plots take their colours from CSS variables when drawn: redraw when JupyterLab's theme changes.
  if (typeof MutationObserver === 'function' && doc.body) {
    const observer = new MutationObserver(() => {
      memory.refresh();
      timing.refresh();
    });
    observer.observe(doc.body, {
      attributes: true,
      attributeFilter: ['data-jp-theme-name', 'data-jp-theme-light'],
    });
    disposers.push(() => observer.disconnect());
  }

  let firstPaint = true;
  disposers.push(
    dag.onPaint((info) => {
      root.dataset.drawn = String(info.drawn);
      if (firstPaint) {
        firstPaint = false;
        root.dataset.firstPaintMs = (now() - startedAt).toFixed(1);
      }
    }),
  );

  let bannerFor: string | null | undefined;
  const renderHeader = () => {
    root.dataset.ops = String(store.nodes.length);
    root.dataset.devices = String(store.devices.length);
    root.dataset.events = String(store.events.count);
    root.dataset.runs = String(store.runs.length);
    root.dataset.skippedEvents = String(store.skippedEvents);
    root.dataset.droppedEvents = String(store.droppedEvents);
    root.dataset.schema = store.schema;
    const prediction = store.prediction;
    root.dataset.prediction = prediction ?? '';
    root.classList.toggle('placeviz-predicted', prediction !== null);
    banner.hidden = prediction === null;
    if (prediction !== bannerFor) {
      bannerFor = prediction;
      banner.textContent = prediction === null ? '' : visibleText(predictionBanner(prediction));
    }
    const live = store.progress;
    root.dataset.running = String(live?.running.length ?? 0);
    root.dataset.liveRun = live === null ? '' : String(live.run);
    if (root.dataset.drawn === undefined) {
      root.dataset.drawn = '0';
    }
    const picked = state.get('run');
    summary.textContent = visibleText(progressSummary(store) ?? runsSummary(store, picked));
    // The step the header names, on the clock the plots and the scrubber read (clock.ts).
    const shownRun = picked ?? store.runs[store.runs.length - 1]?.id ?? null;
    const step = shownRun === null ? null : runClock(store, shownRun).step;
    summary.dataset.run = shownRun === null ? '' : String(shownRun);
    summary.dataset.stepNs = step === null ? '' : String(step);
    const failed = store.runs.filter((r) => r.status === 'error' && r.error);
    errors.replaceChildren(
      ...failed.slice(-3).map((run) => {
        return element(
          doc,
          'div',
          'placeviz-error',
          `run ${run.id + 1} failed: ${run.error ?? ''}`,
          { message: true },
        );
      }),
    );
    errors.hidden = failed.length === 0;
  };
  renderHeader();
  // The header names the picked run's step.
  disposers.push(state.listen((changed) => changed.has('run') && renderHeader()));

  // The store's one listener: its changes are coalesced per animation frame and handed to every
  // view with what changed, however many live messages arrived in between.
  const views: View[] = [legend, dag, details, scrubber, memory, timing];
  const changes = new ChangeCollector();
  let frame: number | null = null;
  const flush = () => {
    frame = null;
    const started = now();
    const change = changes.take();
    renderHeader();
    for (const view of views) {
      view.update(change);
    }
    // What applying the latest changes cost the views (their throttled recomputations included
    // when they ran now): benchmarks/bench_browser_memory.py reads it.
    root.dataset.updateMs = (now() - started).toFixed(2);
  };
  disposers.push(
    store.onChange((change: StoreChange) => {
      changes.add(change);
      if (frame === null) {
        frame = schedule(flush);
      }
    }),
  );
  disposers.push(() => {
    if (frame !== null) {
      unschedule(frame);
    }
  });

  let disposed = false;
  return {
    element: root,
    state,
    timeline: timing,
    dispose() {
      if (disposed) {
        return;
      }
      disposed = true;
      for (const dispose of disposers.reverse()) {
        try {
          dispose();
        } catch (error) {
          console.error('placeviz: dispose failed', error);
        }
      }
      root.remove();
    },
  };
}
