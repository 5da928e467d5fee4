/**
 * The memory panel: bytes in use over time per device, from the ALLOC and FREE events.
 *
 * - The series, the tensors' lifetimes and the cards' readings are the memory model's
 *   (memorymodel.ts): per device the bytes in use after each ALLOC/FREE, downsampled past 2,000
 *   points with the peak kept.
 * - A device's memory limit is drawn as a dashed line only when it is at most 4x the device's
 *   peak; a larger limit (a 80 GiB GPU running a 100 MiB model) would squash the curve to the
 *   axis, so it is named in the legend entry instead ("GPU:0 · limit 80 GiB"), and in the line
 *   under the plot. When those entries would take more than two legend rows (eight GPUs on a
 *   narrow page), the legend names the devices only and the line under the plot the limits.
 * - Hovering the plot lists the largest tensors live at that time (allocated, not yet freed) and
 *   the ops that produced them; otherwise the list is for the scrubber time (or the peak).
 * - The x axis is the timeline's (timewindow.ts): idle gaps between runs collapsed, the same
 *   window and ticks, and the same left edge (alignLeft), so a step here lines up with the op
 *   that caused it in the timing panel.
 * - CARD_MEMORY events are a GPU card's own reading of its used memory (NVML), sampled about
 *   every 10 ms while runs are in flight: the whole card (the runtime's reservation, the CUDA
 *   context, other processes), filed under the first logical device carved from the card. Each
 *   card is a dotted line in that device's colour ("GPU:0's card · NVML reading"), time-sorted and
 *   downsampled like the op series (the peak kept). It has a second y axis on the right: the card
 *   may read 100 GiB while the ops hold 100 MiB, and one shared axis would squash the op curves
 *   flat. The right axis widens the right margin, which the timeline then takes too (onPlotRight),
 *   so both x axes keep the same width. Hovering (or the scrubber) also names the card reading at
 *   that time: the latest sample at or before it. The readings are never summed with ALLOC/FREE;
 *   without CARD_MEMORY events the panel draws exactly what it drew before (no right axis).
 */
import { element } from './dom';
import { escapePlotlyText, plotTheme, type PlotlyModule } from './plotly';
import { PlotPanel } from './plotpanel';
import { formatBytes, formatNs, shortDeviceName } from './format';
import { panelDeviceColour } from './devicecolour';
import { cursorShapes, pointerToData, type PanelOptions } from './panel';
import type { TimeAxis } from './timeaxis';
import { axisTicks, defaultWindow, tickCharPx } from './timewindow';
import { axisTitle, runClock, timeWords, type RunClock } from './clock';
import type { DeviceRecord } from './types';
import {
  Allocations,
  liveTensorsAt,
  MemoryTracker,
  type CardSeries,
  type DeviceSeries,
  type MemoryModel,
} from './memorymodel';
import type { ViewState, ViewStateFields } from './viewstate';
import type { PlacementStore } from './store';
import type { PlotlyTrace } from 'plotly.js-basic-dist-min';
import { visibleText } from './visible';

/** A limit is drawn when limit <= LIMIT_SCALE * peak. */
export const LIMIT_SCALE = 4;
/** The plot's right margin (px) without a card axis: the timeline's. */
export const RIGHT_MARGIN = 12;
/** How far the x tick labels sit below the axis (px): below the y axis's 0 beside them. */
const TICK_STANDOFF_PX = 8;
/** The right margin (px) with the card axis: its tick labels and title (plotly may widen it). */
export const CARD_AXIS_MARGIN = 64;
/** The right axis's title. */
export const CARD_AXIS_TITLE = 'card memory (NVML)';

/** Beside each legend text plotly draws its symbol and a gap: about this many pixels. */
export const LEGEND_ENTRY_PAD_PX = 75;
const LEGEND_MAX_ROWS = 2;
/** A short legend's line symbol: plotly's least ``itemwidth``. */
const SHORT_SYMBOL_PX = 30;

/** The rows a horizontal legend of ``texts`` takes in ``width`` pixels (11 px text). */
export function legendRows(texts: readonly string[], width: number): number {
  let rows = 1;
  let used = 0;
  for (const text of texts) {
    const entry = text.length * tickCharPx(11) + LEGEND_ENTRY_PAD_PX;
    if (used > 0 && used + entry > width) {
      rows += 1;
      used = 0;
    }
    used += entry;
  }
  return rows;
}

/** Whether a device's limit is drawn as a line (see the module comment). */
export function limitDrawn(limit: number, peak: number): boolean {
  return limit > 0 && peak > 0 && limit <= LIMIT_SCALE * peak;
}

/**
 * The physical card a device was carved from, short: `GPU:0` for `/physical_device:GPU:0`; null
 * when its parent names none.
 */
export function cardShortName(device: DeviceRecord | undefined): string | null {
  const match = /physical_device:(.+)$/.exec(device?.parent ?? '');
  return match === null ? null : match[1];
}

/** A unit for the y axis so that the largest value drawn reads as 1 to 1023. */
function byteUnit(max: number): { scale: number; name: string } {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (i < units.length - 1 && max >= 1024 ** (i + 1)) {
    i += 1;
  }
  return { scale: 1024 ** i, name: units[i] };
}

export class MemoryPanel extends PlotPanel {
  protected readonly messageLine: HTMLDivElement;
  private readonly liveTitle: HTMLDivElement;
  /** The card readings (NVML) at the list's time; in the page only while there are cards. */
  private readonly cardLine: HTMLDivElement;
  private readonly liveList: HTMLOListElement;
  private model: MemoryModel = { series: [], cards: [], allocations: new Allocations() };
  private readonly tracker = new MemoryTracker();
  private axis: TimeAxis | null = null;
  private hoverTime: number | null = null;
  /** The plot's left margin (px): the timeline's, so both plots start at the same x. */
  private left = 56;
  /** The plot's right margin (px) last reported to onPlotRight's listeners. */
  private right = RIGHT_MARGIN;
  private readonly rightListeners = new Set<(px: number) => void>();
  /** The timeline's zoom window (display ns), followed; null: the default window. */
  private zoom: [number, number] | null = null;

  constructor(
    parent: HTMLElement,
    store: PlacementStore,
    state: ViewState,
    options: PanelOptions = {},
  ) {
    super(parent, store, state, options, 'placeviz-memory', 'Memory in use');
    const doc = parent.ownerDocument;
    this.element.dataset.series = '0';
    this.messageLine = element(doc, 'div', 'placeviz-panel-note');
    const live = element(doc, 'div', 'placeviz-live-tensors');
    this.liveTitle = element(doc, 'div', 'placeviz-live-title');
    this.liveList = doc.createElement('ol');
    this.cardLine = element(doc, 'div', 'placeviz-card-reading');
    live.append(this.liveTitle, this.liveList);
    this.element.append(this.plot, this.messageLine, live);
    this.plot.addEventListener('mousemove', (event) => {
      const at = pointerToData(this.plot, event);
      this.setHoverTime(at === null ? null : this.timeAxis.toReal(at.x * 1e6));
    });
    this.plot.addEventListener('mouseleave', () => this.setHoverTime(null));
    this.start();
  }

  get seriesModel(): MemoryModel {
    return this.model;
  }

  /** Start the plot area `px` from the panel's left edge (the timeline's), and redraw. */
  alignLeft(px: number): void {
    if (Math.round(px) !== this.left && px > 0) {
      this.left = Math.round(px);
      void this.draw();
    }
  }

  /**
   * Call `cb` with the plot area's right margin (px) after each draw that changes it: the card
   * axis widens it, and the timeline takes it so both x axes keep one width. Returns the stop.
   */
  onPlotRight(cb: (px: number) => void): () => void {
    this.rightListeners.add(cb);
    return () => this.rightListeners.delete(cb);
  }

  /** Show the display window `window` (the timeline's zoom), or the default one (null). */
  showWindow(window: readonly [number, number] | null): void {
    this.zoom = window === null ? null : [window[0], window[1]];
    void this.draw();
  }

  /** The clock the panel's times read (clock.ts): the picked run's, else the first run's. */
  private clock(): RunClock {
    return runClock(this.store, this.state.get('run'));
  }

  /** The runs' collapsed time axis, shared with the timeline (real ns <-> display ns). */
  private get timeAxis(): TimeAxis {
    this.axis ??= this.store.activity().timeAxis;
    return this.axis;
  }

  protected recompute(): void {
    this.tracker.update(this.store.events);
    this.model = this.tracker.model();
    this.axis = this.store.activity().timeAxis;
    this.element.dataset.series = String(this.model.series.length);
    if (this.model.cards.length > 0 || this.element.dataset.cards !== undefined) {
      this.element.dataset.cards = String(this.model.cards.length);
    }
    const offScale = this.model.series
      .map((s) => ({ s, device: this.deviceRecord(s.device) }))
      .filter(
        ({ s, device }) =>
          device && device.memory_limit > 0 && !limitDrawn(device.memory_limit, s.peak),
      )
      .map(({ device }) => `${shortDeviceName(device!.name)} ${formatBytes(device!.memory_limit)}`);
    this.messageLine.textContent =
      this.model.series.length === 0
        ? this.model.cards.length === 0
          ? this.store.prediction !== null
            ? 'Memory not modeled: a prediction models times only.'
            : 'No memory events recorded.'
          : "No op memory events recorded: only the cards' own readings (NVML)."
        : offScale.length > 0
          ? visibleText(
              `Limits not drawn (more than ${LIMIT_SCALE}x the peak): ${offScale.join(', ')}`,
            )
          : '';
    this.renderLiveTensors();
  }

  protected hasData(): boolean {
    return this.model.series.length > 0 || this.model.cards.length > 0;
  }

  private setHoverTime(t: number | null): void {
    if (t !== this.hoverTime) {
      this.hoverTime = t;
      this.renderLiveTensors();
    }
  }

  private deviceRecord(id: number): DeviceRecord | undefined {
    return this.store.devices.find((d) => d.id === id);
  }

  private deviceLabel(id: number): string {
    const device = this.deviceRecord(id);
    return device ? shortDeviceName(device.name) : `device ${id}`;
  }

  /** A card named by its first logical device: "GPU:0's card" (plain text, not escaped). */
  private cardLabel(id: number): string {
    return `${this.deviceLabel(id)}'s card`;
  }

  protected onState(changed: ReadonlySet<keyof ViewStateFields>): void {
    if (changed.has('run')) {
      this.zoom = null;
      void this.draw(); // the picked run's window, as the timeline shows it
    } else if (changed.has('time')) {
      this.renderLiveTensors();
      if (this.plotted) {
        void this.plotted.relayout(this.plot, { shapes: this.cursorShapes() });
      }
    }
  }

  /** The time the live-tensor list is for: hovered, else the scrubber's, else the peak's. */
  private listTime(): number | null {
    if (this.hoverTime !== null) {
      return this.hoverTime;
    }
    const time = this.state.get('time');
    if (time !== null) {
      return time;
    }
    // Without op memory series: the highest card reading's time.
    let best: DeviceSeries | CardSeries | null = null;
    for (const s of this.model.series.length > 0 ? this.model.series : this.model.cards) {
      if (best === null || s.peak > best.peak) {
        best = s;
      }
    }
    return best && Number.isFinite(best.peakTime) ? best.peakTime : null;
  }

  /** Each card's reading at time t: "GPU:0's card (NVML): 1.20 GiB used"; '' for none. */
  cardReadingText(t: number | null): string {
    if (t === null) {
      return '';
    }
    const readings: string[] = [];
    for (const card of this.model.cards) {
      const bytes = this.tracker.cardReadingAt(card.device, t);
      if (bytes !== null) {
        readings.push(`${this.cardLabel(card.device)} (NVML): ${formatBytes(bytes)} used`);
      }
    }
    return visibleText(readings.join(' · '));
  }

  private renderCards(t: number | null, why: string): void {
    if (this.model.cards.length === 0) {
      this.cardLine.remove();
      return;
    }
    if (!this.cardLine.isConnected) {
      this.liveTitle.after(this.cardLine);
    }
    const text = this.cardReadingText(t);
    this.cardLine.textContent = text;
    this.cardLine.hidden = text === '';
    if (t !== null && this.model.allocations.length === 0) {
      this.liveTitle.textContent = `Card memory at ${timeWords(this.clock(), t)}${why}`;
    }
  }

  private renderLiveTensors(): void {
    const t = this.listTime();
    const doc = this.element.ownerDocument;
    const why =
      this.hoverTime !== null ? '' : this.state.get('time') !== null ? ' (scrubber)' : ' (peak)';
    this.liveList.replaceChildren();
    if (t === null || this.model.allocations.length === 0) {
      this.liveTitle.textContent = '';
      this.renderCards(t, why);
      return;
    }
    this.renderCards(t, why);
    this.liveTitle.textContent = `Largest live tensors at ${timeWords(this.clock(), t)}${why}`;
    const live = liveTensorsAt(this.model.allocations, t);
    if (live.length === 0) {
      const item = doc.createElement('li');
      item.textContent = 'none';
      this.liveList.appendChild(item);
    }
    for (const a of live) {
      const node = this.nodes.get(a.node);
      const item = doc.createElement('li');
      item.dataset.node = String(a.node);
      const name = node ? node.name : `node ${a.node}`;
      const type = node?.type ? ` (${node.type})` : '';
      item.textContent = visibleText(
        `${formatBytes(a.bytes)} · ${name}${type} · ${this.deviceLabel(a.device)}`,
      );
      item.addEventListener('click', () => this.state.set({ selected: a.node }));
      item.addEventListener('mouseenter', () => this.state.set({ hovered: a.node }));
      item.addEventListener('mouseleave', () => {
        if (this.state.get('hovered') === a.node) {
          this.state.set({ hovered: null });
        }
      });
      this.liveList.appendChild(item);
    }
  }

  private cursorShapes(): Record<string, unknown>[] {
    const time = this.state.get('time');
    return cursorShapes(
      time === null ? null : this.timeAxis.toShown(time),
      plotTheme(this.element).cursor,
    );
  }

  /** Each series' legend entry: its device, and its limit where no line draws it, unless the
   * entries would then take more than two rows of ``width`` pixels: then the devices only, with
   * short symbols and no gaps between groups (``short``). */
  private legend(width: number): { names: string[]; short: boolean } {
    const labels = this.model.series.map((s) => escapePlotlyText(this.deviceLabel(s.device)));
    const named = this.model.series.map((s, i) => {
      const limit = this.deviceRecord(s.device)?.memory_limit ?? 0;
      return limit > 0 && !limitDrawn(limit, s.peak)
        ? `${labels[i]} · limit ${escapePlotlyText(formatBytes(limit))}`
        : labels[i];
    });
    const short = legendRows(named, width) > LEGEND_MAX_ROWS;
    return { names: short ? labels : named, short };
  }

  private traces(names: readonly string[]): {
    traces: PlotlyTrace[];
    unit: string;
    cardUnit: string | null;
  } {
    let max = 0;
    for (const s of this.model.series) {
      max = Math.max(max, s.peak);
      const limit = this.deviceRecord(s.device)?.memory_limit ?? 0;
      if (limitDrawn(limit, s.peak)) {
        max = Math.max(max, limit);
      }
    }
    const unit = byteUnit(max);
    const axis = this.timeAxis;
    const ms = (t: number) => axis.toShown(t) / 1e6;
    const clock = this.clock();
    const at = (t: number) => formatNs(t - clock.origin);
    const end = Math.max(
      this.store.endTime(),
      ...this.model.series.map((s) => s.t[s.t.length - 1]),
    );
    const traces: PlotlyTrace[] = [];
    for (const [index, s] of this.model.series.entries()) {
      const device = this.deviceRecord(s.device);
      const colour = panelDeviceColour(this.store.devices, s.device);
      const label = escapePlotlyText(this.deviceLabel(s.device));
      const limit = device?.memory_limit ?? 0;
      const drawLimit = limitDrawn(limit, s.peak);
      const legend = names[index];
      // Display times on the collapsed axis; the real ones in the hover text.
      const x = [ms(s.t[0])];
      const y = [0];
      const times = [at(s.t[0])];
      for (let i = 0; i < s.t.length; i++) {
        x.push(ms(s.t[i]));
        y.push(s.bytes[i] / unit.scale);
        times.push(at(s.t[i]));
      }
      x.push(ms(end));
      y.push(s.bytes[s.bytes.length - 1] / unit.scale);
      times.push(at(end));
      traces.push({
        type: 'scatter',
        mode: 'lines',
        name: legend,
        legendgroup: String(s.device),
        x,
        y,
        line: { color: colour, width: 1.5, shape: 'hv' },
        customdata: times,
        hovertemplate: `%{y:.3~f} ${unit.name} at %{customdata}<extra>${label}</extra>`,
      });
      if (drawLimit) {
        traces.push({
          type: 'scatter',
          mode: 'lines',
          name: `${label} limit`,
          legendgroup: String(s.device),
          showlegend: false,
          x: [Math.min(ms(0), x[0]), ms(end)],
          y: [limit / unit.scale, limit / unit.scale],
          line: { color: colour, width: 1, dash: 'dash' },
          hovertemplate: `limit ${escapePlotlyText(formatBytes(limit))}<extra>${label}</extra>`,
        });
      }
      traces.push({
        type: 'scatter',
        mode: 'markers',
        name: `${label} peak`,
        legendgroup: String(s.device),
        showlegend: false,
        x: [ms(s.peakTime)],
        y: [s.peak / unit.scale],
        marker: { color: colour, size: 8, symbol: 'triangle-down' },
        hovertemplate: `peak ${escapePlotlyText(formatBytes(s.peak))} at ${at(s.peakTime)}<extra>${label}</extra>`,
      });
    }
    const cards = this.cardTraces();
    return { traces: traces.concat(cards.traces), unit: unit.name, cardUnit: cards.unit };
  }

  /**
   * One dotted line per card on the right axis (y2), in its first device's colour, and that
   * axis's unit; none and null without cards (then there is no right axis).
   */
  private cardTraces(): { traces: PlotlyTrace[]; unit: string | null } {
    const cards = this.model.cards;
    if (cards.length === 0) {
      return { traces: [], unit: null };
    }
    const unit = byteUnit(Math.max(...cards.map((c) => c.peak)));
    const axis = this.timeAxis;
    const clock = this.clock();
    const traces = cards.map((card): PlotlyTrace => {
      const device = this.deviceRecord(card.device);
      const label = escapePlotlyText(this.cardLabel(card.device));
      // The physical card, when its name differs from the device's: "GPU:4's card (GPU:1)".
      const physical = cardShortName(device);
      const local = /device:([^/]+)$/.exec(device?.name ?? '')?.[1];
      const shown =
        physical !== null && local !== undefined && local !== physical
          ? `${label} (${escapePlotlyText(physical)})`
          : label;
      return {
        type: 'scatter',
        mode: 'lines',
        name: `${label} · NVML reading`,
        legendgroup: `card:${card.device}`,
        yaxis: 'y2',
        x: Array.from(card.t, (t) => axis.toShown(t) / 1e6),
        y: Array.from(card.bytes, (b) => b / unit.scale),
        line: {
          color: panelDeviceColour(this.store.devices, card.device),
          width: 1.5,
          dash: 'dot',
        },
        customdata: Array.from(card.t, (t) => formatNs(t - clock.origin)),
        hovertemplate: `card (NVML): %{y:.3~f} ${unit.name} used at %{customdata}<extra>${shown}</extra>`,
      };
    });
    return { traces, unit: unit.name };
  }

  protected async react(plotly: PlotlyModule): Promise<void> {
    const theme = plotTheme(this.element);
    const legend = this.legend((this.plot.clientWidth || 900) - this.left);
    const { traces, unit, cardUnit } = this.traces(legend.names);
    const run = this.state.get('run');
    const window = this.zoom ?? defaultWindow(this.store.activity(), run);
    const right = cardUnit === null ? RIGHT_MARGIN : CARD_AXIS_MARGIN;
    const width = (this.plot.clientWidth || 900) - this.left - right;
    const clock = this.clock();
    const collapsed = this.timeAxis.collapsesGaps(run);
    this.element.dataset.gapsCollapsed = String(collapsed);
    const layout = {
      height: this.options.height ?? 220,
      margin: { l: this.left, r: right, t: 8, b: 36 + TICK_STANDOFF_PX },
      paper_bgcolor: theme.background,
      plot_bgcolor: theme.background,
      font: { family: theme.font, color: theme.fontColor, size: 11 },
      showlegend: true,
      legend: {
        orientation: 'h',
        x: 0,
        y: 1.02,
        yanchor: 'bottom',
        ...(legend.short ? { itemwidth: SHORT_SYMBOL_PX, tracegroupgap: 0 } : {}),
      },
      // 'closest': the x values are display times; the hover text names the real time.
      hovermode: 'closest',
      // Keep the user's zoom across updates while events stream in; a picked run or the
      // timeline's zoom shows anew.
      uirevision: `placeviz:${run ?? 'all'}:${this.zoom?.join(',') ?? ''}`,
      xaxis: {
        title: { text: axisTitle(clock, collapsed, width) },
        gridcolor: theme.grid,
        zeroline: false,
        range: window ? [window[0] / 1e6, window[1] / 1e6] : undefined,
        tickmode: 'array',
        // Clear of the y axis's 0, which sits level with the first tick's label otherwise.
        ticklabelstandoff: TICK_STANDOFF_PX,
        ...axisTicks(this.timeAxis, clock, window, width, right),
      },
      yaxis: { title: { text: unit }, gridcolor: theme.grid, rangemode: 'tozero' },
      // The cards' NVML readings: their own scale on the right (see the module comment).
      ...(cardUnit === null
        ? {}
        : {
            yaxis2: {
              title: { text: CARD_AXIS_TITLE },
              overlaying: 'y',
              side: 'right',
              rangemode: 'tozero',
              showgrid: false,
              zeroline: false,
              ticksuffix: ` ${cardUnit}`,
              automargin: true,
            },
          }),
      shapes: this.cursorShapes(),
    };
    await this.plotWith(plotly, traces, layout);
    // The title and ticks were fitted to the plot's width before this layout (or a guess while
    // the page had not laid it out): laid out at another width, fit again, as the timeline does.
    if (Math.abs((this.plot.clientWidth || 900) - this.left - right - width) > 1) {
      void this.draw();
    }
    // What plotly made of the right margin (the card axis may have widened it).
    const size = (this.plot as unknown as { _fullLayout?: { _size?: { r?: number } } })._fullLayout
      ?._size?.r;
    // Without cards: the timeline's margin, whatever plotly made of it (nothing to align).
    const drawn = cardUnit === null ? RIGHT_MARGIN : Math.round(size ?? right);
    if (drawn !== this.right) {
      this.right = drawn;
      for (const cb of this.rightListeners) {
        cb(drawn);
      }
    }
  }
}
