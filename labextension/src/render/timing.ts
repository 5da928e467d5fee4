/**
 * The timing panel: a Gantt chart of OP events, one lane per device and stream, plus a lane for
 * transfers, and each device's utilisation (busy time / time spanned by the runs).
 *
 * Bars are drawn as one scatter trace per lane: each bar is a thick line segment [t0, t1]
 * followed by a gap (null), so 100,000 op events cost a handful of SVG paths, not 100,000
 * elements. Hovering is resolved here, not by plotly (which only hovers segment ends): the pointer
 * is mapped to a lane and a time and the bar under it found by binary search.
 */
import { element } from './dom';
import { escapePlotlyText, plotTheme, PLOT_CONFIG, type PlotlyModule } from './plotly';
import { PlotPanel } from './plotpanel';
import { formatNs, shortDeviceName } from './format';
import { panelDeviceColour } from './devicecolour';
import { cursorShapes, pointerToData, timeExtent, xRangeMs, type PanelOptions } from './panel';
import {
  EventKind,
  TimingSource,
  type DeviceRecord,
  type EventBatch,
  type RunRecord,
} from './types';
import type { ViewState, ViewStateFields } from './viewstate';
import type { PlacementStore } from './store';
import type { PlotlyHTMLElement, PlotlyTrace } from 'plotly.js-basic-dist-min';
import { visibleText } from './visible';

export type TimingEvents = Pick<
  EventBatch,
  'count' | 'kind' | 't0' | 't1' | 'node' | 'device' | 'stream' | 'source' | 'run' | 'peer'
>;

export const SOURCE_LABELS: Record<number, string> = {
  [TimingSource.NONE]: 'none',
  [TimingSource.CLOCK]: 'clock',
  [TimingSource.CUDA_EVENT]: 'cuda-event',
  [TimingSource.MODELED]: 'modeled',
};

export interface Lane {
  kind: 'op' | 'transfer';
  device: number; // -1 for the transfers lane
  stream: number;
  label: string;
  /** Bars in this lane: indices [start, end) into TimingModel.bars. */
  start: number;
  end: number;
}

export interface Bars {
  lane: Int32Array;
  t0: Float64Array;
  t1: Float64Array;
  node: Int32Array;
  device: Int16Array; // for transfers: the destination
  source: Int8Array;
  /** Per lane, running maximum of t1 over its bars (for hit tests among overlapping bars). */
  maxT1: Float64Array;
}

export interface TimingModel {
  lanes: Lane[];
  bars: Bars;
  /** OP bars (the transfers lane's bars are not counted). */
  opBars: number;
  /** Per device id: busy time (union of its OP intervals) / span. */
  utilisation: Map<number, number>;
  /** Per device id: the timing sources of its OP events. */
  sources: Map<number, Set<number>>;
  span: number;
}

interface TimingTables {
  devices: readonly DeviceRecord[];
  runs: readonly RunRecord[];
  originNs: number;
}

function deviceShort(devices: readonly DeviceRecord[], id: number): string {
  const device = devices.find((d) => d.id === id);
  return device ? shortDeviceName(device.name) : id < 0 ? 'unplaced' : `device ${id}`;
}

/** Total length of the union of intervals (sorted by start in place). */
function unionLength(intervals: [number, number][]): number {
  intervals.sort((a, b) => a[0] - b[0]);
  let total = 0;
  let lo = -Infinity;
  let hi = -Infinity;
  for (const [a, b] of intervals) {
    if (a > hi) {
      if (hi > lo) {
        total += hi - lo;
      }
      lo = a;
      hi = b;
    } else if (b > hi) {
      hi = b;
    }
  }
  if (hi > lo) {
    total += hi - lo;
  }
  return total;
}

/** Intervals the runs cover: RUN events, else run records, else the OP events' extent. */
function runIntervals(events: TimingEvents, tables: TimingTables): [number, number][] {
  const intervals: [number, number][] = [];
  for (let e = 0; e < events.count; e++) {
    if (events.kind[e] === EventKind.RUN && events.t1[e] > events.t0[e]) {
      intervals.push([events.t0[e], events.t1[e]]);
    }
  }
  if (intervals.length === 0) {
    for (const run of tables.runs) {
      if (run.t1 > run.t0) {
        intervals.push([run.t0 - tables.originNs, run.t1 - tables.originNs]);
      }
    }
  }
  if (intervals.length === 0) {
    let lo = Infinity;
    let hi = -Infinity;
    for (let e = 0; e < events.count; e++) {
      if (events.kind[e] === EventKind.OP) {
        lo = Math.min(lo, events.t0[e]);
        hi = Math.max(hi, events.t1[e]);
      }
    }
    if (hi > lo) {
      intervals.push([lo, hi]);
    }
  }
  return intervals;
}

export function computeTiming(events: TimingEvents, tables: TimingTables): TimingModel {
  const { devices } = tables;
  const laneOf = new Map<string, number>();
  const laneKeys: { device: number; stream: number }[] = [];
  const ops: number[] = [];
  const transfers: number[] = [];
  for (let e = 0; e < events.count; e++) {
    const kind = events.kind[e];
    if (kind === EventKind.OP) {
      ops.push(e);
      const key = `${events.device[e]}:${events.stream[e]}`;
      if (!laneOf.has(key)) {
        laneOf.set(key, -1);
        laneKeys.push({ device: events.device[e], stream: events.stream[e] });
      }
    } else if (kind === EventKind.TRANSFER) {
      transfers.push(e);
    }
  }
  const position = new Map(devices.map((d, i) => [d.id, i]));
  const rank = (id: number) => position.get(id) ?? devices.length + (id < 0 ? 1e6 : id);
  laneKeys.sort((a, b) => rank(a.device) - rank(b.device) || a.stream - b.stream);
  laneKeys.forEach((k, i) => laneOf.set(`${k.device}:${k.stream}`, i));

  // Per device: busy intervals and sources.
  const busy = new Map<number, [number, number][]>();
  const sources = new Map<number, Set<number>>();
  for (const e of ops) {
    const device = events.device[e];
    let list = busy.get(device);
    if (list === undefined) {
      list = [];
      busy.set(device, list);
      sources.set(device, new Set());
    }
    list.push([events.t0[e], Math.max(events.t0[e], events.t1[e])]);
    sources.get(device)!.add(events.source[e]);
  }
  const span = unionLength(runIntervals(events, tables));
  const utilisation = new Map<number, number>();
  for (const [device, list] of busy) {
    utilisation.set(device, span > 0 ? Math.min(1, unionLength(list) / span) : 0);
  }

  // Bars sorted by lane, then start.
  const transferLane = transfers.length > 0 ? laneKeys.length : -1;
  const all = ops.concat(transfers);
  const laneOfEvent = (e: number) =>
    events.kind[e] === EventKind.OP
      ? laneOf.get(`${events.device[e]}:${events.stream[e]}`)!
      : transferLane;
  const laneIndex = new Int32Array(events.count);
  for (const e of all) {
    laneIndex[e] = laneOfEvent(e);
  }
  all.sort((a, b) => laneIndex[a] - laneIndex[b] || events.t0[a] - events.t0[b] || a - b);
  const n = all.length;
  const bars: Bars = {
    lane: new Int32Array(n),
    t0: new Float64Array(n),
    t1: new Float64Array(n),
    node: new Int32Array(n),
    device: new Int16Array(n),
    source: new Int8Array(n),
    maxT1: new Float64Array(n),
  };
  const laneCount = laneKeys.length + (transferLane >= 0 ? 1 : 0);
  const starts = new Int32Array(laneCount + 1).fill(n);
  for (let i = n - 1; i >= 0; i--) {
    const e = all[i];
    bars.lane[i] = laneIndex[e];
    bars.t0[i] = events.t0[e];
    bars.t1[i] = Math.max(events.t0[e], events.t1[e]);
    bars.node[i] = events.node[e];
    bars.device[i] = events.device[e];
    bars.source[i] = events.source[e];
    starts[laneIndex[e]] = i;
  }
  for (let l = laneCount - 1; l >= 0; l--) {
    if (starts[l] > starts[l + 1]) {
      starts[l] = starts[l + 1];
    }
  }
  for (let i = 0; i < n; i++) {
    bars.maxT1[i] =
      i > 0 && bars.lane[i - 1] === bars.lane[i]
        ? Math.max(bars.maxT1[i - 1], bars.t1[i])
        : bars.t1[i];
  }

  const lanes: Lane[] = laneKeys.map((k, i) => {
    const first = i === 0 || laneKeys[i - 1].device !== k.device;
    const name = deviceShort(devices, k.device);
    let label = k.stream >= 0 ? `${name} stream ${k.stream}` : name;
    if (first) {
      const util = utilisation.get(k.device) ?? 0;
      label += ` · ${Math.round(util * 100)}%`;
      const deviceSources = sources.get(k.device);
      if (deviceSources?.has(TimingSource.MODELED)) {
        label += ' (modeled)';
      }
    }
    return {
      kind: 'op',
      device: k.device,
      stream: k.stream,
      label,
      start: starts[i],
      end: starts[i + 1],
    };
  });
  if (transferLane >= 0) {
    lanes.push({
      kind: 'transfer',
      device: -1,
      stream: -1,
      label: 'transfers',
      start: starts[transferLane],
      end: starts[transferLane + 1],
    });
  }
  return { lanes, bars, opBars: ops.length, utilisation, sources, span };
}

/**
 * The bar of `lane` under time t (within `tolerance` ns), the latest-starting one when bars
 * overlap; -1 when none.
 */
export function barAt(model: TimingModel, lane: number, t: number, tolerance = 0): number {
  const info = model.lanes[lane];
  if (info === undefined || info.start >= info.end) {
    return -1;
  }
  const { t0, t1, maxT1 } = model.bars;
  // Last bar starting at or before t + tolerance.
  let lo = info.start;
  let hi = info.end;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (t0[mid] <= t + tolerance) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  let best = -1;
  let bestDistance = Infinity;
  for (let i = lo - 1; i >= info.start && maxT1[i] >= t - tolerance; i--) {
    const distance = t < t0[i] ? t0[i] - t : t > t1[i] ? t - t1[i] : 0;
    if (distance <= tolerance && distance < bestDistance) {
      best = i;
      bestDistance = distance;
      if (distance === 0) {
        break;
      }
    }
  }
  return best;
}

/** Bar indices of a node. */
export function barsOfNode(model: TimingModel, node: number): number[] {
  const found: number[] = [];
  const { node: nodes } = model.bars;
  for (let i = 0; i < nodes.length; i++) {
    if (nodes[i] === node) {
      found.push(i);
    }
  }
  return found;
}

/** A lane's bars of one colour merged for drawing: segments [t0[i], t1[i]] in ns. */
export interface LaneSegments {
  device: number;
  t0: number[];
  t1: number[];
}

/**
 * The bars of a lane that meet [lo, hi] (ns), merged where they are less than `resolution` ns
 * apart and widened to at least `resolution`: what a plot `resolution` ns per pixel wide can
 * show. However many events a lane holds, it yields at most about (hi - lo) / resolution
 * segments per colour, so drawing cost follows the plot's width, not the trace's size.
 */
export function coalesceLane(
  model: TimingModel,
  lane: number,
  lo: number,
  hi: number,
  resolution: number,
): LaneSegments[] {
  const info = model.lanes[lane];
  if (info === undefined || info.start >= info.end) {
    return [];
  }
  const { t0, t1, maxT1, device } = model.bars;
  // First bar whose lane-running maximum end reaches lo (maxT1 never decreases in a lane).
  let first = info.start;
  let last = info.end;
  while (first < last) {
    const mid = (first + last) >> 1;
    if (maxT1[mid] < lo) {
      first = mid + 1;
    } else {
      last = mid;
    }
  }
  const groups = new Map<number, LaneSegments & { open: boolean }>();
  for (let i = first; i < info.end && t0[i] <= hi; i++) {
    if (t1[i] < lo) {
      continue;
    }
    let group = groups.get(device[i]);
    if (group === undefined) {
      group = { device: device[i], t0: [], t1: [], open: false };
      groups.set(device[i], group);
    }
    const start = t0[i];
    const end = Math.max(t1[i], start + resolution);
    const n = group.t0.length;
    if (n > 0 && start <= group.t1[n - 1] + resolution) {
      group.t1[n - 1] = Math.max(group.t1[n - 1], end);
    } else {
      group.t0.push(start);
      group.t1.push(end);
    }
  }
  return [...groups.values()].map(({ device: d, t0: a, t1: b }) => ({ device: d, t0: a, t1: b }));
}

const LANE_PX = 22;
const BAR_PX = 12;
/** Highlight outlines drawn at most (a node that ran in thousands of runs). */
const MAX_HIGHLIGHTS = 500;
/** Plot width assumed before plotly has laid the plot out. */
const DEFAULT_PLOT_PX = 900;

export class TimingPanel extends PlotPanel {
  protected readonly messageLine: HTMLDivElement;
  private readonly tooltip: HTMLDivElement;
  private model!: TimingModel;
  private hoveredHere: number | null = null;
  /** The x range (ms) the user zoomed to; null: the events' extent. */
  private viewMs: [number, number] | null = null;

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
    this.messageLine = element(doc, 'div', 'placeviz-panel-note placeviz-timing-sources');
    this.tooltip = element(doc, 'div', 'placeviz-tooltip');
    this.tooltip.hidden = true;
    this.element.append(this.messageLine, this.plot, this.tooltip);
    this.plot.addEventListener('mousemove', (event) => this.onPointer(event));
    this.plot.addEventListener('mouseleave', () => this.setHover(null, null));
    this.plot.addEventListener('click', (event) => {
      const hit = this.hitTest(event);
      if (hit >= 0) {
        this.state.set({ selected: this.model.bars.node[hit] });
      }
    });
    this.start();
  }

  get timingModel(): TimingModel {
    return this.model;
  }

  protected recompute(): void {
    const store = this.store;
    this.model = computeTiming(store.events, {
      devices: store.devices,
      runs: store.runs,
      originNs: store.originNs,
    });
    this.element.dataset.bars = String(this.model.opBars);
    this.element.dataset.lanes = String(this.model.lanes.length);
    const parts: string[] = [];
    for (const [device, set] of this.model.sources) {
      const labels = [...set].sort().map((s) => SOURCE_LABELS[s] ?? `source ${s}`);
      const record = this.store.devices.find((d) => d.id === device);
      const simulated = record?.kind === 'simulated' ? ', simulated device' : '';
      parts.push(`${deviceShort(this.store.devices, device)}: ${labels.join('/')}${simulated}`);
    }
    this.messageLine.textContent =
      this.model.lanes.length === 0
        ? 'No op timings recorded.'
        : visibleText(`Timing source — ${parts.join(' · ')}`);
  }

  protected hasData(): boolean {
    return this.model.lanes.length > 0;
  }

  protected onState(changed: ReadonlySet<keyof ViewStateFields>): void {
    if (
      this.plotted &&
      (changed.has('time') || changed.has('hovered') || changed.has('selected'))
    ) {
      // Shapes only: a relayout of shapes redraws them without recomputing the traces.
      void this.plotted.relayout(this.plot, { shapes: this.shapes() });
    }
  }

  /** The x range (ms) drawn: the user's zoom, else the events' extent. */
  private rangeMs(): [number, number] | undefined {
    return this.viewMs ?? xRangeMs(timeExtent(this.store.events));
  }

  /** ns per pixel at the current range. */
  private resolution(): number {
    const range = this.rangeMs();
    const full = (this.plot as unknown as { _fullLayout?: { _size?: { w?: number } } })._fullLayout;
    const width = full?._size?.w || DEFAULT_PLOT_PX;
    return range ? ((range[1] - range[0]) * 1e6) / width : 1;
  }

  /** The cursor, and outlines around the hovered and selected ops' bars. */
  private shapes(): Record<string, unknown>[] {
    const theme = plotTheme(this.element);
    const shapes = cursorShapes(this.state.get('time'), theme.cursor);
    const ids = [this.state.get('hovered'), this.state.get('selected')];
    const { node, t0, t1, lane } = this.model.bars;
    const minWidth = this.resolution() * 2;
    let drawn = 0;
    for (let i = 0; i < node.length && drawn < MAX_HIGHLIGHTS; i++) {
      if (node[i] === ids[0] || node[i] === ids[1]) {
        const centre = (t0[i] + Math.max(t1[i], t0[i] + minWidth)) / 2;
        const half = Math.max(t1[i] - t0[i], minWidth) / 2;
        shapes.push({
          type: 'rect',
          xref: 'x',
          yref: 'y',
          x0: (centre - half) / 1e6,
          x1: (centre + half) / 1e6,
          y0: lane[i] - 0.42,
          y1: lane[i] + 0.42,
          line: { color: theme.fontColor, width: node[i] === ids[1] ? 2 : 1.5 },
          fillcolor: 'rgba(0,0,0,0)',
          layer: 'above',
        });
        drawn += 1;
      }
    }
    return shapes;
  }

  private traces(): PlotlyTrace[] {
    const { lanes } = this.model;
    const range = this.rangeMs();
    const resolution = this.resolution();
    // Bars just outside the view too, so a small pan shows bars before the next redraw.
    const width = range ? (range[1] - range[0]) * 1e6 : Infinity;
    const lo = range ? range[0] * 1e6 - width : -Infinity;
    const hi = range ? range[1] * 1e6 + width : Infinity;
    const traces: PlotlyTrace[] = [];
    for (let l = 0; l < lanes.length; l++) {
      const lane = lanes[l];
      // One trace per colour: an OP lane is one device; the transfers lane one per destination.
      for (const group of coalesceLane(this.model, l, lo, hi, resolution)) {
        const x: (number | null)[] = new Array(group.t0.length * 3);
        const y: (number | null)[] = new Array(group.t0.length * 3);
        for (let k = 0; k < group.t0.length; k++) {
          x[3 * k] = group.t0[k] / 1e6;
          x[3 * k + 1] = group.t1[k] / 1e6;
          x[3 * k + 2] = null;
          y[3 * k] = l;
          y[3 * k + 1] = l;
          y[3 * k + 2] = null;
        }
        traces.push({
          type: 'scatter',
          mode: 'lines',
          x,
          y,
          name: escapePlotlyText(lane.label),
          showlegend: false,
          hoverinfo: 'skip',
          connectgaps: false,
          line: {
            color: panelDeviceColour(this.store.devices, group.device),
            width: lane.kind === 'transfer' ? BAR_PX * 0.6 : BAR_PX,
          },
        });
      }
    }
    return traces;
  }

  /** The user zoomed or panned: redraw the bars at the new level of detail. */
  private onRelayout(event: unknown): void {
    const keys = Object.keys((event as Record<string, unknown>) ?? {});
    if (!keys.some((key) => key.startsWith('xaxis'))) {
      return;
    }
    const full = (this.plot as unknown as { _fullLayout?: { xaxis?: { range?: number[] } } })
      ._fullLayout;
    const range = full?.xaxis?.range;
    const next: [number, number] | null =
      range && Number.isFinite(range[0]) && Number.isFinite(range[1])
        ? [Number(range[0]), Number(range[1])]
        : null;
    const current = this.viewMs;
    if (next && current && next[0] === current[0] && next[1] === current[1]) {
      return;
    }
    this.viewMs = next;
    void this.draw();
  }

  protected async react(plotly: PlotlyModule): Promise<void> {
    const theme = plotTheme(this.element);
    const lanes = this.model.lanes;
    const traces = this.traces();
    const layout = {
      height: this.options.height ?? Math.max(120, 48 + LANE_PX * lanes.length),
      margin: { l: 40, r: 12, t: 4, b: 36 },
      paper_bgcolor: theme.background,
      plot_bgcolor: theme.background,
      font: { family: theme.font, color: theme.fontColor, size: 11 },
      showlegend: false,
      hovermode: false,
      dragmode: 'zoom',
      uirevision: 'placeviz',
      xaxis: {
        title: { text: 'ms' },
        gridcolor: theme.grid,
        zeroline: false,
        range: xRangeMs(timeExtent(this.store.events)),
      },
      yaxis: {
        automargin: true,
        tickmode: 'array',
        tickvals: lanes.map((_, i) => i),
        ticktext: lanes.map((l) => escapePlotlyText(l.label)),
        range: [lanes.length - 0.5, -0.5],
        fixedrange: true,
        showgrid: false,
        zeroline: false,
      },
      shapes: this.shapes(),
    };
    await plotly.react(this.plot, traces, layout, PLOT_CONFIG);
    if (this.plotted === null) {
      (this.plot as unknown as PlotlyHTMLElement).on('plotly_relayout', (event) =>
        this.onRelayout(event),
      );
    }
  }

  /** The bar under a pointer event (once plotly has drawn); -1 if none. */
  private hitTest(event: MouseEvent): number {
    const at = pointerToData(this.plot, event);
    if (at === null) {
      return -1;
    }
    // x is in ms; a bar within 3 px of the pointer counts (thin bars stay hoverable).
    return barAt(this.model, Math.round(at.y), at.x * 1e6, 3 * at.xPerPx * 1e6);
  }

  private onPointer(event: MouseEvent): void {
    const hit = this.hitTest(event);
    if (hit < 0) {
      this.setHover(null, null);
      return;
    }
    this.setHover(hit, event);
  }

  private setHover(bar: number | null, event: MouseEvent | null): void {
    if (bar === null) {
      this.tooltip.hidden = true;
      if (this.hoveredHere !== null && this.state.get('hovered') === this.hoveredHere) {
        this.state.set({ hovered: null });
      }
      this.hoveredHere = null;
      return;
    }
    const { bars, lanes } = this.model;
    const nodeId = bars.node[bar];
    const node = this.nodes.get(nodeId);
    const lane = lanes[bars.lane[bar]];
    const what = node ? `${node.name} (${node.type})` : `node ${nodeId}`;
    const where =
      lane.kind === 'transfer'
        ? `transfer to ${deviceShort(this.store.devices, bars.device[bar])}`
        : lane.label.split(' · ')[0];
    const source = SOURCE_LABELS[bars.source[bar]] ?? '';
    this.tooltip.textContent = visibleText(
      `${what} · ${formatNs(bars.t1[bar] - bars.t0[bar])} · ${where}${source ? ` · ${source}` : ''}`,
    );
    this.tooltip.hidden = false;
    if (event) {
      const rect = this.element.getBoundingClientRect();
      this.tooltip.style.left = `${event.clientX - rect.left + 12}px`;
      this.tooltip.style.top = `${event.clientY - rect.top + 12}px`;
    }
    this.hoveredHere = nodeId;
    this.state.set({ hovered: nodeId });
  }
}
