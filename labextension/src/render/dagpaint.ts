/**
 * Drawing the DAG on a 2D canvas with level of detail: far out, boxes are plain rects grouped by
 * colour (one path per colour) and edges are drawn only when few are in view; closer in, outlines,
 * transfer byte counts and labels appear. Only what intersects the viewport is drawn.
 */
import { textColourOn } from './colours';
import { LIVE_RUNNING, boxAlpha, type BoxColours } from './dagcolour';
import { BOX_HEIGHT, BOX_WIDTH, type DagModel } from './dagmodel';
import { formatBytes } from './format';
import type { NodeRecord } from './types';
import type { Viewport } from './viewport';
import { visibleText } from './visible';

export interface DagTheme {
  foreground: string;
  muted: string;
  edge: string;
  transfer: string;
  accent: string;
  mismatch: string;
  /** Outline of the ops running now in the run in flight. */
  running: string;
}

export interface PaintRequest {
  ctx: CanvasRenderingContext2D;
  model: DagModel;
  nodes: readonly NodeRecord[];
  viewport: Viewport;
  devicePixelRatio: number;
  colours: BoxColours;
  /** Per box, 1 when the filter leaves it out (drawn faint); null: no filter. */
  dimmed: Uint8Array | null;
  /** Per box, the run in flight's mark (dagcolour.progressMarks); null: no run in flight. */
  live: Uint8Array | null;
  hoveredBox: number;
  selectedBox: number;
  theme: DagTheme;
}

/** Zoom (screen px per world px) from which outlines, labels and byte counts are drawn. */
const OUTLINE_SCALE = 0.15;
const LABEL_SCALE = 0.42;
const TYPE_LINE_SCALE = 1.3;
const BYTES_SCALE = 0.9;
const LABEL_FONT_PX = 11;

/** At most this many edges in view are drawn at each zoom; beyond, edges are left out. */
function edgeBudget(scale: number): number {
  if (scale < 0.08) {
    return 3_000;
  }
  if (scale < OUTLINE_SCALE) {
    return 10_000;
  }
  return scale < LABEL_SCALE ? 40_000 : Infinity;
}

/** Paint one frame; returns how many boxes were in view. */
export function paintDag(request: PaintRequest): number {
  const { ctx, viewport, devicePixelRatio: dpr } = request;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, viewport.width, viewport.height);
  const visible = visibleBoxes(request);
  const { scale, offsetX, offsetY } = viewport;
  ctx.setTransform(dpr * scale, 0, 0, dpr * scale, dpr * offsetX, dpr * offsetY);
  drawEdges(request);
  drawBoxes(request, visible);
  drawRings(request);
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  if (scale >= LABEL_SCALE) {
    drawLabels(request, visible);
  }
  return visible.length;
}

function visibleBoxes({ model, viewport }: PaintRequest): Int32Array {
  const x0 = viewport.toWorldX(0);
  const y0 = viewport.toWorldY(0);
  const x1 = viewport.toWorldX(viewport.width);
  const y1 = viewport.toWorldY(viewport.height);
  const { x, y } = model.layout;
  const found: number[] = [];
  model.grid.query(x0, y0, x1, y1, (b) => {
    if (x[b] + BOX_WIDTH >= x0 && x[b] <= x1 && y[b] + BOX_HEIGHT >= y0 && y[b] <= y1) {
      found.push(b);
    }
  });
  return Int32Array.from(found);
}

function drawEdges({ ctx, model, viewport, theme }: PaintRequest): void {
  const x0 = viewport.toWorldX(0);
  const y0 = viewport.toWorldY(0);
  const x1 = viewport.toWorldX(viewport.width);
  const y1 = viewport.toWorldY(viewport.height);
  const { x, y } = model.layout;
  const edges = model.folded.edges;
  const inView: number[] = [];
  const budget = edgeBudget(viewport.scale);
  for (let e = 0; e < edges.length; e++) {
    const sx = x[edges[e].src] + BOX_WIDTH / 2;
    const sy = y[edges[e].src] + BOX_HEIGHT;
    const tx = x[edges[e].dst] + BOX_WIDTH / 2;
    const ty = y[edges[e].dst];
    if (
      Math.max(sx, tx) >= x0 &&
      Math.min(sx, tx) <= x1 &&
      Math.max(sy, ty) >= y0 &&
      Math.min(sy, ty) <= y1
    ) {
      inView.push(e);
      if (inView.length > budget) {
        return;
      }
    }
  }
  const px = 1 / viewport.scale;
  const stroke = (pick: (e: number) => boolean, colour: string, width: number, dash: number[]) => {
    ctx.beginPath();
    for (const e of inView) {
      if (pick(e)) {
        const edge = edges[e];
        const sx = x[edge.src] + BOX_WIDTH / 2;
        const sy = y[edge.src] + BOX_HEIGHT;
        const tx = x[edge.dst] + BOX_WIDTH / 2;
        const ty = y[edge.dst];
        const bend = Math.max(Math.abs(ty - sy) / 2, 12);
        ctx.moveTo(sx, sy);
        ctx.bezierCurveTo(sx, sy + bend, tx, ty - bend, tx, ty);
      }
    }
    ctx.strokeStyle = colour;
    ctx.lineWidth = width * px;
    ctx.setLineDash(dash.map((d) => d * px));
    ctx.stroke();
  };
  stroke((e) => !edges[e].crosses && !edges[e].control, theme.edge, 1, []);
  stroke((e) => edges[e].control, theme.edge, 1, [1.5, 3]);
  stroke((e) => edges[e].crosses && !edges[e].control, theme.transfer, 2.5, [7, 4]);
  ctx.setLineDash([]);
  if (viewport.scale >= BYTES_SCALE) {
    ctx.fillStyle = theme.transfer;
    ctx.font = `${LABEL_FONT_PX * px}px sans-serif`;
    ctx.textAlign = 'center';
    ctx.textBaseline = 'middle';
    for (const e of inView) {
      const edge = edges[e];
      if (edge.crosses && edge.bytes > 0) {
        const mx = (x[edge.src] + x[edge.dst]) / 2 + BOX_WIDTH / 2;
        const my = (y[edge.src] + BOX_HEIGHT + y[edge.dst]) / 2;
        ctx.fillText(formatBytes(edge.bytes), mx + 4 * px, my);
      }
    }
  }
}

function drawBoxes(request: PaintRequest, visible: Int32Array): void {
  const { ctx, model, colours, dimmed, live, viewport, theme } = request;
  const { x, y } = model.layout;
  const px = 1 / viewport.scale;
  const byColour = groupByColour(visible, colours);
  // One pass per opacity (a few at most): boxes filtered out, waiting in the run in flight, the rest.
  const alphaOf = (b: number) => boxAlpha(dimmed?.[b] ?? 0, live?.[b] ?? 0);
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
          ctx.rect(x[b], y[b], BOX_WIDTH, BOX_HEIGHT);
        }
      }
      ctx.fillStyle = colours.palette[colour];
      ctx.fill();
    });
  }
  ctx.globalAlpha = 1;
  const outline = (pick: (b: number) => boolean, colour: string, width: number, dash: number[]) => {
    ctx.beginPath();
    for (const b of visible) {
      if (pick(b)) {
        ctx.rect(x[b], y[b], BOX_WIDTH, BOX_HEIGHT);
      }
    }
    ctx.strokeStyle = colour;
    ctx.lineWidth = width * px;
    ctx.setLineDash(dash.map((d) => d * px));
    ctx.stroke();
  };
  const folded = (b: number) => model.folded.boxes[b].node < 0;
  if (viewport.scale >= OUTLINE_SCALE) {
    outline((b) => !folded(b) && !model.simulated[b], theme.muted, 1, []);
    outline((b) => model.simulated[b] === 1, theme.foreground, 1.5, [5, 3]);
  }
  // Folded scopes get a heavy outline; requests the placer did not honour (red outline and
  // corner) stay visible at every zoom.
  outline(folded, theme.foreground, 2.5, []);
  ctx.setLineDash([]);
  outline((b) => model.mismatch[b] === 1, theme.mismatch, 2.5, []);
  ctx.beginPath();
  const corner = Math.min(BOX_HEIGHT / 2, Math.max(8, 6 * px));
  for (const b of visible) {
    if (model.mismatch[b] === 1) {
      ctx.moveTo(x[b] + BOX_WIDTH - corner, y[b]);
      ctx.lineTo(x[b] + BOX_WIDTH, y[b]);
      ctx.lineTo(x[b] + BOX_WIDTH, y[b] + corner);
      ctx.closePath();
    }
  }
  ctx.fillStyle = theme.mismatch;
  ctx.fill();
  if (live !== null) {
    // Ops running now in the run in flight: a heavy outline at every zoom.
    outline((b) => live[b] === LIVE_RUNNING, theme.running, 4, []);
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

function drawRings({ ctx, model, viewport, hoveredBox, selectedBox, theme }: PaintRequest): void {
  const px = 1 / viewport.scale;
  const ring = (box: number, colour: string, width: number) => {
    if (box < 0) {
      return;
    }
    const gap = 3 * px;
    ctx.strokeStyle = colour;
    ctx.lineWidth = width * px;
    ctx.strokeRect(
      model.layout.x[box] - gap,
      model.layout.y[box] - gap,
      BOX_WIDTH + 2 * gap,
      BOX_HEIGHT + 2 * gap,
    );
  };
  ring(selectedBox, theme.foreground, 3);
  ring(hoveredBox, theme.accent, 2);
}

/** Names (and, closer in, types) in screen space at a fixed font size, cut to the box width. */
function drawLabels(request: PaintRequest, visible: Int32Array): void {
  const { ctx, model, nodes, viewport, colours } = request;
  const { scale } = viewport;
  const room = BOX_WIDTH * scale - 8;
  const twoLines = scale >= TYPE_LINE_SCALE;
  ctx.font = `${LABEL_FONT_PX}px sans-serif`;
  ctx.textAlign = 'left';
  ctx.textBaseline = 'middle';
  const textColours = colours.palette.map(textColourOn);
  for (const b of visible) {
    const box = model.folded.boxes[b];
    const sx = model.layout.x[b] * scale + viewport.offsetX + 4;
    const sy = model.layout.y[b] * scale + viewport.offsetY;
    const height = BOX_HEIGHT * scale;
    const leaf = box.name.slice(box.name.lastIndexOf('/') + 1);
    const label = box.node < 0 ? `${leaf}/ ${compactCount(box.ops)} ops` : leaf;
    ctx.fillStyle = textColours[colours.index[b]];
    ctx.fillText(
      fitText(ctx, visibleText(label), room),
      sx,
      sy + (twoLines ? height / 3 : height / 2),
    );
    if (twoLines) {
      const second = box.node < 0 ? box.name : nodes[box.node].type;
      ctx.fillText(fitText(ctx, visibleText(second), room), sx, sy + (2 * height) / 3);
    }
  }
}

/** 25000 -> "25k", 1234 -> "1.2k": folded scope sizes in a few characters. */
function compactCount(n: number): string {
  if (n < 1000) {
    return String(n);
  }
  const thousands = n / 1000;
  return `${thousands < 10 ? thousands.toFixed(1) : Math.round(thousands)}k`;
}

/** The longest prefix of `text` (with an ellipsis when cut) that fits `width` pixels. */
function fitText(ctx: CanvasRenderingContext2D, text: string, width: number): string {
  if (ctx.measureText(text).width <= width) {
    return text;
  }
  let low = 0;
  let high = text.length - 1;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (ctx.measureText(`${text.slice(0, mid)}…`).width <= width) {
      low = mid;
    } else {
      high = mid - 1;
    }
  }
  return low === 0 ? '' : `${text.slice(0, low)}…`;
}
