/** Small hand-made placement documents for the render tests. */
import type { DeviceRecord, EventLists, NodeRecord, PlacementDocument } from '../types';

export const CPU = '/job:localhost/replica:0/task:0/device:CPU:0';
export const GPU0 = '/job:localhost/replica:0/task:0/device:GPU:0';
export const GPU1 = '/job:localhost/replica:0/task:0/device:GPU:1';
export const SIM = '/job:localhost/replica:0/task:0/device:GPU:2';

export function device(id: number, name: string, extra: Partial<DeviceRecord> = {}): DeviceRecord {
  const type = name.includes('CPU') ? 'CPU' : 'GPU';
  return {
    id,
    name,
    type,
    index: Number(name.slice(name.lastIndexOf(':') + 1)),
    parent: `/physical_device:${type}:${name.slice(name.lastIndexOf(':') + 1)}`,
    kind: 'real',
    memory_limit: 1 << 30,
    ...extra,
  };
}

export function node(id: number, name: string, extra: Partial<NodeRecord> = {}): NodeRecord {
  const slash = name.lastIndexOf('/');
  return {
    id,
    name,
    type: 'Identity',
    scope: slash < 0 ? '' : name.slice(0, slash),
    requested: '',
    device: 0,
    reason: { kind: 'default', text: 'placed by default', anchor: null },
    shapes: [[2, 3]],
    dtype: 'float32',
    bytes_out: 24,
    source: 'model.py:1',
    ...extra,
  };
}

export type EventRow = [
  number,
  number,
  number,
  number,
  number,
  number,
  number,
  number,
  number,
  number,
];

/** Columns from rows of (kind, t0, t1, node, device, stream, bytes, source, run, peer). */
export function columns(rows: EventRow[]): EventLists {
  const names = ['kind', 't0', 't1', 'node', 'device', 'stream', 'bytes', 'source', 'run', 'peer'];
  const lists = Object.fromEntries(names.map((n) => [n, [] as number[]])) as EventLists;
  for (const row of rows) {
    names.forEach((n, i) => lists[n as keyof EventLists].push(row[i]));
  }
  return lists;
}

/**
 * Three ops a -> b -> c on two GPUs and a CPU; run 0 (0..100) runs a (0..10), b (10..40),
 * c (40..100); run 1 (200..300) fails in b, whose error quotes it.
 */
export function smallDocument(): PlacementDocument {
  return {
    schema: 'placeviz/1',
    origin_ns: 1000,
    devices: [
      device(0, CPU),
      device(1, GPU0),
      device(2, GPU1, { parent: '/physical_device:GPU:0', kind: 'logical' }),
    ],
    nodes: [
      node(0, 'a', { device: 0, type: 'Const' }),
      node(1, 'tower_0/b', { device: 1, type: 'MatMul', requested: '/device:GPU:1' }),
      node(2, 'tower_0/c', { device: 2, type: 'Relu' }),
    ],
    edges: [
      { src: 0, dst: 1, kind: 'data', bytes: 24, crosses: true },
      { src: 1, dst: 2, kind: 'data', bytes: 24, crosses: true },
    ],
    runs: [
      { id: 0, t0: 1000, t1: 1100, status: 'ok', error: null, fetches: ['tower_0/c'] },
      {
        id: 1,
        t0: 1200,
        t1: 1300,
        status: 'error',
        error: "boom\n\t[[node 'tower_0/b' (MatMul) created at model.py:2, running on GPU:0]]",
        fetches: ['tower_0/c'],
      },
    ],
    events: columns([
      [0, 0, 100, -1, -1, -1, 0, 1, 0, -1],
      [2, 0, 10, 0, 0, 0, 24, 1, 0, -1],
      [2, 10, 40, 1, 1, 0, 24, 1, 0, -1],
      [2, 40, 100, 2, 2, 0, 24, 1, 0, -1],
      [0, 200, 300, -1, -1, -1, 0, 1, 1, -1],
      [2, 200, 220, 0, 0, 0, 24, 1, 1, -1],
      [2, 220, 300, 1, 1, 0, 24, 1, 1, -1],
    ]),
  };
}

/**
 * A model-sized graph: `ops` ops in 4 towers of chained layers (`tower_t/layer_l/op_i`), ~1.5
 * edges per op, over one CPU and two GPUs.
 */
export function bigDocument(ops: number): PlacementDocument {
  const nodes: NodeRecord[] = [];
  const edges: PlacementDocument['edges'] = [];
  const perTower = Math.ceil(ops / 4);
  for (let i = 0; i < ops; i++) {
    const tower = Math.floor(i / perTower);
    const layer = Math.floor((i % perTower) / 500);
    nodes.push(node(i, `tower_${tower}/layer_${layer}/op_${i}`, { device: 1 + (tower % 2) }));
    if (i % perTower > 0) {
      edges.push({ src: i - 1, dst: i, kind: 'data', bytes: 1024, crosses: false });
      if (i % 2 === 0 && i % perTower > 7) {
        edges.push({ src: i - 7, dst: i, kind: 'data', bytes: 1024, crosses: false });
      }
    }
  }
  return {
    schema: 'placeviz/1',
    origin_ns: 0,
    devices: [device(0, CPU), device(1, GPU0), device(2, GPU1)],
    nodes,
    edges,
    runs: [],
    events: columns([]),
  };
}

/**
 * An empty document on CPU:0, GPU:0 and GPU:1 (device ids 0-2), and the two calls that build its
 * graph by op name: `add(name, type, device)` (returns the node id) and `wire(src, dst)`.
 */
export function graphBuilder(): {
  doc: PlacementDocument;
  add: (name: string, type: string, device: number) => number;
  wire: (src: string, dst: string) => void;
} {
  const doc: PlacementDocument = {
    schema: 'placeviz/1',
    origin_ns: 0,
    devices: [device(0, CPU), device(1, GPU0), device(2, GPU1)],
    nodes: [],
    edges: [],
    runs: [],
    events: columns([]),
  };
  const index = new Map<string, number>();
  const add = (name: string, type: string, gpu: number): number => {
    const id = doc.nodes.length;
    doc.nodes.push(node(id, name, { type, device: gpu }));
    index.set(name, id);
    return id;
  };
  const wire = (src: string, dst: string): void => {
    const [a, b] = [index.get(src) as number, index.get(dst) as number];
    const crosses = doc.nodes[a].device !== doc.nodes[b].device;
    doc.edges.push({ src: a, dst: b, kind: 'data', bytes: 4096, crosses });
  };
  return { doc, add, wire };
}

/** A small seeded generator (mulberry32): the same "random" cases on every run, so a failing
 * one can be replayed. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * ``events`` with its ``kind`` column counting the events looked at: what an incremental model
 * costs, counted rather than timed (a busy machine's clock proves nothing).
 */
export function countingKinds<T extends { kind: Int8Array }>(
  events: T,
): { view: T; reads: () => number } {
  let count = 0;
  const kind = new Proxy(events.kind, {
    get(target, key) {
      if (typeof key === 'string' && /^\d+$/.test(key)) {
        count += 1;
      }
      const value = Reflect.get(target, key, target) as unknown;
      return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
    },
  });
  const view = Object.assign(Object.create(events) as T, { kind });
  return { view, reads: () => count };
}
