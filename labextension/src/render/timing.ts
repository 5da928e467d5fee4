/**
 * The timing panel: draws the timing model (timingmodel.ts) as a Gantt chart, one lane per device
 * and stream plus a lane of transfers (the figure: timingfigure.ts), and handles the pointer and
 * the keyboard.
 *
 * - Picking a run (state.run, the scrubber's picker) zooms to its span.
 * - Drag to zoom; with the timeline focused, W/S zoom in/out around the pointer, A/D pan, and
 *   0 (or a double click) shows everything again; a click on a block of merged bars zooms in
 *   until they are drawn apart.
 * Hovering is resolved here, not by plotly (which only hovers segment ends): the pointer is
 * mapped to a lane and a time and the bar under it found by binary search; the tooltip's words
 * are timingtext.ts's.
 */
import type { PlotlyHTMLElement } from 'plotly.js-basic-dist-min';
import { runClock, type RunClock } from './clock';
import { element } from './dom';
import { pointerToData, pointerToYLabel, type PanelOptions } from './panel';
import { plotTheme, type PlotlyModule } from './plotly';
import { PlotPanel } from './plotpanel';
import type { PlacementStore } from './store';
import type { TimeAxis } from './timeaxis';
import {
  LEFT_PX,
  timingAnnotations,
  timingBars,
  timingLayout,
  timingShapes,
  type TimingScene,
} from './timingfigure';
import { TimingModel, barAt, waitAt, type BarRef } from './timingmodel';
import { blockAt, type Block, type LaneSegments } from './timingsegments';
import {
  barText,
  blockText,
  laneChars,
  laneLabels,
  laneText,
  sourcesText,
  waitText,
  type LaneLabel,
  type TimingNames,
} from './timingtext';
import { defaultWindow, padWindow, panWindow, zoomWindow } from './timewindow';
import type { ViewState, ViewStateFields } from './viewstate';
import { visibleText } from './visible';

/** Plot width assumed before plotly has laid the plot out. */
const DEFAULT_PLOT_PX = 900;
/** W/S zoom by this factor; A/D pan by this fraction of the view. */
const KEY_ZOOM = 0.7;
const KEY_PAN = 0.25;

export class TimingPanel extends PlotPanel {
  protected readonly messageLine: HTMLDivElement;
  private readonly tooltip: HTMLDivElement;
  private readonly model = new TimingModel();
  /** Per lane, its label whole (tooltips) and in parts (cut to the plot's width). */
  private labels: string[] = [];
  private laneParts: LaneLabel[] = [];
  private axis!: TimeAxis;
  private hoveredHere: number | null = null;
  /** The display window (ns along the axis) the user zoomed to; null: the default view. */
  private view: [number, number] | null = null;
  /** The pointer's display time, for zooming around it. */
  private pointerX: number | null = null;
  private readonly leftListeners = new Set<(px: number) => void>();
  /** The plot's right margin (px): the memory plot's (its card axis widens it), so both align. */
  private right = 12;
  private readonly windowListeners = new Set<(window: [number, number] | null) => void>();
  /** Per lane, its bars as last drawn: single bars and blocks of merged ones. */
  private drawn: LaneSegments[][] = [];

  constructor(
    parent: HTMLElement,
    store: PlacementStore,
    state: ViewState,
    options: PanelOptions = {},
  ) {
    super(parent, store, state, options, 'placeviz-timing', 'Timing');
    const doc = parent.ownerDocument;
    this.element.dataset.bars = '0';
    this.element.dataset.lanes = '0';
    this.element.dataset.labelledBars = '0';
    this.element.dataset.arrows = '0';
    this.element.dataset.waits = '0';
    this.messageLine = element(doc, 'div', 'placeviz-panel-note placeviz-timing-sources');
    const hint = element(
      doc,
      'div',
      'placeviz-panel-note placeviz-timing-keys',
      'Drag to zoom · click the timeline, then W/S zoom, A/D pan, 0 shows all',
    );
    this.tooltip = element(doc, 'div', 'placeviz-tooltip');
    this.tooltip.hidden = true;
    this.plot.tabIndex = 0;
    this.plot.setAttribute('role', 'figure');
    this.plot.setAttribute('aria-label', 'Timeline: W/S zoom, A/D pan, 0 shows all');
    // JupyterLab's shortcuts (A, D, 0 in a notebook) must not fire while the timeline has focus.
    this.plot.dataset.lmSuppressShortcuts = 'true';
    this.element.append(this.messageLine, this.plot, hint, this.tooltip);
    this.plot.addEventListener('mousemove', (event) => this.onPointer(event));
    this.plot.addEventListener('mouseleave', () => {
      this.pointerX = null;
      this.setHover(null, null);
    });
    this.plot.addEventListener('click', (event) => {
      const block = this.blockAt(event);
      if (block !== null) {
        // A block of merged bars: zoom in until they are drawn apart.
        this.setWindow(padWindow([block.x0, block.x1]));
        return;
      }
      const hit = this.hitTest(event);
      if (hit !== null) {
        this.state.set({ selected: this.model.lanes[hit.lane].bars.node[hit.index] });
      }
    });
    this.plot.addEventListener('keydown', (event) => this.onKey(event));
    this.start();
  }

  /**
   * Call `cb` with the plot area's left edge (px from the panel's) after each draw: the lane
   * labels set it, and the memory plot takes it to line up. Returns the function that stops it.
   */
  onPlotLeft(cb: (px: number) => void): () => void {
    this.leftListeners.add(cb);
    return () => this.leftListeners.delete(cb);
  }

  /** End the plot area `px` from the panel's right edge (the memory plot's), and redraw. */
  alignRight(px: number): void {
    if (Math.round(px) !== this.right && px > 0) {
      this.right = Math.round(px);
      void this.draw();
    }
  }

  get timingModel(): TimingModel {
    return this.model;
  }

  /** The display window drawn (ns along the axis); null before there is anything to show. */
  get window(): [number, number] | null {
    return this.view ?? this.defaultWindow();
  }

  /** Zoom or pan to a display window (null: the default view) and redraw. */
  setWindow(window: [number, number] | null): void {
    this.view = window;
    this.element.dataset.window = window ? window.map((x) => x.toFixed(0)).join(',') : '';
    for (const cb of this.windowListeners) {
      cb(window);
    }
    void this.draw();
  }

  /** Call `cb` with each zoom window the user picks (null: the default view); returns the stop. */
  onWindow(cb: (window: [number, number] | null) => void): () => void {
    this.windowListeners.add(cb);
    return () => this.windowListeners.delete(cb);
  }

  protected recompute(): void {
    const store = this.store;
    this.model.update(store.events, store.devices);
    this.axis = store.activity().timeAxis;
    const runs = store.runs.map((r): [number, number] => [
      r.t0 - store.originNs,
      r.t1 - store.originNs,
    ]);
    const utilisation = this.model.utilisation(this.model.span(runs));
    this.laneParts = laneLabels(this.model, store.devices, utilisation);
    this.labels = this.laneParts.map((label) => laneText(label));
    this.element.dataset.bars = String(this.model.opBars);
    this.element.dataset.waits = String(this.model.waitBars);
    this.element.dataset.lanes = String(this.model.lanes.length);
    this.messageLine.textContent = sourcesText(this.model, store.devices);
  }

  protected hasData(): boolean {
    return this.model.lanes.length > 0;
  }

  protected onState(changed: ReadonlySet<keyof ViewStateFields>): void {
    if (changed.has('run')) {
      this.setWindow(null);
      return;
    }
    if (
      this.plotted &&
      (changed.has('time') || changed.has('hovered') || changed.has('selected'))
    ) {
      // Shapes only: a relayout of shapes redraws them without recomputing the traces.
      void this.plotted.relayout(this.plot, { shapes: this.shapes(this.scene()) });
    }
  }

  /** The clock the axis reads: the picked run's, else the first run's (clock.ts). */
  clock(): RunClock {
    return runClock(this.store, this.state.get('run'));
  }

  private defaultWindow(): [number, number] | null {
    return defaultWindow(this.store.activity(), this.state.get('run'));
  }

  private plotWidth(): number {
    const full = (this.plot as unknown as { _fullLayout?: { _size?: { w?: number } } })._fullLayout;
    // Before plotly's first layout: the element less the margins (the memory plot's guess too).
    return full?._size?.w || (this.plot.clientWidth || DEFAULT_PLOT_PX) - LEFT_PX - this.right;
  }

  /** What the tooltips' words read. */
  private names(): TimingNames {
    return {
      model: this.model,
      nodes: this.nodes,
      devices: this.store.devices,
      labels: this.labels,
    };
  }

  /** What the figure is drawn from now. */
  private scene(): TimingScene {
    return {
      ...this.names(),
      axis: this.axis,
      spans: this.store.activity().spans,
      window: this.window,
      width: this.plotWidth(),
      theme: plotTheme(this.element),
    };
  }

  /** The cursor, the run marks, and outlines around the hovered and selected ops' bars. */
  private shapes(scene: TimingScene): Record<string, unknown>[] {
    const { state } = this;
    return timingShapes(scene, state.get('time'), state.get('hovered'), state.get('selected'));
  }

  /** The user zoomed or panned with the pointer: redraw the bars at the new level of detail. */
  private onRelayout(event: unknown): void {
    const record = (event as Record<string, unknown>) ?? {};
    if (record['xaxis.autorange'] === true) {
      this.setWindow(null);
      return;
    }
    const lo = Number(record['xaxis.range[0]']);
    const hi = Number(record['xaxis.range[1]']);
    if (!Number.isFinite(lo) || !Number.isFinite(hi)) {
      return;
    }
    const next: [number, number] = [lo * 1e6, hi * 1e6];
    const current = this.view;
    if (current && Math.abs(next[0] - current[0]) < 1 && Math.abs(next[1] - current[1]) < 1) {
      return;
    }
    this.setWindow(next);
  }

  private onKey(event: KeyboardEvent): void {
    if (event.ctrlKey || event.metaKey || event.altKey) {
      return;
    }
    const window = this.window;
    if (window === null) {
      return;
    }
    const key = event.key.toLowerCase();
    const centre = this.pointerX ?? undefined;
    let next: [number, number] | null | undefined;
    if (key === 'w' || key === '+' || key === '=') {
      next = zoomWindow(window, KEY_ZOOM, centre);
    } else if (key === 's' || key === '-') {
      next = zoomWindow(window, 1 / KEY_ZOOM, centre);
    } else if (key === 'a' || key === 'arrowleft') {
      next = panWindow(window, -KEY_PAN);
    } else if (key === 'd' || key === 'arrowright') {
      next = panWindow(window, KEY_PAN);
    } else if (key === '0' || key === 'escape') {
      next = null;
    } else {
      return;
    }
    event.preventDefault();
    event.stopPropagation();
    this.setWindow(next);
  }

  protected async react(plotly: PlotlyModule): Promise<void> {
    const scene = this.scene();
    const { width } = scene;
    const bars = timingBars(scene);
    this.drawn = bars.drawn;
    this.element.dataset.labelledBars = String(bars.named);
    this.element.dataset.mergedBlocks = String(bars.blocks);
    const shapes = this.shapes(scene);
    const { notes, arrows } = timingAnnotations(scene, bars);
    this.element.dataset.arrows = String(arrows);
    const frame = {
      clock: this.clock(),
      collapsed: this.axis.collapsesGaps(this.state.get('run')),
      height: this.options.height,
      right: this.right,
      laneParts: this.laneParts,
      laneChars: laneChars(this.plot.clientWidth || DEFAULT_PLOT_PX),
    };
    this.element.dataset.gapsCollapsed = String(frame.collapsed);
    const layout = timingLayout(scene, frame, shapes, notes);
    const traces = bars.traces;
    await this.plotWith(plotly, traces, layout);
    // The title and ticks were fitted to the width plotly last laid out (or a guess before its
    // first layout): laid out at another width (the lane labels' margin, a resize), fit again.
    if (Math.abs(this.plotWidth() - width) > 1) {
      void this.draw();
    }
    const left = (this.plot as unknown as { _fullLayout?: { _size?: { l?: number } } })._fullLayout
      ?._size?.l;
    if (left !== undefined) {
      for (const cb of this.leftListeners) {
        cb(left);
      }
    }
    if (this.plotted === null) {
      (this.plot as unknown as PlotlyHTMLElement).on('plotly_relayout', (event) =>
        this.onRelayout(event),
      );
    }
  }

  /** The bar under a pointer event (once plotly has drawn); null if none. */
  private hitTest(event: MouseEvent): BarRef | null {
    const at = pointerToData(this.plot, event);
    if (at === null) {
      return null;
    }
    const lane = Math.round(at.y);
    // x is display ms; a bar within 3 px of the pointer counts (thin bars stay hoverable).
    const t = this.axis.toReal(at.x * 1e6);
    const index = barAt(this.model, lane, t, 3 * at.xPerPx * 1e6);
    return index < 0 ? null : { lane, index };
  }

  /** The wait under a pointer event (within 3 px); null if none. */
  private waitTest(event: MouseEvent): BarRef | null {
    const at = pointerToData(this.plot, event);
    if (at === null) {
      return null;
    }
    const lane = Math.round(at.y);
    const index = waitAt(this.model, lane, this.axis.toReal(at.x * 1e6), 3 * at.xPerPx * 1e6);
    return index < 0 ? null : { lane, index };
  }

  /** The block of merged bars under a pointer event, as drawn; null if none. */
  private blockAt(event: MouseEvent): Block | null {
    const at = pointerToData(this.plot, event);
    return at === null ? null : blockAt(this.drawn, Math.round(at.y), at.x * 1e6, at.xPerPx * 1e6);
  }

  private onPointer(event: MouseEvent): void {
    const at = pointerToData(this.plot, event);
    this.pointerX = at === null ? null : at.x * 1e6;
    const label = at === null ? pointerToYLabel(this.plot, event) : null;
    if (label !== null && this.labels[Math.round(label)] !== undefined) {
      // Over a lane's label, cut on a narrow plot: the whole of it.
      this.setHover(null, null);
      this.tooltip.textContent = visibleText(this.labels[Math.round(label)]);
      this.placeTooltip(event);
      return;
    }
    const block = this.blockAt(event);
    const hit = block === null ? this.hitTest(event) : null;
    this.setHover(hit, hit === null ? null : event);
    // A wait is no op's bar: it names what it waited for, and highlights nothing elsewhere.
    const wait = block === null && hit === null ? this.waitTest(event) : null;
    if (wait !== null) {
      this.tooltip.textContent = waitText(this.names(), wait);
      this.placeTooltip(event);
    }
    if (block !== null) {
      // A block stands for many ops: it names them, and highlights none in the other views.
      this.tooltip.textContent = blockText(this.names(), block);
      this.placeTooltip(event);
    }
  }

  /**
   * The tooltip below right of the pointer, or left of it (above it) where it would pass the
   * panel's right (bottom) edge: a bar at the end of the timeline keeps a tooltip of full width.
   */
  private placeTooltip(event: MouseEvent): void {
    this.tooltip.hidden = false;
    const rect = this.element.getBoundingClientRect();
    const [x, y] = [event.clientX - rect.left, event.clientY - rect.top];
    this.tooltip.style.left = '0px'; // measured where nothing narrows it
    const { offsetWidth: width, offsetHeight: height } = this.tooltip;
    const left = x + 12 + width > rect.width ? Math.max(0, x - 12 - width) : x + 12;
    const top = y + 12 + height > rect.height ? Math.max(0, y - 12 - height) : y + 12;
    this.tooltip.style.left = `${left}px`;
    this.tooltip.style.top = `${top}px`;
  }

  private setHover(bar: BarRef | null, event: MouseEvent | null): void {
    if (bar === null) {
      this.tooltip.hidden = true;
      if (this.hoveredHere !== null && this.state.get('hovered') === this.hoveredHere) {
        this.state.set({ hovered: null });
      }
      this.hoveredHere = null;
      return;
    }
    const nodeId = this.model.lanes[bar.lane].bars.node[bar.index];
    this.tooltip.textContent = barText(this.names(), bar);
    this.tooltip.hidden = false;
    if (event) {
      this.placeTooltip(event);
    }
    this.hoveredHere = nodeId;
    this.state.set({ hovered: nodeId });
  }
}
