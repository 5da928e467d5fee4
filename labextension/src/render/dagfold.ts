/**
 * The folding a graph opens with: as much of the opening order (scopes.openingOrder, at most
 * AUTO_BUDGET boxes) as keeps every label readable once the layout is fitted to the canvas, so a
 * first paint names what it shows, on a small canvas as on a big one, at 100 ops as at 100,000.
 */
import { layoutCompound } from './compound';
import { READABLE_SCALE } from './dagpaint';
import {
  foldHierarchy,
  openingOrder,
  type FoldEdge,
  type Hierarchy,
  type HierarchyOp,
} from './scopes';
import { fitScale } from './viewport';

export interface CanvasSize {
  width: number;
  height: number;
}

/**
 * The longest prefix of the opening order whose layout, fitted to `canvas`, is drawn at
 * READABLE_SCALE or closer (nothing opened when even that is not). Opening more only makes the
 * layout bigger, so a binary search finds it in a few layouts, whatever the graph's size.
 */
export function readableExpanded(
  hierarchy: Hierarchy,
  nodes: readonly HierarchyOp[],
  edges: readonly FoldEdge[],
  canvas: CanvasSize,
): Set<string> {
  const order = openingOrder(hierarchy);
  const readable = (count: number) => {
    const folded = foldHierarchy(hierarchy, nodes, edges, new Set(order.slice(0, count)));
    const layout = layoutCompound(folded, (group) => hierarchy.groups[group].side);
    return fitScale(canvas, layout.width, layout.height) >= READABLE_SCALE;
  };
  let low = 0;
  let high = order.length;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (readable(mid)) {
      low = mid;
    } else {
      high = mid - 1;
    }
  }
  return new Set(order.slice(0, low));
}
