/**
 * A comparison of two placements of fixtures.smallDocument's graph a -> tower_0/b -> tower_0/c:
 * 'simple' runs once (0..100 ns: c on GPU:1); 'cost' runs twice (0..80, then 200..260 ns: c moved
 * to GPU:0), so its last run starts later on its own timeline than the first's does.
 */
import type { ComparisonDocument, PlacementDocument } from '../contract.gen';
import { EventKind as K, TimingSource as S } from '../types';
import { CPU, GPU0, GPU1, columns, device, node } from './fixtures';

function placement(cDevice: number): PlacementDocument {
  return {
    schema: 'placeviz/1',
    origin_ns: 1000,
    devices: [device(0, CPU), device(1, GPU0), device(2, GPU1)],
    nodes: [
      node(0, 'a', { device: 0, type: 'Const' }),
      node(1, 'tower_0/b', { device: 1, type: 'MatMul' }),
      node(2, 'tower_0/c', { device: cDevice, type: 'Relu' }),
    ],
    edges: [
      { src: 0, dst: 1, kind: 'data', bytes: 24, crosses: true },
      { src: 1, dst: 2, kind: 'data', bytes: 24, crosses: cDevice !== 1 },
    ],
    runs: [],
    events: columns([]),
  };
}

export function simplePlacement(): PlacementDocument {
  const doc = placement(2);
  doc.runs = [{ id: 0, t0: 1000, t1: 1100, status: 'ok', error: null, fetches: ['tower_0/c'] }];
  doc.events = columns([
    [K.RUN, 0, 100, -1, -1, -1, 0, S.CLOCK, 0, -1],
    [K.OP, 0, 10, 0, 0, 0, 24, S.CLOCK, 0, -1],
    [K.OP, 10, 40, 1, 1, 0, 24, S.CLOCK, 0, -1],
    [K.OP, 40, 100, 2, 2, 0, 24, S.CLOCK, 0, -1],
    [K.ALLOC, 10, 10, 1, 1, 0, 24, S.CLOCK, 0, -1],
    [K.FREE, 100, 100, 1, 1, 0, 24, S.CLOCK, 0, -1],
  ]);
  return doc;
}

export function costPlacement(): PlacementDocument {
  const doc = placement(1);
  doc.prediction = 'what if the cost-model placer placed it?';
  doc.nodes[2].reason = {
    kind: 'cost',
    text: 'the cost model finishes the graph first with it on GPU:0',
    anchor: null,
  };
  doc.runs = [
    { id: 0, t0: 1000, t1: 1080, status: 'ok', error: null, fetches: ['tower_0/c'] },
    // The run starts 10 ns before its first op: a step is its ops' span (step_ns).
    { id: 1, t0: 1190, t1: 1260, status: 'ok', error: null, fetches: ['tower_0/c'] },
  ];
  doc.events = columns([
    [K.RUN, 0, 80, -1, -1, -1, 0, S.MODELED, 0, -1],
    [K.OP, 0, 10, 0, 0, 0, 24, S.MODELED, 0, -1],
    [K.OP, 10, 50, 1, 1, 0, 24, S.MODELED, 0, -1],
    [K.OP, 50, 80, 2, 1, 0, 24, S.MODELED, 0, -1],
    [K.RUN, 190, 260, -1, -1, -1, 0, S.MODELED, 1, -1],
    [K.OP, 200, 210, 0, 0, 0, 24, S.MODELED, 1, -1],
    [K.OP, 210, 230, 1, 1, 0, 24, S.MODELED, 1, -1],
    [K.OP, 230, 260, 2, 1, 0, 24, S.MODELED, 1, -1],
    [K.ALLOC, 210, 210, 1, 1, 0, 48, S.MODELED, 1, -1],
    [K.FREE, 260, 260, 1, 1, 0, 48, S.MODELED, 1, -1],
  ]);
  return doc;
}

export function comparisonDocument(): ComparisonDocument {
  return {
    schema: 'placeviz-compare/1',
    labels: ['simple', 'cost'],
    documents: [simplePlacement(), costPlacement()],
    step_ns: [100, 60],
    moved: [{ name: 'tower_0/c', from: GPU1, to: GPU0 }],
    devices: [
      { device: CPU, ops: [1, 1], busy_ns: [10, 10], peak_bytes: [24, 24] },
      { device: GPU0, ops: [1, 2], busy_ns: [30, 50], peak_bytes: [24, 3 * 1024 * 1024] },
      { device: GPU1, ops: [1, 0], busy_ns: [60, 0], peak_bytes: [24, 0] },
    ],
  };
}
