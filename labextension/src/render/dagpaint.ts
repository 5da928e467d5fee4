/**
 * Drawing the DAG on a 2D canvas with level of detail: opened groups as containers with a title
 * strip, folded groups as rounded boxes with their op count and a bar of their devices' colours,
 * ops as rectangles; far out, edges are drawn only when few are in view; closer in, outlines,
 * labels and edge labels appear (a box too small for a name in the full font says it smaller
 * and shorter, down to a least size). Labels never overlap: box labels are cut to their box, edge
 * labels are left out where they would cover another label or a box. Only what intersects the
 * viewport is drawn.
 */
import { textColourOn } from './colours';
import {
  CONTAINER_HEADER,
  LABEL_FONT_PX,
  LABEL_INSET_PX,
  LABEL_ROOM_PX,
  MIN_LABEL_FONT_PX,
  NORMAL_FONT_PX,
  OP_HEIGHT,
  TITLE_ROOM_PX,
  TITLE_STRIP,
  TOGGLE_INSET,
  TOGGLE_SIZE,
  labelFontPx,
} from './boxmetrics';
import { LIVE_RUNNING, boxAlpha, type BoxColours } from './dagcolour';
import { iterationsText, loopText } from './controlflow';
import type { FlowMarks } from './dagflow';
import type { DagModel } from './dagmodel';
import { mark, type MarkId } from './dagmarks';
import { formatBytes } from './format';
import { countOverlaps, fitLabel, fitLabels, overlaps, type LabelRect } from './labels';
import type { NodeRecord } from './types';
import type { Viewport } from './viewport';
import { visibleText } from './visible';

export interface DagTheme {
  foreground: string;
  muted: string;
  background: string;
  container: string;
  edge: string;
  transfer: string;
  accent: string;
  mismatch: string;
  /** Outline of the ops running now in the run in flight. */
  running: string;
  /** Ring around the marked ops (a comparison's moved ops). */
  marked: string;
  /** Outline of a while loop's scope. */
  loop: string;
}

export interface PaintRequest {
  ctx: CanvasRenderingContext2D;
  model: DagModel;
  nodes: readonly NodeRecord[];
  viewport: Viewport;
  devicePixelRatio: number;
  colours: BoxColours;
  /** Device id -> its colour, for the device bars of folded groups. */
  deviceColour: (device: number | null) => string;
  /** Per box, 1 when the filter leaves it out (drawn faint); null: no filter. */
  dimmed: Uint8Array | null;
  /** Per box, the run in flight's mark (dagcolour.progressMarks); null: no run in flight. */
  live: Uint8Array | null;
  /** Per box, 1 when it holds an op that failed or was not placed (drawn red). */
  alerts: Uint8Array | null;
  /** Per box, 1 when it holds a marked op (ringed in theme.marked); null: none marked. */
  marked?: Uint8Array | null;
  /** While loops and ops not executed in the run shown (dagflow.ts); null: none. */
  flow?: FlowMarks | null;
  hoveredBox: number;
  selectedBox: number;
  theme: DagTheme;
  /** The largest label font, CSS px: the inspector's font (default NORMAL_FONT_PX). */
  fontPx?: number;
}

export interface PaintResult {
  /** Boxes entirely inside the canvas. */
  inView: number;
  /** Drawn boxes whose name is painted. */
  labelsDrawn: number;
  /** The names of drawn boxes too small to say them (the first few), for tests to tell. */
  unnamed: string[];
  /** Pairs of drawn labels that overlap. */
  labelOverlaps: number;
}

/** A tag's text keeps this far from its sides, and has at least this much room (CSS px). */
const TAG_PAD_PX = 3;
const TAG_ROOM_PX = 40;
/** Unnamed boxes' names a paint reports at most. */
const UNNAMED_LISTED = 5;
/** Zoom (screen px per world px) from which outlines, then edge labels and every edge are drawn. */
const OUTLINE_SCALE = 0.15;
const EDGE_LABEL_SCALE = 0.42;
const TYPE_LINE_SCALE = 1.3;
const COUNT_LINE_SCALE = 0.65;
const CORNER_RADIUS = 6;
const DEVICE_BAR = 5;
/** The red corner of an op that failed or did not land where it asked. */
const OP_CORNER = 14;

/** At most this many edges in view are drawn at each zoom; beyond, edges are left out. */
function edgeBudget(scale: number): number {
  if (scale < 0.08) {
    return 3_000;
  }
  if (scale < OUTLINE_SCALE) {
    return 10_000;
  }
  return scale < EDGE_LABEL_SCALE ? 40_000 : Infinity;
}

/** The rectangle of the +/- control of a group box or container with this rect (world px). */
export function toggleRect(x: number, y: number, w: number): LabelRect {
  return {
    x: x + w - TOGGLE_SIZE - TOGGLE_INSET,
    y: y + TOGGLE_INSET,
    w: TOGGLE_SIZE,
    h: TOGGLE_SIZE,
  };
}

/** Paint one frame. */
export function paintDag(request: PaintRequest): PaintResult {
  const { ctx, viewport, devicePixelRatio: dpr } = request;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, viewport.width, viewport.height);
  const visible = visibleBoxes(request);
  const { scale, offsetX, offsetY } = viewport;
  ctx.setTransform(dpr * scale, 0, 0, dpr * scale, dpr * offsetX, dpr * offsetY);
  drawContainers(request);
  const edgesInView = drawEdges(request);
  drawBoxes(request, visible);
  drawMarks(request, visible);
  drawRings(request);
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  const labels: LabelRect[] = [];
  const unnamed: string[] = [];
  const labelsDrawn = drawLabels(request, visible, labels, unnamed);
  drawTitles(request, labels);
  drawLoopTabs(request, visible, labels);
  if (scale >= EDGE_LABEL_SCALE) {
    drawEdgeLabels(request, edgesInView, visible, labels);
  }
  return {
    inView: boxesInside(request, visible),
    labelsDrawn,
    unnamed,
    labelOverlaps: countOverlaps(labels),
  };
}

function worldView(viewport: Viewport): [number, number, number, number] {
  return [
    viewport.toWorldX(0),
    viewport.toWorldY(0),
    viewport.toWorldX(viewport.width),
    viewport.toWorldY(viewport.height),
  ];
}

function visibleBoxes({ model, viewport }: PaintRequest): Int32Array {
  const [x0, y0, x1, y1] = worldView(viewport);
  const { x, y, w, h } = model.layout.boxes;
  const found: number[] = [];
  model.grid.query(x0, y0, x1, y1, (b) => {
    if (x[b] + w[b] >= x0 && x[b] <= x1 && y[b] + h[b] >= y0 && y[b] <= y1) {
      found.push(b);
    }
  });
  return Int32Array.from(found);
}

function boxesInside({ model, viewport }: PaintRequest, visible: Int32Array): number {
  const [x0, y0, x1, y1] = worldView(viewport);
  const { x, y, w, h } = model.layout.boxes;
  const slack = 0.5 / viewport.scale;
  let inside = 0;
  for (const b of visible) {
    if (
      x[b] >= x0 - slack &&
      y[b] >= y0 - slack &&
      x[b] + w[b] <= x1 + slack &&
      y[b] + h[b] <= y1 + slack
    ) {
      inside++;
    }
  }
  return inside;
}

function roundedRect(
  ctx: CanvasRenderingContext2D,
  x: number,
  y: number,
  w: number,
  h: number,
  r: number,
): void {
  ctx.moveTo(x + r, y);
  ctx.arcTo(x + w, y, x + w, y + h, r);
  ctx.arcTo(x + w, y + h, x, y + h, r);
  ctx.arcTo(x, y + h, x, y, r);
  ctx.arcTo(x, y, x + w, y, r);
  ctx.closePath();
}

/** A +/- sign in a small square: '+' opens a folded group, '-' folds an opened one. */
function drawToggle(
  ctx: CanvasRenderingContext2D,
  rect: LabelRect,
  open: boolean,
  theme: DagTheme,
  px: number,
): void {
  ctx.beginPath();
  ctx.rect(rect.x, rect.y, rect.w, rect.h);
  ctx.fillStyle = theme.background;
  ctx.fill();
  ctx.strokeStyle = theme.foreground;
  ctx.lineWidth = Math.max(1, px);
  ctx.stroke();
  ctx.beginPath();
  const cx = rect.x + rect.w / 2;
  const cy = rect.y + rect.h / 2;
  const arm = rect.w * 0.3;
  ctx.moveTo(cx - arm, cy);
  ctx.lineTo(cx + arm, cy);
  if (!open) {
    ctx.moveTo(cx, cy - arm);
    ctx.lineTo(cx, cy + arm);
  }
  ctx.lineWidth = Math.max(1.6, 1.6 * px);
  ctx.stroke();
}

function drawContainers({ ctx, model, viewport, theme, flow }: PaintRequest): void {
  const { x, y, w, h } = model.layout.containers;
  const px = 1 / viewport.scale;
  const [x0, y0, x1, y1] = worldView(viewport);
  for (let c = 0; c < x.length; c++) {
    if (x[c] > x1 || y[c] > y1 || x[c] + w[c] < x0 || y[c] + h[c] < y0) {
      continue;
    }
    ctx.beginPath();
    roundedRect(ctx, x[c], y[c], w[c], h[c], CORNER_RADIUS * 1.5);
    ctx.fillStyle = theme.container;
    ctx.fill();
    // A while loop's scope opened: its body inside an outline of the loop's own mark.
    const outline = mark(flow?.loopContainers[c] ? 'loop' : 'opened');
    ctx.strokeStyle = theme[outline.colour];
    ctx.lineWidth = outline.stroke.width * px;
    ctx.stroke();
    ctx.strokeStyle = theme[mark('opened').colour];
    ctx.beginPath();
    ctx.moveTo(x[c], y[c] + CONTAINER_HEADER - 4);
    ctx.lineTo(x[c] + w[c], y[c] + CONTAINER_HEADER - 4);
    ctx.lineWidth = px;
    ctx.stroke();
    if (viewport.scale >= OUTLINE_SCALE) {
      drawToggle(ctx, toggleRect(x[c], y[c], w[c]), true, theme, px);
    }
  }
}

/** Where an edge leaves its source's bottom and enters its target's top. */
function edgeEnds(model: DagModel, src: number, dst: number): [number, number, number, number] {
  const { x, y, w, h } = model.layout.boxes;
  return [x[src] + w[src] / 2, y[src] + h[src], x[dst] + w[dst] / 2, y[dst]];
}

/** The rectangle of a layout item: a box, or (from the box count on) a container. */
function itemRect(model: DagModel, item: number): LabelRect {
  const boxes = model.layout.boxes;
  const B = boxes.x.length;
  const r = item < B ? boxes : model.layout.containers;
  const i = item < B ? item : item - B;
  return { x: r.x[i], y: r.y[i], w: r.w[i], h: r.h[i] };
}

/**
 * A side link's path, as points x0, y0, x1, y1, ...: from the item's right side across to the
 * side item's bus, along it and into the side item's left side, or its right side where the side
 * items stand below the graph (so the links of one side item share their last stretch); between
 * two side items, out to the right (past the buses) and back. The last two numbers are its
 * label's anchor, on the item's own stretch.
 */
function linkPath(model: DagModel, side: number, other: number): number[] {
  const s = itemRect(model, side);
  const o = itemRect(model, other);
  const sy = s.y + s.h / 2;
  const oy = o.y + o.h / 2;
  if (model.layout.aside[other] === 1) {
    // Below the graph, right of the side items' buses (compound.ts leaves it room).
    const out = model.layout.sideBelow
      ? model.layout.width - 2
      : Math.max(s.x + s.w, o.x + o.w) + 18;
    return [s.x + s.w, sy, out, sy, out, oy, o.x + o.w, oy, out - 2, (sy + oy) / 2];
  }
  const bus = model.layout.busX[side];
  const start = o.x + o.w;
  const end = model.layout.sideBelow ? s.x + s.w : s.x;
  return [start, oy, bus, oy, bus, sy, end, sy, (start + bus) / 2, oy];
}

function drawEdges({ ctx, model, viewport, theme }: PaintRequest): number[] {
  const [x0, y0, x1, y1] = worldView(viewport);
  const edges = model.folded.edges;
  const aside = model.layout.aside;
  const inView: number[] = [];
  const budget = edgeBudget(viewport.scale);
  const { rootItem } = model.layout;
  for (let e = 0; e < edges.length; e++) {
    const a = rootItem[edges[e].src];
    const b = rootItem[edges[e].dst];
    if (a !== b && (aside[a] === 1 || aside[b] === 1)) {
      continue; // drawn as a summarized side link
    }
    const [sx, sy, tx, ty] = edgeEnds(model, edges[e].src, edges[e].dst);
    if (
      Math.max(sx, tx) >= x0 &&
      Math.min(sx, tx) <= x1 &&
      Math.max(sy, ty) >= y0 &&
      Math.min(sy, ty) <= y1
    ) {
      inView.push(e);
      if (inView.length > budget) {
        return [];
      }
    }
  }
  const px = 1 / viewport.scale;
  const stroke = (pick: (e: number) => boolean, id: MarkId) => {
    const { colour, stroke: style } = mark(id);
    ctx.beginPath();
    for (const e of inView) {
      if (pick(e)) {
        const [sx, sy, tx, ty] = edgeEnds(model, edges[e].src, edges[e].dst);
        ctx.moveTo(sx, sy);
        if (ty < sy) {
          // Up into the next column of a wrapped chain: a straight line stays inside the view.
          ctx.lineTo(tx, ty);
        } else {
          const bend = Math.max((ty - sy) / 2, 12);
          ctx.bezierCurveTo(sx, sy + bend, tx, ty - bend, tx, ty);
        }
      }
    }
    ctx.strokeStyle = theme[colour];
    ctx.lineWidth = style.width * px;
    ctx.setLineDash(style.dash.map((d) => d * px));
    ctx.stroke();
  };
  stroke((e) => !edges[e].crosses && !edges[e].control, 'tensor');
  stroke((e) => edges[e].control, 'control');
  const transfer = (e: number) => edges[e].crosses && !edges[e].control;
  stroke((e) => transfer(e) && !edges[e].network, 'transfer');
  // Between tasks: the tensor leaves its process over the network (thicker, dotted).
  stroke((e) => transfer(e) && edges[e].network, 'network');
  ctx.beginPath();
  for (const link of model.layout.links) {
    const path = linkPath(model, link.side, link.other);
    ctx.moveTo(path[0], path[1]);
    for (let k = 2; k < path.length - 2; k += 2) {
      ctx.lineTo(path[k], path[k + 1]);
    }
  }
  const side = mark('side-link');
  ctx.strokeStyle = theme[side.colour];
  ctx.lineWidth = side.stroke.width * px;
  ctx.setLineDash(side.stroke.dash.map((d) => d * px));
  ctx.stroke();
  ctx.setLineDash([]);
  return inView;
}

function drawBoxes(request: PaintRequest, visible: Int32Array): void {
  const { ctx, model, colours, dimmed, live, alerts, viewport, theme } = request;
  const flow = request.flow ?? null;
  const { x, y, w, h } = model.layout.boxes;
  const px = 1 / viewport.scale;
  const isGroup = (b: number) => model.folded.boxes[b].node < 0;
  const shape = (b: number) => {
    if (isGroup(b)) {
      roundedRect(ctx, x[b], y[b], w[b], h[b], CORNER_RADIUS);
    } else {
      ctx.rect(x[b], y[b], w[b], h[b]);
    }
  };
  // A series is drawn as a stack: two offset outlines behind its box.
  ctx.beginPath();
  for (const b of visible) {
    const group = model.folded.boxes[b].group;
    if (group >= 0 && model.hierarchy.groups[group].series > 0) {
      roundedRect(ctx, x[b] + 6, y[b] - 6, w[b], h[b], CORNER_RADIUS);
      roundedRect(ctx, x[b] + 3, y[b] - 3, w[b], h[b], CORNER_RADIUS);
    }
  }
  ctx.fillStyle = theme.background;
  ctx.fill();
  ctx.strokeStyle = theme[mark('series').colour];
  ctx.lineWidth = mark('series').stroke.width * px;
  ctx.stroke();
  const byColour = groupByColour(visible, colours);
  // One pass per opacity (a few at most): boxes filtered out, waiting in the run in flight, the rest.
  const alphaOf = (b: number) => boxAlpha(dimmed?.[b] ?? 0, live?.[b] ?? 0, flow?.notRun[b] ?? 0);
  const passes = new Set<number>();
  for (const b of visible) {
    passes.add(alphaOf(b));
  }
  for (const pass of passes) {
    ctx.globalAlpha = pass;
    byColour.forEach((boxes, colour) => {
      ctx.beginPath();
      for (const b of boxes) {
        if (alphaOf(b) === pass) {
          shape(b);
        }
      }
      ctx.fillStyle = colours.palette[colour];
      ctx.fill();
    });
  }
  ctx.globalAlpha = 1;
  const outline = (pick: (b: number) => boolean, id: MarkId) => {
    const { colour, stroke } = mark(id);
    ctx.beginPath();
    for (const b of visible) {
      if (pick(b)) {
        shape(b);
      }
    }
    ctx.strokeStyle = theme[colour];
    ctx.lineWidth = stroke.width * px;
    ctx.setLineDash(stroke.dash.map((d) => d * px));
    ctx.stroke();
  };
  if (viewport.scale >= OUTLINE_SCALE) {
    // A plain op's thin outline (a frame, not a mark: the key has no entry for it).
    ctx.beginPath();
    for (const b of visible) {
      if (!isGroup(b) && !model.simulated[b]) {
        shape(b);
      }
    }
    ctx.strokeStyle = theme.muted;
    ctx.lineWidth = px;
    ctx.setLineDash([]);
    ctx.stroke();
    outline((b) => !isGroup(b) && model.simulated[b] === 1, 'simulated');
    drawDeviceBars(request, visible);
  }
  // Folded groups get a heavy outline; requests the placer did not honour (red outline and
  // corner) and failed or unplaced ops (red, heavier) stay visible at every zoom.
  outline(isGroup, 'folded');
  if (flow !== null) {
    outline((b) => flow.loopBoxes[b] !== null, 'loop');
    outline((b) => flow.notRun[b] === 1, 'not-run');
  }
  outline((b) => model.mismatch[b] === 1, 'mismatch');
  if (alerts !== null) {
    outline((b) => alerts[b] === 1, 'failed');
  }
  ctx.beginPath();
  const corner = Math.min(OP_CORNER, Math.max(8, 6 * px));
  for (const b of visible) {
    if (model.mismatch[b] === 1 || alerts?.[b] === 1) {
      ctx.moveTo(x[b] + w[b] - corner, y[b]);
      ctx.lineTo(x[b] + w[b], y[b]);
      ctx.lineTo(x[b] + w[b], y[b] + corner);
      ctx.closePath();
    }
  }
  ctx.fillStyle = theme.mismatch;
  ctx.fill();
  if (viewport.scale >= OUTLINE_SCALE) {
    for (const b of visible) {
      if (isGroup(b)) {
        drawToggle(ctx, toggleRect(x[b], y[b], w[b]), false, theme, px);
      }
    }
  }
  if (live !== null) {
    // Ops running now in the run in flight: a heavy outline at every zoom.
    outline((b) => live[b] === LIVE_RUNNING, 'running');
  }
}

/** Inside each folded group, a bar split in proportion to its ops on each device. */
function drawDeviceBars({ ctx, model, deviceColour }: PaintRequest, visible: Int32Array): void {
  const { x, y, w, h } = model.layout.boxes;
  ctx.setLineDash([]);
  for (const b of visible) {
    const shares = model.deviceShares[b];
    if (shares === null) {
      continue;
    }
    const total = model.folded.boxes[b].ops;
    const left = x[b] + CORNER_RADIUS;
    const width = w[b] - 2 * CORNER_RADIUS;
    let at = left;
    const top = y[b] + h[b] - DEVICE_BAR - 4;
    // A light frame, so a bar in the box's own colour still shows.
    ctx.fillStyle = '#ffffff';
    ctx.fillRect(left - 1.5, top - 1.5, width + 3, DEVICE_BAR + 3);
    for (const [device, count] of shares) {
      const part = (width * count) / total;
      ctx.fillStyle = deviceColour(device);
      ctx.fillRect(at, top, part, DEVICE_BAR);
      at += part;
    }
  }
}

/** Visible boxes bucketed by palette index, so each fill style is set once. */
function groupByColour(visible: Int32Array, colours: BoxColours): Map<number, Int32Array> {
  const counts = new Map<number, number>();
  for (const b of visible) {
    counts.set(colours.index[b], (counts.get(colours.index[b]) ?? 0) + 1);
  }
  const groups = new Map<number, Int32Array>();
  const fill = new Map<number, number>();
  counts.forEach((count, colour) => {
    groups.set(colour, new Int32Array(count));
    fill.set(colour, 0);
  });
  for (const b of visible) {
    const colour = colours.index[b];
    const at = fill.get(colour) ?? 0;
    (groups.get(colour) as Int32Array)[at] = b;
    fill.set(colour, at + 1);
  }
  return groups;
}

/** Gap (CSS px) between a marked box and its ring: outside the selection and hover rings. */
const MARK_GAP = 6;
/** Side of the mark's corner tab (CSS px, at least; world px closer in). */
const MARK_TAB = 9;

/**
 * Marked boxes (a comparison's moved ops): a ring outside the box, clear of its device fill and
 * of the selection ring, and a filled tab at its top-left corner (the red corner is top-right),
 * at every zoom.
 */
function drawMarks(
  { ctx, model, viewport, marked, theme }: PaintRequest,
  visible: Int32Array,
): void {
  if (!marked) {
    return;
  }
  const px = 1 / viewport.scale;
  const { x, y, w, h } = model.layout.boxes;
  const gap = MARK_GAP * px;
  const tab = Math.max(MARK_TAB * px, MARK_TAB);
  ctx.setLineDash([]);
  ctx.beginPath();
  for (const b of visible) {
    if (marked[b] === 1) {
      ctx.rect(x[b] - gap, y[b] - gap, w[b] + 2 * gap, h[b] + 2 * gap);
    }
  }
  ctx.strokeStyle = theme[mark('marked').colour];
  ctx.lineWidth = mark('marked').stroke.width * px;
  ctx.stroke();
  ctx.beginPath();
  for (const b of visible) {
    if (marked[b] === 1) {
      ctx.moveTo(x[b] - gap, y[b] - gap);
      ctx.lineTo(x[b] - gap + tab, y[b] - gap);
      ctx.lineTo(x[b] - gap, y[b] - gap + tab);
      ctx.closePath();
    }
  }
  ctx.fillStyle = theme.marked;
  ctx.fill();
}

function drawRings({ ctx, model, viewport, hoveredBox, selectedBox, theme }: PaintRequest): void {
  const px = 1 / viewport.scale;
  const { x, y, w, h } = model.layout.boxes;
  const ring = (box: number, colour: string, width: number) => {
    if (box < 0) {
      return;
    }
    const gap = 3 * px;
    ctx.strokeStyle = colour;
    ctx.lineWidth = width * px;
    ctx.strokeRect(x[box] - gap, y[box] - gap, w[box] + 2 * gap, h[box] + 2 * gap);
  };
  ring(selectedBox, theme.foreground, 3);
  ring(hoveredBox, theme.accent, 2);
}

/** "3 ops", "×100 · 3,000 ops": the second line of a folded group. */
function groupLine(model: DagModel, box: number): string {
  const record = model.folded.boxes[box];
  const series = model.hierarchy.groups[record.group].series;
  const ops = `${record.ops.toLocaleString('en-US')} op${record.ops === 1 ? '' : 's'}`;
  return series > 0 ? `×${series} · ${ops}` : ops;
}

/**
 * Names (and, closer in, types or op counts) in screen space, in each box with room for them on
 * screen, cut in the middle to their box keeping what tells them apart (labels.fitLabels); each
 * drawn line's rectangle goes into `placed`. The font follows the zoom (boxmetrics.labelFontPx):
 * LABEL_FONT_PX at READABLE_SCALE, the inspector's own font on a graph drawn closer (a small
 * one), and smaller and cut shorter rather than not at all on a graph fitted below
 * READABLE_SCALE (a narrow canvas). Returns how many boxes say their name.
 */
function drawLabels(
  request: PaintRequest,
  visible: Int32Array,
  placed: LabelRect[],
  unnamed: string[],
): number {
  const { ctx, model, nodes, viewport, colours } = request;
  const { scale } = viewport;
  const { x, y, w, h } = model.layout.boxes;
  // The op boxes' font (the shortest boxes) caps every box's, so a folded group says its name
  // no bigger than the ops beside it; below LABEL_FONT_PX the taller groups keep that.
  const most = Math.max(
    LABEL_FONT_PX,
    labelFontPx(OP_HEIGHT * scale, LABEL_ROOM_PX, request.fontPx ?? NORMAL_FONT_PX),
  );
  const fontOf = (b: number) => labelFontPx(h[b] * scale, LABEL_ROOM_PX, most);
  ctx.font = `${LABEL_FONT_PX}px sans-serif`;
  ctx.textAlign = 'left';
  ctx.textBaseline = 'middle';
  const roomOf = (b: number) => {
    const group = model.folded.boxes[b].node < 0;
    return (w[b] - (group ? TOGGLE_SIZE + TOGGLE_INSET : 0)) * scale - 2 * LABEL_INSET_PX;
  };
  const named = Array.from(visible).filter((b) => fontOf(b) > 0 && roomOf(b) > 0);
  const fonts = named.map(fontOf);
  // Text is as wide as its font is big: each box's room in px of LABEL_FONT_PX text, so every
  // label is fitted (and kept apart from the others) with one measure.
  const rooms = named.map((b, k) => (roomOf(b) * LABEL_FONT_PX) / fonts[k]);
  const names = fitLabels(
    ctx,
    named.map((b) => visibleText(model.labels[b])),
    rooms,
    named.map((b) => model.labelKeeps[b]),
  );
  const seconds = named.map((b, k) => {
    const box = model.folded.boxes[b];
    const second =
      box.node < 0
        ? scale >= COUNT_LINE_SCALE && groupLine(model, b)
        : scale >= TYPE_LINE_SCALE && nodes[box.node].type;
    return second ? fitLabel(ctx, visibleText(second), rooms[k]) : '';
  });
  const textColours = colours.palette.map(textColourOn);
  let font = LABEL_FONT_PX;
  const line = (text: string, sx: number, cy: number) => {
    ctx.fillText(text, sx, cy);
    const width = ctx.measureText(text).width;
    placed.push({ x: sx, y: cy - font / 2, w: width, h: font });
  };
  let drawn = 0;
  named.forEach((b, k) => {
    if (names[k] === '') {
      return;
    }
    drawn++;
    if (fonts[k] !== font) {
      font = fonts[k];
      ctx.font = `${font}px sans-serif`;
    }
    const group = model.folded.boxes[b].node < 0;
    const sx = x[b] * scale + viewport.offsetX + LABEL_INSET_PX;
    const sy = y[b] * scale + viewport.offsetY;
    const height = h[b] * scale;
    // A faint box of a branch not taken: its fill barely shows, so its name is dark on white.
    ctx.fillStyle =
      request.flow?.notRun[b] === 1 ? request.theme.muted : textColours[colours.index[b]];
    // Two lines a font apart around the middle (above a group's device bar), where they fit.
    const middle = sy + height * (group ? 0.4 : 0.5);
    const room = group ? height * 0.8 : height;
    if (seconds[k] === '' || room < 2 * font + 4) {
      line(names[k], sx, middle);
      return;
    }
    line(names[k], sx, middle - font / 2 - 1);
    line(seconds[k], sx, middle + font / 2 + 1);
  });
  const said = new Set(named.filter((_, k) => names[k] !== ''));
  const small = Array.from(visible).filter((b) => !said.has(b));
  drawn += scale >= OUTLINE_SCALE ? drawTags(request, small, placed) : 0;
  for (const b of small) {
    if (!placed.some((r) => r.box === b) && unnamed.length < UNNAMED_LISTED) {
      unnamed.push(model.labels[b]);
    }
  }
  ctx.font = `${LABEL_FONT_PX}px sans-serif`;
  return drawn;
}

/**
 * The names of `boxes`, too small on screen to hold them (an op box beside the folded groups of a
 * graph fitted to a narrow canvas is a few px tall), each on a tag in its box's colour centred on
 * it, MIN_LABEL_FONT_PX text cut to at least TAG_ROOM_PX, where the tag covers no other label;
 * how many are drawn. Their rectangles go into `placed`, with their box.
 */
function drawTags(request: PaintRequest, boxes: readonly number[], placed: LabelRect[]): number {
  const { ctx, model, viewport, colours, theme } = request;
  const { scale, offsetX, offsetY } = viewport;
  const { x, y, w, h } = model.layout.boxes;
  const font = MIN_LABEL_FONT_PX;
  let drawn = 0;
  for (const b of boxes) {
    ctx.font = `${LABEL_FONT_PX}px sans-serif`;
    const room = Math.max(w[b] * scale - 2 * TAG_PAD_PX, TAG_ROOM_PX);
    const text = fitLabel(
      ctx,
      visibleText(model.labels[b]),
      (room * LABEL_FONT_PX) / font,
      model.labelKeeps[b],
    );
    if (text === '') {
      continue;
    }
    ctx.font = `${font}px sans-serif`;
    const width = ctx.measureText(text).width + 2 * TAG_PAD_PX;
    const height = font + 4;
    const cx = (x[b] + w[b] / 2) * scale + offsetX;
    const cy = (y[b] + h[b] / 2) * scale + offsetY;
    const tag: LabelRect = { x: cx - width / 2, y: cy - height / 2, w: width, h: height, box: b };
    if (placed.some((r) => overlaps(r, tag))) {
      continue;
    }
    const colour = colours.palette[colours.index[b]];
    ctx.beginPath();
    roundedRect(ctx, tag.x, tag.y, tag.w, tag.h, 3);
    ctx.fillStyle = colour;
    ctx.fill();
    ctx.strokeStyle = theme.foreground;
    ctx.lineWidth = 1;
    ctx.stroke();
    ctx.fillStyle = textColourOn(colour);
    ctx.textAlign = 'center';
    ctx.fillText(text, cx, cy);
    ctx.textAlign = 'left';
    placed.push(tag);
    drawn++;
  }
  return drawn;
}

/**
 * Each visible container's title in its top strip, where the strip has room for it: in a smaller
 * font on a strip too short for LABEL_FONT_PX (boxmetrics.labelFontPx), as box names are.
 */
function drawTitles(
  { ctx, model, viewport, theme, fontPx, flow }: PaintRequest,
  placed: LabelRect[],
): void {
  const { scale } = viewport;
  const font = labelFontPx(TITLE_STRIP * scale, TITLE_ROOM_PX, fontPx ?? NORMAL_FONT_PX);
  if (font === 0) {
    return;
  }
  const { x, y, w } = model.layout.containers;
  // Fitted in LABEL_FONT_PX text, as the box names are, and drawn in `font`.
  ctx.font = `600 ${LABEL_FONT_PX}px sans-serif`;
  ctx.textAlign = 'left';
  ctx.textBaseline = 'middle';
  ctx.fillStyle = theme.foreground;
  const fitted: [string, number, number][] = [];
  for (let c = 0; c < x.length; c++) {
    const sx = x[c] * scale + viewport.offsetX + 8;
    const cy = (y[c] + TITLE_STRIP / 2) * scale + viewport.offsetY;
    if (sx > viewport.width || cy < 0 || cy > viewport.height) {
      continue;
    }
    const group = model.hierarchy.groups[model.folded.containers[c].group];
    const loop = flow?.loopContainers[c] ?? null;
    // A loop's title says its iterations in the run shown: `rnn/while · 50 iterations`.
    const suffix =
      loop !== null ? ` · ${iterationsText(loop)}` : group.series > 0 ? ` ×${group.series}` : '';
    const room = (((w[c] - TOGGLE_SIZE - 2 * TOGGLE_INSET) * scale - 12) * LABEL_FONT_PX) / font;
    // The name cut in the middle (keeping what tells it apart), the series count whole.
    const name = fitLabel(
      ctx,
      visibleText(model.titles[c]),
      room - ctx.measureText(suffix).width,
      model.titleKeeps[c],
    );
    if (name !== '') {
      fitted.push([`${name}${suffix}`, sx, cy]);
    }
  }
  ctx.font = `600 ${font}px sans-serif`;
  for (const [text, sx, cy] of fitted) {
    ctx.fillText(text, sx, cy);
    const width = ctx.measureText(text).width;
    placed.push({ x: sx, y: cy - font / 2, w: width, h: font });
  }
  ctx.font = `${LABEL_FONT_PX}px sans-serif`;
}

/**
 * A folded while loop's iterations in the run shown (`while · 50 iterations`) on a tab in the
 * loop's colour standing on its box's top edge, at every zoom; left out where it would cover
 * another label.
 */
function drawLoopTabs(
  { ctx, model, viewport, theme, flow }: PaintRequest,
  visible: Int32Array,
  placed: LabelRect[],
): void {
  if (!flow) {
    return;
  }
  const { scale } = viewport;
  const { x, y, w } = model.layout.boxes;
  const font = Math.max(MIN_LABEL_FONT_PX, Math.min(LABEL_FONT_PX, Math.round(22 * scale)));
  ctx.font = `600 ${font}px sans-serif`;
  ctx.textAlign = 'left';
  ctx.textBaseline = 'middle';
  for (const b of visible) {
    const loop = flow.loopBoxes[b];
    if (loop === null) {
      continue;
    }
    const text = loopText(loop);
    const width = ctx.measureText(text).width + 8;
    const height = font + 4;
    const sx = x[b] * scale + viewport.offsetX + Math.max(0, (w[b] * scale - width) / 2);
    const sy = y[b] * scale + viewport.offsetY - height - 1; // on the box, above its name
    const tab = { x: sx, y: sy, w: width, h: height };
    if (placed.some((other) => overlaps(tab, other))) {
      continue;
    }
    ctx.beginPath();
    roundedRect(ctx, sx, sy, width, height, height / 2);
    ctx.fillStyle = theme.loop;
    ctx.fill();
    ctx.fillStyle = textColourOn(theme.loop);
    ctx.fillText(text, sx + 4, sy + height / 2);
    placed.push(tab);
  }
  ctx.font = `${LABEL_FONT_PX}px sans-serif`;
}

/**
 * Byte counts of transfers and edge counts of summarized edges, beside the line (not on it), on a
 * background; one that would cover a label or a box is left out.
 */
function drawEdgeLabels(
  { ctx, model, viewport, theme }: PaintRequest,
  inView: number[],
  visible: Int32Array,
  placed: LabelRect[],
): void {
  const { scale } = viewport;
  const { x, y, w, h } = model.layout.boxes;
  const boxRects = Array.from(visible, (b) => ({
    x: x[b] * scale + viewport.offsetX,
    y: y[b] * scale + viewport.offsetY,
    w: w[b] * scale,
    h: h[b] * scale,
  }));
  const covers = (r: LabelRect, others: readonly LabelRect[]) =>
    others.some((o) => r.x < o.x + o.w && o.x < r.x + r.w && r.y < o.y + o.h && o.y < r.y + r.h);
  ctx.font = `${LABEL_FONT_PX}px sans-serif`;
  ctx.textAlign = 'left';
  ctx.textBaseline = 'middle';
  const labelled = [
    ...inView.map((e) => {
      const edge = model.folded.edges[e];
      const [sx, sy, tx, ty] = edgeEnds(model, edge.src, edge.dst);
      return { edge, at: [(sx + tx) / 2, (sy + ty) / 2] };
    }),
    ...model.layout.links.map((edge) => ({
      edge,
      at: linkPath(model, edge.side, edge.other).slice(-2),
    })),
  ];
  for (const { edge, at } of labelled) {
    const parts: string[] = [];
    if (edge.count > 1) {
      parts.push(`×${edge.count}`);
    }
    if (edge.crosses && edge.bytes > 0) {
      parts.push(`${edge.network ? 'network ' : ''}${formatBytes(edge.bytes)}`);
    }
    if (parts.length === 0) {
      continue;
    }
    const text = parts.join(' · ');
    const mx = at[0] * scale + viewport.offsetX;
    const my = at[1] * scale + viewport.offsetY;
    const width = ctx.measureText(text).width + 6;
    const rect = { x: mx + 5, y: my - LABEL_FONT_PX / 2 - 2, w: width, h: LABEL_FONT_PX + 4 };
    if (
      rect.x + rect.w > viewport.width ||
      rect.y < 0 ||
      rect.y + rect.h > viewport.height ||
      covers(rect, placed) ||
      covers(rect, boxRects)
    ) {
      continue;
    }
    ctx.fillStyle = theme.background;
    ctx.globalAlpha = 0.9;
    ctx.fillRect(rect.x, rect.y, rect.w, rect.h);
    ctx.globalAlpha = 1;
    ctx.fillStyle = edge.crosses ? theme.transfer : theme.muted;
    ctx.fillText(text, rect.x + 3, my);
    placed.push(rect);
  }
}
