/**
 * Painting the DAG's edges (world space: tensors, control edges, transfers, network hops and the
 * side groups' links, left out past a budget of edges in view) and, close in, their labels
 * (screen space: byte counts and edge counts, beside the line, never over a label or a box).
 */
import { LABEL_FONT_PX } from './boxmetrics';
import { mark, type MarkId } from './dagmarks';
import { formatBytes } from './format';
import type { LabelRect } from './labels';
import type { PaintRequest } from './dagpaint';
import { EDGE_LABEL_SCALE, OUTLINE_SCALE, edgeEnds, linkPath, worldView } from './dagshapes';

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

export function drawEdges({ ctx, model, viewport, theme }: PaintRequest): number[] {
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

/**
 * Byte counts of transfers and edge counts of summarized edges, beside the line (not on it), on a
 * background; one that would cover a label or a box is left out.
 */
export function drawEdgeLabels(
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
