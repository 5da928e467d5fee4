/**
 * What the DAG painters share: the zooms from which details appear, the part of the world in view,
 * rounded rectangles, the +/- control's rectangle, and where edges and side links run (world px).
 */
import { TOGGLE_INSET, TOGGLE_SIZE } from './boxmetrics';
import type { DagModel } from './dagmodel';
import type { LabelRect } from './labels';
import type { Viewport } from './viewport';

/** Zoom (screen px per world px) from which outlines, then edge labels and every edge are drawn. */
export const OUTLINE_SCALE = 0.15;
export const EDGE_LABEL_SCALE = 0.42;
export const CORNER_RADIUS = 6;

/** The rectangle of the +/- control of a group box or container with this rect (world px). */
export function toggleRect(x: number, y: number, w: number): LabelRect {
  return {
    x: x + w - TOGGLE_SIZE - TOGGLE_INSET,
    y: y + TOGGLE_INSET,
    w: TOGGLE_SIZE,
    h: TOGGLE_SIZE,
  };
}

/** The part of the world the canvas shows: x0, y0, x1, y1 (world px). */
export function worldView(viewport: Viewport): [number, number, number, number] {
  return [
    viewport.toWorldX(0),
    viewport.toWorldY(0),
    viewport.toWorldX(viewport.width),
    viewport.toWorldY(viewport.height),
  ];
}

/** Add a rounded rectangle to the current path. */
export function roundedRect(
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

/** Where an edge leaves its source's bottom and enters its target's top. */
export function edgeEnds(
  model: DagModel,
  src: number,
  dst: number,
): [number, number, number, number] {
  const { x, y, w, h } = model.layout.boxes;
  return [x[src] + w[src] / 2, y[src] + h[src], x[dst] + w[dst] / 2, y[dst]];
}

/** The rectangle of a layout item: a box, or (from the box count on) a container. */
export function itemRect(model: DagModel, item: number): LabelRect {
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
export function linkPath(model: DagModel, side: number, other: number): number[] {
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
