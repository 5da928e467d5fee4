/**
 * Name-scope folding: a collapsed scope (`tower_0`) is drawn as one box standing for all the ops
 * under it (`tower_0/...`), so a 100,000-op graph opens as a few hundred boxes.
 */

/** The device of a folded box whose ops are on different devices. */
export const MIXED = 'mixed';

/** Graphs above this many ops open with their big top-level scopes collapsed. */
export const LARGE_GRAPH_OPS = 20_000;
/** A scope with more ops than this is collapsed in a large graph. */
export const LARGE_SCOPE_OPS = 1_000;

export interface FoldNode {
  name: string;
  device: number | null;
}

/** An edge between node indices. */
export interface FoldEdge {
  src: number;
  dst: number;
  kind: 'data' | 'control';
  bytes: number | null;
  crosses: boolean;
}

export interface ScopeBox {
  /** The op's full name, or the folded scope's prefix. */
  name: string;
  /** The op's node index; -1 for a folded scope. */
  node: number;
  /** Ops in the box (1 for an op). */
  ops: number;
  /** Device id shared by its ops, null when unplaced, MIXED when they differ. */
  device: number | null | typeof MIXED;
}

export interface BoxEdge {
  src: number;
  dst: number;
  /** Bytes summed over the edges it stands for (unknown sizes count 0). */
  bytes: number;
  /** Whether any of them moves data between devices. */
  crosses: boolean;
  /** Whether all of them are control edges. */
  control: boolean;
}

export interface FoldedGraph {
  /** Node index -> box index. */
  boxOf: Int32Array;
  boxes: ScopeBox[];
  edges: BoxEdge[];
}

/** The scope of an op name: everything before its last '/' ('' at the top level). */
export function scopeOf(name: string): string {
  const slash = name.lastIndexOf('/');
  return slash < 0 ? '' : name.slice(0, slash);
}

/** The outermost collapsed scope that contains `name`, or null. */
function foldedScope(name: string, collapsed: ReadonlySet<string>): string | null {
  if (collapsed.size === 0) {
    return null;
  }
  for (let slash = name.indexOf('/'); slash >= 0; slash = name.indexOf('/', slash + 1)) {
    const prefix = name.slice(0, slash);
    if (collapsed.has(prefix)) {
      return prefix;
    }
  }
  return null;
}

export function foldScopes(
  nodes: readonly FoldNode[],
  edges: readonly FoldEdge[],
  collapsed: ReadonlySet<string>,
): FoldedGraph {
  const boxOf = new Int32Array(nodes.length);
  const boxes: ScopeBox[] = [];
  const scopeBoxes = new Map<string, number>();
  nodes.forEach((node, index) => {
    const scope = foldedScope(node.name, collapsed);
    if (scope === null) {
      boxOf[index] = boxes.push({ name: node.name, node: index, ops: 1, device: node.device }) - 1;
      return;
    }
    let box = scopeBoxes.get(scope);
    if (box === undefined) {
      box = boxes.push({ name: scope, node: -1, ops: 0, device: node.device }) - 1;
      scopeBoxes.set(scope, box);
    }
    const record = boxes[box];
    record.ops++;
    if (record.device !== node.device) {
      record.device = MIXED;
    }
    boxOf[index] = box;
  });
  return { boxOf, boxes, edges: boxEdges(edges, boxOf, boxes.length) };
}

/**
 * Edges between boxes: one per ordered pair, none inside a box. Edges are bucketed by source box
 * and merged through a per-destination stamp, so 150,000 edges need no hash map.
 */
function boxEdges(edges: readonly FoldEdge[], boxOf: Int32Array, boxCount: number): BoxEdge[] {
  const n = boxOf.length;
  const valid = (e: FoldEdge) =>
    e.src >= 0 && e.dst >= 0 && e.src < n && e.dst < n && boxOf[e.src] !== boxOf[e.dst];
  const bySource = new Int32Array(boxCount + 1);
  for (const edge of edges) {
    if (valid(edge)) {
      bySource[boxOf[edge.src] + 1]++;
    }
  }
  for (let b = 0; b < boxCount; b++) {
    bySource[b + 1] += bySource[b];
  }
  const fill = bySource.slice(0, boxCount);
  const ordered = new Int32Array(bySource[boxCount]);
  edges.forEach((edge, k) => {
    if (valid(edge)) {
      ordered[fill[boxOf[edge.src]]++] = k;
    }
  });
  const result: BoxEdge[] = [];
  const stamp = new Int32Array(boxCount).fill(-1); // source box that last reached each box
  const mergedAt = new Int32Array(boxCount);
  for (let src = 0; src < boxCount; src++) {
    for (let k = bySource[src]; k < bySource[src + 1]; k++) {
      const edge = edges[ordered[k]];
      const dst = boxOf[edge.dst];
      const control = edge.kind === 'control';
      if (stamp[dst] !== src) {
        stamp[dst] = src;
        mergedAt[dst] = result.length;
        result.push({ src, dst, bytes: edge.bytes ?? 0, crosses: edge.crosses, control });
      } else {
        const merged = result[mergedAt[dst]];
        merged.bytes += edge.bytes ?? 0;
        merged.crosses ||= edge.crosses;
        merged.control &&= control;
      }
    }
  }
  return result;
}

/** Ops under each scope directly below `parent` ('a/b/op' counts for 'a' under '', 'a/b' under 'a'). */
function scopeSizes(names: readonly string[], parent: string): Map<string, number> {
  const sizes = new Map<string, number>();
  const start = parent === '' ? 0 : parent.length + 1;
  for (const name of names) {
    if (parent !== '' && !name.startsWith(parent + '/')) {
      continue;
    }
    const slash = name.indexOf('/', start);
    if (slash >= 0) {
      const prefix = name.slice(0, slash);
      sizes.set(prefix, (sizes.get(prefix) ?? 0) + 1);
    }
  }
  return sizes;
}

/** Scopes directly under `parent` ('' for the top level) that a large graph opens collapsed. */
function bigScopes(names: readonly string[], parent: string): string[] {
  if (names.length <= LARGE_GRAPH_OPS) {
    return [];
  }
  return [...scopeSizes(names, parent)].filter(([, n]) => n > LARGE_SCOPE_OPS).map(([s]) => s);
}

/** What opens collapsed: nothing for a small graph; big top-level scopes of a large one. */
export function defaultCollapsed(names: readonly string[]): Set<string> {
  return new Set(bigScopes(names, ''));
}

/** `collapsed` with `scope` opened; in a large graph its own big sub-scopes start collapsed. */
export function expandScope(
  names: readonly string[],
  collapsed: ReadonlySet<string>,
  scope: string,
): Set<string> {
  const next = new Set(collapsed);
  next.delete(scope);
  for (const inner of bigScopes(names, scope)) {
    next.add(inner);
  }
  return next;
}

/** `collapsed` with the scope holding op `name` folded back (unchanged for a top-level op). */
export function collapseScopeOf(name: string, collapsed: ReadonlySet<string>): Set<string> {
  const next = new Set(collapsed);
  const scope = scopeOf(name);
  if (scope !== '') {
    next.add(scope);
  }
  return next;
}
