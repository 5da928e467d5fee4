/**
 * What the DAG view draws, built when the graph tables or the folded scopes change (never on
 * event batches): the boxes after scope folding, their layout, a grid for hit-testing, each box's
 * ops, and which boxes hold an op that did not land on the device it requested.
 */
import { requestMismatch } from './devicespec';
import { layoutDag, type DagLayout } from './layout';
import { SpatialGrid } from './spatial';
import { foldScopes, type FoldEdge, type FoldedGraph } from './scopes';
import type { PlacementStore } from './store';

export const BOX_WIDTH = 120;
export const BOX_HEIGHT = 28;

export interface DagModel {
  readonly folded: FoldedGraph;
  readonly layout: DagLayout;
  readonly grid: SpatialGrid;
  /** Node indices of box b: opList[opStart[b] .. opStart[b + 1]). */
  readonly opStart: Int32Array;
  readonly opList: Int32Array;
  /** 1 where a box holds an op placed elsewhere than it asked. */
  readonly mismatch: Uint8Array;
  /** 1 where a box's device is simulated (drawn with a dashed outline). */
  readonly simulated: Uint8Array;
  readonly collapsed: ReadonlySet<string>;
}

export function buildDagModel(store: PlacementStore, collapsed: ReadonlySet<string>): DagModel {
  const edges: FoldEdge[] = [];
  for (const edge of store.edges) {
    const src = store.nodeIndex(edge.src);
    const dst = store.nodeIndex(edge.dst);
    if (src >= 0 && dst >= 0) {
      edges.push({ src, dst, kind: edge.kind, bytes: edge.bytes, crosses: edge.crosses });
    }
  }
  const folded = foldScopes(store.nodes, edges, collapsed);
  const layout = layoutDag(folded.boxes.length, folded.edges, {
    nodeWidth: BOX_WIDTH,
    nodeHeight: BOX_HEIGHT,
  });
  const grid = new SpatialGrid(
    layout.x,
    layout.y,
    BOX_WIDTH,
    BOX_HEIGHT,
    layout.width,
    layout.height,
  );
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
  return { folded, layout, grid, opStart, opList, mismatch, simulated, collapsed };
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
