import { describe, expect, it } from 'vitest';
import { CONTAINER_HEADER } from './boxmetrics';
import { layoutCompound, wrapColumns, type Rects } from './compound';
import type { DagLayout } from './layout';
import {
  allExpanded,
  buildHierarchy,
  defaultExpanded,
  foldHierarchy,
  type FoldEdge,
  type HierarchyOp,
} from './scopes';

function rect(r: Rects, i: number) {
  return { x: r.x[i], y: r.y[i], w: r.w[i], h: r.h[i] };
}

function overlap(a: ReturnType<typeof rect>, b: ReturnType<typeof rect>): boolean {
  return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

function inside(a: ReturnType<typeof rect>, b: ReturnType<typeof rect>): boolean {
  return a.x >= b.x && a.y >= b.y && a.x + a.w <= b.x + b.w && a.y + a.h <= b.y + b.h;
}

/**
 * Two layers of three ops, trained: forward ops, gradients and an optimizer. (Named apart, or
 * the two layers would form a series.)
 */
function trained(): { ops: HierarchyOp[]; edges: FoldEdge[] } {
  const ops: HierarchyOp[] = [{ name: 'x', type: 'Placeholder', device: 0 }];
  const edges: FoldEdge[] = [];
  const link = (src: number, dst: number) =>
    edges.push({ src, dst, kind: 'data', bytes: 8, crosses: false, network: false });
  for (const layer of ['first', 'second']) {
    for (const name of ['w', 'MatMul', 'Relu']) {
      ops.push({ name: `${layer}/${name}`, type: name, device: 1 });
    }
  }
  link(0, 2);
  link(1, 2);
  link(2, 3);
  link(3, 5);
  link(4, 5);
  link(5, 6);
  ops.push({ name: 'gradients/second/MatMul_grad/MatMul', type: 'MatMul', device: 1 });
  ops.push({ name: 'gradients/first/MatMul_grad/MatMul', type: 'MatMul', device: 1 });
  link(6, 7);
  link(5, 7);
  link(7, 8);
  link(2, 8);
  ops.push({ name: 'SGD/update_w/Apply', type: 'ApplyGradientDescent', device: 1 });
  link(8, 9);
  link(1, 9);
  return { ops, edges };
}

describe('layoutCompound', () => {
  it('nests opened groups: boxes inside their container, below its title, none overlapping', () => {
    const { ops, edges } = trained();
    const hierarchy = buildHierarchy(ops);
    const folded = foldHierarchy(hierarchy, ops, edges, allExpanded(hierarchy));
    const layout = layoutCompound(folded, (g) => hierarchy.groups[g].side);
    const B = folded.boxes.length;
    for (let b = 0; b < B; b++) {
      const parent = folded.boxParent[b];
      if (parent >= 0) {
        const box = rect(layout.boxes, b);
        const container = rect(layout.containers, parent);
        expect(inside(box, container)).toBe(true);
        expect(box.y).toBeGreaterThanOrEqual(container.y + CONTAINER_HEADER);
      }
      for (let c = b + 1; c < B; c++) {
        expect(overlap(rect(layout.boxes, b), rect(layout.boxes, c))).toBe(false);
      }
    }
    for (let b = 0; b < B; b++) {
      expect(layout.boxes.x[b] + layout.boxes.w[b]).toBeLessThanOrEqual(layout.width + 1e-3);
      expect(layout.boxes.y[b] + layout.boxes.h[b]).toBeLessThanOrEqual(layout.height + 1e-3);
    }
  });

  it('sets side groups aside in a column right of the graph, with one counted link per item', () => {
    const { ops, edges } = trained();
    const hierarchy = buildHierarchy(ops);
    const expanded = defaultExpanded(hierarchy);
    const folded = foldHierarchy(hierarchy, ops, edges, expanded);
    const isSide = (b: number) => {
      const g = folded.boxes[b].group;
      return g >= 0 && hierarchy.groups[g].side;
    };
    const layout = layoutCompound(folded, (g) => hierarchy.groups[g].side);
    const sides = folded.boxes.map((_, b) => b).filter(isSide);
    expect(sides.map((b) => folded.boxes[b].name).sort()).toEqual(['[SGD]', '[gradients]']);
    let rightmost = 0;
    folded.boxes.forEach((_, b) => {
      if (!isSide(b)) {
        rightmost = Math.max(rightmost, layout.boxes.x[b] + layout.boxes.w[b]);
      }
    });
    for (const b of sides) {
      expect(layout.aside[b]).toBe(1);
      expect(layout.boxes.x[b]).toBeGreaterThan(rightmost);
    }
    // gradients reads second's MatMul and Relu and first's MatMul: one link to each layer's
    // container, counting its edges
    const gradients = sides.find((b) => folded.boxes[b].name === '[gradients]')!;
    const links = layout.links.filter((l) => l.side === gradients || l.other === gradients);
    const counts = links.map((l) => l.count).sort();
    expect(counts).toEqual([1, 1, 2]); // first, the optimizer, second (two edges)
    expect(overlap(rect(layout.boxes, sides[0]), rect(layout.boxes, sides[1]))).toBe(false);
    // each side item's bus runs between the graph and the side column, one bus per side item
    const buses = sides.map((b) => layout.busX[b]);
    expect(new Set(buses).size).toBe(sides.length);
    for (const [k, b] of sides.entries()) {
      expect(buses[k]).toBeGreaterThan(rightmost);
      expect(buses[k]).toBeLessThan(layout.boxes.x[b]);
    }
    expect(layout.sideBelow).toBe(false);
  });

  it('stands the side groups below the graph, flush with its right end, for a narrow canvas', () => {
    const { ops, edges } = trained();
    const hierarchy = buildHierarchy(ops);
    const folded = foldHierarchy(hierarchy, ops, edges, defaultExpanded(hierarchy));
    const isSide = (g: number) => hierarchy.groups[g].side;
    const right = layoutCompound(folded, isSide);
    const below = layoutCompound(folded, isSide, true);
    expect(below.sideBelow).toBe(true);
    const sides = folded.boxes.map((_, b) => b).filter((b) => below.aside[b] === 1);
    expect(sides).toHaveLength(2);
    let bottom = 0;
    let rightmost = 0;
    folded.boxes.forEach((_, b) => {
      if (below.aside[b] === 0) {
        bottom = Math.max(bottom, below.boxes.y[b] + below.boxes.h[b]);
        rightmost = Math.max(rightmost, below.boxes.x[b] + below.boxes.w[b]);
        // the graph itself is laid out as it is with the column right of it
        expect([below.boxes.x[b], below.boxes.y[b]]).toEqual([right.boxes.x[b], right.boxes.y[b]]);
      }
    });
    const ends = sides.map((b) => below.boxes.x[b] + below.boxes.w[b]);
    expect(new Set(ends).size).toBe(1);
    const end = ends[0];
    expect(end).toBeGreaterThanOrEqual(rightmost);
    for (const b of sides) {
      expect(below.boxes.y[b]).toBeGreaterThan(bottom);
      // its bus comes down right of it, and its links enter its right side
      expect(below.busX[b]).toBeGreaterThan(end);
      expect(below.busX[b]).toBeLessThan(below.width);
    }
    expect(overlap(rect(below.boxes, sides[0]), rect(below.boxes, sides[1]))).toBe(false);
    // narrower and taller: a narrow canvas fits it closer
    expect(below.width).toBeLessThan(right.width);
    expect(below.height).toBeGreaterThan(right.height);
    expect(below.links).toEqual(right.links);
  });
});

describe('an opened side group', () => {
  it('stays in the side column as a container, its links summarized', () => {
    const { ops, edges } = trained();
    const hierarchy = buildHierarchy(ops);
    const expanded = defaultExpanded(hierarchy);
    expanded.add('[gradients]');
    const folded = foldHierarchy(hierarchy, ops, edges, expanded);
    const layout = layoutCompound(folded, (g) => hierarchy.groups[g].side);
    const B = folded.boxes.length;
    const c = folded.containers.findIndex((k) => hierarchy.groups[k.group].key === '[gradients]');
    expect(layout.aside[B + c]).toBe(1);
    let rightmost = 0;
    for (let item = 0; item < B; item++) {
      if (layout.aside[layout.rootItem[item]] === 0) {
        rightmost = Math.max(rightmost, layout.boxes.x[item] + layout.boxes.w[item]);
      }
    }
    const container = rect(layout.containers, c);
    expect(container.x).toBeGreaterThan(rightmost);
    for (let b = 0; b < B; b++) {
      if (folded.boxParent[b] === c) {
        expect(inside(rect(layout.boxes, b), container)).toBe(true);
      }
    }
    const links = layout.links.filter((l) => l.side === B + c || l.other === B + c);
    expect(links.map((l) => l.count).sort()).toEqual([1, 1, 2]);
    expect(layout.width).toBeGreaterThanOrEqual(container.x + container.w - 1e-3);
  });
});

describe('wrapColumns', () => {
  it('makes each column as wide as its own layers', () => {
    // Six layers of one box, then six of three: the first column is one box wide, not three.
    const widths: number[] = [];
    const xs: number[] = [];
    const layer: number[] = [];
    for (let l = 0; l < 12; l++) {
      const row = l < 6 ? [110] : [0, 110, 220];
      for (const x of row) {
        xs.push(x);
        widths.push(100);
        layer.push(l);
      }
    }
    const layout: DagLayout = {
      x: Float32Array.from(xs),
      y: Float32Array.from(layer, (l) => l * 54),
      layer: Int32Array.from(layer),
      layers: 12,
      width: 320,
      height: 12 * 54 - 26,
      nodeWidth: 100,
      nodeHeight: 28,
      widths,
    };
    const wrapped = wrapColumns(layout);
    // two columns of six layers: 100 wide, the gap, 320 wide
    expect(Array.from(wrapped.x.slice(0, 6))).toEqual([0, 0, 0, 0, 0, 0]);
    expect(Array.from(wrapped.x.slice(6, 9))).toEqual([132, 242, 352]);
    expect(wrapped.width).toBe(100 + 32 + 320);
    expect(wrapped.height).toBe(6 * 54 - 26);
    expect(wrapped.y[6]).toBe(0);
  });

  it('wraps a long chain (an opened series of 100 blocks) into columns that fit a wide view', () => {
    const ops: HierarchyOp[] = [];
    const edges: FoldEdge[] = [];
    for (let b = 0; b < 100; b++) {
      for (let k = 0; k < 3; k++) {
        ops.push({ name: `block${b}/op${k}`, type: 'MatMul', device: 1 });
        if (ops.length > 1) {
          edges.push({
            src: ops.length - 2,
            dst: ops.length - 1,
            kind: 'data',
            bytes: 8,
            crosses: false,
            network: false,
          });
        }
      }
    }
    const hierarchy = buildHierarchy(ops);
    const series = hierarchy.groups[hierarchy.groups[0].groups[0]];
    const folded = foldHierarchy(hierarchy, ops, edges, new Set([series.key]));
    expect(folded.boxes).toHaveLength(100);
    const layout = layoutCompound(folded, () => false);
    const box = rect(layout.containers, 0);
    expect(box.h / box.w).toBeLessThan(1.5);
    expect(box.h / box.w).toBeGreaterThan(0.2);
    for (let b = 0; b < 100; b++) {
      expect(inside(rect(layout.boxes, b), box)).toBe(true);
      for (let c = b + 1; c < 100; c++) {
        expect(overlap(rect(layout.boxes, b), rect(layout.boxes, c))).toBe(false);
      }
    }
  });
});
