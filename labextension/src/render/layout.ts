/**
 * Layered DAG layout fast enough for 100,000 ops: longest-path layers over a topological order,
 * barycenter sweeps for the order within layers, then a barycenter-seeking x that keeps spacing.
 * Every pass is O(V + E) over typed arrays (CSR adjacency); nothing allocates per node. Nodes may
 * have sizes of their own (an opened scope is a node as big as its contents).
 */

export interface LayoutOptions {
  nodeWidth?: number;
  nodeHeight?: number;
  /** Per-node sizes; where given they override nodeWidth / nodeHeight. */
  widths?: ArrayLike<number>;
  heights?: ArrayLike<number>;
  /** Horizontal space between neighbours in a layer. */
  columnGap?: number;
  /** Vertical space between layers. */
  layerGap?: number;
  /** Barycenter ordering sweeps (each one down and one up). */
  sweeps?: number;
}

/** Top-left corner of each node's box; `width`/`height` bound them all, starting at 0. */
export interface DagLayout {
  x: Float32Array;
  y: Float32Array;
  layer: Int32Array;
  layers: number;
  width: number;
  height: number;
  nodeWidth: number;
  nodeHeight: number;
  /** Per-node widths and heights, when the options gave them. */
  widths?: ArrayLike<number>;
  heights?: ArrayLike<number>;
}

interface Adjacency {
  start: Int32Array; // neighbours of u: list[start[u] .. start[u+1])
  list: Int32Array;
}

export function layoutDag(
  nodeCount: number,
  edges: readonly { src: number; dst: number }[],
  options: LayoutOptions = {},
): DagLayout {
  const nodeWidth = options.nodeWidth ?? 120;
  const nodeHeight = options.nodeHeight ?? 28;
  const widths = options.widths ?? new Float64Array(nodeCount).fill(nodeWidth);
  const heights = options.heights ?? new Float64Array(nodeCount).fill(nodeHeight);
  const columnGap = options.columnGap ?? 16;
  const layerGap = options.layerGap ?? 40;
  const { out, into } = adjacency(nodeCount, edges);
  const order = topologicalOrder(nodeCount, out, into);
  const layer = assignLayers(order, out);
  const layers = layer.reduce((max, l) => Math.max(max, l + 1), 0);
  const { members, layerStart } = groupByLayer(order, layer, layers);
  const slot = new Int32Array(nodeCount);
  setSlots(members, layerStart, slot);
  const sweeps = options.sweeps ?? 2;
  for (let s = 0; s < sweeps; s++) {
    orderSweep(members, layerStart, slot, layer, out, into, 1);
    orderSweep(members, layerStart, slot, layer, out, into, -1);
  }
  // Centres, packed left to right in each layer.
  const xs = new Float64Array(nodeCount);
  for (let l = 0; l < layers; l++) {
    let right = 0;
    for (let k = layerStart[l]; k < layerStart[l + 1]; k++) {
      const u = members[k];
      xs[u] = right + widths[u] / 2;
      right += widths[u] + columnGap;
    }
  }
  const gap = (a: number, b: number) => (widths[a] + widths[b]) / 2 + columnGap;
  alignPass(members, layerStart, layer, xs, out, into, gap, 1);
  alignPass(members, layerStart, layer, xs, out, into, gap, -1);
  let minX = Infinity;
  let maxX = -Infinity;
  for (let u = 0; u < nodeCount; u++) {
    minX = Math.min(minX, xs[u] - widths[u] / 2);
    maxX = Math.max(maxX, xs[u] + widths[u] / 2);
  }
  const layerTop = new Float64Array(layers + 1);
  const layerHeight = new Float64Array(layers);
  for (let u = 0; u < nodeCount; u++) {
    layerHeight[layer[u]] = Math.max(layerHeight[layer[u]], heights[u]);
  }
  for (let l = 0; l < layers; l++) {
    layerTop[l + 1] = layerTop[l] + layerHeight[l] + layerGap;
  }
  const x = new Float32Array(nodeCount);
  const y = new Float32Array(nodeCount);
  for (let u = 0; u < nodeCount; u++) {
    x[u] = xs[u] - widths[u] / 2 - minX;
    y[u] = layerTop[layer[u]];
  }
  return {
    x,
    y,
    layer,
    layers,
    width: nodeCount === 0 ? 0 : maxX - minX,
    height: layers === 0 ? 0 : layerTop[layers] - layerGap,
    nodeWidth,
    nodeHeight,
    widths: options.widths,
    heights: options.heights,
  };
}

/** Out- and in-neighbour lists; self-loops and out-of-range indices are dropped. */
function adjacency(
  n: number,
  edges: readonly { src: number; dst: number }[],
): { out: Adjacency; into: Adjacency } {
  const outCount = new Int32Array(n + 1);
  const inCount = new Int32Array(n + 1);
  const valid = (s: number, d: number) => s !== d && s >= 0 && d >= 0 && s < n && d < n;
  for (const { src, dst } of edges) {
    if (valid(src, dst)) {
      outCount[src + 1]++;
      inCount[dst + 1]++;
    }
  }
  for (let u = 0; u < n; u++) {
    outCount[u + 1] += outCount[u];
    inCount[u + 1] += inCount[u];
  }
  const out = { start: outCount, list: new Int32Array(outCount[n]) };
  const into = { start: inCount, list: new Int32Array(inCount[n]) };
  const outFill = outCount.slice(0, n);
  const inFill = inCount.slice(0, n);
  for (const { src, dst } of edges) {
    if (valid(src, dst)) {
      out.list[outFill[src]++] = dst;
      into.list[inFill[dst]++] = src;
    }
  }
  return { out, into };
}

/**
 * Kahn's algorithm; when only cycles remain, the lowest-numbered unplaced node is taken anyway,
 * which breaks every cycle through it (its remaining in-edges become back edges).
 */
function topologicalOrder(n: number, out: Adjacency, into: Adjacency): Int32Array {
  const indegree = new Int32Array(n);
  for (let u = 0; u < n; u++) {
    indegree[u] = into.start[u + 1] - into.start[u];
  }
  const queued = new Uint8Array(n);
  const queue = new Int32Array(n);
  let head = 0;
  let tail = 0;
  for (let u = 0; u < n; u++) {
    if (indegree[u] === 0) {
      queued[u] = 1;
      queue[tail++] = u;
    }
  }
  let scan = 0;
  while (head < n) {
    if (head === tail) {
      while (queued[scan]) {
        scan++;
      }
      queued[scan] = 1;
      queue[tail++] = scan;
    }
    const u = queue[head++];
    for (let k = out.start[u]; k < out.start[u + 1]; k++) {
      const v = out.list[k];
      if (!queued[v] && --indegree[v] === 0) {
        queued[v] = 1;
        queue[tail++] = v;
      }
    }
  }
  return queue;
}

/**
 * Longest path from the sources, then each node moved down next to its nearest successor
 * (so a constant sits above the op that reads it, not at the top of the graph).
 */
function assignLayers(order: Int32Array, out: Adjacency): Int32Array {
  const n = order.length;
  const position = new Int32Array(n);
  order.forEach((u, i) => {
    position[u] = i;
  });
  const layer = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const u = order[i];
    for (let k = out.start[u]; k < out.start[u + 1]; k++) {
      const v = out.list[k];
      if (position[v] > i && layer[v] <= layer[u]) {
        layer[v] = layer[u] + 1;
      }
    }
  }
  for (let i = n - 1; i >= 0; i--) {
    const u = order[i];
    let nearest = Infinity;
    for (let k = out.start[u]; k < out.start[u + 1]; k++) {
      const v = out.list[k];
      if (position[v] > i) {
        nearest = Math.min(nearest, layer[v]);
      }
    }
    if (nearest !== Infinity && nearest - 1 > layer[u]) {
      layer[u] = nearest - 1;
    }
  }
  return layer;
}

/** Nodes bucketed by layer (counting sort), each layer in topological order. */
function groupByLayer(
  order: Int32Array,
  layer: Int32Array,
  layers: number,
): { members: Int32Array; layerStart: Int32Array } {
  const layerStart = new Int32Array(layers + 1);
  for (let u = 0; u < layer.length; u++) {
    layerStart[layer[u] + 1]++;
  }
  for (let l = 0; l < layers; l++) {
    layerStart[l + 1] += layerStart[l];
  }
  const fill = layerStart.slice(0, layers);
  const members = new Int32Array(order.length);
  for (const u of order) {
    members[fill[layer[u]]++] = u;
  }
  return { members, layerStart };
}

function setSlots(members: Int32Array, layerStart: Int32Array, slot: Int32Array): void {
  for (let l = 0; l + 1 < layerStart.length; l++) {
    for (let k = layerStart[l]; k < layerStart[l + 1]; k++) {
      slot[members[k]] = k - layerStart[l];
    }
  }
}

/**
 * One barycenter sweep (direction 1: top to bottom, using neighbours in layers above; -1: bottom
 * up). Positions are normalised to [0, 1] per layer so layers of different widths compare; each
 * layer is re-ordered by a stable bucket sort on its keys, O(layer size).
 */
function orderSweep(
  members: Int32Array,
  layerStart: Int32Array,
  slot: Int32Array,
  layer: Int32Array,
  out: Adjacency,
  into: Adjacency,
  direction: 1 | -1,
): void {
  const layers = layerStart.length - 1;
  let widest = 0;
  for (let l = 0; l < layers; l++) {
    widest = Math.max(widest, layerStart[l + 1] - layerStart[l]);
  }
  const keys = new Float64Array(widest);
  const counts = new Int32Array(2 * widest + 2);
  const sorted = new Int32Array(widest);
  const coord = (w: number) => {
    const size = layerStart[layer[w] + 1] - layerStart[layer[w]];
    return (slot[w] + 0.5) / size;
  };
  const first = direction === 1 ? 1 : layers - 2;
  for (let l = first; l >= 0 && l < layers; l += direction) {
    const begin = layerStart[l];
    const size = layerStart[l + 1] - begin;
    for (let k = 0; k < size; k++) {
      const u = members[begin + k];
      sideSums(into, u, layer, l, direction, coord);
      sideSums(out, u, layer, l, direction, coord, true);
      keys[k] = sums[1] > 0 ? sums[0] / sums[1] : (k + 0.5) / size;
    }
    const buckets = 2 * size;
    counts.fill(0, 0, buckets + 1);
    for (let k = 0; k < size; k++) {
      counts[bucket(keys[k], buckets) + 1]++;
    }
    for (let b = 0; b < buckets; b++) {
      counts[b + 1] += counts[b];
    }
    for (let k = 0; k < size; k++) {
      sorted[counts[bucket(keys[k], buckets)]++] = members[begin + k];
    }
    for (let k = 0; k < size; k++) {
      members[begin + k] = sorted[k];
      slot[sorted[k]] = k;
    }
  }
}

/** Scratch for sideSums: [sum, count], so the hot loops allocate nothing. */
const sums = new Float64Array(2);

/**
 * Add `value(w)` over the neighbours w of u that lie on the sweep's side of layer l (above it for
 * direction 1, below for -1) into `sums`; `accumulate` keeps the previous sums.
 */
function sideSums(
  adj: Adjacency,
  u: number,
  layer: Int32Array,
  l: number,
  direction: 1 | -1,
  value: (w: number) => number,
  accumulate = false,
): void {
  if (!accumulate) {
    sums[0] = 0;
    sums[1] = 0;
  }
  for (let e = adj.start[u]; e < adj.start[u + 1]; e++) {
    const w = adj.list[e];
    if ((layer[w] - l) * direction < 0) {
      sums[0] += value(w);
      sums[1]++;
    }
  }
}

function bucket(key: number, buckets: number): number {
  return Math.min(buckets - 1, Math.max(0, Math.floor(key * buckets)));
}

/**
 * Move each node towards the mean x of its neighbours on one side, keeping the layer's order and
 * at least `gap(a, b)` between the centres of neighbours a, b: a left-to-right pass pushes right, a right-to-left pass
 * pushes left, and their mean keeps both the order and the spacing.
 */
function alignPass(
  members: Int32Array,
  layerStart: Int32Array,
  layer: Int32Array,
  xs: Float64Array,
  out: Adjacency,
  into: Adjacency,
  gap: (a: number, b: number) => number,
  direction: 1 | -1,
): void {
  const layers = layerStart.length - 1;
  const valueOf = (w: number) => xs[w];
  const pushedRight = new Float64Array(members.length);
  const pushedLeft = new Float64Array(members.length);
  const first = direction === 1 ? 1 : layers - 2;
  for (let l = first; l >= 0 && l < layers; l += direction) {
    const begin = layerStart[l];
    const end = layerStart[l + 1];
    for (let k = begin; k < end; k++) {
      const u = members[k];
      sideSums(into, u, layer, l, direction, valueOf);
      sideSums(out, u, layer, l, direction, valueOf, true);
      const desired = sums[1] > 0 ? sums[0] / sums[1] : xs[u];
      pushedRight[k] =
        k === begin ? desired : Math.max(desired, pushedRight[k - 1] + gap(members[k - 1], u));
      pushedLeft[k] = desired;
    }
    for (let k = end - 2; k >= begin; k--) {
      pushedLeft[k] = Math.min(pushedLeft[k], pushedLeft[k + 1] - gap(members[k], members[k + 1]));
    }
    for (let k = begin; k < end; k++) {
      xs[members[k]] = (pushedRight[k] + pushedLeft[k]) / 2;
    }
  }
}
