/**
 * The hierarchy the DAG draws: name scopes as groups (with the auxiliary side groups of
 * auxiliary.ts at the top), sibling scopes of the same structure (`block0`..`block99`) gathered
 * into one series, and the folding that turns it into boxes: an opened group is a container of
 * its children, a closed one is one box standing for all its ops. Graphs open folded so that at
 * most AUTO_BUDGET boxes show, whatever their size.
 */
import { hierarchyPaths, isSideKey } from './auxiliary';

/** The device of a folded box whose ops are on different devices. */
export const MIXED = 'mixed';

/** At most this many boxes are shown when a graph opens. */
export const AUTO_BUDGET = 50;

export interface HierarchyOp {
  name: string;
  type: string;
  device: number | null;
}

export interface Group {
  /** Stable identity: its path in the hierarchy ('' for the root); a series adds its label. */
  key: string;
  /** What the box says: the scope's last name, or a series' `block[0-99]`. */
  name: string;
  parent: number;
  /** Child groups, in the order their first op was made. */
  groups: number[];
  /** Node indices of the ops directly inside. */
  ops: number[];
  /** Node indices of all its ops: dfsOps[first .. end). */
  first: number;
  end: number;
  /** Members of a series (0: a scope); a series' groups are its members, in index order. */
  series: number;
  /** A side group (initializers, gradients, optimizer, save) or inside one. */
  side: boolean;
  /** A while loop's scope: it holds the loop's LoopCond (TF's `<name>/while/LoopCond`). */
  loop: boolean;
}

export interface Hierarchy {
  groups: Group[];
  /** Node indices in depth-first order of their groups; a group's ops are one slice of it. */
  dfsOps: Int32Array;
  /** Each op's path: its name, or a side group's key and its name. */
  paths: string[];
  /** Node index -> the innermost group holding it. */
  groupOf: Int32Array;
}

/** An edge between node indices. */
export interface FoldEdge {
  src: number;
  dst: number;
  kind: 'data' | 'control';
  bytes: number | null;
  crosses: boolean;
  /** It moves data between cluster tasks (processes), over the network. */
  network: boolean;
}

export interface ScopeBox {
  /** The op's full name, or the folded group's key. */
  name: string;
  /** The op's node index; -1 for a folded group. */
  node: number;
  /** The folded group's index; -1 for an op. */
  group: number;
  /** Ops in the box (1 for an op). */
  ops: number;
  /** Device id shared by its ops, null when unplaced, MIXED when they differ. */
  device: number | null | typeof MIXED;
}

export interface BoxEdge {
  src: number;
  dst: number;
  /** How many edges between ops it stands for. */
  count: number;
  /** Bytes summed over the edges it stands for (unknown sizes count 0). */
  bytes: number;
  /** Whether any of them moves data between devices. */
  crosses: boolean;
  /** Whether any of them moves data between cluster tasks. */
  network: boolean;
  /** Whether all of them are control edges. */
  control: boolean;
}

export interface FoldedGraph {
  /** Node index -> box index. */
  boxOf: Int32Array;
  boxes: ScopeBox[];
  edges: BoxEdge[];
  /** Opened groups drawn as containers; each box and container lies in one (-1: the top). */
  containers: { group: number; parent: number }[];
  boxParent: Int32Array;
}

/** The scope of an op name: everything before its last '/' ('' at the top level). */
export function scopeOf(name: string): string {
  const slash = name.lastIndexOf('/');
  return slash < 0 ? '' : name.slice(0, slash);
}

function newGroup(key: string, name: string, parent: number, side: boolean): Group {
  return { key, name, parent, groups: [], ops: [], first: 0, end: 0, series: 0, side, loop: false };
}

export function buildHierarchy(ops: readonly HierarchyOp[]): Hierarchy {
  const paths = hierarchyPaths(ops);
  const groups: Group[] = [newGroup('', '', -1, false)];
  const byKey = new Map<string, number>([['', 0]]);
  // Every proper prefix of a path is a group; an op whose whole path is a group (a variable
  // `w` next to `w/read`) goes inside it.
  for (const path of paths) {
    let parent = 0;
    for (let slash = path.indexOf('/'); slash >= 0; slash = path.indexOf('/', slash + 1)) {
      const key = path.slice(0, slash);
      let group = byKey.get(key);
      if (group === undefined) {
        const name = key.slice(key.lastIndexOf('/') + 1);
        const side = groups[parent].side || (parent === 0 && isSideKey(name));
        group = groups.push(newGroup(key, name, parent, side)) - 1;
        byKey.set(key, group);
        groups[parent].groups.push(group);
      }
      parent = group;
    }
  }
  const groupOf = new Int32Array(ops.length);
  paths.forEach((path, node) => {
    const group = byKey.get(path) ?? byKey.get(scopeOf(path)) ?? 0;
    groupOf[node] = group;
    groups[group].ops.push(node);
    groups[group].loop ||= ops[node].type === 'LoopCond';
  });
  formSeries(groups, ops, paths);
  for (let g = 0, made = groups.length; g < made; g++) {
    splitWideLevel(groups, g, ops, paths, groupOf);
  }
  const dfsOps = new Int32Array(ops.length);
  let fill = 0;
  const stack: [number, boolean][] = [[0, false]];
  while (stack.length > 0) {
    const [g, done] = stack.pop() as [number, boolean];
    const group = groups[g];
    if (done) {
      group.end = fill;
      continue;
    }
    group.first = fill;
    for (const node of group.ops) {
      dfsOps[fill++] = node;
    }
    stack.push([g, true]);
    for (let k = group.groups.length - 1; k >= 0; k--) {
      stack.push([group.groups[k], false]);
    }
  }
  return { groups, dfsOps, paths, groupOf };
}

/** FNV-1a of a string: structure signatures compare as numbers. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

const NUMBERED = /^(.*?\D)(\d+)$/;

/**
 * Gather sibling groups named `<stem><n>` with the same structure (the same op names and types
 * inside, recursively) into one series group each.
 */
function formSeries(groups: Group[], ops: readonly HierarchyOp[], paths: readonly string[]): void {
  const signature = new Float64Array(groups.length);
  // Children are made after their parent, so a reverse sweep sees children first.
  for (let g = groups.length - 1; g >= 0; g--) {
    const group = groups[g];
    const skip = group.key === '' ? 0 : group.key.length + 1;
    const entries = group.ops.map((node) => `${paths[node].slice(skip)}:${ops[node].type}`);
    for (const child of group.groups) {
      entries.push(`${groups[child].name}{${signature[child]}}`);
    }
    signature[g] = hash(entries.sort().join('\n'));
  }
  const parents = groups.length;
  for (let g = 0; g < parents; g++) {
    const parent = groups[g];
    const runs = new Map<string, { stem: string; members: [number, number][] }>();
    for (const child of parent.groups) {
      const match = NUMBERED.exec(groups[child].name);
      if (match === null) {
        continue;
      }
      const id = `${match[1]}\u0000${signature[child]}`;
      const run = runs.get(id) ?? { stem: match[1], members: [] };
      run.members.push([Number(match[2]), child]);
      runs.set(id, run);
    }
    for (const { stem, members } of runs.values()) {
      if (members.length < 2) {
        continue;
      }
      members.sort((a, b) => a[0] - b[0]);
      const name = `${stem}[${members[0][0]}-${members[members.length - 1][0]}]`;
      const prefix = parent.key === '' ? '' : `${parent.key}/`;
      const series = groups.push(newGroup(`${prefix}${name}`, name, g, parent.side)) - 1;
      const record = groups[series];
      record.series = members.length;
      record.groups = members.map(([, child]) => child);
      const taken = new Set(record.groups);
      const at = parent.groups.findIndex((child) => taken.has(child));
      parent.groups = parent.groups.filter((child) => !taken.has(child));
      parent.groups.splice(at, 0, series);
      for (const child of record.groups) {
        groups[child].parent = series;
      }
    }
  }
}

/** A level wider than this gathers its ops into op series, then into chunks. */
const WIDE_LEVEL = AUTO_BUDGET;
/** A wide level's ops go into at most this many chunks. */
const CHUNKS = 20;
/** A series of scopes opens whole up to this many members (wrapped into columns, it reads). */
const MAX_SERIES = 200;
/** Ops `Identity`, `Identity_1`, ... of one type are a series from this many on. */
const MIN_OP_SERIES = 3;

function addGroup(groups: Group[], parent: number, name: string, ops: number[]): number {
  const prefix = groups[parent].key === '' ? '' : `${groups[parent].key}/`;
  const group = newGroup(`${prefix}${name}`, name, parent, groups[parent].side);
  group.ops = ops;
  groups[parent].groups.push(groups.length);
  return groups.push(group) - 1;
}

/**
 * A level with more than WIDE_LEVEL items (ops outside any scope: a graph built without name
 * scopes) would open with all of them. Its ops of one type named `<stem>`, `<stem>_1`, ...
 * become op series (`Identity[0-5]`); if that is still too wide, its items (groups, then ops in
 * creation order) go into CHUNKS groups (`items[1-500]`), chunked again while too wide. A while
 * loop's scope gathers its op series however wide it is: its plumbing, an Enter, Merge, Switch,
 * Identity, NextIteration and Exit per loop variable, reads as six series around its body.
 */
function splitWideLevel(
  groups: Group[],
  g: number,
  ops: readonly HierarchyOp[],
  paths: readonly string[],
  groupOf: Int32Array,
): void {
  const level = groups[g];
  const wide = level.groups.length + level.ops.length > WIDE_LEVEL;
  if ((!wide && !level.loop) || level.ops.length === 0) {
    chunk(groups, g, groupOf);
    return;
  }
  const skip = level.key === '' ? 0 : level.key.length + 1;
  const runs = new Map<string, number[]>();
  for (const node of level.ops) {
    const stem = paths[node].slice(skip).replace(/_\d+$/, '');
    const id = `${stem}\u0000${ops[node].type}`;
    const run = runs.get(id) ?? [];
    run.push(node);
    runs.set(id, run);
  }
  const kept: number[] = [];
  for (const [id, run] of runs) {
    if (run.length < MIN_OP_SERIES) {
      kept.push(...run);
      continue;
    }
    const numbers = run.map((node) => Number(/_(\d+)$/.exec(paths[node])?.[1] ?? 0));
    const stem = id.slice(0, id.indexOf('\u0000'));
    const name = `${stem}[${Math.min(...numbers)}-${Math.max(...numbers)}]`;
    const series = addGroup(groups, g, name, run);
    groups[series].series = run.length;
    run.forEach((node) => (groupOf[node] = series));
  }
  level.ops = kept.sort((a, b) => a - b);
  chunk(groups, g, groupOf);
}

function chunk(groups: Group[], g: number, groupOf: Int32Array): void {
  const level = groups[g];
  const items = [...level.groups.map((child) => -1 - child), ...level.ops];
  const readableSeries = level.series > 0 && level.groups.length > 0 && items.length <= MAX_SERIES;
  if (items.length <= WIDE_LEVEL || readableSeries) {
    return;
  }
  const size = Math.ceil(items.length / CHUNKS);
  level.groups = [];
  level.ops = [];
  for (let start = 0; start < items.length; start += size) {
    const part = items.slice(start, start + size);
    const made = addGroup(groups, g, `items[${start + 1}-${start + part.length}]`, []);
    for (const item of part) {
      if (item < 0) {
        groups[made].groups.push(-1 - item);
        groups[-1 - item].parent = made;
      } else {
        groups[made].ops.push(item);
        groupOf[item] = made;
      }
    }
    chunk(groups, made, groupOf);
  }
}

/** Ops under a group. */
export function groupSize(group: Group): number {
  return group.end - group.first;
}

/**
 * Per group, whether it holds only variables: a variable's scope (the variable op `w` with
 * `w/read`, `w/Assign`), or a scope of such scopes (a dense layer's `kernel` and `bias`, a series
 * of layers' variables).
 */
function variableScopes(hierarchy: Hierarchy): Uint8Array {
  const { groups, paths } = hierarchy;
  const only = new Uint8Array(groups.length);
  // Children before parents: a series and a chunk are made after the groups they hold.
  const breadthFirst = [0];
  for (let k = 0; k < breadthFirst.length; k++) {
    breadthFirst.push(...groups[breadthFirst[k]].groups);
  }
  for (let k = breadthFirst.length - 1; k > 0; k--) {
    const g = breadthFirst[k];
    const group = groups[g];
    const variable = group.ops.some((node) => paths[node] === group.key);
    const ofVariables =
      group.ops.length === 0 && group.groups.length > 0 && group.groups.every((c) => only[c]);
    only[g] = variable || ofVariables ? 1 : 0;
  }
  return only;
}

/**
 * The groups a graph may open with, in the order it opens them: breadth first, loops and the
 * groups holding one first, then biggest first,
 * each taken when the boxes shown stay within `budget`. Side groups stay closed: they are set
 * aside; so do scopes of variables only (variableScopes), which read best as one box, as in
 * TensorBoard. Any prefix of the order is a folding whose opened groups' parents are open.
 */
export function openingOrder(hierarchy: Hierarchy, budget = AUTO_BUDGET): string[] {
  const { groups } = hierarchy;
  const variables = variableScopes(hierarchy);
  // A while loop opens before its siblings (and so do the groups holding one): drawn as a
  // container of its body with its iterations, it is what a recurrent model's graph is about.
  const loops = new Uint8Array(groups.length);
  groups.forEach((group, g) => {
    for (let at = g; group.loop && at >= 0 && loops[at] === 0; at = groups[at].parent) {
      loops[at] = 1;
    }
  });
  const order: string[] = [];
  const root = groups[0];
  let shown = root.groups.length + root.ops.length;
  let level = root.groups.filter((g) => !groups[g].side);
  while (level.length > 0) {
    level.sort((a, b) => loops[b] - loops[a] || groupSize(groups[b]) - groupSize(groups[a]));
    const next: number[] = [];
    for (const g of level) {
      const group = groups[g];
      const cost = group.groups.length + group.ops.length - 1;
      if (variables[g] === 0 && shown + cost <= budget) {
        shown += cost;
        order.push(group.key);
        next.push(...group.groups);
      }
    }
    level = next;
  }
  return order;
}

/** The whole opening order: the folding within `budget` boxes, readable or not. */
export function defaultExpanded(hierarchy: Hierarchy, budget = AUTO_BUDGET): Set<string> {
  return new Set(openingOrder(hierarchy, budget));
}

/** Keys of the groups that hide op `node` (to open them all). */
export function groupsHiding(hierarchy: Hierarchy, node: number): string[] {
  const keys: string[] = [];
  for (let g = hierarchy.groupOf[node]; g > 0; g = hierarchy.groups[g].parent) {
    keys.push(hierarchy.groups[g].key);
  }
  return keys;
}

/** Fold the hierarchy: opened groups become containers, closed ones single boxes. */
export function foldHierarchy(
  hierarchy: Hierarchy,
  nodes: readonly HierarchyOp[],
  edges: readonly FoldEdge[],
  expanded: ReadonlySet<string>,
): FoldedGraph {
  const { groups, dfsOps } = hierarchy;
  const boxOf = new Int32Array(nodes.length);
  const boxes: ScopeBox[] = [];
  const parents: number[] = [];
  const containers: { group: number; parent: number }[] = [];
  const visit = (g: number, container: number) => {
    const group = groups[g];
    for (const node of group.ops) {
      boxOf[node] = boxes.length;
      parents.push(container);
      boxes.push({ name: nodes[node].name, node, group: -1, ops: 1, device: nodes[node].device });
    }
    for (const child of group.groups) {
      const record = groups[child];
      if (expanded.has(record.key)) {
        containers.push({ group: child, parent: container });
        visit(child, containers.length - 1);
        continue;
      }
      const box = boxes.length;
      let device: ScopeBox['device'] = nodes[dfsOps[record.first]]?.device ?? null;
      for (let k = record.first; k < record.end; k++) {
        const node = dfsOps[k];
        boxOf[node] = box;
        if (device !== MIXED && nodes[node].device !== device) {
          device = MIXED;
        }
      }
      parents.push(container);
      boxes.push({ name: record.key, node: -1, group: child, ops: groupSize(record), device });
    }
  };
  visit(0, -1);
  return {
    boxOf,
    boxes,
    edges: boxEdges(edges, boxOf, boxes.length),
    containers,
    boxParent: Int32Array.from(parents),
  };
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
        result.push({
          src,
          dst,
          count: 1,
          bytes: edge.bytes ?? 0,
          crosses: edge.crosses,
          network: edge.network,
          control,
        });
      } else {
        const merged = result[mergedAt[dst]];
        merged.count++;
        merged.bytes += edge.bytes ?? 0;
        merged.crosses ||= edge.crosses;
        merged.network ||= edge.network;
        merged.control &&= control;
      }
    }
  }
  return result;
}

/** Every group opened: each op its own box (tests, and a small graph's full view). */
export function allExpanded(hierarchy: Hierarchy): Set<string> {
  return new Set(hierarchy.groups.slice(1).map((group) => group.key));
}
