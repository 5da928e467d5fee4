import { describe, expect, it } from 'vitest';
import { colourBoxes } from './dagcolour';
import { containerLines, tooltipLines } from './dagtooltip';
import { buildDagModel, storeEdges, storeHierarchy } from './dagmodel';
import { AUTO_BUDGET, allExpanded, defaultExpanded } from './scopes';
import { PlacementStore } from './store';
import { bigDocument, device, smallDocument } from './__tests__/fixtures';

describe('storeEdges', () => {
  it('marks the transfers whose ends run in different cluster tasks as network ones', () => {
    const doc = smallDocument();
    const ps = '/job:ps/replica:0/task:0/device:CPU:0';
    doc.devices.push(device(3, ps));
    doc.nodes[2].device = 3; // tower_0/c on the ps task: b -> c leaves the worker's process
    const edges = storeEdges(PlacementStore.fromDocument(doc));
    expect(edges.map((e) => [e.crosses, e.network])).toEqual([
      [true, false],
      [true, true],
    ]);
  });
});

describe('buildDagModel', () => {
  it('flags an op that did not land where it asked, and folds boxes', () => {
    const store = PlacementStore.fromDocument(smallDocument());
    const model = buildDagModel(store, allExpanded(storeHierarchy(store)));
    // tower_0/b asked for GPU:1 and runs on GPU:0
    expect(Array.from(model.mismatch)).toEqual([0, 1, 0]);
    const folded = buildDagModel(store, new Set());
    expect(folded.folded.boxes).toHaveLength(2);
    expect(Array.from(folded.mismatch)).toEqual([0, 1]);
    expect(Array.from(folded.opList.subarray(folded.opStart[1], folded.opStart[2]))).toEqual([
      1, 2,
    ]);
    // the device bar of the folded tower_0: one op on GPU:0 (id 1), one on GPU:1 (id 2)
    expect(folded.deviceShares).toEqual([
      null,
      [
        [1, 1],
        [2, 1],
      ],
    ]);
  });

  it('colours a folded box by its worst state', () => {
    const store = PlacementStore.fromDocument(smallDocument());
    const model = buildDagModel(store, new Set());
    const colours = colourBoxes(model, store, 'state', null);
    expect(colours.palette[colours.index[1]]).toBe(colours.palette[4]); // failed
    expect(colours.index[0]).toBe(3); // done
  });

  it('builds a 100,000-op graph (layout, folding, grid) quickly enough to paint', () => {
    const store = PlacementStore.fromDocument(bigDocument(100_000));
    let start = performance.now();
    const hierarchy = storeHierarchy(store);
    const folded = buildDagModel(store, defaultExpanded(hierarchy), hierarchy);
    colourBoxes(folded, store, 'device', null);
    const foldedMs = performance.now() - start;
    start = performance.now();
    const open = buildDagModel(store, allExpanded(hierarchy), hierarchy);
    colourBoxes(open, store, 'device', null);
    const openMs = performance.now() - start;
    console.log(
      `buildDagModel 100,000 ops: ${folded.folded.boxes.length} boxes folded in ` +
        `${foldedMs.toFixed(0)} ms; all ${open.folded.boxes.length} open in ${openMs.toFixed(0)} ms`,
    );
    expect(folded.folded.boxes.length).toBeLessThanOrEqual(AUTO_BUDGET);
    expect(folded.folded.boxes.length).toBeGreaterThan(1);
    expect(open.folded.boxes.length).toBe(100_000);
    expect(foldedMs + openMs).toBeLessThan(5000);
  });
});

describe('labels', () => {
  it('names boxes and container titles by their whole names, keeping what tells them apart', () => {
    const doc = smallDocument();
    doc.nodes = [
      { ...doc.nodes[0], id: 0, name: 'layer1/MatMul' },
      { ...doc.nodes[1], id: 1, name: 'layer1/w' },
      { ...doc.nodes[2], id: 2, name: 'layer2/w' },
      { ...doc.nodes[2], id: 3, name: 'gradients/layer1/MatMul_grad/MatMul', type: 'MatMul' },
    ];
    doc.edges = [];
    const store = PlacementStore.fromDocument(doc);
    const model = buildDagModel(store, new Set(['layer1', 'layer2']));
    const at = (name: string) => model.folded.boxes.findIndex((b) => b.name === name);
    const label = (name: string) => [model.labels[at(name)], model.labelKeeps[at(name)]];
    expect(label('layer1/w')).toEqual(['layer1/w', [0]]); // beside layer2/w: keeps `layer1`
    expect(label('layer2/w')).toEqual(['layer2/w', [0]]);
    expect(label('layer1/MatMul')).toEqual(['layer1/MatMul', []]); // the only MatMul
    expect(label('[gradients]')).toEqual(['gradients', []]);
    expect(model.titles).toEqual(['layer1', 'layer2']);
    const open = buildDagModel(store, new Set(['layer1', '[gradients]']));
    const boxes = open.folded.boxes.map((b, i) => [b.name, open.labels[i], open.labelKeeps[i]]);
    // Beside the opened `layer1`, the folded `gradients/layer1` keeps its scope.
    expect(boxes).toContainEqual(['[gradients]/layer1', 'gradients/layer1', [0]]);
    expect(open.titles).toEqual(['layer1', 'gradients']);
  });
});

describe('tooltips', () => {
  it('give a folded group and an opened group title their whole names', () => {
    const store = PlacementStore.fromDocument(smallDocument());
    const folded = buildDagModel(store, new Set());
    expect(tooltipLines(store, folded, 1).slice(0, 2)).toEqual([
      'tower_0/',
      'scope: 2 ops on several devices',
    ]);
    const open = buildDagModel(store, new Set(['tower_0']));
    expect(containerLines(open, 0)).toEqual([
      'tower_0/',
      'scope: 2 ops, opened',
      '− or double-click to fold',
    ]);
  });
});
