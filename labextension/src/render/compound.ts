/**
 * Nested layout of a folded hierarchy: each opened group is laid out on its own (its boxes and
 * inner containers, with edges lifted to the children of the group they cross into) and becomes
 * a node as big as its contents in its parent's layout, as TensorBoard's graph does. At the top,
 * side groups are not part of the layered layout: they stand in a column to the right, each next
 * to the ops it is linked to; or, for a canvas narrower than the graph is wide (dagfold.bestFit),
 * in a column below the graph's right end, so the graph fits it at a closer zoom.
 */
import {
  CONTAINER_HEADER,
  CONTAINER_PAD,
  GROUP_HEIGHT,
  GROUP_WIDTH,
  OP_HEIGHT,
  groupBoxWidth,
  opBoxWidth,
} from './boxmetrics';
import { boxPaths, shortestLabel } from './labels';
import { layoutDag, type DagLayout } from './layout';
import type { BoxEdge, FoldedGraph } from './scopes';

const COLUMN_GAP = 10;
const LAYER_GAP = 26;
const SIDE_GAP = 70;
/** The first side item's bus runs this far right of the graph; each next one BUS_STEP further. */
const BUS_OFFSET = 16;
const BUS_STEP = 9;
/**
 * A level laid out taller than this times its width (a long chain: an opened series of 100
 * blocks) is wrapped into side-by-side columns of layers, so it fits a wide canvas.
 */
const WRAP_ASPECT = 0.6;
const WRAP_GAP = 32;

export interface Rects {
  x: Float32Array;
  y: Float32Array;
  w: Float32Array;
  h: Float32Array;
}

/**
 * The edges between a side box and the rest summarized as one link per top-level item (a box or
 * an opened group's container) it touches, in either direction.
 */
export interface SideLink {
  side: number;
  /** A box index, or the box count plus a container index. */
  other: number;
  count: number;
  bytes: number;
  crosses: boolean;
  network: boolean;
}

export interface CompoundLayout {
  boxes: Rects;
  containers: Rects;
  /** Per item (boxes, then containers): 1 for a top-level item set aside in the side column. */
  aside: Uint8Array;
  /** Per item: the top-level item holding it (itself at the top). */
  rootItem: Int32Array;
  /**
   * Per side item: the x of its bus, the vertical line right of the graph that its links join,
   * so they read as one comb and not a fan of curves (0 for other items).
   */
  busX: Float32Array;
  links: SideLink[];
  /** Whether the side items stand below the graph (their links enter their right side). */
  sideBelow: boolean;
  width: number;
  height: number;
}

function rects(n: number): Rects {
  return {
    x: new Float32Array(n),
    y: new Float32Array(n),
    w: new Float32Array(n),
    h: new Float32Array(n),
  };
}

/**
 * `isSide(g)`: whether group g is a side group; a top-level one, folded or opened, goes in the
 * side column, right of the graph or, with `sideBelow`, below it. Items are boxes 0..B-1 then
 * containers; a container's children are laid out before it (containers come in pre-order, so
 * backwards).
 */
export function layoutCompound(
  folded: FoldedGraph,
  isSide: (group: number) => boolean,
  sideBelow = false,
): CompoundLayout {
  const B = folded.boxes.length;
  const C = folded.containers.length;
  const parentOf = (item: number) => {
    const parent = item < B ? folded.boxParent[item] : folded.containers[item - B].parent;
    return parent < 0 ? -1 : B + parent;
  };
  const depth = new Int32Array(B + C);
  for (let c = 0; c < C; c++) {
    const parent = folded.containers[c].parent;
    depth[B + c] = parent < 0 ? 1 : depth[B + parent] + 1;
  }
  for (let b = 0; b < B; b++) {
    const parent = folded.boxParent[b];
    depth[b] = parent < 0 ? 1 : depth[B + parent] + 1;
  }
  // Children of each level: index C is the top.
  const children: number[][] = Array.from({ length: C + 1 }, () => []);
  const levelOf = (item: number) => {
    const parent = parentOf(item);
    return parent < 0 ? C : parent - B;
  };
  const groupOf = (item: number) =>
    item < B ? folded.boxes[item].group : folded.containers[item - B].group;
  const aside = new Uint8Array(B + C);
  for (let item = 0; item < B + C; item++) {
    if (levelOf(item) === C && groupOf(item) >= 0 && isSide(groupOf(item))) {
      aside[item] = 1;
      continue;
    }
    children[levelOf(item)].push(item);
  }
  // Each item's top-level item (itself at the top).
  const rootItem = new Int32Array(B + C);
  for (let item = B; item < B + C; item++) {
    const parent = parentOf(item);
    rootItem[item] = parent < 0 ? item : rootItem[parent];
  }
  for (let b = 0; b < B; b++) {
    const parent = parentOf(b);
    rootItem[b] = parent < 0 ? b : rootItem[parent];
  }
  const lifted = liftEdges(folded.edges, parentOf, depth, levelOf, C);
  const w = new Float32Array(B + C);
  const h = new Float32Array(B + C);
  // A box is as wide as its shortest telling label needs (what dagmodel.ts draws, titles aside).
  const { paths, keeps } = boxPaths(folded.boxes);
  for (let b = 0; b < B; b++) {
    const group = folded.boxes[b].node < 0;
    w[b] = (group ? groupBoxWidth : opBoxWidth)(shortestLabel(paths[b], keeps[b]));
    h[b] = group ? GROUP_HEIGHT : OP_HEIGHT;
  }
  const relX = new Float32Array(B + C);
  const relY = new Float32Array(B + C);
  const place = (level: number): { width: number; height: number } => {
    const items = children[level];
    const local = new Map<number, number>();
    items.forEach((item, k) => local.set(item, k));
    const edges: { src: number; dst: number }[] = [];
    for (const [a, b] of lifted[level]) {
      const src = local.get(a);
      const dst = local.get(b);
      if (src !== undefined && dst !== undefined) {
        edges.push({ src, dst });
      }
    }
    const layout = layoutDag(items.length, edges, {
      widths: Float64Array.from(items, (item) => w[item]),
      heights: Float64Array.from(items, (item) => h[item]),
      columnGap: COLUMN_GAP,
      layerGap: LAYER_GAP,
    });
    const wrapped = wrapColumns(layout);
    items.forEach((item, k) => {
      relX[item] = wrapped.x[k];
      relY[item] = wrapped.y[k];
    });
    return { width: wrapped.width, height: wrapped.height };
  };
  for (let c = C - 1; c >= 0; c--) {
    const size = place(c);
    const title = Math.max(GROUP_WIDTH, size.width);
    w[B + c] = title + 2 * CONTAINER_PAD;
    h[B + c] = size.height + CONTAINER_HEADER + CONTAINER_PAD;
  }
  const top = place(C);
  const links = sideLinks(folded.edges, aside, rootItem);
  const busX = new Float32Array(B + C);
  const { width, height } = placeAside(links, aside, relX, relY, w, h, top, busX, sideBelow);
  const absX = relX;
  const absY = relY;
  for (let c = 0; c < C; c++) {
    // Containers come in pre-order: a parent's place is final before its children's.
    const parent = parentOf(B + c);
    if (parent >= 0) {
      absX[B + c] += absX[parent] + CONTAINER_PAD;
      absY[B + c] += absY[parent] + CONTAINER_HEADER;
    }
  }
  for (let b = 0; b < B; b++) {
    const parent = parentOf(b);
    if (parent >= 0) {
      absX[b] += absX[parent] + CONTAINER_PAD;
      absY[b] += absY[parent] + CONTAINER_HEADER;
    }
  }
  const boxes = rects(B);
  boxes.x.set(absX.subarray(0, B));
  boxes.y.set(absY.subarray(0, B));
  boxes.w.set(w.subarray(0, B));
  boxes.h.set(h.subarray(0, B));
  const containers = rects(C);
  containers.x.set(absX.subarray(B));
  containers.y.set(absY.subarray(B));
  containers.w.set(w.subarray(B));
  containers.h.set(h.subarray(B));
  return { boxes, containers, aside, rootItem, busX, links, sideBelow, width, height };
}

/**
 * A layout much taller than wide cut into columns of consecutive layers, side by side, about as
 * many as make it WRAP_ASPECT tall for its width; other layouts are returned as they are. Each
 * column is as wide as its own layers (a column of one-box layers next to one of wide layers
 * takes one box's width, not the widest layer's), so the wrapped graph fits a canvas at the
 * closest zoom it can.
 */
export function wrapColumns(layout: DagLayout): {
  x: Float32Array;
  y: Float32Array;
  width: number;
  height: number;
} {
  const { layers, width, height } = layout;
  const columns = Math.min(
    layers,
    Math.round(Math.sqrt(height / (WRAP_ASPECT * Math.max(width, 1)))),
  );
  if (columns < 2) {
    return layout;
  }
  const top = new Float64Array(layers).fill(Infinity);
  const bottom = new Float64Array(layers);
  for (let u = 0; u < layout.x.length; u++) {
    top[layout.layer[u]] = Math.min(top[layout.layer[u]], layout.y[u]);
    bottom[layout.layer[u]] = Math.max(
      bottom[layout.layer[u]],
      layout.y[u] + (layout.heights?.[u] ?? layout.nodeHeight),
    );
  }
  const perColumn = Math.ceil(layers / columns);
  const used = Math.ceil(layers / perColumn);
  const left = new Float64Array(used).fill(Infinity);
  const right = new Float64Array(used).fill(-Infinity);
  for (let u = 0; u < layout.x.length; u++) {
    const column = Math.floor(layout.layer[u] / perColumn);
    left[column] = Math.min(left[column], layout.x[u]);
    right[column] = Math.max(right[column], layout.x[u] + (layout.widths?.[u] ?? layout.nodeWidth));
  }
  // Where each column starts: right of the one before it (every layer holds a node).
  const start = new Float64Array(used);
  let tallest = 0;
  for (let c = 0; c < used; c++) {
    const first = c * perColumn;
    const last = Math.min(layers, first + perColumn) - 1;
    tallest = Math.max(tallest, bottom[last] - top[first]);
    if (c > 0) {
      start[c] = start[c - 1] + right[c - 1] - left[c - 1] + WRAP_GAP;
    }
  }
  const across = start[used - 1] + right[used - 1] - left[used - 1];
  const x = new Float32Array(layout.x.length);
  const y = new Float32Array(layout.x.length);
  for (let u = 0; u < layout.x.length; u++) {
    const column = Math.floor(layout.layer[u] / perColumn);
    x[u] = layout.x[u] - left[column] + start[column];
    y[u] = layout.y[u] - top[column * perColumn];
  }
  return { x, y, width: across, height: tallest };
}

/**
 * Edges into or out of a side item (a side group, folded or opened), merged per (side item,
 * top-level item at the other end); edges inside one side item are drawn as they are.
 */
function sideLinks(edges: readonly BoxEdge[], aside: Uint8Array, rootItem: Int32Array): SideLink[] {
  const links = new Map<string, SideLink>();
  for (const edge of edges) {
    let side = rootItem[edge.src];
    let other = rootItem[edge.dst];
    if (side === other || (aside[side] === 0 && aside[other] === 0)) {
      continue;
    }
    if (aside[side] === 0 || (aside[other] === 1 && other < side)) {
      [side, other] = [other, side];
    }
    const key = `${side},${other}`;
    const link = links.get(key);
    if (link === undefined) {
      const { count, bytes, crosses, network } = edge;
      links.set(key, { side, other, count, bytes, crosses, network });
    } else {
      link.count += edge.count;
      link.bytes += edge.bytes;
      link.crosses ||= edge.crosses;
      link.network ||= edge.network;
    }
  }
  return [...links.values()];
}

/**
 * Side items in a column right of the graph, each at the mean height of the top-level items it
 * is linked to, pushed down so none overlap, each with its bus; or, `below`, in that order in a
 * column under the graph, flush with its right end, their buses coming down beside it. Returns
 * the size of everything.
 */
function placeAside(
  links: readonly SideLink[],
  aside: Uint8Array,
  x: Float32Array,
  y: Float32Array,
  w: Float32Array,
  h: Float32Array,
  top: { width: number; height: number },
  busX: Float32Array,
  below: boolean,
): { width: number; height: number } {
  const items = busX.length;
  const sum = new Float64Array(items);
  const count = new Float64Array(items);
  for (const { side, other } of links) {
    if (aside[other] === 0) {
      sum[side] += y[other] + h[other] / 2;
      count[side]++;
    }
  }
  const sides: number[] = [];
  for (let item = 0; item < items; item++) {
    if (aside[item] === 1) {
      sides.push(item);
    }
  }
  if (sides.length === 0) {
    return top;
  }
  const wanted = (i: number) => (count[i] > 0 ? sum[i] / count[i] : top.height) - h[i] / 2;
  sides.sort((a, b) => wanted(a) - wanted(b) || a - b);
  const column = Math.max(...sides.map((item) => w[item]));
  if (below) {
    const right = Math.max(top.width, column);
    let bottom = top.height + LAYER_GAP / 2;
    sides.forEach((item, rank) => {
      busX[item] = right + BUS_OFFSET + rank * BUS_STEP;
      x[item] = right - w[item];
      y[item] = bottom + LAYER_GAP / 2;
      bottom = y[item] + h[item];
    });
    // Past the last bus, room for the links between side items (dagshapes.linkPath).
    return { width: right + BUS_OFFSET + sides.length * BUS_STEP, height: bottom };
  }
  let bottom = -Infinity;
  let height = top.height;
  sides.forEach((item, rank) => {
    busX[item] = top.width + BUS_OFFSET + rank * BUS_STEP;
    x[item] = top.width + SIDE_GAP;
    y[item] = Math.max(0, wanted(item), bottom + LAYER_GAP / 2);
    bottom = y[item] + h[item];
    height = Math.max(height, bottom);
  });
  return { width: top.width + SIDE_GAP + column, height };
}

/**
 * Each box edge (a, b) lifted to the level where its ends are siblings: the two children of their
 * lowest common container that hold them. Returns the distinct pairs per level.
 */
function liftEdges(
  edges: readonly BoxEdge[],
  parentOf: (item: number) => number,
  depth: Int32Array,
  levelOf: (item: number) => number,
  levels: number,
): [number, number][][] {
  const lifted: [number, number][][] = Array.from({ length: levels + 1 }, () => []);
  const seen = new Set<string>();
  for (const edge of edges) {
    let a = edge.src;
    let b = edge.dst;
    while (depth[a] > depth[b]) {
      a = parentOf(a);
    }
    while (depth[b] > depth[a]) {
      b = parentOf(b);
    }
    while (parentOf(a) !== parentOf(b)) {
      a = parentOf(a);
      b = parentOf(b);
    }
    const key = `${a},${b}`;
    if (a !== b && !seen.has(key)) {
      seen.add(key);
      lifted[levelOf(a)].push([a, b]);
    }
  }
  return lifted;
}
