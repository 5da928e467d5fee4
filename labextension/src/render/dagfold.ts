/**
 * The folding a graph shows while it is fitted to the canvas: the groups the user opened, and as
 * much of the opening order (scopes.openingOrder) as keeps every label readable and at most
 * AUTO_BUDGET boxes, so a first paint names what it shows, and so does each view after a group
 * is opened or folded, on a small canvas as on a big one, at 100 ops as at 100,000. On a canvas
 * too narrow for the side column right of the graph, the side groups go below it (bestFit).
 */
import { layoutCompound } from './compound';
import { READABLE_SCALE } from './boxmetrics';
import {
  AUTO_BUDGET,
  foldHierarchy,
  openingOrder,
  type FoldEdge,
  type FoldedGraph,
  type Hierarchy,
  type HierarchyOp,
} from './scopes';
import { fitScale } from './viewport';

export interface CanvasSize {
  width: number;
  height: number;
}

/** Groups the user opened or folded by hand: kept so whatever else opens or folds. */
export interface UserFolding {
  opened: ReadonlySet<string>;
  folded: ReadonlySet<string>;
}

const NONE: UserFolding = { opened: new Set(), folded: new Set() };

/**
 * The user's opened groups (and the groups holding them) and the longest prefix of the rest of
 * the opening order whose layout, fitted to `canvas` (bestFit), is at READABLE_SCALE or closer
 * with at most AUTO_BUDGET boxes (only the user's groups when even that is not). Opening more
 * only makes the layout bigger, so a binary search finds it in a few layouts, whatever the
 * graph's size.
 */
export function readableExpanded(
  hierarchy: Hierarchy,
  nodes: readonly HierarchyOp[],
  edges: readonly FoldEdge[],
  canvas: CanvasSize,
  user: UserFolding = NONE,
): Set<string> {
  const pinned = userOpened(hierarchy, user);
  const order = openingOrder(hierarchy).filter((key) => !pinned.has(key) && !user.folded.has(key));
  const expanded = (count: number) => new Set([...pinned, ...order.slice(0, count)]);
  const readable = (count: number) => {
    const folded = foldHierarchy(hierarchy, nodes, edges, expanded(count));
    return (
      folded.boxes.length <= AUTO_BUDGET &&
      bestFit(hierarchy, folded, canvas).scale >= READABLE_SCALE
    );
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
  return expanded(low);
}

/**
 * The groups the user opened and every group holding one, so that they show; except those
 * inside a group the user folded since.
 */
function userOpened(hierarchy: Hierarchy, user: UserFolding): Set<string> {
  const { groups } = hierarchy;
  const result = new Set<string>();
  if (user.opened.size === 0) {
    return result;
  }
  groups.forEach((group, g) => {
    if (!user.opened.has(group.key)) {
      return;
    }
    const chain: string[] = [];
    for (let at = g; at > 0; at = groups[at].parent) {
      if (user.folded.has(groups[at].key)) {
        return;
      }
      chain.push(groups[at].key);
    }
    chain.forEach((key) => result.add(key));
  });
  return result;
}

/**
 * The zoom at which `folded`'s layout fits `canvas`, and whether its side groups stand below the
 * graph for it: where the column right of the graph would make it too wide for the canvas (a
 * narrow one: a comparison's half page) and the one below fits it closer.
 */
export function bestFit(
  hierarchy: Hierarchy,
  folded: FoldedGraph,
  canvas: CanvasSize,
): { scale: number; sideBelow: boolean } {
  const isSide = (group: number) => hierarchy.groups[group].side;
  const right = layoutCompound(folded, isSide);
  const scale = fitScale(canvas, right.width, right.height);
  if (!right.aside.includes(1)) {
    return { scale, sideBelow: false };
  }
  const below = layoutCompound(folded, isSide, true);
  const under = fitScale(canvas, below.width, below.height);
  return under > scale ? { scale: under, sideBelow: true } : { scale, sideBelow: false };
}

/** Whether the side groups of the graph folded as `expanded` stand below it on `canvas`. */
export function sideBelow(
  hierarchy: Hierarchy,
  nodes: readonly HierarchyOp[],
  edges: readonly FoldEdge[],
  expanded: ReadonlySet<string>,
  canvas: CanvasSize,
): boolean {
  return bestFit(hierarchy, foldHierarchy(hierarchy, nodes, edges, expanded), canvas).sideBelow;
}
