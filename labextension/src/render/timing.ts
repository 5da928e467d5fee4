/**
 * The timing panel: draws the timing model (timingmodel.ts) as a Gantt chart, one lane per device
 * and stream plus a lane of transfers, and handles the pointer and the keyboard.
 *
 * - Bars are thick line segments, one scatter trace per lane and colour, merged to the plot's
 *   resolution; bars wide enough carry their op's name (like Perfetto's).
 * - Transfers are also arrows from the source device's lane to the destination's, with bytes.
 * - A cluster task's stage waiting for what other tasks send it (WAIT events) is a hatched bar
 *   on its device's lane, apart from the ops (not busy time); its tooltip says what came last.
 * - With several runs the x axis collapses the idle gaps between them (timeaxis.ts) and marks
 *   where each run starts; picking a run (state.run, the scrubber's picker) zooms to its span.
 * - Drag to zoom; with the timeline focused, W/S zoom in/out around the pointer, A/D pan, and
 *   0 (or a double click) shows everything again.
 * Hovering is resolved here, not by plotly (which only hovers segment ends): the pointer is
 * mapped to a lane and a time and the bar under it found by binary search.
 */
import { element } from './dom';
import { escapePlotlyText, plotTheme, type PlotlyModule } from './plotly';
import { PlotPanel } from './plotpanel';
import { formatBytes, formatNs } from './format';
import { textColourOn } from './colours';
import { panelDeviceColour } from './devicecolour';
import { pointerToData, pointerToYLabel, type PanelOptions } from './panel';
import type { TimeAxis } from './timeaxis';
import { axisTicks, defaultWindow, padWindow, panWindow, zoomWindow } from './timewindow';
import { axisTitle, runClock, runName, type RunClock } from './clock';
import { iterationText } from './controlflow';
import {
  TimingModel,
  barAt,
  barsOfNode,
  lastArrival,
  waitAt,
  type BarRef,
  type LaneBars,
} from './timingmodel';
import { coalesceLane, transferArrows, WIDE_PX, type LaneSegments } from './timingsegments';
import {
  crossesTasks,
  deviceShort,
  fitLabel,
  laneLabels,
  laneText,
  type LaneLabel,
} from './timingtext';
import type { ViewState, ViewStateFields } from './viewstate';
import type { PlacementStore } from './store';
import type { PlotlyHTMLElement, PlotlyTrace } from 'plotly.js-basic-dist-min';
import { visibleText } from './visible';
import { freeSpot, overlaps, type LabelRect } from './labels';
import { TIMING_SOURCE_LABELS } from './types';

export { niceTicks } from './ticks';

const LANE_PX = 26;
const BAR_PX = 16;
/** Highlight outlines drawn at most (a node that ran in thousands of runs). */
const MAX_HIGHLIGHTS = 500;
/** Labels and arrows drawn at most; arrows carry their bytes up to ARROW_TEXT of them. */
const MAX_LABELS = 400;
const MAX_ARROWS = 80;
const ARROW_TEXT = 12;
/** An arrow carries its bytes only when at least this long (px): short ones would overlap. */
const ARROW_TEXT_PX = 40;
/** Least room between two run marks' labels. */
const RUN_MARK_PX = 56;
/** Blocks of bars merged (too thin to draw apart) are drawn this pale: not one long op. */
const MERGED_OPACITY = 0.6;
/** A wait's bar: this share of an op's height, hatched in its device's colour, outlined. */
const WAIT_HEIGHT = 0.8;
const WAIT_HATCH = { shape: '/', size: 6, solidity: 0.3 };
/** A 10 px label's character and height (px), to keep labels apart before plotly draws them. */
const TEXT_CHAR_PX = 6;
const TEXT_HEIGHT_PX = 12;
/** Where along its arrow a transfer's bytes go, the first of these clear of other labels. */
const ARROW_TEXT_AT = [0.5, 0.35, 0.65, 0.2, 0.8];
/** Names a merged block's tooltip lists at most. */
const BLOCK_NAMES = 5;
/** A block of merged bars as drawn: segment k of one colour's segments in a lane. */
interface Block {
  lane: number;
  segments: LaneSegments;
  k: number;
  x0: number;
  x1: number;
}

/**
 * The lane labels take at most this share of the plot's width (their margin, which the memory
 * plot takes too), in characters of LANE_CHAR_PX: a narrow page keeps most of it for time.
 */
const LANE_SHARE = 0.35;
const LANE_CHAR_PX = 6.3;

/** Characters a lane label has in a plot `widthPx` wide (laneText cuts it to them). */
export function laneChars(widthPx: number): number {
  return Math.max(12, Math.floor((LANE_SHARE * widthPx) / LANE_CHAR_PX));
}

/** The least left margin (px): the memory plot's own (its y axis title and ticks). */
const LEFT_PX = 56;
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
  /** The labels drawn on bars (px in the plot area), which the transfers' bytes keep clear of. */
  private placed: LabelRect[] = [];

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
    const parts: string[] = [];
    for (const [device, set] of this.model.sources) {
      const labels = [...set].sort().map((s) => TIMING_SOURCE_LABELS[s] ?? `source ${s}`);
      const record = store.devices.find((d) => d.id === device);
      const simulated = record?.kind === 'simulated' ? ', simulated device' : '';
      parts.push(`${deviceShort(store.devices, device)}: ${labels.join('/')}${simulated}`);
    }
    this.messageLine.textContent =
      this.model.lanes.length === 0
        ? 'No op timings recorded.'
        : visibleText(
            `Timing source — ${parts.join(' · ')}. Busy: the share of the runs' time a ` +
              'device ran ops (the rest it waited).' +
              (this.model.waitBars > 0
                ? ' Hatched: a task waiting for the tensors other tasks send it.'
                : ''),
          );
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
      void this.plotted.relayout(this.plot, { shapes: this.shapes() });
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

  /** Display ns per pixel in the current window. */
  private resolution(): number {
    const window = this.window;
    return window ? (window[1] - window[0]) / this.plotWidth() : 1;
  }

  /** The cursor, outlines around the hovered and selected ops' bars, and the run marks. */
  private shapes(): Record<string, unknown>[] {
    const theme = plotTheme(this.element);
    const axis = this.axis;
    const shapes: Record<string, unknown>[] = [];
    const time = this.state.get('time');
    if (time !== null) {
      const x = axis.toShown(time) / 1e6;
      shapes.push({
        type: 'line',
        xref: 'x',
        yref: 'paper',
        x0: x,
        x1: x,
        y0: 0,
        y1: 1,
        line: { color: theme.cursor, width: 1.5 },
      });
    }
    for (const mark of this.runMarks()) {
      shapes.push({
        type: 'line',
        xref: 'x',
        yref: 'paper',
        x0: mark.x,
        x1: mark.x,
        y0: 0,
        y1: 1,
        line: { color: theme.grid, width: 1, dash: 'dot' },
        layer: 'below',
      });
    }
    const ids = [this.state.get('hovered'), this.state.get('selected')];
    const minWidth = this.resolution() * 2;
    const bars: BarRef[] = [];
    for (const id of ids) {
      if (id !== null) {
        bars.push(...barsOfNode(this.model, id, MAX_HIGHLIGHTS));
      }
    }
    for (const { lane, index } of bars.slice(0, MAX_HIGHLIGHTS)) {
      const b = this.model.lanes[lane].bars;
      const x0 = axis.toShown(b.t0[index]);
      const x1 = Math.max(axis.toShown(b.t1[index]), x0 + minWidth);
      shapes.push({
        type: 'rect',
        xref: 'x',
        yref: 'y',
        x0: x0 / 1e6,
        x1: x1 / 1e6,
        y0: lane - 0.45,
        y1: lane + 0.45,
        line: { color: theme.fontColor, width: b.node[index] === ids[1] ? 2 : 1.5 },
        fillcolor: 'rgba(0,0,0,0)',
        layer: 'above',
      });
    }
    return shapes;
  }

  /** Where each run in view starts (display ms), thinned so their labels do not overlap. */
  private runMarks(): { x: number; label: string }[] {
    const spans = this.store.activity().spans;
    const window = this.window;
    if (spans.size < 2 || window === null) {
      return [];
    }
    const minGap = RUN_MARK_PX * this.resolution();
    const starts = [...spans.entries()]
      .filter(([run]) => run >= 0)
      .map(([run, [t0]]) => ({ run, x: this.axis.toShown(t0) }))
      .filter(({ x }) => x >= window[0] && x <= window[1])
      .sort((a, b) => a.x - b.x);
    const marks: { x: number; label: string }[] = [];
    let last = -Infinity;
    for (const { run, x } of starts) {
      if (x - last >= minGap) {
        marks.push({ x: x / 1e6, label: runName(run) });
        last = x;
      }
    }
    return marks;
  }

  /** The real times [lo, hi] of the window, widened by its width each side (small pans). */
  private realRange(): [number, number] {
    const window = this.window;
    if (window === null) {
      return [-Infinity, Infinity];
    }
    const width = window[1] - window[0];
    return [this.axis.toReal(window[0] - width), this.axis.toReal(window[1] + width)];
  }

  private traces(): PlotlyTrace[] {
    const { lanes } = this.model;
    const axis = this.axis;
    const resolution = this.resolution();
    const [lo, hi] = this.realRange();
    const traces: PlotlyTrace[] = [];
    this.drawn = lanes.map((_, l) => coalesceLane(this.model, l, lo, hi, resolution, axis));
    lanes.forEach((_, l) => {
      for (const group of coalesceLane(this.model, l, lo, hi, resolution, axis, 'waits')) {
        traces.push(this.waitsTrace(group, l, (WAIT_HEIGHT * BAR_PX) / LANE_PX / 2));
      }
    });
    this.drawn.forEach((groups, l) => {
      const half = (lanes[l].kind === 'transfer' ? BAR_PX * 0.6 : BAR_PX) / LANE_PX / 2;
      // One trace per colour (an OP lane is one device; the transfers lane one per destination),
      // and the blocks of merged bars paler than single bars.
      for (const group of groups) {
        for (const merged of [false, true]) {
          const trace = this.barsTrace(group, l, half, resolution, merged);
          if (trace !== null) {
            traces.push(trace);
          }
        }
      }
    });
    traces.push(...this.labelTraces(resolution));
    return traces;
  }

  /**
   * A group's single bars (or its blocks of merged bars) as one filled path of rectangles: plotly
   * draws a line trace's gap-separated pieces as an SVG element each, a fill as one element.
   */
  private barsTrace(
    group: LaneSegments,
    lane: number,
    half: number,
    resolution: number,
    merged: boolean,
  ): PlotlyTrace | null {
    const x: (number | null)[] = [];
    const y: (number | null)[] = [];
    for (let k = 0; k < group.x0.length; k++) {
      if (group.count[k] > 1 !== merged) {
        continue;
      }
      // A wide bar ends a pixel early: back-to-back ops show as separate bars.
      const gap = group.x1[k] - group.x0[k] >= WIDE_PX * resolution ? resolution : 0;
      const x0 = group.x0[k] / 1e6;
      const x1 = (group.x1[k] - gap) / 1e6;
      x.push(x0, x1, x1, x0, x0, null);
      y.push(lane - half, lane - half, lane + half, lane + half, lane - half, null);
    }
    if (x.length === 0) {
      return null;
    }
    return {
      type: 'scatter',
      mode: 'none',
      fill: 'toself',
      fillcolor: panelDeviceColour(this.store.devices, group.device),
      opacity: merged ? MERGED_OPACITY : 1,
      x,
      y,
      name: escapePlotlyText(this.labels[lane]),
      showlegend: false,
      hoverinfo: 'skip',
      connectgaps: false,
    };
  }

  /** A lane's waits as one hatched, outlined path of rectangles (under its ops). */
  private waitsTrace(group: LaneSegments, lane: number, half: number): PlotlyTrace {
    const x: (number | null)[] = [];
    const y: (number | null)[] = [];
    for (let k = 0; k < group.x0.length; k++) {
      const [x0, x1] = [group.x0[k] / 1e6, group.x1[k] / 1e6];
      x.push(x0, x1, x1, x0, x0, null);
      y.push(lane - half, lane - half, lane + half, lane + half, lane - half, null);
    }
    const colour = panelDeviceColour(this.store.devices, group.device);
    return {
      type: 'scatter',
      mode: 'lines',
      fill: 'toself',
      fillcolor: 'rgba(0,0,0,0)',
      fillpattern: { ...WAIT_HATCH, fgcolor: colour },
      line: { color: colour, width: 1 },
      x,
      y,
      name: 'waiting for other tasks',
      showlegend: false,
      hoverinfo: 'skip',
      connectgaps: false,
    };
  }

  /**
   * The op names on single bars wide enough to hold them, and "N ops" on blocks of merged bars,
   * one text trace per text colour: taken from the segments drawn, so labelling costs what is
   * drawn.
   */
  private labelTraces(resolution: number): PlotlyTrace[] {
    const window = this.window;
    const theme = plotTheme(this.element);
    const byColour = new Map<string, { x: number[]; y: number[]; text: string[] }>();
    this.placed = [];
    const add = (colour: string, x: number, y: number, text: string) => {
      const width = text.length * TEXT_CHAR_PX;
      this.placed.push(this.textRect(x * 1e6, y, width));
      let group = byColour.get(colour);
      if (group === undefined) {
        group = { x: [], y: [], text: [] };
        byColour.set(colour, group);
      }
      group.x.push(x);
      group.y.push(y);
      group.text.push(escapePlotlyText(text));
    };
    let named = 0;
    let blocks = 0;
    this.drawn.forEach((groups, l) => {
      const lane = this.model.lanes[l];
      for (const segments of groups) {
        const colour = textColourOn(panelDeviceColour(this.store.devices, segments.device));
        for (let k = 0; k < segments.x0.length; k++) {
          const count = segments.count[k];
          blocks += count > 1 ? 1 : 0;
          // The part of the bar in view: a long bar cut by the window keeps its label on screen.
          const x0 = Math.max(segments.x0[k], window?.[0] ?? -Infinity);
          const x1 = Math.min(segments.x1[k], window?.[1] ?? Infinity);
          const bar = segments.bar[k];
          if (x1 <= x0 || named + blocks > MAX_LABELS || (bar < 0 && count < 2)) {
            continue;
          }
          const px = (x1 - x0) / resolution;
          const x = (x0 + x1) / 2 / 1e6;
          if (count > 1) {
            const text = fitLabel(`${count} ${lane.kind === 'op' ? 'ops' : 'transfers'}`, px);
            // The transfers lane's colours (destinations) overlap: a block whose label would
            // cover another's goes without (its tooltip lists it).
            const rect = this.textRect(x * 1e6, l, (text?.length ?? 0) * TEXT_CHAR_PX);
            const covers = lane.kind === 'transfer' && this.placed.some((p) => overlaps(rect, p));
            if (text !== null && !text.endsWith('…') && !covers) {
              add(theme.fontColor, x, l, text);
            }
          } else if (lane.kind === 'op') {
            const node = this.nodes.get(lane.bars.node[bar]);
            const text = fitLabel(node?.name ?? `node ${lane.bars.node[bar]}`, px);
            if (text !== null) {
              add(colour, x, l, text);
              named += 1;
            }
          }
        }
      }
    });
    this.element.dataset.labelledBars = String(named);
    this.element.dataset.mergedBlocks = String(blocks);
    return [...byColour.entries()].map(([colour, group]) => ({
      type: 'scatter',
      mode: 'text',
      x: group.x,
      y: group.y,
      text: group.text,
      textposition: 'middle center',
      textfont: { color: colour, size: 10 },
      showlegend: false,
      hoverinfo: 'skip',
    }));
  }

  /** Transfers as arrows between device lanes, and the run marks' labels. */
  private annotations(): Record<string, unknown>[] {
    const theme = plotTheme(this.element);
    const window = this.window;
    // A mark's label reads rightwards from it, or leftwards near the plot's right edge, where
    // it would be cut (a cluster cell's last run, "run" without its number).
    const room = window === null ? Infinity : RUN_MARK_PX * this.resolution();
    const notes: Record<string, unknown>[] = this.runMarks().map((mark) => ({
      x: mark.x,
      xref: 'x',
      y: 1,
      yref: 'paper',
      yanchor: 'bottom',
      xanchor: window !== null && window[1] - mark.x * 1e6 < room ? 'right' : 'left',
      text: mark.label,
      showarrow: false,
      font: { size: 10, color: theme.fontColor },
    }));
    if (window === null) {
      this.element.dataset.arrows = '0';
      return notes;
    }
    const resolution = this.resolution();
    const transfers = this.model.lanes.findIndex((lane) => lane.kind === 'transfer');
    const arrows = transferArrows(this.model, this.drawn[transfers] ?? [], MAX_ARROWS);
    this.element.dataset.arrows = String(arrows.length);
    for (const arrow of arrows) {
      const colour = panelDeviceColour(this.store.devices, this.model.lanes[arrow.toLane].device);
      const from = { x: this.axis.toShown(arrow.t0) / 1e6, y: arrow.fromLane };
      const to = { x: this.axis.toShown(arrow.t1) / 1e6, y: arrow.toLane };
      notes.push({
        x: to.x,
        y: to.y,
        xref: 'x',
        yref: 'y',
        ax: from.x,
        ay: from.y,
        axref: 'x',
        ayref: 'y',
        showarrow: true,
        arrowhead: 2,
        arrowsize: 1,
        arrowwidth: 1.5,
        arrowcolor: colour,
        text: '',
        opacity: 0.9,
      });
      const length = Math.hypot((to.x - from.x) * 1e6, (to.y - from.y) * LANE_PX * resolution);
      const text =
        arrow.count > 1
          ? `${arrow.count}× · ${formatBytes(arrow.bytes)}`
          : formatBytes(arrow.bytes);
      // The bytes along the arrow, at its middle or nearest it, where they cover no bar's name,
      // no other arrow's bytes and stay in the plot; none where there is no such place.
      const along = ARROW_TEXT_AT.map((f) => ({
        x: from.x + (to.x - from.x) * f,
        y: from.y + (to.y - from.y) * f,
      }));
      const width = text.length * TEXT_CHAR_PX;
      const rects = along.map((at) => this.textRect(at.x * 1e6, at.y, width));
      const spot =
        arrows.length <= ARROW_TEXT && length >= ARROW_TEXT_PX * resolution
          ? freeSpot(rects, this.placed, this.plotWidth())
          : null;
      if (spot !== null) {
        this.placed.push(spot);
        const at = along[rects.indexOf(spot)];
        notes.push({
          x: at.x,
          y: at.y,
          xref: 'x',
          yref: 'y',
          text,
          showarrow: false,
          font: { size: 10, color: theme.fontColor },
          bgcolor: theme.background,
          borderpad: 1,
        });
      }
    }
    return notes;
  }

  /** A label `width` px wide centred at display time `x` (ns) on lane `y`: px in the plot area. */
  private textRect(x: number, y: number, width: number): LabelRect {
    const left = (x - (this.window?.[0] ?? 0)) / this.resolution() - width / 2;
    return { x: left, y: (y + 0.5) * LANE_PX - TEXT_HEIGHT_PX / 2, w: width, h: TEXT_HEIGHT_PX };
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
    const theme = plotTheme(this.element);
    const lanes = this.model.lanes;
    const window = this.window;
    const traces = this.traces();
    const collapsed = this.axis.windows.length > 1 && this.state.get('run') === null;
    const clock = this.clock();
    const width = this.plotWidth();
    const layout = {
      height: this.options.height ?? Math.max(140, 64 + LANE_PX * lanes.length),
      margin: { l: LEFT_PX, r: this.right, t: 18, b: 40 },
      paper_bgcolor: theme.background,
      plot_bgcolor: theme.background,
      font: { family: theme.font, color: theme.fontColor, size: 11 },
      showlegend: false,
      hovermode: false,
      dragmode: 'zoom',
      uirevision: 'placeviz',
      xaxis: {
        title: { text: axisTitle(clock, collapsed, width) },
        gridcolor: theme.grid,
        zeroline: false,
        range: window ? [window[0] / 1e6, window[1] / 1e6] : undefined,
        tickmode: 'array',
        ...axisTicks(this.axis, clock, window, width, this.right),
      },
      yaxis: {
        automargin: true,
        tickmode: 'array',
        tickvals: lanes.map((_, i) => i),
        ticktext: this.laneParts.map((label) =>
          escapePlotlyText(laneText(label, laneChars(this.plot.clientWidth || DEFAULT_PLOT_PX))),
        ),
        range: [lanes.length - 0.5, -0.5],
        fixedrange: true,
        showgrid: false,
        zeroline: false,
      },
      shapes: this.shapes(),
      annotations: this.annotations(),
    };
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

  /**
   * "waiting for other tasks · 1.3 ms · worker/0 CPU:0 · before y (MatMul) · run 2 · last
   * arrived: w/read, 8 KiB from ps/0 CPU:0"
   */
  private waitText({ lane, index }: BarRef): string {
    const w = this.model.lanes[lane].waits;
    const devices = this.store.devices;
    const node = this.nodes.get(w.node[index]);
    const before = node ? ` · before ${node.name} (${node.type})` : '';
    const run = w.run[index] >= 0 ? ` · run ${w.run[index] + 1}` : '';
    const arrival = lastArrival(this.model, lane, index);
    const transfers = this.model.lanes.find((l) => l.kind === 'transfer')?.bars;
    let last = ' · last arrived: a control token';
    if (w.peer[index] >= 0 && arrival >= 0 && transfers !== undefined) {
      const tensor =
        this.nodes.get(transfers.node[arrival])?.name ?? `node ${transfers.node[arrival]}`;
      const size = formatBytes(transfers.bytes[arrival]);
      last = ` · last arrived: ${tensor}, ${size} from ${deviceShort(devices, w.peer[index])}`;
    } else if (w.peer[index] >= 0) {
      last = ` · last arrived: from ${deviceShort(devices, w.peer[index])}`;
    }
    const where = this.labels[lane].split(' · ')[0];
    const took = formatNs(w.t1[index] - w.t0[index]);
    return `waiting for other tasks · ${took} · ${where}${before}${run}${last}`;
  }

  /** The block of merged bars under a pointer event, as drawn; null if none. */
  private blockAt(event: MouseEvent): Block | null {
    const at = pointerToData(this.plot, event);
    if (at === null) {
      return null;
    }
    const lane = Math.round(at.y);
    const x = at.x * 1e6;
    const slack = at.xPerPx * 1e6;
    for (const segments of this.drawn[lane] ?? []) {
      for (let k = 0; k < segments.x0.length; k++) {
        if (segments.count[k] > 1 && segments.x0[k] - slack <= x && x <= segments.x1[k] + slack) {
          return { lane, segments, k, x0: segments.x0[k], x1: segments.x1[k] };
        }
      }
    }
    return null;
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
      this.tooltip.textContent = visibleText(this.waitText(wait));
      this.placeTooltip(event);
    }
    if (block !== null) {
      // A block stands for many ops: it names them, and highlights none in the other views.
      this.tooltip.textContent = visibleText(this.blockText(block));
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

  /** "12 ops · 60 µs · GPU:0 · run 2 · iterations 3–4: a, b, c, d, e, … · click to zoom in" */
  private blockText(block: Block): string {
    const lane = this.model.lanes[block.lane];
    const { segments, k } = block;
    const b = lane.bars;
    const devices = this.store.devices;
    let t0 = Infinity;
    let t1 = -Infinity;
    let bytes = 0;
    const names: string[] = [];
    const runs = new Set<number>();
    let [first, last] = [Infinity, -Infinity]; // iterations of a while loop the ops ran in
    const routes = new Map<string, number>();
    for (let i = segments.first[k]; i < segments.end[k]; i++) {
      if (lane.kind === 'transfer' && b.device[i] !== segments.device) {
        continue; // another destination's transfer, drawn in its own colour
      }
      t0 = Math.min(t0, b.t0[i]);
      t1 = Math.max(t1, b.t1[i]);
      bytes += b.bytes[i];
      runs.add(b.run[i]);
      if (this.inLoop(b, i)) {
        first = Math.min(first, b.iteration[i]);
        last = Math.max(last, b.iteration[i]);
      }
      if (lane.kind === 'transfer') {
        const route = `${deviceShort(devices, b.peer[i])} → ${deviceShort(devices, b.device[i])}`;
        routes.set(route, (routes.get(route) ?? 0) + 1);
      } else if (names.length <= BLOCK_NAMES) {
        names.push(this.nodes.get(b.node[i])?.name ?? `node ${b.node[i]}`);
      }
    }
    const count = segments.count[k];
    const run = runs.size === 1 && !runs.has(-1) ? ` · run ${[...runs][0] + 1}` : '';
    const iterations =
      first > last
        ? ''
        : first === last
          ? iterationText(first)
          : ` · iterations ${first + 1}–${last + 1}`;
    const listed =
      lane.kind === 'transfer'
        ? `${formatBytes(bytes)}: ${[...routes].map(([route, n]) => `${route} ×${n}`).join(', ')}`
        : `${names.slice(0, BLOCK_NAMES).join(', ')}${count > BLOCK_NAMES ? ', …' : ''}`;
    const what = lane.kind === 'transfer' ? 'transfers' : 'ops';
    const where = lane.kind === 'transfer' ? '' : ` · ${this.labels[block.lane].split(' · ')[0]}`;
    return `${count} ${what} · ${formatNs(t1 - t0)}${where}${run}${iterations}: ${listed} · click to zoom in`;
  }

  /**
   * Whether bar i ran inside a while loop: its frame names a LoopCond (a document whose writer
   * left the loop columns at 0 rather than -1 names none).
   */
  private inLoop(b: LaneBars, i: number): boolean {
    return b.iteration[i] >= 0 && this.nodes.get(b.frame[i])?.type === 'LoopCond';
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
    const lane = this.model.lanes[bar.lane];
    const b = lane.bars;
    const i = bar.index;
    const nodeId = b.node[i];
    const node = this.nodes.get(nodeId);
    const what = node ? `${node.name} (${node.type})` : `node ${nodeId}`;
    const devices = this.store.devices;
    const network = crossesTasks(devices, b.peer[i], b.device[i]) ? ' between tasks' : '';
    const where =
      lane.kind === 'transfer'
        ? `${formatBytes(b.bytes[i])} ${deviceShort(devices, b.peer[i])} → ${deviceShort(devices, b.device[i])}${network}`
        : this.labels[bar.lane].split(' · ')[0];
    const run = b.run[i] >= 0 ? ` · run ${b.run[i] + 1}` : '';
    // An op inside a while loop runs once per iteration: which one this bar is (counted from 1,
    // as runs are; the details pane lists them all).
    const iteration = lane.kind === 'op' && this.inLoop(b, i) ? iterationText(b.iteration[i]) : '';
    const source = TIMING_SOURCE_LABELS[b.source[i]] ?? '';
    this.tooltip.textContent = visibleText(
      `${what} · ${formatNs(b.t1[i] - b.t0[i])} · ${where}${run}${iteration}${source ? ` · ${source}` : ''}`,
    );
    this.tooltip.hidden = false;
    if (event) {
      this.placeTooltip(event);
    }
    this.hoveredHere = nodeId;
    this.state.set({ hovered: nodeId });
  }
}
