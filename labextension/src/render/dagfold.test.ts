import { describe, expect, it } from 'vitest';
import { layoutCompound } from './compound';
import { bestFit, readableExpanded, sideBelow } from './dagfold';
import { storeEdges, storeHierarchy } from './dagmodel';
import { READABLE_SCALE } from './boxmetrics';
import { AUTO_BUDGET, defaultExpanded, foldHierarchy, openingOrder } from './scopes';
import { PlacementStore } from './store';
import { fitScale } from './viewport';
import { bigDocument } from './__tests__/fixtures';
import { trainingStepDocument } from './__tests__/trainingstep';
import { towersDocument } from './__tests__/towers';

/** What a folding shows on `canvas`: its boxes, the zoom it is fitted at, the box names. */
function shown(
  store: PlacementStore,
  expanded: Set<string>,
  canvas: { width: number; height: number },
) {
  const hierarchy = storeHierarchy(store);
  const folded = foldHierarchy(hierarchy, store.nodes, storeEdges(store), expanded);
  const layout = layoutCompound(folded, (g) => hierarchy.groups[g].side);
  return {
    boxes: folded.boxes.length,
    scale: fitScale(canvas, layout.width, layout.height),
    names: folded.boxes.map((box) => box.name),
  };
}

const WIDE = { width: 1040, height: 485 }; // the standalone page's DAG canvas
const SMALL = { width: 480, height: 300 }; // a comparison's column: half a notebook page
const HUGE = { width: 4000, height: 3000 };

describe('readableExpanded', () => {
  it('opens a training step as far as its labels stay readable on the canvas', () => {
    const store = PlacementStore.fromDocument(trainingStepDocument());
    const hierarchy = storeHierarchy(store);
    const edges = storeEdges(store);
    const order = openingOrder(hierarchy);
    const opened = (canvas: typeof WIDE) => readableExpanded(hierarchy, store.nodes, edges, canvas);
    const wide = opened(WIDE);
    const small = opened(SMALL);
    // Each folding is a prefix of the opening order: fewer groups open on a smaller canvas.
    expect([...wide]).toEqual(order.slice(0, wide.size));
    expect([...small]).toEqual(order.slice(0, small.size));
    expect(small.size).toBeLessThan(wide.size);
    expect(wide.has('mlp')).toBe(true);
    for (const [set, canvas] of [
      [wide, WIDE],
      [small, SMALL],
    ] as const) {
      const view = shown(store, set, canvas);
      expect(view.boxes).toBeLessThanOrEqual(AUTO_BUDGET);
      expect(view.scale).toBeGreaterThanOrEqual(READABLE_SCALE);
    }
    // On the small canvas, one more group opened would not be readable.
    const more = new Set(order.slice(0, small.size + 1));
    expect(shown(store, more, SMALL).scale).toBeLessThan(READABLE_SCALE);
    // The auxiliary graph stays folded aside, one box each, as do the layers' variables.
    expect(shown(store, wide, WIDE).names).toEqual(
      expect.arrayContaining(['[init]', '[gradients]', '[Adam]', 'dense_[0-3]']),
    );
    // On a canvas big enough, the whole opening order.
    expect(opened(HUGE)).toEqual(defaultExpanded(hierarchy));
  });

  it("keeps the user's groups open, and the groups holding them, whatever else folds", () => {
    const store = PlacementStore.fromDocument(trainingStepDocument());
    const hierarchy = storeHierarchy(store);
    const edges = storeEdges(store);
    const tiny = { width: 300, height: 200 };
    expect(readableExpanded(hierarchy, store.nodes, edges, tiny).size).toBe(0);
    const user = { opened: new Set(['mlp/dense_1']), folded: new Set<string>() };
    const opened = readableExpanded(hierarchy, store.nodes, edges, tiny, user);
    expect([...opened].sort()).toEqual(['mlp', 'mlp/dense_1', 'mlp/dense_[0-2]']);
    // Folding mlp afterwards folds it, the layer opened inside it too.
    user.folded.add('mlp');
    const wide = readableExpanded(hierarchy, store.nodes, edges, WIDE, user);
    expect(wide.has('mlp')).toBe(false);
  });

  it('opens nothing when even the top level is not readable, and stays quick at 100,000 ops', () => {
    // 10 scopes of 5 chained steps of 2,000 ops: all 10 open within the box budget.
    const doc = bigDocument(100_000);
    doc.nodes.forEach((n, i) => {
      n.name = `part${'abcdefghij'[Math.floor(i / 10_000)]}/step${'vwxyz'[Math.floor(i / 2000) % 5]}/op_${i}`;
    });
    const store = PlacementStore.fromDocument(doc);
    const hierarchy = storeHierarchy(store);
    const edges = storeEdges(store);
    const order = openingOrder(hierarchy);
    expect(order.slice(0, 10)).toEqual([...'abcdefghij'].map((c) => `part${c}`));
    const start = performance.now();
    const expanded = readableExpanded(hierarchy, store.nodes, edges, WIDE);
    const ms = performance.now() - start;
    console.log(
      `readableExpanded 100,000 ops: ${expanded.size} of ${order.length} open in ${ms.toFixed(0)} ms`,
    );
    expect(expanded.size).toBeGreaterThan(0);
    expect(expanded.size).toBeLessThan(order.length);
    expect(shown(store, expanded, WIDE).scale).toBeGreaterThanOrEqual(READABLE_SCALE);
    expect(ms).toBeLessThan(1500);
    expect(readableExpanded(hierarchy, store.nodes, edges, { width: 60, height: 40 }).size).toBe(0);
  });
});

describe('bestFit', () => {
  const HALF = { width: 415, height: 352 }; // a comparison's column on a 1,300 px page

  it('stands the side groups below a wide graph on a narrow canvas, for a closer zoom', () => {
    const store = PlacementStore.fromDocument(towersDocument());
    const hierarchy = storeHierarchy(store);
    const edges = storeEdges(store);
    const top = new Set<string>(); // the top level, all folded
    const folded = foldHierarchy(hierarchy, store.nodes, edges, top);
    const isSide = (g: number) => hierarchy.groups[g].side;
    const right = layoutCompound(folded, isSide);
    const below = layoutCompound(folded, isSide, true);
    const fit = bestFit(hierarchy, folded, HALF);
    expect(fit).toEqual({ scale: fitScale(HALF, below.width, below.height), sideBelow: true });
    expect(fit.scale).toBeGreaterThan(fitScale(HALF, right.width, right.height));
    expect(sideBelow(hierarchy, store.nodes, edges, top, HALF)).toBe(true);
    // On a canvas that is wide for the graph, the column stays right of it.
    const wide = { width: 2000, height: 485 };
    expect(bestFit(hierarchy, folded, wide)).toEqual({
      scale: fitScale(wide, right.width, right.height),
      sideBelow: false,
    });
  });

  it('keeps a graph without side groups as it is', () => {
    const store = PlacementStore.fromDocument(towersDocument(false));
    const hierarchy = storeHierarchy(store);
    const folded = foldHierarchy(hierarchy, store.nodes, storeEdges(store), new Set());
    const layout = layoutCompound(folded, (g) => hierarchy.groups[g].side);
    expect(bestFit(hierarchy, folded, HALF)).toEqual({
      scale: fitScale(HALF, layout.width, layout.height),
      sideBelow: false,
    });
  });
});
