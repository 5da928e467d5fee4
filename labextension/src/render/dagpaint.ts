/**
 * Drawing the DAG on a 2D canvas with level of detail: opened groups as containers with a title
 * strip, folded groups as rounded boxes with their op count and a bar of their devices' colours,
 * ops as rectangles; far out, edges are drawn only when few are in view; closer in, outlines,
 * labels and edge labels appear (a box too small for a name in the full font says it smaller
 * and shorter, down to a least size). Labels never overlap: box labels are cut to their box, edge
 * labels are left out where they would cover another label or a box. Only what intersects the
 * viewport is drawn.
 *
 * This module orders one frame; the shapes are dagpaintboxes.ts's, the edges and their labels
 * dagpaintedges.ts's, the names, titles and tabs dagpaintlabels.ts's, and what they share
 * dagshapes.ts's.
 */
import type { BoxColours } from './dagcolour';
import type { FlowMarks } from './dagflow';
import type { DagModel } from './dagmodel';
import { countOverlaps, type LabelRect } from './labels';
import type { NodeRecord } from './types';
import type { Viewport } from './viewport';
import { drawBoxes, drawContainers, drawMarks, drawRings } from './dagpaintboxes';
import { drawEdgeLabels, drawEdges } from './dagpaintedges';
import { drawLabels, drawLoopTabs, drawTitles } from './dagpaintlabels';
import { EDGE_LABEL_SCALE, worldView } from './dagshapes';

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
