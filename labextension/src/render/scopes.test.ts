import { describe, expect, it } from 'vitest';
import {
  AUTO_BUDGET,
  MIXED,
  allExpanded,
  buildHierarchy,
  defaultExpanded,
  foldHierarchy,
  groupsHiding,
  scopeOf,
  type FoldEdge,
  type HierarchyOp,
} from './scopes';

const op = (name: string, device: number | null = 1, type = 'Identity'): HierarchyOp => ({
  name,
  type,
  device,
});

const nodes = [
  op('input', 0),
  op('tower_0/conv'),
  op('tower_0/inner/relu'),
  op('tower_1/conv'),
  op('tower_1/relu', 2),
  op('loss', 0),
];

function edge(src: number, dst: number, extra: Partial<FoldEdge> = {}): FoldEdge {
  return { src, dst, kind: 'data', bytes: 10, crosses: false, network: false, ...extra };
}

function keys(list: readonly HierarchyOp[]): string[] {
  return buildHierarchy(list).groups.map((g) => g.key);
}

/** `blocks` scopes of `per` ops each in a chain, behind an input: the scoped test graph. */
function chainOfBlocks(blocks: number, per: number): { ops: HierarchyOp[]; edges: FoldEdge[] } {
  const ops = [op('input', 0, 'Const')];
  for (let b = 0; b < blocks; b++) {
    for (let k = 0; k < per; k++) {
      ops.push(op(`block${b}/op${k}`, 1 + (b % 2), k % 2 ? 'MatMul' : 'Relu'));
    }
  }
  const edges = ops.slice(1).map((_, i) => edge(i, i + 1));
  return { ops, edges };
}

describe('buildHierarchy', () => {
  it('makes a group per name scope and puts each op in its innermost one', () => {
    const hierarchy = buildHierarchy(nodes);
    expect(keys(nodes)).toEqual(['', 'tower_0', 'tower_0/inner', 'tower_1']);
    const byKey = (key: string) => hierarchy.groups.find((g) => g.key === key)!;
    expect(byKey('tower_0').ops).toEqual([1]);
    expect(byKey('tower_0/inner').ops).toEqual([2]);
    expect(byKey('').ops).toEqual([0, 5]);
    expect(hierarchy.groupOf[2]).toBe(hierarchy.groups.indexOf(byKey('tower_0/inner')));
    const tower = byKey('tower_0');
    expect(tower.end - tower.first).toBe(2);
  });

  it('puts an op whose name is also a scope (a variable and its read) inside that scope', () => {
    const hierarchy = buildHierarchy([op('w/read'), op('w', 1, 'VariableV2')]);
    expect(hierarchy.groups.map((g) => [g.key, g.ops])).toEqual([
      ['', []],
      ['w', [0, 1]],
    ]);
  });

  it('gathers sibling scopes of the same structure into one series', () => {
    const { ops } = chainOfBlocks(100, 3);
    const hierarchy = buildHierarchy(ops);
    const root = hierarchy.groups[0];
    expect(root.groups).toHaveLength(1);
    const series = hierarchy.groups[root.groups[0]];
    expect(series.name).toBe('block[0-99]');
    expect(series.series).toBe(100);
    expect(series.end - series.first).toBe(300);
    expect(series.groups.map((g) => hierarchy.groups[g].name).slice(0, 3)).toEqual([
      'block0',
      'block1',
      'block2',
    ]);
  });

  it('keeps scopes of different structure apart (layer1 with a Relu, layer2 without)', () => {
    const list = [
      op('layer1/MatMul', 1, 'MatMul'),
      op('layer1/Relu', 1, 'Relu'),
      op('layer2/MatMul', 1, 'MatMul'),
      op('tower_0/x', 1, 'MatMul'),
      op('tower_1/x', 1, 'MatMul'),
    ];
    const hierarchy = buildHierarchy(list);
    const names = hierarchy.groups[0].groups.map((g) => hierarchy.groups[g].name);
    expect(names).toEqual(['layer1', 'layer2', 'tower_[0-1]']);
  });
});

describe('defaultExpanded', () => {
  it('opens a small graph whole, but a variable with its read stays one box', () => {
    const list = [
      op('x'),
      op('layer1/w', 1, 'VariableV2'),
      op('layer1/w/read'),
      op('layer1/MatMul', 1, 'MatMul'),
      op('layer1/Relu', 1, 'Relu'),
      op('layer1/pair/a'),
      op('layer1/pair/b'),
    ];
    const hierarchy = buildHierarchy(list);
    const folded = foldHierarchy(hierarchy, list, [], defaultExpanded(hierarchy));
    expect(folded.boxes.map((b) => b.name)).toEqual([
      'x',
      'layer1/MatMul',
      'layer1/Relu',
      'layer1/w',
      'layer1/pair/a',
      'layer1/pair/b',
    ]);
    expect(folded.containers.map((c) => hierarchy.groups[c.group].key)).toEqual([
      'layer1',
      'layer1/pair',
    ]);
  });

  it("keeps a layer's variables folded, alone or as a series, and opens its ops' scope", () => {
    const list = [op('x')];
    for (const layer of ['dense_0', 'dense_1', 'head']) {
      for (const v of ['kernel', 'bias']) {
        list.push(op(`${layer}/${v}`, 1, 'VariableV2'), op(`${layer}/${v}/read`));
      }
      list.push(op(`mlp/${layer}/MatMul`, 1, 'MatMul'));
    }
    const hierarchy = buildHierarchy(list);
    const opened = defaultExpanded(hierarchy);
    expect(opened.has('mlp')).toBe(true);
    expect(opened.has('dense_[0-1]')).toBe(false);
    expect(opened.has('head')).toBe(false);
    const folded = foldHierarchy(hierarchy, list, [], opened);
    expect(folded.boxes.map((b) => b.name)).toEqual(
      expect.arrayContaining(['dense_[0-1]', 'head']),
    );
  });

  it(`shows at most ${AUTO_BUDGET} boxes of a 3,000-op graph of 100 scopes`, () => {
    const { ops, edges } = chainOfBlocks(100, 30);
    const hierarchy = buildHierarchy(ops);
    const folded = foldHierarchy(hierarchy, ops, edges, defaultExpanded(hierarchy));
    expect(folded.boxes.length).toBeLessThanOrEqual(AUTO_BUDGET);
    expect(folded.boxes.map((b) => b.name)).toEqual(['input', 'block[0-99]']);
    expect(folded.edges).toEqual([
      { src: 0, dst: 1, count: 1, bytes: 10, crosses: false, network: false, control: false },
    ]);
  });

  it('stays within the budget for 100 different scopes (no series), chunking them', () => {
    const ops = [op('input')];
    for (let b = 0; b < 100; b++) {
      for (let k = 0; k <= b % 7; k++) {
        ops.push(op(`s${b}x/op${k}`));
      }
    }
    const hierarchy = buildHierarchy(ops);
    const folded = foldHierarchy(hierarchy, ops, [], defaultExpanded(hierarchy));
    expect(folded.boxes.length).toBeLessThanOrEqual(AUTO_BUDGET);
    expect(folded.boxes.some((b) => b.name.startsWith('items['))).toBe(true);
    const all = foldHierarchy(hierarchy, ops, [], allExpanded(hierarchy));
    expect(all.boxes).toHaveLength(ops.length);
  });

  it('gathers a flat graph of 10,000 ops into op series and chunks', () => {
    const ops = [op('input', 0, 'Const')];
    for (let i = 0; i < 5000; i++) {
      ops.push(op(i === 0 ? 'MatMul' : `MatMul_${i}`, 1, 'MatMul'));
      ops.push(op(`unique${i}`, 1, 'Relu'));
    }
    ops.push(op('Relu_1', 1, 'Relu'));
    const hierarchy = buildHierarchy(ops);
    const folded = foldHierarchy(hierarchy, ops, [], defaultExpanded(hierarchy));
    expect(folded.boxes.length).toBeLessThanOrEqual(AUTO_BUDGET);
    const names = hierarchy.groups.map((g) => g.name);
    expect(names).toContain('MatMul[0-4999]');
    expect(names).toContain('items[1-251]');
    // every op stays reachable, each in exactly one box
    const all = foldHierarchy(hierarchy, ops, [], allExpanded(hierarchy));
    expect(all.boxes).toHaveLength(ops.length);
    expect(new Set(all.boxes.map((b) => b.node)).size).toBe(ops.length);
    const hiding = groupsHiding(hierarchy, 2); // unique0, inside a chunk
    expect(hiding[hiding.length - 1]).toMatch(/^items\[/);
  });

  it('opens groups breadth first while the budget allows, leaving side groups closed', () => {
    const list = [
      ...Array.from({ length: 10 }, (_, i) => op(`a/op${i}x`)),
      ...Array.from({ length: 30 }, (_, i) => op(`b/op${i}x`)),
      op('gradients/a/op0x_grad/MatMul', 1, 'MatMul'),
      op('gradients/a/op1x_grad/MatMul', 1, 'MatMul'),
      op('gradients/b/op1x_grad/MatMul', 1, 'MatMul'),
    ];
    const hierarchy = buildHierarchy(list);
    expect([...defaultExpanded(hierarchy, 20)]).toEqual(['a']);
    expect([...defaultExpanded(hierarchy, 50)].sort()).toEqual(['a', 'b']);
  });
});

describe('foldHierarchy', () => {
  it('draws every op as its own box when every group is open, inside containers', () => {
    const hierarchy = buildHierarchy(nodes);
    const folded = foldHierarchy(hierarchy, nodes, [edge(0, 1)], allExpanded(hierarchy));
    expect(folded.boxes).toHaveLength(6);
    expect(folded.containers.map((c) => hierarchy.groups[c.group].key)).toEqual([
      'tower_0',
      'tower_0/inner',
      'tower_1',
    ]);
    expect(folded.containers[1].parent).toBe(0);
    expect(folded.boxParent[folded.boxOf[2]]).toBe(1);
    expect(folded.boxParent[folded.boxOf[0]]).toBe(-1);
  });

  it('folds a closed group, nested ops included, into one box', () => {
    const hierarchy = buildHierarchy(nodes);
    const folded = foldHierarchy(hierarchy, nodes, [], new Set(['tower_1']));
    const tower = folded.boxes[folded.boxOf[1]];
    expect(tower).toMatchObject({ name: 'tower_0', node: -1, ops: 2, device: 1 });
    expect(folded.boxOf[2]).toBe(folded.boxOf[1]);
    expect(folded.boxes).toHaveLength(5);
    expect(folded.boxes[folded.boxOf[0]].node).toBe(0);
  });

  it('marks a folded box over several devices as mixed', () => {
    const hierarchy = buildHierarchy(nodes);
    const folded = foldHierarchy(hierarchy, nodes, [], new Set());
    expect(folded.boxes[folded.boxOf[3]].device).toBe(MIXED);
  });

  it('merges edges between the same boxes, counting them, and drops those inside a box', () => {
    const edges = [
      edge(0, 1, { bytes: 10 }),
      edge(0, 2, { bytes: 5, crosses: true }),
      edge(1, 2, { bytes: 7 }),
      edge(2, 5, { kind: 'control', bytes: null }),
      edge(0, 2, { kind: 'control', bytes: null }),
    ];
    const hierarchy = buildHierarchy(nodes);
    const folded = foldHierarchy(hierarchy, nodes, edges, new Set(['tower_1']));
    const tower = folded.boxOf[1];
    expect(folded.edges).toEqual([
      {
        src: folded.boxOf[0],
        dst: tower,
        count: 3,
        bytes: 15,
        crosses: true,
        network: false,
        control: false,
      },
      {
        src: tower,
        dst: folded.boxOf[5],
        count: 1,
        bytes: 0,
        crosses: false,
        network: false,
        control: true,
      },
    ]);
  });

  it('names the groups that hide an op, innermost first', () => {
    const hierarchy = buildHierarchy(nodes);
    expect(groupsHiding(hierarchy, 2)).toEqual(['tower_0/inner', 'tower_0']);
    expect(groupsHiding(hierarchy, 0)).toEqual([]);
    expect(scopeOf('a/b/c')).toBe('a/b');
  });
});
