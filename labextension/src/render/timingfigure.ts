/**
 * The timing panel's figure, apart from the DOM: given the model, the visible window and the
 * plot's size, the plotly traces, shapes, annotations and layout of its Gantt chart (the panel,
 * timing.ts, hands them to plotly and handles the pointer).
 *
 * - Bars are filled paths of rectangles, one trace per lane and colour, merged to the plot's
 *   resolution (timingsegments.ts); bars wide enough carry their op's name (like Perfetto's).
 * - Transfers are also arrows from the source device's lane to the destination's, with bytes
 *   where there is room clear of the bars' names.
 * - A cluster task's stage waiting for what other tasks send it (WAIT events) is a hatched bar
 *   on its device's lane, under the ops.
 * - With several runs the x axis collapses the idle gaps between them (timeaxis.ts) and marks
 *   where each run starts.
 */
import type { PlotlyTrace } from 'plotly.js-basic-dist-min';
import { axisTitle, runName, type RunClock } from './clock';
import { textColourOn } from './colours';
import { panelDeviceColour } from './devicecolour';
import { formatBytes } from './format';
import { freeSpot, overlaps, type LabelRect } from './labels';
import { escapePlotlyText, type PlotTheme } from './plotly';
import type { TimeAxis } from './timeaxis';
import { barsOfNode, type BarRef } from './timingmodel';
import { coalesceLane, transferArrows, WIDE_PX, type LaneSegments } from './timingsegments';
import { fitLabel, laneText, type LaneLabel, type TimingNames } from './timingtext';
import { axisTicks } from './timewindow';

/** A lane's height and an op bar's (px). */
export const LANE_PX = 26;
const BAR_PX = 16;
/** The least left margin (px): the memory plot's own (its y axis title and ticks). */
export const LEFT_PX = 56;
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

/** What a figure is drawn from: the panel reads it from the store, its state and plotly. */
export interface TimingScene extends TimingNames {
  axis: TimeAxis;
  /** Per run, its active span (real ns): where its mark goes. */
  spans: ReadonlyMap<number, readonly [number, number]>;
  /** The display window drawn (ns along the axis); null before there is anything to show. */
  window: [number, number] | null;
  /** The plot area's width (px). */
  width: number;
  theme: PlotTheme;
}

/** The bars as drawn and the labels placed on them, which the transfers' bytes keep clear of. */
export interface DrawnBars {
  traces: PlotlyTrace[];
  /** Per lane, its bars as drawn: single bars and blocks of merged ones. */
  drawn: LaneSegments[][];
  /** The labels drawn on bars (px in the plot area). */
  placed: LabelRect[];
  /** Bars that carry their op's name, and blocks of merged bars. */
  named: number;
  blocks: number;
}

/** A run's start as marked on the axis: display ms and "run N". */
export interface RunMark {
  x: number;
  label: string;
}

/** Display ns per pixel in the scene's window. */
export function resolution(scene: TimingScene): number {
  const window = scene.window;
  return window ? (window[1] - window[0]) / scene.width : 1;
}

/** The real times [lo, hi] of the window, widened by its width each side (small pans). */
function realRange(scene: TimingScene): [number, number] {
  const { window, axis } = scene;
  if (window === null) {
    return [-Infinity, Infinity];
  }
  const width = window[1] - window[0];
  return [axis.toReal(window[0] - width), axis.toReal(window[1] + width)];
}

/** The waits, the bars (single and merged) and their labels of every lane. */
export function timingBars(scene: TimingScene): DrawnBars {
  const { model, axis } = scene;
  const { lanes } = model;
  const perPx = resolution(scene);
  const [lo, hi] = realRange(scene);
  const traces: PlotlyTrace[] = [];
  const drawn = lanes.map((_, l) => coalesceLane(model, l, lo, hi, perPx, axis));
  lanes.forEach((_, l) => {
    for (const group of coalesceLane(model, l, lo, hi, perPx, axis, 'waits')) {
      traces.push(waitsTrace(scene, group, l, (WAIT_HEIGHT * BAR_PX) / LANE_PX / 2));
    }
  });
  drawn.forEach((groups, l) => {
    const half = (lanes[l].kind === 'transfer' ? BAR_PX * 0.6 : BAR_PX) / LANE_PX / 2;
    // One trace per colour (an OP lane is one device; the transfers lane one per destination),
    // and the blocks of merged bars paler than single bars.
    for (const group of groups) {
      for (const merged of [false, true]) {
        const trace = barsTrace(scene, group, l, half, merged);
        if (trace !== null) {
          traces.push(trace);
        }
      }
    }
  });
  const labels = labelTraces(scene, drawn);
  traces.push(...labels.traces);
  return { ...labels, traces, drawn };
}

/**
 * A group's single bars (or its blocks of merged bars) as one filled path of rectangles: plotly
 * draws a line trace's gap-separated pieces as an SVG element each, a fill as one element.
 */
function barsTrace(
  scene: TimingScene,
  group: LaneSegments,
  lane: number,
  half: number,
  merged: boolean,
): PlotlyTrace | null {
  const perPx = resolution(scene);
  const x: (number | null)[] = [];
  const y: (number | null)[] = [];
  for (let k = 0; k < group.x0.length; k++) {
    if (group.count[k] > 1 !== merged) {
      continue;
    }
    // A wide bar ends a pixel early: back-to-back ops show as separate bars.
    const gap = group.x1[k] - group.x0[k] >= WIDE_PX * perPx ? perPx : 0;
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
    fillcolor: panelDeviceColour(scene.devices, group.device),
    opacity: merged ? MERGED_OPACITY : 1,
    x,
    y,
    name: escapePlotlyText(scene.labels[lane]),
    showlegend: false,
    hoverinfo: 'skip',
    connectgaps: false,
  };
}

/** A lane's waits as one hatched, outlined path of rectangles (under its ops). */
function waitsTrace(
  scene: TimingScene,
  group: LaneSegments,
  lane: number,
  half: number,
): PlotlyTrace {
  const x: (number | null)[] = [];
  const y: (number | null)[] = [];
  for (let k = 0; k < group.x0.length; k++) {
    const [x0, x1] = [group.x0[k] / 1e6, group.x1[k] / 1e6];
    x.push(x0, x1, x1, x0, x0, null);
    y.push(lane - half, lane - half, lane + half, lane + half, lane - half, null);
  }
  const colour = panelDeviceColour(scene.devices, group.device);
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
function labelTraces(
  scene: TimingScene,
  drawn: readonly LaneSegments[][],
): Omit<DrawnBars, 'drawn'> {
  const { window, theme, model, nodes, devices } = scene;
  const perPx = resolution(scene);
  const byColour = new Map<string, { x: number[]; y: number[]; text: string[] }>();
  const placed: LabelRect[] = [];
  const add = (colour: string, x: number, y: number, text: string) => {
    const width = text.length * TEXT_CHAR_PX;
    placed.push(textRect(scene, x * 1e6, y, width));
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
  drawn.forEach((groups, l) => {
    const lane = model.lanes[l];
    for (const segments of groups) {
      const colour = textColourOn(panelDeviceColour(devices, segments.device));
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
        const px = (x1 - x0) / perPx;
        const x = (x0 + x1) / 2 / 1e6;
        if (count > 1) {
          const text = fitLabel(`${count} ${lane.kind === 'op' ? 'ops' : 'transfers'}`, px);
          // The transfers lane's colours (destinations) overlap: a block whose label would
          // cover another's goes without (its tooltip lists it).
          const rect = textRect(scene, x * 1e6, l, (text?.length ?? 0) * TEXT_CHAR_PX);
          const covers = lane.kind === 'transfer' && placed.some((p) => overlaps(rect, p));
          if (text !== null && !text.endsWith('…') && !covers) {
            add(theme.fontColor, x, l, text);
          }
        } else if (lane.kind === 'op') {
          const node = nodes.get(lane.bars.node[bar]);
          const text = fitLabel(node?.name ?? `node ${lane.bars.node[bar]}`, px);
          if (text !== null) {
            add(colour, x, l, text);
            named += 1;
          }
        }
      }
    }
  });
  const traces = [...byColour.entries()].map(([colour, group]): PlotlyTrace => ({
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
  return { traces, placed, named, blocks };
}

/** A label `width` px wide centred at display time `x` (ns) on lane `y`: px in the plot area. */
function textRect(scene: TimingScene, x: number, y: number, width: number): LabelRect {
  const left = (x - (scene.window?.[0] ?? 0)) / resolution(scene) - width / 2;
  return { x: left, y: (y + 0.5) * LANE_PX - TEXT_HEIGHT_PX / 2, w: width, h: TEXT_HEIGHT_PX };
}

/** Where each run in view starts (display ms), thinned so their labels do not overlap. */
export function runMarks(scene: TimingScene): RunMark[] {
  const { spans, window, axis } = scene;
  if (spans.size < 2 || window === null) {
    return [];
  }
  const minGap = RUN_MARK_PX * resolution(scene);
  const starts = [...spans.entries()]
    .filter(([run]) => run >= 0)
    .map(([run, [t0]]) => ({ run, x: axis.toShown(t0) }))
    .filter(({ x }) => x >= window[0] && x <= window[1])
    .sort((a, b) => a.x - b.x);
  const marks: RunMark[] = [];
  let last = -Infinity;
  for (const { run, x } of starts) {
    if (x - last >= minGap) {
      marks.push({ x: x / 1e6, label: runName(run) });
      last = x;
    }
  }
  return marks;
}

/**
 * The cursor at real time `time`, the run marks, and outlines around the bars of the hovered
 * and the selected op (the selected one's bolder).
 */
export function timingShapes(
  scene: TimingScene,
  time: number | null,
  hovered: number | null,
  selected: number | null,
): Record<string, unknown>[] {
  const { theme, axis, model } = scene;
  const shapes: Record<string, unknown>[] = [];
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
  for (const mark of runMarks(scene)) {
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
  const minWidth = resolution(scene) * 2;
  const bars: BarRef[] = [];
  for (const id of [hovered, selected]) {
    if (id !== null) {
      bars.push(...barsOfNode(model, id, MAX_HIGHLIGHTS));
    }
  }
  for (const { lane, index } of bars.slice(0, MAX_HIGHLIGHTS)) {
    const b = model.lanes[lane].bars;
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
      line: { color: theme.fontColor, width: b.node[index] === selected ? 2 : 1.5 },
      fillcolor: 'rgba(0,0,0,0)',
      layer: 'above',
    });
  }
  return shapes;
}

/**
 * The run marks' labels, and the transfers drawn (`bars`) as arrows between device lanes with
 * their bytes where those cover no label placed (`bars.placed`, which they join); `arrows` counts
 * the arrows.
 */
export function timingAnnotations(
  scene: TimingScene,
  bars: DrawnBars,
): { notes: Record<string, unknown>[]; arrows: number } {
  const { theme, window, model, axis } = scene;
  // A mark's label reads rightwards from it, or leftwards near the plot's right edge, where
  // it would be cut (a cluster cell's last run, "run" without its number).
  const room = window === null ? Infinity : RUN_MARK_PX * resolution(scene);
  const notes: Record<string, unknown>[] = runMarks(scene).map((mark) => ({
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
    return { notes, arrows: 0 };
  }
  const perPx = resolution(scene);
  const transfers = model.lanes.findIndex((lane) => lane.kind === 'transfer');
  const arrows = transferArrows(model, bars.drawn[transfers] ?? [], MAX_ARROWS);
  for (const arrow of arrows) {
    const colour = panelDeviceColour(scene.devices, model.lanes[arrow.toLane].device);
    const from = { x: axis.toShown(arrow.t0) / 1e6, y: arrow.fromLane };
    const to = { x: axis.toShown(arrow.t1) / 1e6, y: arrow.toLane };
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
    const length = Math.hypot((to.x - from.x) * 1e6, (to.y - from.y) * LANE_PX * perPx);
    const text =
      arrow.count > 1 ? `${arrow.count}× · ${formatBytes(arrow.bytes)}` : formatBytes(arrow.bytes);
    // The bytes along the arrow, at its middle or nearest it, where they cover no bar's name,
    // no other arrow's bytes and stay in the plot; none where there is no such place.
    const along = ARROW_TEXT_AT.map((f) => ({
      x: from.x + (to.x - from.x) * f,
      y: from.y + (to.y - from.y) * f,
    }));
    const width = text.length * TEXT_CHAR_PX;
    const rects = along.map((at) => textRect(scene, at.x * 1e6, at.y, width));
    const spot =
      arrows.length <= ARROW_TEXT && length >= ARROW_TEXT_PX * perPx
        ? freeSpot(rects, bars.placed, scene.width)
        : null;
    if (spot !== null) {
      bars.placed.push(spot);
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
  return { notes, arrows: arrows.length };
}

/** The rest of the layout: what the panel knows of its clock, size and lane labels. */
export interface TimingFrame {
  clock: RunClock;
  /** Whether the axis collapses the gaps between runs (several, none picked). */
  collapsed: boolean;
  /** The panel's fixed height (px), if it has one. */
  height?: number;
  /** The plot's right margin (px). */
  right: number;
  /** The lanes' labels, and the characters each has (laneChars). */
  laneParts: readonly LaneLabel[];
  laneChars: number;
}

/** The plotly layout of the figure, with its shapes and annotations. */
export function timingLayout(
  scene: TimingScene,
  frame: TimingFrame,
  shapes: Record<string, unknown>[],
  annotations: Record<string, unknown>[],
): { height: number } & Record<string, unknown> {
  const { theme, window, axis } = scene;
  const lanes = scene.model.lanes;
  return {
    height: frame.height ?? Math.max(140, 64 + LANE_PX * lanes.length),
    margin: { l: LEFT_PX, r: frame.right, t: 18, b: 40 },
    paper_bgcolor: theme.background,
    plot_bgcolor: theme.background,
    font: { family: theme.font, color: theme.fontColor, size: 11 },
    showlegend: false,
    hovermode: false,
    dragmode: 'zoom',
    uirevision: 'placeviz',
    xaxis: {
      title: { text: axisTitle(frame.clock, frame.collapsed, scene.width) },
      gridcolor: theme.grid,
      zeroline: false,
      range: window ? [window[0] / 1e6, window[1] / 1e6] : undefined,
      tickmode: 'array',
      ...axisTicks(axis, frame.clock, window, scene.width, frame.right),
    },
    yaxis: {
      automargin: true,
      tickmode: 'array',
      tickvals: lanes.map((_, i) => i),
      ticktext: frame.laneParts.map((label) => escapePlotlyText(laneText(label, frame.laneChars))),
      range: [lanes.length - 0.5, -0.5],
      fixedrange: true,
      showgrid: false,
      zeroline: false,
    },
    shapes,
    annotations,
  };
}
