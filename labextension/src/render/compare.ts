/**
 * The comparison view: two placements of one graph side by side (a ComparisonDocument, schema
 * placeviz-compare/1, made by `pv.compare(a, b)` or `%%placement --compare simple,cost`): the
 * summary (comparesummary.ts) on top, then an inspector per placement in two columns, each headed
 * by its label. The moved ops are ringed in both DAGs. Each inspector shows its last run (the
 * step compared), so every time in it reads on that run's clock (clock.ts), from 0 at its first
 * op; the two timelines and memory plots show the same window, 0 to the longer step, with the
 * same ticks; a zoom or pan in one applies to the other.
 */
import { lastStep, readComparison, type Comparison } from './comparedoc';
export { readComparison, type Comparison } from './comparedoc';
import { comparisonSummary } from './comparesummary';
import { element } from './dom';
import { createInspector, type Inspector, type TimelineWindow } from './inspector';
import type { PlacementStore } from './store';

export const COMPARE_MIME_TYPE = 'application/vnd.placeviz.compare+json';

/**
 * Where a store's step starts on its timeline (display ns): its last step's start (comparedoc's
 * lastStep), else the first activity; the comparison lines the two timelines up there.
 */
export function stepStart(store: PlacementStore): number {
  const activity = store.activity();
  const step = lastStep(store);
  if (step !== null) {
    return activity.timeAxis.toShown(step[0]);
  }
  return activity.timeAxis.extent?.[0] ?? activity.extent?.[0] ?? 0;
}

export interface ComparisonView {
  readonly element: HTMLElement;
  readonly comparison: Comparison;
  /** The first placement's inspector and the second's. */
  readonly inspectors: readonly [Inspector, Inspector];
  dispose(): void;
}

export interface ComparisonOptions {
  /** performance.now() when the host started (each inspector's data-first-paint-ms). */
  startedAt?: number;
}

/**
 * Keep the two timelines on one window: each starts at 0 .. the longer step from its own step
 * start, and a zoom or pan in one moves the other by the same offsets from its step start.
 * "Show all" (0, a double click) in either shows that common window in both again.
 */
function alignTimelines(
  inspectors: readonly [Inspector, Inspector],
  stores: readonly [PlacementStore, PlacementStore],
  stepNs: readonly [number, number],
): () => void {
  const timelines: TimelineWindow[] = inspectors.map((inspector) => inspector.timeline);
  // Where each side's shown run starts: the run picked in it (the last, to begin with), to the
  // whole ns, as the pad and span are, so that both windows have exactly one length.
  const start = (side: number): number => {
    const run = inspectors[side].state.get('run');
    const activity = stores[side].activity();
    const span = run === null ? undefined : activity.spans.get(run);
    const at = span === undefined ? stepStart(stores[side]) : activity.timeAxis.toShown(span[0]);
    return Math.round(at);
  };
  // Each shows its last run: the step compared, on its own clock.
  stores.forEach((store, side) => {
    const last = store.runs[store.runs.length - 1];
    if (last !== undefined && store.activity().spans.has(last.id)) {
      inspectors[side].state.set({ run: last.id });
    }
  });
  const steps = stepNs.filter((s) => Number.isFinite(s) && s > 0);
  const span = steps.length > 0 ? Math.round(Math.max(...steps)) : null;
  const common = (side: number): [number, number] | null => {
    if (span === null) {
      return null;
    }
    const pad = Math.max(Math.round(span * 0.01), 1);
    return [start(side) - pad, start(side) + span + pad];
  };
  let syncing = false;
  const both = (set: () => void) => {
    syncing = true;
    try {
      set();
    } finally {
      syncing = false;
    }
  };
  both(() => timelines.forEach((timeline, side) => timeline.setWindow(common(side))));
  const stops = timelines.map((timeline, from) =>
    timeline.onWindow((window) => {
      if (syncing) {
        return;
      }
      const to = 1 - from;
      both(() => {
        if (window === null) {
          timelines.forEach((t, side) => t.setWindow(common(side)));
          return;
        }
        const offset = start(to) - start(from);
        timelines[to].setWindow([window[0] + offset, window[1] + offset]);
      });
    }),
  );
  return () => stops.forEach((stop) => stop());
}

/**
 * Draw `data` (a comparison document, or its JSON text) into `host`. Throws, leaving `host` as
 * it was, when the document cannot be read (hosts show documentError instead).
 */
export function createComparison(
  host: HTMLElement,
  data: unknown,
  options: ComparisonOptions = {},
): ComparisonView {
  const comparison = readComparison(typeof data === 'string' ? JSON.parse(data) : data);
  const doc = host.ownerDocument;
  const root = element(doc, 'div', 'placeviz-compare');
  root.dataset.schema = comparison.schema;
  root.dataset.moved = String(comparison.moved.length);
  root.dataset.devices = String(comparison.devices.length);
  root.dataset.stepNs = comparison.stepNs
    .map((s) => (Number.isFinite(s) ? String(s) : ''))
    .join(',');
  root.append(comparisonSummary(doc, comparison));
  const columns = root.appendChild(element(doc, 'div', 'placeviz-compare-columns'));
  const marked = new Set(comparison.moved.map((op) => op.name));
  const inspectors: Inspector[] = [];
  const pair = () => inspectors as unknown as readonly [Inspector, Inspector]; // once both exist
  let stopAlign: () => void = () => undefined;
  try {
    comparison.stores.forEach((store, side) => {
      const column = columns.appendChild(element(doc, 'div', 'placeviz-compare-column'));
      column.dataset.side = String(side);
      column.append(element(doc, 'div', 'placeviz-compare-label', comparison.labels[side]));
      inspectors.push(createInspector(column, store, { startedAt: options.startedAt, marked }));
    });
    host.appendChild(root);
    stopAlign = alignTimelines(pair(), comparison.stores, comparison.stepNs);
  } catch (error) {
    stopAlign();
    inspectors.forEach((inspector) => inspector.dispose());
    root.remove();
    throw error;
  }
  let disposed = false;
  return {
    element: root,
    comparison,
    inspectors: pair(),
    dispose() {
      if (disposed) {
        return;
      }
      disposed = true;
      stopAlign();
      inspectors.forEach((inspector) => inspector.dispose());
      root.remove();
    },
  };
}
