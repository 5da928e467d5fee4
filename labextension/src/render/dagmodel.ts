/**
 * What the DAG view draws, built when the graph tables or the opened groups change (never on
 * event batches): the boxes after folding the hierarchy, their nested layout, a grid for
 * hit-testing, each box's ops, its label, and which boxes hold an op that did not land on the
 * device it requested.
 */
import { layoutCompound, type CompoundLayout } from './compound';
import { hostOf } from './colours';
import { requestMismatch } from './devicespec';
import { boxPaths } from './labels';
import { SpatialGrid } from './spatial';
import {
  buildHierarchy,
  foldHierarchy,
  type FoldEdge,
  type FoldedGraph,
  type Hierarchy,
} from './scopes';
import type { PlacementStore } from './store';

export interface DagModel {
  readonly hierarchy: Hierarchy;
  readonly folded: FoldedGraph;
  readonly layout: CompoundLayout;
  readonly grid: SpatialGrid;
  /** Node indices of box b: opList[opStart[b] .. opStart[b + 1]). */
  readonly opStart: Int32Array;
  readonly opList: Int32Array;
  /** 1 where a box holds an op placed elsewhere than it asked. */
  readonly mismatch: Uint8Array;
  /** 1 where a box's device is simulated (drawn with a dashed outline). */
  readonly simulated: Uint8Array;
  /**
   * What each box says, and each container's title: its whole name, cut to its room keeping the
   * parts in labelKeeps / titleKeeps (labels.distinguishingParts) and its last part.
   */
  readonly labels: string[];
  readonly labelKeeps: number[][];
  readonly titles: string[];
  readonly titleKeeps: number[][];
  /** Per folded group, its ops per device (device id or null, count), by device id; else null. */
  readonly deviceShares: ([number | null, number][] | null)[];
  readonly expanded: ReadonlySet<string>;
}

/** The hierarchy of a store's ops (rebuilt only when its tables change). */
export function storeHierarchy(store: PlacementStore): Hierarchy {
  return buildHierarchy(store.nodes);
}

/** A store's edges between node indices (those whose ends are both in its tables). */
export function storeEdges(store: PlacementStore): FoldEdge[] {
  const edges: FoldEdge[] = [];
  const taskOf = (node: number) => hostOf(store.deviceById(store.nodes[node].device)?.name ?? '');
  for (const edge of store.edges) {
    const src = store.nodeIndex(edge.src);
    const dst = store.nodeIndex(edge.dst);
    if (src >= 0 && dst >= 0) {
      const network = edge.crosses && taskOf(src) !== taskOf(dst);
      edges.push({ src, dst, kind: edge.kind, bytes: edge.bytes, crosses: edge.crosses, network });
    }
  }
  return edges;
}

export function buildDagModel(
  store: PlacementStore,
  expanded: ReadonlySet<string>,
  hierarchy: Hierarchy = storeHierarchy(store),
  sideBelow = false,
): DagModel {
  const folded = foldHierarchy(hierarchy, store.nodes, storeEdges(store), expanded);
  const groups = hierarchy.groups;
  const layout = layoutCompound(folded, (group) => groups[group].side, sideBelow);
  const { x, y, w, h } = layout.boxes;
  const grid = new SpatialGrid(x, y, w, h, layout.width, layout.height);
  const { opStart, opList } = opsByBox(folded.boxOf, folded.boxes.length);
  const mismatch = new Uint8Array(folded.boxes.length);
  // Graphs under tf.device scopes repeat a handful of (request, device) pairs many times.
  const verdicts = new Map<string, boolean>();
  store.nodes.forEach((node, index) => {
    if (node.requested === '') {
      return;
    }
    const key = `${node.device}\u0000${node.requested}`;
    let differs = verdicts.get(key);
    if (differs === undefined) {
      differs = requestMismatch(node.requested, store.deviceById(node.device)?.name);
      verdicts.set(key, differs);
    }
    if (differs) {
      mismatch[folded.boxOf[index]] = 1;
    }
  });
  const simulated = Uint8Array.from(folded.boxes, (box) =>
    typeof box.device === 'number' && store.deviceById(box.device)?.kind === 'simulated' ? 1 : 0,
  );
  const { paths, keeps } = boxPaths(
    folded.boxes,
    folded.containers.map(({ group }) => groups[group].key),
  );
  const B = folded.boxes.length;
  const [labels, titles] = [paths.slice(0, B), paths.slice(B)];
  const [labelKeeps, titleKeeps] = [keeps.slice(0, B), keeps.slice(B)];
  const deviceShares = folded.boxes.map((box, b) => {
    if (box.node >= 0) {
      return null;
    }
    const counts = new Map<number | null, number>();
    for (let k = opStart[b]; k < opStart[b + 1]; k++) {
      const device = store.nodes[opList[k]].device;
      counts.set(device, (counts.get(device) ?? 0) + 1);
    }
    return [...counts].sort((a, c) => (a[0] ?? -1) - (c[0] ?? -1));
  });
  return {
    hierarchy,
    folded,
    deviceShares,
    layout,
    grid,
    opStart,
    opList,
    mismatch,
    simulated,
    labels,
    labelKeeps,
    titles,
    titleKeeps,
    expanded,
  };
}

function opsByBox(boxOf: Int32Array, boxes: number): { opStart: Int32Array; opList: Int32Array } {
  const opStart = new Int32Array(boxes + 1);
  for (const box of boxOf) {
    opStart[box + 1]++;
  }
  for (let b = 0; b < boxes; b++) {
    opStart[b + 1] += opStart[b];
  }
  const fill = opStart.slice(0, boxes);
  const opList = new Int32Array(boxOf.length);
  boxOf.forEach((box, node) => {
    opList[fill[box]++] = node;
  });
  return { opStart, opList };
}
